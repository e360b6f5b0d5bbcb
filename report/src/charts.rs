//! The report's charts: line charts described once ([`Chart`]) and drawn with plotters on
//! the SVG backend (inline in the HTML) or the bitmap backend (`--png`).
//!
//! Every axis is drawn in linear coordinates of its transformed values (`log10` for a log
//! axis) with tick marks chosen here: decades on log axes, so that a log axis reads
//! `1k, 10k, 100k` and a percentile axis `0%, 90%, 99%, 99.9%`. The legend sits in a strip
//! right of the plot, never over the data.

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

/// The legend strip's width, pixels.
const LEGEND_WIDTH: u32 = 165;

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

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

/// What an axis's numbers are, for its tick labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A count: `1k`, `10M`.
    Count,
    /// Nanoseconds: `100 ns`, `1 µs`, `10 ms`.
    Nanoseconds,
    /// Bytes, plain.
    Bytes,
    /// `1 / (1 - p)` shown as the percentile `p`: `90%`, `99.9%`.
    Percentile,
}

/// One axis: its label (with the unit), scale, and range in data values.
#[derive(Debug, Clone)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub unit: Unit,
    /// The range, in data values (both positive on a log axis).
    pub range: (f64, f64),
}

impl Axis {
    /// An axis covering `values` (non-positive values are left out on a log axis): whole
    /// decades on a log axis, zero to a round number on a linear one.
    pub fn fit(
        label: impl Into<String>,
        scale: Scale,
        unit: Unit,
        values: impl IntoIterator<Item = f64>,
    ) -> Axis {
        let values: Vec<f64> = values
            .into_iter()
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
            .collect();
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range = match scale {
            _ if values.is_empty() => match scale {
                Scale::Log => (1.0, 10.0),
                Scale::Linear => (0.0, 1.0),
            },
            Scale::Log => {
                let mut lo = min.log10().floor();
                let mut hi = max.log10().ceil();
                if unit == Unit::Percentile {
                    lo = 0.0;
                }
                if hi <= lo {
                    // One value on a decade: centre it.
                    if unit == Unit::Percentile {
                        hi = lo + 1.0;
                    } else {
                        lo -= 1.0;
                        hi += 1.0;
                    }
                }
                (10f64.powf(lo), 10f64.powf(hi))
            }
            Scale::Linear => {
                // Quantities (bytes) from zero; positions (operations into a run) from
                // where the data starts.
                let from_zero = unit != Unit::Count || min <= 0.0;
                let step = nice_step((max - if from_zero { min.min(0.0) } else { min }) / 5.0);
                let lo = if from_zero {
                    min.min(0.0)
                } else {
                    (min / step).floor() * step
                };
                let hi = lo + ((max - lo) * 1.01 / step).ceil().max(1.0) * step;
                (lo, hi)
            }
        };
        Axis {
            label: label.into(),
            scale,
            unit,
            range,
        }
    }

    fn transform(&self, value: f64) -> Option<f64> {
        match self.scale {
            Scale::Linear => value.is_finite().then_some(value),
            Scale::Log => (value.is_finite() && value > 0.0).then(|| value.log10()),
        }
    }

    fn untransform(&self, value: f64) -> f64 {
        match self.scale {
            Scale::Linear => value,
            Scale::Log => 10f64.powf(value),
        }
    }

    fn transformed_range(&self) -> (f64, f64) {
        match self.scale {
            Scale::Linear => self.range,
            Scale::Log => (self.range.0.log10(), self.range.1.log10()),
        }
    }

    /// Labelled ticks and light grid lines, in transformed values.
    fn ticks(&self) -> (Vec<f64>, Vec<f64>) {
        let (lo, hi) = self.transformed_range();
        match self.scale {
            Scale::Log => {
                let decades = (hi - lo).round() as i32;
                let first = lo.round() as i32;
                let mut bold = Vec::new();
                let mut light = Vec::new();
                // Every decade; 2 and 5 as well when there are few.
                let every = if decades > 10 { 2 } else { 1 };
                for decade in first..=first + decades {
                    let base = f64::from(decade);
                    if (decade - first) % every == 0 {
                        bold.push(base);
                    }
                    if decade == first + decades {
                        break;
                    }
                    for m in 2..=9 {
                        let t = base + f64::from(m).log10();
                        if decades <= 2 && (m == 2 || m == 5) {
                            bold.push(t);
                        } else if decades <= 6 {
                            light.push(t);
                        }
                    }
                }
                (bold, light)
            }
            Scale::Linear => {
                let step = nice_step((hi - lo) / 5.0);
                let mut bold = Vec::new();
                let mut light = Vec::new();
                let mut k = (lo / step).ceil();
                while k * step <= hi + step * 1e-9 {
                    bold.push(k * step);
                    let half = (k + 0.5) * step;
                    if half < hi {
                        light.push(half);
                    }
                    k += 1.0;
                }
                (bold, light)
            }
        }
    }

    /// A tick label, from a transformed value.
    fn label_of(&self, transformed: f64) -> String {
        let value = self.untransform(transformed);
        match self.unit {
            Unit::Count => count_label(value),
            Unit::Nanoseconds => nanoseconds_label(value),
            Unit::Bytes => trim_number(value, 3),
            Unit::Percentile => percentile_label(value),
        }
    }
}

/// A step of 1, 2 or 5 times a power of ten, at least `rough`.
fn nice_step(rough: f64) -> f64 {
    if !(rough.is_finite() && rough > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|step| *step >= rough * 0.999)
        .unwrap_or(10.0 * power)
}

/// `value` to `significant` digits, without trailing zeros.
fn trim_number(value: f64, significant: i32) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (significant - 1 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// `1000` as `1k`, `2500000` as `2.5M`.
pub fn count_label(value: f64) -> String {
    let (scaled, suffix) = if value >= 1e9 {
        (value / 1e9, "G")
    } else if value >= 1e6 {
        (value / 1e6, "M")
    } else if value >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    format!("{}{suffix}", trim_number(scaled, 3))
}

/// Nanoseconds with the unit that keeps the number small: `250 ns`, `1.5 µs`, `3 ms`.
pub fn nanoseconds_label(ns: f64) -> String {
    let (scaled, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", trim_number(scaled, 3))
}

/// `1 / (1 - p)` as the percentile `p`: `1` is `0%`, `10` is `90%`, `1000` is `99.9%`.
fn percentile_label(x: f64) -> String {
    if x <= 1.0 + 1e-9 {
        return "0%".to_string();
    }
    let percent = 100.0 * (1.0 - 1.0 / x);
    let decimals = (x.log10().ceil() as i32 - 2).max(0) as usize;
    format!("{percent:.decimals$}%")
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
    /// Dashed, for peers (outside crates).
    pub dashed: bool,
    /// Points in data values, in x order.
    pub points: Vec<(f64, f64)>,
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

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let (width, _) = root.dim_in_pixel();
        let legend_width = if self.small { 0 } else { LEGEND_WIDTH };
        let (plot, legend) = root.split_horizontally(width.saturating_sub(legend_width));
        // Font sizes (plotters' SVG text is drawn at 1/1.24 of them) and line width.
        let (caption, labels, stroke) = if self.small { (15, 12, 1) } else { (18, 14, 2) };

        let (x_lo, x_hi) = self.x.transformed_range();
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
            if series.dashed {
                chart.draw_series(DashedLineSeries::new(points.clone(), 7, 5, style))?;
            } else {
                chart.draw_series(LineSeries::new(points.clone(), style))?;
            }
            if self.markers {
                // Peers get hollow markers, the project's implementations filled ones.
                let marker = if series.dashed { style } else { style.filled() };
                chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, marker)))?;
            }
        }

        if self.small {
            return Ok(());
        }
        // The legend: one row per series, in a strip right of the plot.
        let text = ("sans-serif", 14)
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
            if series.dashed {
                legend.draw(&PathElement::new(vec![(4, y), (11, y)], style))?;
                legend.draw(&PathElement::new(vec![(16, y), (23, y)], style))?;
                legend.draw(&PathElement::new(vec![(28, y), (32, y)], style))?;
            } else {
                legend.draw(&PathElement::new(vec![(4, y), (32, y)], style))?;
            }
            if self.markers {
                let marker = if series.dashed { style } else { style.filled() };
                legend.draw(&Circle::new((18, y), 3, marker))?;
            }
            let name = if series.points.is_empty() {
                format!("{} (none)", series.name)
            } else {
                series.name.clone()
            };
            legend.draw(&Text::new(name, (38, y), text.clone()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(count_label(1000.0), "1k");
        assert_eq!(count_label(10_000_000.0), "10M");
        assert_eq!(count_label(2500.0), "2.5k");
        assert_eq!(count_label(100.0), "100");
        assert_eq!(nanoseconds_label(250.0), "250 ns");
        assert_eq!(nanoseconds_label(1500.0), "1.5 µs");
        assert_eq!(nanoseconds_label(12.34), "12.3 ns");
        assert_eq!(nanoseconds_label(3e6), "3 ms");
        assert_eq!(percentile_label(1.0), "0%");
        assert_eq!(percentile_label(10.0), "90%");
        assert_eq!(percentile_label(100.0), "99%");
        assert_eq!(percentile_label(1000.0), "99.9%");
        assert_eq!(percentile_label(2.0), "50%");
        assert_eq!(percentile_label(1e5), "99.999%");
    }

    #[test]
    fn axes_fit_whole_decades_and_round_numbers() {
        let axis = Axis::fit("t", Scale::Log, Unit::Count, [1000.0, 100_000.0, 1e6]);
        assert_eq!(axis.range, (1e3, 1e6));
        let (bold, _) = axis.ticks();
        assert_eq!(bold.len(), 4);
        let axis = Axis::fit("t", Scale::Log, Unit::Count, [10_000.0]);
        assert_eq!(axis.range, (1e3, 1e5));
        let axis = Axis::fit("b", Scale::Linear, Unit::Bytes, [24.0, 48.0, 71.0]);
        assert_eq!(axis.range.0, 0.0);
        assert!(
            axis.range.1 >= 71.0 && axis.range.1 <= 100.0,
            "{:?}",
            axis.range
        );
        let axis = Axis::fit("p", Scale::Log, Unit::Percentile, [1.0, 3000.0]);
        assert_eq!(axis.range, (1.0, 1e4));
    }
}
