//! A workload's charts: time per operation and bytes per timer against the number of
//! timers, the latency percentile curve of each operation kind, and for keepalive the
//! slowest advance over the run, one chart per run (side by side) on shared axes.
//!
//! This is the one place the page takes markup it did not build: the SVG of each chart,
//! from plotters. It goes in unescaped, in [`figure`], which is safe because plotters'
//! SVG backend writes every text it draws (titles, names from the records, tick labels)
//! and every attribute escaped, and nothing else is spliced into that SVG.

use super::Context;
use super::format::slug;
use crate::charts::{Axis, Chart, Scale, Series, Unit, count_label, nanoseconds_label};
use crate::figures::{bytes_per_timer, latency, ns_per_op, percentile_curve, thousands};
use crate::model::Workload;
use crate::runs::Run;
use anyhow::Context as _;
use maud::{Markup, PreEscaped, html};
use timerbench_results::{CellRecord, Status};

/// The charts of `workload`, each also pushed to `drawn`.
pub(super) fn workload_charts(
    context: &Context,
    workload: &Workload,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Markup> {
    let charts = Charts { context, workload };
    let sizes = charts.against_size(drawn)?;
    let Some(timers) = context.model.detail_size(workload) else {
        return Ok(html! {
            (sizes)
            p.note { "No verified cell has latency data: no latency charts." }
        });
    };
    let latency = charts.latency(timers, drawn)?;
    let advance = if workload.family == "keepalive" {
        Some(charts.advance_series(timers, drawn)?)
    } else {
        None
    };
    Ok(html! { (sizes) (latency) @if let Some(advance) = advance { (advance) } })
}

/// Adds a chart, or a note when it has nothing to draw.
fn figure(chart: Chart, caption: &str, drawn: &mut Vec<Chart>) -> anyhow::Result<Markup> {
    figure_or(chart, caption, "no verified cell to draw", drawn)
}

/// Adds a chart (pushed to `drawn`, for `--png`), or, when it has nothing to draw, its
/// title with `empty` (why there is nothing).
pub(super) fn figure_or(
    chart: Chart,
    caption: &str,
    empty: &str,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Markup> {
    scoped_figure(chart, caption, empty, None, drawn)
}

/// How a set of per-structure charts is named and captioned: chart `{id}-{structure}`,
/// titled `{structure}: {title}`.
pub(super) struct PerStructure<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub caption: &'a str,
    pub empty: &'a str,
    pub scope: &'a str,
}

/// One chart per structure on the same axes, which `fit` draws from every point of every
/// structure, so that the charts read against each other.
pub(super) fn per_structure_figures(
    per_structure: Vec<(&str, Vec<Series>)>,
    fit: impl FnOnce(&[(f64, f64)]) -> (Axis, Axis),
    look: &PerStructure,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Vec<Markup>> {
    let points: Vec<(f64, f64)> = per_structure
        .iter()
        .flat_map(|(_, series)| series.iter().flat_map(|s| s.points.iter().copied()))
        .collect();
    let (x, y) = fit(&points);
    let mut figures = Vec::new();
    for (structure, series) in per_structure {
        let chart = Chart {
            id: format!("{}-{}", look.id, slug(structure)),
            title: format!("{structure}: {}", look.title),
            x: x.clone(),
            y: y.clone(),
            series,
            markers: true,
            small: false,
            labelled: false,
        };
        figures.push(scoped_figure(
            chart,
            look.caption,
            look.empty,
            Some(look.scope),
            drawn,
        )?);
    }
    Ok(figures)
}

/// [`figure_or`] for a chart whose lines are not implementations (wait strategies,
/// sharing schemes): its `data-scope` keeps their names and looks apart from the
/// implementations' when the rendered page is checked (`.ci/render-report`).
pub(super) fn scoped_figure(
    chart: Chart,
    caption: &str,
    empty: &str,
    scope: Option<&str>,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Markup> {
    if !chart.has_data() {
        return Ok(html! {
            figure.empty { p.note { (chart.title) ": " (empty) "." } }
        });
    }
    let svg = chart.svg()?;
    // Each line's name, colour and dash, for checks on the rendered page (no two alike).
    let looks: Vec<String> = chart.series.iter().map(|s| s.look()).collect();
    let markup = html! {
        figure.chart id=(format!("chart-{}", chart.id)) aria-label=(chart.title)
            data-series=(looks.join(";")) data-scope=[scope]
        {
            // Unescaped: plotters escapes everything it writes (see the module's comment).
            (PreEscaped(svg))
            @if !caption.is_empty() { figcaption { (caption) } }
        }
    };
    drawn.push(chart);
    Ok(markup)
}

/// The grid class of a row of charts, one per run.
pub(super) fn grid(runs: usize) -> &'static str {
    if runs <= 2 { "charts" } else { "charts runs-3" }
}

/// One implementation's latency percentile curve in one run.
struct Curve<'n> {
    /// The run's index.
    run: usize,
    implementation: &'n str,
    points: Vec<(f64, f64)>,
}

/// The charts of one workload.
struct Charts<'c, 'm> {
    context: &'c Context<'m>,
    workload: &'c Workload,
}

impl Charts<'_, '_> {
    fn runs(&self) -> &[Run] {
        &self.context.model.runs
    }

    fn several(&self) -> bool {
        self.context.model.several()
    }

    /// The implementations with a cell of the workload in any run, as empty series.
    fn series(&self) -> Vec<Series> {
        let model = self.context.model;
        model
            .implementations
            .iter()
            .filter(|i| {
                model.runs.iter().any(|r| {
                    r.records
                        .keys()
                        .any(|k| k.workload == self.workload.name && k.implementation == i.name)
                })
            })
            .map(Series::of)
            .collect()
    }

    /// `workload-what`, with the run's label when there are several.
    fn id(&self, what: &str, run: &Run) -> String {
        let workload = slug(&self.workload.name);
        if self.several() {
            format!("{workload}-{what}-{}", slug(&run.label))
        } else {
            format!("{workload}-{what}")
        }
    }

    /// A title, with the run's label when there are several.
    fn title(&self, title: String, run: &Run) -> String {
        if self.several() {
            format!("{title} — {}", run.label)
        } else {
            title
        }
    }

    /// What a chart of `run` lacks: its cells at `timers` (all sizes when `None`) that
    /// have no figures.
    fn missing(&self, run: &Run, timers: Option<u64>) -> String {
        let missing: Vec<String> = run
            .records
            .values()
            .filter(|r| r.key.workload == self.workload.name && ns_per_op(r).is_none())
            .filter(|r| timers.is_none_or(|t| r.key.timers == t))
            .map(|r| {
                format!(
                    "{} at {} ({})",
                    r.key.implementation,
                    count_label(r.key.timers as f64),
                    r.status.as_str()
                )
            })
            .collect();
        if missing.is_empty() {
            String::new()
        } else {
            format!("No point for {}: see the table.", missing.join(", "))
        }
    }

    /// The clock of the latency pass, said once under the latency charts.
    fn clock_note(&self) -> String {
        let clock = self
            .runs()
            .iter()
            .flat_map(|r| r.records.values())
            .filter(|r| r.key.workload == self.workload.name)
            .find_map(|r| r.clock.as_ref());
        clock.map_or(String::new(), |c| {
            format!(
                " Latencies include the cost of reading the clock ({}, about {} per operation).",
                c.source,
                nanoseconds_label(c.overhead_ns)
            )
        })
    }

    /// Time per operation and bytes per timer against the number of timers.
    fn against_size(&self, drawn: &mut Vec<Chart>) -> anyhow::Result<Markup> {
        type Point = fn(&CellRecord) -> Option<(f64, f64)>;
        let speed: Point = |r| Some((r.key.timers as f64, ns_per_op(r)?));
        let memory: Point = |r| Some((r.key.timers as f64, bytes_per_timer(r)?));
        let all = |point: Point| -> Vec<f64> {
            self.runs()
                .iter()
                .flat_map(|r| r.records.values())
                .filter(|r| r.key.workload == self.workload.name)
                .filter_map(point)
                .map(|p| p.1)
                .collect()
        };
        let x = Axis::fit(
            "timers (log scale)",
            Scale::Log,
            Unit::Count,
            self.workload.sizes.iter().map(|&t| t as f64),
        );
        let speed_axis = Axis::fit(
            "time per operation (log scale)",
            Scale::Log,
            Unit::Nanoseconds,
            all(speed),
        );
        let memory_axis = Axis::fit(
            "bytes per pending timer (B)",
            Scale::Linear,
            Unit::Bytes,
            all(memory),
        );
        let pairs = [
            ("ns-per-op", "time per operation", &speed_axis, speed),
            ("bytes-per-timer", "memory per timer", &memory_axis, memory),
        ];
        let mut figures = Vec::new();
        for (what, title, y, point) in pairs {
            for run in self.runs() {
                let mut series = self.series();
                for s in &mut series {
                    s.points = self
                        .workload
                        .sizes
                        .iter()
                        .filter_map(|&t| run.cell(&self.workload.name, t, &s.name).and_then(point))
                        .collect();
                }
                let chart = Chart {
                    id: self.id(what, run),
                    title: self.title(format!("{}: {title}", self.workload.name), run),
                    x: x.clone(),
                    y: y.clone(),
                    series,
                    markers: true,
                    small: false,
                    labelled: false,
                };
                figures.push(figure(chart, &self.missing(run, None), drawn)?);
            }
        }
        Ok(html! {
            h4 { "Throughput and memory" }
            p.note {
                "The median time per operation line (log-log) and the peak live heap bytes of \
                 the queue over the peak number of pending timers, against the number of \
                 timers. One line per implementation (its colour and dash as in the legend); peers \
                 with hollow markers."
            }
            div class=(grid(self.runs().len())) { @for f in figures { (f) } }
        })
    }

    /// The latency percentile curve of each operation kind, at `timers`.
    fn latency(&self, timers: u64, drawn: &mut Vec<Chart>) -> anyhow::Result<Markup> {
        let model = self.context.model;
        let mut figures = Vec::new();
        for kind in &self.workload.kinds {
            let mut curves: Vec<Curve> = Vec::new();
            for (index, run) in self.runs().iter().enumerate() {
                for implementation in &model.implementations {
                    let name = implementation.name.as_str();
                    if let Some(l) = run
                        .cell(&self.workload.name, timers, name)
                        .and_then(|r| latency(r, kind))
                    {
                        let curve = percentile_curve(l)
                            .with_context(|| format!("the {kind} latency of {name}"))?;
                        curves.push(Curve {
                            run: index,
                            implementation: name,
                            points: curve,
                        });
                    }
                }
            }
            let x = Axis::fit(
                "percentile (log scale of 1 / (1 − p))",
                Scale::Log,
                Unit::Percentile,
                curves.iter().flat_map(|c| c.points.iter().map(|p| p.0)),
            );
            let y = Axis::fit(
                format!("{kind} latency (log scale)"),
                Scale::Log,
                Unit::Nanoseconds,
                curves.iter().flat_map(|c| c.points.iter().map(|p| p.1)),
            );
            for (index, run) in self.runs().iter().enumerate() {
                let mut series = self.series();
                for s in &mut series {
                    if let Some(curve) = curves
                        .iter()
                        .find(|c| c.run == index && c.implementation == s.name)
                    {
                        s.points = curve.points.clone();
                    }
                }
                let title = format!(
                    "{}: {kind} latency, {} timers",
                    self.workload.name,
                    count_label(timers as f64)
                );
                let chart = Chart {
                    id: self.id(&format!("latency-{kind}"), run),
                    title: self.title(title, run),
                    x: x.clone(),
                    y: y.clone(),
                    series,
                    markers: false,
                    small: false,
                    labelled: false,
                };
                figures.push(figure(chart, &self.missing(run, Some(timers)), drawn)?);
            }
        }
        Ok(html! {
            h4 { "Latency per operation kind, at " (thousands(timers)) " timers" }
            p.note {
                "Each operation's latency against its percentile, HdrHistogram style: the \
                 percentile axis is logarithmic in 1 / (1 − p), so the tail (99.9%, 99.99%) gets \
                 as much room as the median; each line ends at the slowest operation of its \
                 kind. Drawn at the size where the most implementations verified."
                (self.clock_note())
            }
            div class=(grid(self.runs().len())) { @for f in figures { (f) } }
        })
    }

    /// The slowest advance per window of the run, one small chart per implementation (and
    /// run), all on the same axes.
    fn advance_series(&self, timers: u64, drawn: &mut Vec<Chart>) -> anyhow::Result<Markup> {
        let runs = self.runs();
        let mut windows = 0u64;
        let mut all_points = Vec::new();
        let mut per_run = Vec::new();
        for run in runs {
            let mut series = self.series();
            for s in &mut series {
                if let Some(record) = run.cell(&self.workload.name, timers, &s.name)
                    && record.status == Status::Ok
                    && let Some(advance) = &record.advance_series
                {
                    windows = windows.max(advance.window_ops);
                    s.points = advance
                        .max_ns
                        .iter()
                        .enumerate()
                        .filter(|(_, ns)| **ns > 0)
                        .map(|(i, &ns)| ((i as u64 * advance.window_ops) as f64, ns as f64))
                        .collect();
                    all_points.extend(s.points.iter().copied());
                }
            }
            per_run.push(series);
        }
        let x = Axis::fit(
            "operations into the run (count)",
            Scale::Linear,
            Unit::Count,
            all_points.iter().map(|p| p.0),
        );
        let y = Axis::fit(
            "slowest advance (log scale)",
            Scale::Log,
            Unit::Nanoseconds,
            all_points.iter().map(|p| p.1),
        );
        let missing: Vec<String> = runs
            .iter()
            .map(|run| self.missing(run, Some(timers)))
            .filter(|note| !note.is_empty())
            .collect();
        let mut figures = Vec::new();
        for (index, series) in per_run[0].iter().enumerate() {
            for (run, run_series) in runs.iter().zip(&per_run) {
                let chart = Chart {
                    id: self.id(&format!("advance-series-{}", slug(&series.name)), run),
                    title: self.title(format!("{}: slowest advance per window", series.name), run),
                    x: x.clone(),
                    y: y.clone(),
                    series: vec![run_series[index].clone()],
                    markers: false,
                    small: true,
                    labelled: false,
                };
                figures.push(figure(chart, "", drawn)?);
            }
        }
        let class = match runs.len() {
            1 => "charts small",
            _ => grid(runs.len()),
        };
        Ok(html! {
            h4 { "Advance latency over the run, at " (thousands(timers)) " timers" }
            p.note {
                "The run cut into windows of " (thousands(windows)) " operations; each point is \
                 the slowest advance (or tick) in its window, so cascades (a hierarchical wheel \
                 moving a level's slot down) and overflow-wheel turns show as spikes. One chart \
                 per implementation"
                @if self.several() { " and run" }
                ", all on the same axes." (self.clock_note()) " " (missing.join(" "))
            }
            div class=(class) { @for f in figures { (f) } }
        })
    }
}
