//! Lateness: how late the approximate implementations fired, per workload: a table of
//! every approximate cell (by size), the percentile curves of their lateness, and what
//! each tick of slack buys (time per operation against p99 lateness, every implementation
//! at one size, the exact ones at 0).
//!
//! Exact implementations need no such section: their whole expiry log is compared with
//! the reference model's before anything is timed, so a verified exact cell fired every
//! timer on its tick. An approximate one declares a bound instead and is replayed in
//! lockstep with the model; the record keeps how late it fired (`lateness`).

use super::Context;
use super::charts::{figure_or, grid};
use super::format::{self, short_reason, slug, status_badge, workload_anchor};
use crate::charts::{Axis, Chart, Scale, Series, Unit, count_label};
use crate::figures::{lateness, lateness_curve, ns_per_op, thousands};
use crate::implementations::Implementation;
use crate::model::{Model, Workload};
use crate::runs::Run;
use anyhow::Context as _;
use maud::{Markup, html};
use timerbench_results::CellRecord;

/// Columns of the lateness table after the implementation (and the run).
const FIGURE_COLUMNS: usize = 10;

/// The section, and its charts (into `drawn`).
pub(super) fn section(context: &Context, drawn: &mut Vec<Chart>) -> anyhow::Result<Markup> {
    let model = context.model;
    let approximate: Vec<&Implementation> = model
        .implementations
        .iter()
        .filter(|i| i.is_approximate())
        .collect();
    let workloads: Vec<&Workload> = model
        .workloads
        .iter()
        .filter(|w| cells(model, w).any(|(_, r)| lateness(r).is_some()))
        .collect();
    if workloads.is_empty() {
        return Ok(super::section(
            "lateness",
            no_lateness(context, &approximate),
        ));
    }
    let mut parts = Vec::new();
    for workload in workloads {
        let part = workload_part(context, workload, &approximate, drawn)
            .with_context(|| format!("the lateness of workload {}", workload.name))?;
        parts.push(part);
    }
    let body = html! {
        (definition())
        p { "The approximate implementations and the bound each declares:" }
        ul {
            @for implementation in &approximate {
                li {
                    (format::implementation(model, &implementation.name)) ": "
                    (implementation.bound().unwrap_or("(no bound given)"))
                }
            }
        }
        p.note {
            "Per workload with an approximate cell that verified: the table gives, per size, "
            em { "firings" } " measured (early ones apart), how many were " em { "late" } ", the \
             lateness at p50, p99 and its largest, in ticks; " em { "of delay" } " the largest \
             lateness as a fraction of its timer's delay (deadline minus the clock at its \
             start: a bucketed structure fires a whole bucket at once, so a timer of 1 tick \
             started as a 1000-tick bucket opens may wait 999 ticks, 99900% of its delay; \
             that is what a one-second bucket means for a one-millisecond timer, within its \
             declared bound, not a fault), and " em { "beyond 1 tick" } " the same without the one tick a wheel \
             that rounds every expiry up (as Linux does) adds to every timer; " em { "early" } " the firings before the model's, which the \
             implementation allows only for a deadline beyond its range (clamped), with the \
             most ticks one came early; " em { "stopped late" } " the stops that found pending \
             a timer the model had already fired; " em { "pending late" } " the timers the \
             model fired that the implementation still held when the workload ended."
        }
        p.note {
            "The charts are drawn at the size where the most approximate cells fired a timer. \
             First, each approximate implementation's lateness against its percentile (the \
             percentile axis logarithmic in 1 / (1 − p), as in the latency charts; lateness \
             linear in ticks, from 0). Then what the slack buys: every implementation's median \
             time per operation (log scale) against its p99 lateness, one point each, on a \
             linear axis, since a log axis cannot show the exact implementations, which sit \
             at 0; a point is named beside it where there is room, and every one in the \
             legend by its colour and marker."
            @if model.several() { " One of each per run, on shared axes." }
        }
        @for part in parts { (part) }
    };
    Ok(super::section("lateness", body))
}

/// What lateness is, and why the exact implementations have none.
fn definition() -> Markup {
    html! {
        p {
            "The " em { "lateness" } " of a firing is the clock at which the implementation \
             fired the timer minus the clock at which the reference model fires the same timer, \
             in ticks: 0 is on time, positive is late. Exact implementations have none to show: \
             each is verified by comparing its whole expiry log (every timer, its firing tick, \
             the order) with the reference model's before anything is timed. An approximate \
             implementation may fire within the bound it declares, so it is replayed in \
             lockstep with the model instead, every firing checked against that bound (one \
             outside it and the cell does not verify), and how late it fired is recorded."
        }
    }
}

/// The section when no record has lateness: nothing approximate ran, or nothing
/// approximate verified.
fn no_lateness(context: &Context, approximate: &[&Implementation]) -> Markup {
    let model = context.model;
    html! {
        @if approximate.is_empty() {
            p {
                "No approximate implementation was run: every implementation in these \
                 results is exact, verified by comparing its whole expiry log (each timer, its \
                 firing tick, the order) with the reference model's before anything is timed, \
                 so every firing of a verified cell was on time (lateness 0, in ticks)."
            }
        } @else {
            (definition())
            p {
                "No approximate cell verified, so no record carries lateness: "
                @for (index, implementation) in approximate.iter().enumerate() {
                    @if index > 0 { ", " }
                    (format::implementation(model, &implementation.name))
                }
                " ran, but none of " @if approximate.len() == 1 { "its" } @else { "their" }
                " cells verified within the declared bound; "
                a href="#not-verified" { "each is listed with its reason" } "."
            }
        }
    }
}

/// Every record of `workload` in every run, with its run.
fn cells<'m>(
    model: &'m Model,
    workload: &'m Workload,
) -> impl Iterator<Item = (&'m Run, &'m CellRecord)> + 'm {
    model.runs.iter().flat_map(move |run| {
        run.records
            .values()
            .filter(move |r| r.key.workload == workload.name)
            .map(move |r| (run, r))
    })
}

/// The size the charts are drawn at: where the most approximate cells fired a timer in
/// lockstep, the largest on a tie; `None` when none fired any.
fn chart_size(model: &Model, workload: &Workload) -> Option<u64> {
    workload
        .sizes
        .iter()
        .map(|&timers| {
            let fired = cells(model, workload)
                .filter(|(_, r)| r.key.timers == timers)
                .filter(|(_, r)| lateness(r).is_some_and(|l| l.firings > 0))
                .count();
            (fired, timers)
        })
        .filter(|&(fired, _)| fired > 0)
        .max()
        .map(|(_, timers)| timers)
}

/// One workload: its heading, table and charts.
fn workload_part(
    context: &Context,
    workload: &Workload,
    approximate: &[&Implementation],
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Markup> {
    let model = context.model;
    let charts = match chart_size(model, workload) {
        Some(timers) => {
            let charts = LatenessCharts {
                model,
                workload,
                timers,
            };
            let mut figures = charts.percentiles(approximate, drawn)?;
            figures.extend(charts.cost_against_precision(drawn)?);
            html! {
                h4 { "At " (thousands(timers)) " timers" }
                div class=(grid(model.runs.len())) { @for f in figures { (f) } }
            }
        }
        None => html! {
            p.note {
                "No approximate cell fired a timer in lockstep (the workload ends before the \
                 deadlines, or stops every timer): no lateness to draw."
            }
        },
    };
    Ok(html! {
        h3 {
            a href=(format!("#{}", workload_anchor(&workload.name))) { (workload.name) }
        }
        (table(context, workload, approximate))
        (charts)
    })
}

/// Every approximate cell of the workload, by size (and run).
fn table(context: &Context, workload: &Workload, approximate: &[&Implementation]) -> Markup {
    let model = context.model;
    let several = model.several();
    let columns = 1 + usize::from(several) + FIGURE_COLUMNS;
    html! {
        div.scroll {
            table.cells {
                tr {
                    @if several { th { "Run" } }
                    th { "Implementation" }
                    th.num { "firings" }
                    th.num { "late" }
                    th.num title="lateness at the median, ticks" { "p50 (ticks)" }
                    th.num title="lateness at the 99th percentile, ticks" { "p99" }
                    th.num title="the largest lateness, ticks" { "max" }
                    th.num title="the largest lateness over its timer's delay" { "of delay" }
                    th.num title="the largest lateness beyond one tick over its timer's delay" {
                        "beyond 1 tick"
                    }
                    th.num title="firings before the model's (a deadline clamped to the range)" {
                        "early"
                    }
                    th.num { "stopped late" }
                    th.num { "pending late" }
                }
                @for &timers in &workload.sizes {
                    tr.size { th colspan=(columns) { (thousands(timers)) " timers" } }
                    @for run in &model.runs {
                        @for implementation in approximate {
                            @if let Some(record) = run.cell(&workload.name, timers, &implementation.name) {
                                tr {
                                    @if several { td { (run.label) } }
                                    td { (format::implementation(model, &implementation.name)) }
                                    (figures(context, run, record))
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The lateness columns of one cell, or why it has none.
fn figures(context: &Context, run: &Run, record: &CellRecord) -> Markup {
    let Some(l) = lateness(record) else {
        let reason = record.reason.as_deref().unwrap_or("no lateness recorded");
        return html! {
            td.na colspan=(FIGURE_COLUMNS) {
                (status_badge(record.status)) " " (short_reason(reason, 90))
                @if let Some(id) = context.failure_id(&run.label, record) {
                    " " a href=(format!("#{id}")) { "(reason)" }
                }
            }
        };
    };
    let ticks = |name: &str| {
        l.percentiles
            .get(name)
            .map_or("–".to_string(), |&t| thousands(t))
    };
    html! {
        td.num { (thousands(l.firings)) }
        td.num { (thousands(l.late)) }
        td.num { (ticks("p50")) }
        td.num { strong { (ticks("p99")) } }
        td.num { (ticks("max")) }
        td.num { (fraction(l.largest_fraction_of_delay)) }
        td.num { (l.largest_fraction_beyond_one_tick.map_or("–".to_string(), fraction)) }
        td.num {
            (thousands(l.early))
            @if l.early > 0 {
                " " span.note { "(up to " (thousands(l.most_early_ticks)) " ticks)" }
            }
        }
        td.num { (thousands(l.stopped_late)) }
        td.num { (thousands(l.pending_late)) }
    }
}

/// A fraction of a delay as a percentage: `12.5%`, `100%`, `0.25%`.
pub(super) fn fraction(of_delay: f64) -> String {
    let percent = of_delay * 100.0;
    let text = if percent == 0.0 {
        "0".to_string()
    } else if percent < 1.0 {
        format!("{percent:.2}")
    } else {
        format!("{percent:.1}")
    };
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text}%")
}

/// The p99 lateness of a verified cell, in ticks: 0 for an exact implementation (its whole
/// log matched the model's), the record's for an approximate one; `None` when it has no
/// figures.
fn p99_ticks(record: &CellRecord) -> Option<f64> {
    ns_per_op(record)?;
    if !record.is_approximate() {
        return Some(0.0);
    }
    lateness(record)?
        .percentiles
        .get("p99")
        .map(|&ticks| ticks as f64)
}

/// The two charts of one workload at one size, one of each per run on shared axes.
struct LatenessCharts<'m> {
    model: &'m Model,
    workload: &'m Workload,
    timers: u64,
}

impl LatenessCharts<'_> {
    /// `workload-what`, with the run's label when there are several.
    fn id(&self, what: &str, run: &Run) -> String {
        let workload = slug(&self.workload.name);
        if self.model.several() {
            format!("{workload}-{what}-{}", slug(&run.label))
        } else {
            format!("{workload}-{what}")
        }
    }

    /// `workload: what, N timers`, with the run's label when there are several.
    fn title(&self, what: &str, run: &Run) -> String {
        let title = format!(
            "{}: {what}, {} timers",
            self.workload.name,
            count_label(self.timers as f64)
        );
        if self.model.several() {
            format!("{title} — {}", run.label)
        } else {
            title
        }
    }

    /// The lateness percentile curve of each approximate implementation.
    fn percentiles(
        &self,
        approximate: &[&Implementation],
        drawn: &mut Vec<Chart>,
    ) -> anyhow::Result<Vec<Markup>> {
        let runs = &self.model.runs;
        let mut per_run = Vec::new();
        for run in runs {
            let mut series = approximate
                .iter()
                .copied()
                .map(Series::of)
                .collect::<Vec<_>>();
            for s in &mut series {
                if let Some(l) = run
                    .cell(&self.workload.name, self.timers, &s.name)
                    .and_then(lateness)
                {
                    s.points =
                        lateness_curve(l).with_context(|| format!("the lateness of {}", s.name))?;
                }
            }
            // Only the implementations this workload ran, not every approximate one.
            series.retain(|s| {
                runs.iter()
                    .any(|r| r.cell(&self.workload.name, self.timers, &s.name).is_some())
            });
            per_run.push(series);
        }
        let points = || per_run.iter().flatten().flat_map(|s| s.points.iter());
        let x = Axis::fit(
            "percentile (log scale of 1 / (1 − p))",
            Scale::Log,
            Unit::Percentile,
            points().map(|p| p.0),
        );
        let y = Axis::fit(
            "lateness (ticks, linear)",
            Scale::Linear,
            Unit::Ticks,
            points().map(|p| p.1),
        );
        let mut figures = Vec::new();
        for (run, series) in runs.iter().zip(per_run) {
            let chart = Chart {
                id: self.id("lateness", run),
                title: self.title("lateness by percentile", run),
                x: x.clone(),
                y: y.clone(),
                series,
                markers: false,
                small: false,
                labelled: false,
            };
            let empty = "no approximate cell fired a timer here";
            figures.push(figure_or(chart, "", empty, drawn)?);
        }
        Ok(figures)
    }

    /// Every implementation's time per operation against its p99 lateness: one labelled
    /// point each.
    fn cost_against_precision(&self, drawn: &mut Vec<Chart>) -> anyhow::Result<Vec<Markup>> {
        let runs = &self.model.runs;
        let present = self.model.implementations.iter().filter(|i| {
            runs.iter()
                .any(|r| r.cell(&self.workload.name, self.timers, &i.name).is_some())
        });
        let mut per_run = Vec::new();
        for run in runs {
            let mut series = present.clone().map(Series::of).collect::<Vec<_>>();
            for s in &mut series {
                let record = run.cell(&self.workload.name, self.timers, &s.name);
                if let Some(record) = record
                    && let (Some(ns), Some(ticks)) = (ns_per_op(record), p99_ticks(record))
                {
                    s.points = vec![(ticks, ns)];
                }
            }
            per_run.push(series);
        }
        let points = || per_run.iter().flatten().flat_map(|s| s.points.iter());
        let x = Axis::fit(
            "p99 lateness (ticks, linear; exact = 0)",
            Scale::Linear,
            Unit::Ticks,
            points().map(|p| p.0),
        );
        let y = Axis::fit(
            "time per operation (log scale)",
            Scale::Log,
            Unit::Nanoseconds,
            points().map(|p| p.1),
        );
        let mut figures = Vec::new();
        for (run, series) in runs.iter().zip(per_run) {
            let missing: Vec<String> = series
                .iter()
                .filter(|s| s.points.is_empty())
                .filter_map(|s| {
                    let record = run.cell(&self.workload.name, self.timers, &s.name)?;
                    Some(format!("{} ({})", s.name, record.status.as_str()))
                })
                .collect();
            let caption = if missing.is_empty() {
                String::new()
            } else {
                format!("No point for {}: see the table.", missing.join(", "))
            };
            let chart = Chart {
                id: self.id("cost-precision", run),
                title: self.title("cost against precision", run),
                x: x.clone(),
                y: y.clone(),
                series,
                markers: true,
                small: false,
                labelled: true,
            };
            figures.push(figure_or(
                chart,
                &caption,
                "no verified cell to draw",
                drawn,
            )?);
        }
        Ok(figures)
    }
}
