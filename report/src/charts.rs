//! The report's charts: line charts described once ([`Chart`]) and drawn with plotters on
//! the SVG backend (inline in the HTML) or the bitmap backend (`--png`).
//!
//! Every axis is drawn in linear coordinates of its transformed values (`log10` for a log
//! axis) with tick marks chosen in [`axis`]: decades on log axes, so that a log axis reads
//! `1k, 10k, 100k` and a percentile axis `0%, 90%, 99%, 99.9%`. The legend sits in a strip
//! right of the plot, never over the data; a chart of one point per series may also name
//! each point beside it.

mod axis;

pub use axis::{Axis, Scale, Unit, count_label, nanoseconds_label};

use crate::style::{LineStyle, Marker};

use anyhow::anyhow;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::OnceLock;

/// A chart's size, pixels.
const SIZE: (u32, u32) = (660, 380);

/// A small multiple's size, pixels.
const SMALL_SIZE: (u32, u32) = (440, 250);

/// The legend strip's width, pixels: enough for the registry's names; wider, up to the
/// most, for longer ones (variant labels such as `hashed-wheel:slots=65536`).
const LEGEND_WIDTH: u32 = 165;
const MOST_LEGEND_WIDTH: u32 = 270;

/// The legend's text size (plotters' SVG text is drawn at 1/1.24 of it).
const LEGEND_FONT: u32 = 14;

/// Registers the embedded DejaVu fonts with plotters, once: both backends measure text
/// with them, and the bitmap backend draws with them.
pub fn register_fonts() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(
                "sans-serif",
                FontStyle::Normal,
                dejavu::sans::regular(),
            )
            .map_err(|_| "the embedded DejaVu Sans font does not load".to_string())?;
            plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold())
                .map_err(|_| "the embedded DejaVu Sans Bold font does not load".to_string())
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

/// Where to write each point's label: right of the point (left of it near the plot's
/// right edge), moved a line down or up when it would overlap a label already placed, so
/// that points that nearly coincide (a variant as fast and as late as its base) stay
/// readable. A label that finds no free place inside the plot (`bounds`:
/// left, top, right, bottom) is left out rather than drawn over another or over an axis:
/// the legend names every point. Gives (text, position, whether the text starts at the
/// position).
fn place_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    font: &TextStyle,
    mut anchors: Vec<(String, (i32, i32))>,
    bounds: (i32, i32, i32, i32),
) -> Vec<(String, (i32, i32), bool)> {
    let (left_edge, top_edge, right_edge, bottom_edge) = bounds;
    const GAP: i32 = 7;
    // Top to bottom, so that a label moved down makes room below, never above.
    anchors.sort_by_key(|(_, (x, y))| (*y, *x));
    let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
    let mut labels = Vec::new();
    for (name, (x, y)) in anchors {
        let (width, height) = area
            .estimate_text_size(&name, font)
            .map_or((8 * name.len() as u32, 14), |size| size);
        let (width, height) = (width as i32, height as i32 + 2);
        let right = x + GAP + width < right_edge;
        let left = if right { x + GAP } else { x - GAP - width };
        if left < left_edge {
            continue;
        }
        let overlaps = |top: i32, boxes: &[(i32, i32, i32, i32)]| {
            boxes
                .iter()
                .any(|&(l, t, r, b)| left < r && l < left + width && top < b && t < top + height)
        };
        let inside = |top: i32| top >= top_edge && top + height <= bottom_edge;
        let first = y - height / 2;
        // The point's own line, then one line down, then one up: further, the label would
        // name another point.
        let free = [first, first + height, first - height]
            .into_iter()
            .find(|&top| inside(top) && !overlaps(top, &placed));
        let Some(top) = free else { continue };
        placed.push((left, top, left + width, top + height));
        labels.push((
            name,
            (if right { left } else { left + width }, top + height / 2),
            right,
        ));
    }
    labels
}

/// A linear coordinate with the tick marks given: labelled ticks (`bold`) and light grid
/// lines.
struct Ticked {
    range: (f64, f64),
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (lo, hi) = self.range;
        if hi <= lo {
            return (limit.0 + limit.1) / 2;
        }
        let fraction = (value - lo) / (hi - lo);
        limit.0 + (fraction * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.0..self.range.1
    }
}

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Its legend entry.
    pub name: String,
    pub color: (u8, u8, u8),
    /// Its dash and marker: with the colour, what tells it apart.
    pub style: LineStyle,
    /// Hollow markers, for peers (outside crates).
    pub hollow: bool,
    /// Points in data values, in x order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// `implementation`'s line, in its colour and style (hollow markers for a peer),
    /// without points yet.
    pub fn of(implementation: &crate::implementations::Implementation) -> Self {
        Series {
            name: implementation.name.clone(),
            color: implementation.color,
            style: implementation.style,
            hollow: implementation.peer,
            points: Vec::new(),
        }
    }

    /// A plain line (solid, circles) in `color`.
    pub fn plain(name: &str, color: (u8, u8, u8), points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.to_string(),
            color,
            style: LineStyle::PLAIN,
            hollow: false,
            points,
        }
    }

    /// `name|#rrggbb|dash`: what the page's `data-series` attribute says of it, for checks
    /// on the rendered page.
    pub fn look(&self) -> String {
        let (r, g, b) = self.color;
        format!(
            "{}|#{r:02x}{g:02x}{b:02x}|{}",
            self.name,
            self.style.dash.name()
        )
    }
}

/// Draws `series`' line through `points` (backend coordinates of the chart) in `style`.
fn draw_line<DB: DrawingBackend, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    series: &Series,
    points: Vec<(f64, f64)>,
    style: ShapeStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    match series.style.dash.pattern() {
        Some((dash, gap)) => {
            chart.draw_series(DashedLineSeries::new(points, dash, gap, style))?;
        }
        None => {
            chart.draw_series(LineSeries::new(points, style))?;
        }
    }
    Ok(())
}

/// `series`' markers at `points` (data coordinates of the chart).
fn draw_markers<DB: DrawingBackend, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    series: &Series,
    points: &[(f64, f64)],
    style: ShapeStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let at = points.iter().copied();
    match series.style.marker {
        Marker::Circle => chart.draw_series(at.map(|p| Circle::new(p, 3, style)))?,
        Marker::Square => chart.draw_series(
            at.map(|p| EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], style)),
        )?,
        Marker::Triangle => chart.draw_series(at.map(|p| TriangleMarker::new(p, 4, style)))?,
        Marker::Cross => chart.draw_series(at.map(|p| Cross::new(p, 4, style)))?,
    };
    Ok(())
}

/// A legend row's marker at `at` (pixels of the legend strip).
fn legend_marker<DB: DrawingBackend>(
    legend: &DrawingArea<DB, Shift>,
    marker: Marker,
    at: (i32, i32),
    style: ShapeStyle,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (x, y) = at;
    match marker {
        Marker::Circle => legend.draw(&Circle::new(at, 3, style)),
        Marker::Square => legend.draw(&Rectangle::new([(x - 3, y - 3), (x + 3, y + 3)], style)),
        Marker::Triangle => legend.draw(&TriangleMarker::new(at, 4, style)),
        Marker::Cross => legend.draw(&Cross::new(at, 4, style)),
    }
}

/// A line chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Unique in the report, file-name safe: the PNG's name and the figure's anchor.
    pub id: String,
    /// Drawn above the plot.
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// A marker at every point (for charts with few points per line).
    pub markers: bool,
    /// A small multiple: smaller, thin lines, no legend (the title names the one series).
    pub small: bool,
    /// Each series' name written beside its last point (for charts of one point per
    /// series, where the reader compares the points, not the lines).
    pub labelled: bool,
}

impl Chart {
    /// Whether any series has a point to draw.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| !s.points.is_empty())
    }

    fn size(&self) -> (u32, u32) {
        if self.small { SMALL_SIZE } else { SIZE }
    }

    /// The chart as an SVG document.
    pub fn svg(&self) -> anyhow::Result<String> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, self.size()).into_drawing_area();
            self.draw(&root)
                .map_err(|e| anyhow!("cannot draw the chart {}: {e}", self.id))?;
            root.present()
                .map_err(|e| anyhow!("cannot draw the chart {}: {e}", self.id))?;
        }
        Ok(out)
    }

    /// Writes the chart as a PNG file.
    pub fn png(&self, path: &Path) -> anyhow::Result<()> {
        let root = BitMapBackend::new(path, self.size()).into_drawing_area();
        self.draw(&root)
            .map_err(|e| anyhow!("cannot draw the chart {}: {e}", self.id))?;
        root.present()
            .map_err(|e| anyhow!("cannot write the chart {}: {e}", self.id))?;
        Ok(())
    }

    /// The legend's name of a series: `(none)` after one with nothing to draw.
    fn legend_name(series: &Series) -> String {
        if series.points.is_empty() {
            format!("{} (none)", series.name)
        } else {
            series.name.clone()
        }
    }

    /// The legend strip's width for the longest name (the swatch takes 38 pixels).
    fn legend_width<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> u32 {
        let font = ("sans-serif", LEGEND_FONT).into_font().color(&BLACK);
        let longest = self
            .series
            .iter()
            .filter_map(|s| root.estimate_text_size(&Self::legend_name(s), &font).ok())
            .map(|(width, _)| width)
            .max()
            .unwrap_or(0);
        (longest + 38 + 8).clamp(LEGEND_WIDTH, MOST_LEGEND_WIDTH)
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let (width, _) = root.dim_in_pixel();
        let legend_width = if self.small {
            0
        } else {
            self.legend_width(root)
        };
        let (plot, legend) = root.split_horizontally(width.saturating_sub(legend_width));
        // Font sizes (plotters' SVG text is drawn at 1/1.24 of them) and line width.
        let (caption, labels, stroke) = if self.small { (15, 12, 1) } else { (18, 14, 2) };

        let (mut x_lo, x_hi) = self.x.transformed_range();
        if self.labelled {
            // Points at the axis's lowest value (the exact implementations at 0 lateness)
            // stand clear of the axis line instead of on it.
            x_lo -= (x_hi - x_lo) * 0.03;
        }
        let (y_lo, y_hi) = self.y.transformed_range();
        let (x_bold, x_light) = self.x.ticks();
        let (y_bold, y_light) = self.y.ticks();
        let x_range = Ticked {
            range: (x_lo, x_hi),
            bold: x_bold,
            light: x_light,
        };
        let y_range = Ticked {
            range: (y_lo, y_hi),
            bold: y_bold,
            light: y_light,
        };

        let mut chart = ChartBuilder::on(&plot)
            .caption(
                &self.title,
                ("sans-serif", caption).into_font().style(FontStyle::Bold),
            )
            .margin(8)
            .margin_right(16)
            .x_label_area_size(if self.small { 38 } else { 46 })
            .y_label_area_size(if self.small { 64 } else { 76 })
            .build_cartesian_2d(x_range, y_range)?;
        let x_format = |v: &f64| self.x.label_of(*v);
        let y_format = |v: &f64| self.y.label_of(*v);
        chart
            .configure_mesh()
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .label_style(("sans-serif", labels))
            .axis_desc_style(("sans-serif", labels + 1))
            .bold_line_style(RGBColor(0xcc, 0xcc, 0xcc))
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .axis_style(RGBColor(0x55, 0x55, 0x55))
            .draw()?;

        for series in &self.series {
            let points: Vec<(f64, f64)> = series
                .points
                .iter()
                .filter_map(|&(x, y)| Some((self.x.transform(x)?, self.y.transform(y)?)))
                .collect();
            let color = RGBColor(series.color.0, series.color.1, series.color.2);
            let style = ShapeStyle {
                color: color.to_rgba(),
                filled: false,
                stroke_width: stroke,
            };
            draw_line(&mut chart, series, points.clone(), style)?;
            if self.markers {
                // Peers get hollow markers, the project's implementations filled ones.
                let marker = if series.hollow { style } else { style.filled() };
                draw_markers(&mut chart, series, &points, marker)?;
            }
        }

        if self.labelled {
            let anchors: Vec<(String, (i32, i32))> = self
                .series
                .iter()
                .filter_map(|series| {
                    let &(x, y) = series.points.last()?;
                    let at = (self.x.transform(x)?, self.y.transform(y)?);
                    Some((series.name.clone(), chart.backend_coord(&at)))
                })
                .collect();
            let (x_pixels, y_pixels) = chart.plotting_area().get_pixel_range();
            let bounds = (x_pixels.start, y_pixels.start, x_pixels.end, y_pixels.end);
            let font = ("sans-serif", labels).into_font().color(&BLACK);
            for (name, (x, y), right) in place_labels(&plot, &font, anchors, bounds) {
                let anchor = if right { HPos::Left } else { HPos::Right };
                let style = font.clone().pos(Pos::new(anchor, VPos::Center));
                plot.draw(&Text::new(name, (x, y), style))?;
            }
        }
        if self.small {
            return Ok(());
        }
        // The legend: one row per series, in a strip right of the plot.
        let text = ("sans-serif", LEGEND_FONT)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (index, series) in self.series.iter().enumerate() {
            let y = 44 + 19 * index as i32;
            let color = RGBColor(series.color.0, series.color.1, series.color.2);
            let style = ShapeStyle {
                color: color.to_rgba(),
                filled: false,
                stroke_width: 2,
            };
            // The swatch: the line's dashes from x = 4 to 32.
            match series.style.dash.pattern() {
                Some((dash, gap)) => {
                    let mut x = 4;
                    while x < 32 {
                        let end = (x + dash as i32).min(32);
                        legend.draw(&PathElement::new(vec![(x, y), (end, y)], style))?;
                        x = end + gap as i32;
                    }
                }
                None => legend.draw(&PathElement::new(vec![(4, y), (32, y)], style))?,
            }
            if self.markers {
                let marker = if series.hollow { style } else { style.filled() };
                legend_marker(&legend, series.style.marker, (18, y), marker)?;
            }
            legend.draw(&Text::new(Self::legend_name(series), (38, y), text.clone()))?;
        }
        Ok(())
    }
}
