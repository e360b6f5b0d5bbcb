//! A workload's counts, when a run's records hold them (`timerbench run --counts`,
//! results/FORMAT.md *`counts`*): a table of every counted cell's figures per counted line
//! (instructions, estimated cycles, last-level and D1 misses, branch mispredicts), and a
//! chart of the estimated cycles per line against the number of timers, drawn as the time
//! per operation is. A run without counts shows nothing here, so its page is as before.
//!
//! Counts are of a simulated machine and do not move from run to run: they judge a change
//! to one structure exactly, while which structure is faster stays the time's question
//! (METHODOLOGY.md, *Counts*); the note under the table says so.

use super::Context;
use super::charts::{figure_or, grid};
use super::format::{self, slug};
use crate::charts::{Axis, Chart, Scale, Series, Unit};
use crate::figures::{figure, thousands};
use crate::model::Workload;
use crate::runs::Run;
use maud::{Markup, html};
use timerbench_results::counts::{EST_CYCLES_FORMULA, Metric};

/// The metrics of the table's columns, in order.
const COLUMNS: [Metric; 5] = [
    Metric::Instructions,
    Metric::EstCycles,
    Metric::LlMisses,
    Metric::D1Misses,
    Metric::BranchMispredicts,
];

/// Whether `run` holds counts for `workload`.
fn counted(run: &Run, workload: &Workload) -> bool {
    run.records
        .values()
        .any(|r| r.key.workload == workload.name && r.counts.is_some())
}

/// The counts of `workload` (each run's that has any), or `None` when no run has any.
pub(super) fn workload_counts(
    context: &Context,
    workload: &Workload,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Option<Markup>> {
    let model = context.model;
    let runs: Vec<&Run> = model
        .runs
        .iter()
        .filter(|run| counted(run, workload))
        .collect();
    if runs.is_empty() {
        return Ok(None);
    }
    let point = |run: &Run, name: &str, timers: u64| {
        let record = run.cell(&workload.name, timers, name)?;
        Some((timers as f64, figure(record, Metric::EstCycles)?))
    };
    let x = Axis::fit(
        "timers (log scale)",
        Scale::Log,
        Unit::Count,
        workload.sizes.iter().map(|&t| t as f64),
    );
    let y = Axis::fit(
        "estimated cycles per line (log scale)",
        Scale::Log,
        Unit::Count,
        runs.iter().flat_map(|run| {
            model.implementations.iter().flat_map(move |i| {
                workload
                    .sizes
                    .iter()
                    .filter_map(move |&t| point(run, &i.name, t).map(|p| p.1))
            })
        }),
    );
    let mut figures = Vec::new();
    let mut tables = Vec::new();
    for run in &runs {
        let series: Vec<Series> = model
            .implementations
            .iter()
            .map(|implementation| Series {
                points: workload
                    .sizes
                    .iter()
                    .filter_map(|&t| point(run, &implementation.name, t))
                    .collect(),
                ..Series::of(implementation)
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let (id, title) = if model.several() {
            (
                format!("{}-est-cycles-{}", slug(&workload.name), slug(&run.label)),
                format!(
                    "{}: estimated cycles per line — {}",
                    workload.name, run.label
                ),
            )
        } else {
            (
                format!("{}-est-cycles", slug(&workload.name)),
                format!("{}: estimated cycles per line", workload.name),
            )
        };
        let chart = Chart {
            id,
            title,
            x: x.clone(),
            y: y.clone(),
            series,
            markers: true,
            small: false,
            labelled: false,
        };
        figures.push(figure_or(chart, "", "no counted cell to draw", drawn)?);
        tables.push(table(context, run, workload));
    }
    Ok(Some(html! {
        h4 { "Counts" }
        p.note {
            "The timed part of each counted cell replayed once under Valgrind's Callgrind, \
             per line after the fill, on the simulated machine its record names: \
             instructions, estimated cycles (" (EST_CYCLES_FORMULA) "), last-level and D1 \
             misses, mispredicted branches. A count does not move from run to run, so it \
             judges a change to one structure exactly; which structure is faster stays a \
             question for the time above."
        }
        @for table in tables { (table) }
        div class=(grid(figures.len())) { @for f in figures { (f) } }
    }))
}

/// The table of `run`'s counted cells of `workload`: one row per implementation per size.
fn table(context: &Context, run: &Run, workload: &Workload) -> Markup {
    let model = context.model;
    let several = model.several();
    html! {
        div.scroll {
            table.cells.counts {
                @if several {
                    tr.group { th colspan=(COLUMNS.len() + 1) { (run.title()) } }
                }
                tr {
                    th { "Implementation" }
                    @for metric in COLUMNS { th.num { (metric.unit()) } }
                }
                @for &timers in &workload.sizes {
                    @let rows: Vec<&str> = model
                        .implementations
                        .iter()
                        .map(|i| i.name.as_str())
                        .filter(|name| {
                            run.cell(&workload.name, timers, name)
                                .is_some_and(|r| r.counts.is_some())
                        })
                        .collect();
                    @if !rows.is_empty() {
                        tr.size {
                            th colspan=(COLUMNS.len() + 1) { (thousands(timers)) " timers" }
                        }
                        @for name in rows {
                            tr {
                                td { (format::implementation(model, name)) }
                                @for metric in COLUMNS {
                                    @match run
                                        .cell(&workload.name, timers, name)
                                        .and_then(|r| figure(r, metric))
                                    {
                                        Some(value) => td.num { (per_line(value)) },
                                        None => td.num.na { "–" },
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A count per line with four significant digits or more: a small change must show.
fn per_line(value: f64) -> String {
    if value >= 1000.0 {
        thousands(value.round() as u64)
    } else if value >= 100.0 {
        format!("{value:.1}")
    } else if value >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.4}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_count_per_line_keeps_its_small_changes() {
        assert_eq!(super::per_line(12_345.6), "12,346");
        assert_eq!(super::per_line(123.45), "123.5");
        assert_eq!(super::per_line(10.2), "10.20");
        assert_eq!(super::per_line(0.0123), "0.0123");
    }
}
