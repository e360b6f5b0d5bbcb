//! The workloads: per workload what it models, its parameters, how to regenerate it (for
//! a workload file, its metadata and shape instead, [`super::file_workload`]), the
//! table of every cell (speed, the spread between its processes and within one, ratio to
//! the best, tail latency of the clock-moving operation and the p99.99 and max of every
//! operation kind, memory; with several runs, each run's columns and the ratios between
//! them; the cells measured under load marked, see [`super::load`]), and its charts
//! ([`super::charts`]).

use super::format::{
    self, decimals_for, ns_number, ratio, ratio_class, short_reason, spread_percent, status_badge,
    workload_anchor,
};
use super::{Context, charts, counts, file_workload, load};
use crate::charts::{Chart, nanoseconds_label};
use crate::figures::{
    bytes_per_timer, latency, measured_under_load, ns_per_op, process_spread, thousands,
};
use crate::model::{Workload, counts_against};
use crate::runs::Run;
use anyhow::Context as _;
use maud::{Markup, html};
use timerbench_results::{CellRecord, is_floor};

/// The columns of one run in a workload table, without the spread between processes and
/// the tail of each operation kind.
const COLUMNS_PER_RUN: usize = 5;

/// The percentiles of the clock-moving operation in their own columns; its max is in the
/// tail column of its kind, beside the other kinds'.
const CLOCK_PERCENTILES: [&str; 2] = ["p99", "p99.9"];

/// The columns of `run` in the table of `workload`: one more per operation kind (its
/// p99.99 / max), and one more for the spread between and within processes, for a run whose
/// samples came from several processes (older records have one, whose spread the MAD
/// beside the median already is).
fn columns_of(run: &Run, workload: &Workload) -> usize {
    COLUMNS_PER_RUN + workload.kinds.len() + usize::from(run.several_processes())
}

/// The section, and the charts it draws (into `drawn`).
pub(super) fn section(context: &Context, drawn: &mut Vec<Chart>) -> anyhow::Result<Markup> {
    let model = context.model;
    let mut workloads = Vec::new();
    for workload in &model.workloads {
        let charts = charts::workload_charts(context, workload, drawn)
            .with_context(|| format!("the section of workload {}", workload.name))?;
        let counts = counts::workload_counts(context, workload, drawn)
            .with_context(|| format!("the counts of workload {}", workload.name))?;
        let described = match &workload.file {
            Some(file) => file_workload::description(workload, file, drawn)
                .with_context(|| format!("the shape of workload file {}", workload.name))?,
            None => description(workload),
        };
        workloads.push(html! {
            section.workload id=(workload_anchor(&workload.name)) {
                (described)
                (table(context, workload))
                (charts)
                @if let Some(counts) = counts { (counts) }
            }
        });
    }
    let body = html! {
        p {
            "Per workload: what it models, its parameters, the figures of every cell, and the \
             charts. In the tables, " em { "ns/op" } " is the median time per operation line \
             over the timed replays of the whole workload, ± the median absolute deviation; "
            em { "× best" } " its ratio to the fastest exact structure at that size (in bold), \
             as in the summary; the approximate ones follow the exact ones, read against it \
             (below 1.00× where their slack buys speed), never in bold; "
            em { "p99, p99.9" } " the latency of the operation that moves the clock ("
            code { "advance" } ", " code { "next" } " or " code { "tick" } ", named in the \
             header), from a separate pass that times each operation; then per operation \
             kind (" code { "start" } ", " code { "stop" } ", ...) " em { "p99.99 / max" }
            ", its 99.99th percentile and its slowest call in that pass, the stall an event \
             loop would see; " em { "B/timer" }
            " the peak live heap bytes of the queue over the peak number of pending timers."
            @if model.runs.iter().any(Run::several_processes) {
                " A cell's samples come from several processes, interleaved with the other \
                 implementations'; " em { "between / within" } " is the spread of the \
                 processes' medians (their median absolute deviation over their median), then \
                 the spread of the samples within one process (the median over the processes \
                 of the same ratio). A spread between well above the spread within is drift \
                 from one process to the next, which the samples of one process cannot show."
            }
            @if model.runs.iter().any(|run| run.under_load().1 > 0) {
                " A cell marked " span.badge.load { "load" } " was measured while the machine \
                 was busier than the measurement allows (the legend under its table says how)."
            }
            @if model.several() {
                " The last columns are each run's ns/op over the first run's ("
                span.faster { "green: faster" } ", " span.slower { "red: slower" } ")."
            }
        }
        @for workload in workloads { (workload) }
    };
    Ok(super::section("workloads", body))
}

/// The heading, what the workload models, its shape, parameters and generator commands.
fn description(workload: &Workload) -> Markup {
    html! {
        h3 { (workload.name) }
        p {
            strong { "Models" } " "
            (workload.models.as_deref().unwrap_or("(a family this build does not know)")) ". "
            span.note {
                "Family " code { (workload.family) }
                @if let Some(tick) = &workload.tick { ", one tick is " (tick) }
                "."
            }
        }
        @if let Some(shape) = &workload.shape {
            p { strong { "Shape" } " " (shape) "." }
        }
        dl.params {
            @for param in &workload.params {
                dt { (param.name) "=" (param.value) }
                dd {
                    (param.help)
                    @if param.default { " " span.note { "(default)" } }
                }
            }
            dt { "timers" }
            dd {
                @for (index, &timers) in workload.sizes.iter().enumerate() {
                    @if index > 0 { ", " }
                    (thousands(timers))
                }
            }
            @if let Some(ops) = workload.ops {
                dt { "ops" }
                dd { (thousands(ops)) }
            }
        }
        details {
            summary { "Regenerate the workload" }
            pre {
                @for generator in workload.generators.values() { (generator) "\n" }
            }
        }
    }
}

/// Every cell of the workload, by size: the baseline's fastest first.
fn table(context: &Context, workload: &Workload) -> Markup {
    let model = context.model;
    let runs = &model.runs;
    let base = &runs[0];
    let kind = workload.clock_kind.as_deref();
    let kind_label = kind.unwrap_or("latency");
    let columns = 1
        + runs
            .iter()
            .map(|run| columns_of(run, workload))
            .sum::<usize>()
        + (runs.len() - 1);
    let cells = runs.iter().flat_map(|run| {
        run.records
            .values()
            .filter(|r| r.key.workload == workload.name)
    });
    html! {
        div.scroll {
            table.cells {
                @if model.several() {
                    tr.group {
                        th {}
                        @for run in runs {
                            th.sep colspan=(columns_of(run, workload)) { (run.title()) }
                        }
                        th.sep colspan=(runs.len() - 1) { "ratio" }
                    }
                }
                tr {
                    th { "Implementation" }
                    @for run in runs {
                        th.num.sep { "ns/op ± MAD" }
                        @if run.several_processes() { (spread_header(run)) }
                        @if run.has_floor() {
                            th.num title="ns/op over the fastest verified implementation's, \
                                          then over the floor's (the bookkeeping alone)" {
                                "× best" br; span.note { "× floor" }
                            }
                        } @else {
                            th.num { "× best" }
                        }
                        th.num title=(format!("{kind_label} latency, 99th percentile")) {
                            (kind_label) " p99"
                        }
                        th.num { "p99.9" }
                        @for kind in &workload.kinds {
                            th.num title=(format!("{kind} latency: 99.99th percentile / the \
                                                   slowest call")) {
                                (kind) br; span.note { "p99.99 / max" }
                            }
                        }
                        th.num title="peak live heap bytes over peak pending timers" { "B/timer" }
                    }
                    @for run in &runs[1..] {
                        th.num.sep { (run.label) "/" (base.label) }
                    }
                }
                @for &timers in &workload.sizes {
                    tr.size { th colspan=(columns) { (thousands(timers)) " timers" } }
                    @for name in rows(context, workload, timers) {
                        tr {
                            td { (format::implementation(model, name)) }
                            @for run in runs {
                                (run_columns(context, run, workload, timers, name, kind))
                            }
                            @let speed = |run: &Run| {
                                run.cell(&workload.name, timers, name).and_then(ns_per_op)
                            };
                            @for run in &runs[1..] {
                                @match (speed(base), speed(run)) {
                                    (Some(base), Some(other)) => {
                                        @let between = other / base;
                                        td.num.sep.(ratio_class(between)) { (ratio(between)) }
                                    }
                                    _ => td.num.sep.na { "–" },
                                }
                            }
                        }
                    }
                }
            }
        }
        @if cells.clone().any(CellRecord::is_engine) {
            (format::engine_legend(null_exchange(cells.clone())))
        }
        (load::legend(cells))
    }
}

/// The null engine's median exchange among `cells`, seconds, when it ran there.
fn null_exchange<'r>(mut cells: impl Iterator<Item = &'r CellRecord>) -> Option<f64> {
    cells
        .find_map(|r| r.engine.as_ref().filter(|e| e.name == "null"))
        .map(|e| e.median_exchange_seconds())
        .filter(|s| s.is_finite())
}

/// The header of the spread between and within processes, with the run's processes.
fn spread_header(run: &Run) -> Markup {
    let processes = run.processes();
    let title = format!(
        "the spread of ns/op between the {processes} processes that took each cell's samples \
         (the median absolute deviation of their medians over their median), then within one \
         process (the median over the processes of each one's MAD over its median)"
    );
    html! {
        th.num title=(title) {
            "between / within" br; span.note { (processes) " processes" }
        }
    }
}

/// The implementations with a cell at this size in any run: the exact ones, then the
/// approximate ones, each the baseline's fastest first, then the rest in registry order.
fn rows<'m>(context: &Context<'m>, workload: &Workload, timers: u64) -> Vec<&'m str> {
    let runs = &context.model.runs;
    let mut rows: Vec<&str> = context
        .model
        .implementations
        .iter()
        .map(|i| i.name.as_str())
        .filter(|name| {
            runs.iter()
                .any(|r| r.cell(&workload.name, timers, name).is_some())
        })
        .collect();
    let speed = |name: &str| {
        runs[0]
            .cell(&workload.name, timers, name)
            .and_then(ns_per_op)
            .unwrap_or(f64::INFINITY)
    };
    let approximate = |name: &str| {
        context
            .model
            .implementation(name)
            .is_some_and(|i| i.is_approximate())
    };
    // The exact structures first, then the approximate ones apart (as the summary ranks
    // them), each by speed; the floor is a yardstick, not a competitor: last.
    rows.sort_by(|a, b| {
        (is_floor(a), approximate(a), speed(a))
            .partial_cmp(&(is_floor(b), approximate(b), speed(b)))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    rows
}

/// The columns of one run for one cell: its figures, or why it has none.
fn run_columns(
    context: &Context,
    run: &Run,
    workload: &Workload,
    timers: u64,
    name: &str,
    kind: Option<&str>,
) -> Markup {
    let Some(record) = run.cell(&workload.name, timers, name) else {
        return html! { td.na.sep colspan=(columns_of(run, workload)) { "not run" } };
    };
    let (Some(median), Some(throughput)) = (ns_per_op(record), record.throughput.as_ref()) else {
        let reason = record.reason.as_deref().unwrap_or("no figures recorded");
        // Beyond the implementation's declared range is no failure: not drawn as one.
        let class = if counts_against(record.status) {
            "bad"
        } else {
            "na"
        };
        return html! {
            td.sep.(class) colspan=(columns_of(run, workload)) {
                (status_badge(record.status)) " " (short_reason(reason, 90))
                @if let Some(id) = context.failure_id(&run.label, record) {
                    " " a href=(format!("#{id}")) { "(reason)" }
                }
            }
        };
    };
    let decimals = decimals_for(median);
    let to_best = run.ratio_to_best(record);
    // Only an exact structure can be the best (the summary's meaning): an approximate
    // one faster than it shows its ratio below 1 without the bold, as does an engine.
    let contender = !is_floor(name) && !record.is_approximate() && !record.is_engine();
    let best = contender && to_best.is_some_and(|r| r <= 1.0 + 1e-12);
    let latency = kind.and_then(|k| latency(record, k));
    html! {
        td.num.sep.best[best] {
            // The mark before the figure, so that the figures stay aligned on the right.
            @if measured_under_load(record) { (load::mark(record)) " " }
            (ns_number(median, decimals)) " ± " (ns_number(throughput.ns_per_op.mad, decimals))
        }
        @if run.several_processes() { (spread_cell(record)) }
        td.num.best[best] {
            @if is_floor(name) {
                span.note { "the floor" }
            } @else if let Some(r) = to_best {
                (ratio(r))
            }
            @if let Some(r) = run.ratio_to_floor(record) {
                br; span.note title="ns/op over the floor's at this size" { (ratio(r)) " floor" }
            }
        }
        @for percentile in CLOCK_PERCENTILES {
            td.num {
                @match latency.and_then(|l| l.percentiles.get(percentile)) {
                    Some(&ns) => (nanoseconds_label(ns as f64)),
                    None => "–",
                }
            }
        }
        @for kind in &workload.kinds {
            (tail_cell(record, kind))
        }
        td.num {
            @match bytes_per_timer(record) {
                Some(bytes) => (format!("{bytes:.1}")),
                None => "–",
            }
        }
    }
}

/// The tail of one operation kind in a cell: `12.3 µs / 9.8 ms` (p99.99 / max), `–` when
/// the cell has no latency of that kind.
fn tail_cell(record: &CellRecord, kind: &str) -> Markup {
    let figure = |name: &str| {
        latency(record, kind)
            .and_then(|l| l.percentiles.get(name))
            .map(|&ns| nanoseconds_label(ns as f64))
    };
    let (Some(tail), Some(max)) = (figure("p99.99"), figure("max")) else {
        return html! { td.num.na { "–" } };
    };
    let calls = latency(record, kind).map_or(0, |l| l.count);
    let title = format!(
        "{kind}: 99.99th percentile {tail}, slowest of {} calls {max}",
        thousands(calls)
    );
    html! { td.num title=(title) { (tail) " / " (max) } }
}

/// The spread between a cell's processes and within one: `±2.4% / ±0.8%`, or `– / ±0.8%`
/// for a cell of one process (a record older than the field, or a run resumed from one).
fn spread_cell(record: &CellRecord) -> Markup {
    let Some(spread) = process_spread(record) else {
        return html! { td.num.spread.na { "–" } };
    };
    let medians: Vec<String> = spread
        .medians
        .iter()
        .map(|m| ns_number(*m, decimals_for(*m)))
        .collect();
    let title = match spread.between {
        Some(between) => format!(
            "between its {} processes (medians {} ns/op, in the order run): {}; within one: {}",
            spread.processes,
            medians.join(", "),
            spread_percent(between),
            spread_percent(spread.within)
        ),
        None => format!(
            "one process, so no spread between processes; within it: {}",
            spread_percent(spread.within)
        ),
    };
    html! {
        td.num.spread title=(title) {
            @match spread.between {
                Some(between) => (spread_percent(between)),
                None => span.na { "–" },
            }
            " / " (spread_percent(spread.within))
        }
    }
}
