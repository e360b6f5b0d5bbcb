//! Live runs: the structures in a real event loop on the monotonic clock (`timerbench
//! live`, `docs/live.md`), per `live.jsonl` and workload: a table per structure and wait
//! strategy (lateness beside the bare loop's, wakeups, CPU, idle wakeups, verification), the
//! lateness of each structure against its percentile, and CPU per second against wakeups
//! per second.
//!
//! The lines of these charts are wait strategies and (structure, wait) pairs, not the
//! implementations of the runs' charts, so their figures carry a scope of their own
//! ([`super::charts::scoped_figure`]): one look per name within it, the same in every chart.

use super::Context;
use super::charts::{PerStructure, per_structure_figures, scoped_figure};
use super::format::slug;
use crate::charts::{Axis, Chart, Scale, Series, Unit};
use crate::figures::thousands;
use crate::live::{LiveSource, lateness_curve, micros, per_second, wait_index, wait_label};
use crate::style::{Dash, LineStyle, Marker, PALETTE, nth};
use anyhow::Context as _;
use maud::{Markup, html};
use std::collections::BTreeSet;
use timerbench_results::live::LiveRecord;

/// The scope of the lateness charts' lines (wait strategies and their bare loops).
const LATENESS_SCOPE: &str = "live-lateness";
/// The scope of the CPU chart's points (structure and wait).
const CPU_SCOPE: &str = "live-cpu";

/// The section, when any live record file was given or found; its charts into `drawn`.
pub(super) fn section(context: &Context, drawn: &mut Vec<Chart>) -> anyhow::Result<Option<Markup>> {
    let sources = &context.model.live;
    if sources.is_empty() {
        return Ok(None);
    }
    // Every (structure, wait) point of every CPU chart, so each keeps one look on the page.
    let points: BTreeSet<String> = sources
        .iter()
        .flat_map(|s| &s.records)
        .map(point_name)
        .collect();
    let points: Vec<String> = points.into_iter().collect();
    let mut parts = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        parts.push(source_part(source, index, &points, drawn)?);
    }
    Ok(Some(super::section(
        "live",
        html! { (introduction()) @for part in parts { (part) } },
    )))
}

fn introduction() -> Markup {
    html! {
        p {
            "Each structure inside a real epoll loop on " code { "CLOCK_MONOTONIC" } " ("
            code { "timerbench live" } ", docs/live.md): workload ticks become wall time, \
             operations arrive over a socket at their scheduled times, timers fire when the \
             real clock reaches them. One row per structure and wait strategy: "
            code { "pwait2" } " (epoll_pwait2, a nanosecond timeout to the next deadline), "
            code { "wait" } " (epoll_wait, milliseconds rounded up), "
            code { "timerfd" } " (an absolute timerfd at the next deadline) and "
            code { "tick" } " (woken every period, whatever is pending)."
        }
        p.note {
            em { "Lateness" } ": callback time minus deadline on the wall clock, in µs; "
            em { "bare loop" } ": a loop that only sleeps to the same deadlines with the same \
             wait, right after on the same thread, so a structure's lateness reads as the \
             machine's plus its own. " em { "Wakeups/s" } ": waits that returned per second of \
             the workload, and of them " em { "useless" } " (no timer fired, no I/O). "
            em { "CPU ms/s" } ": the loop thread's CPU time per wall second. "
            em { "Idle wakeups/s" } ": the same loop with nothing pending and nothing \
             arriving, where a deadline-driven loop should not wake and a tick-driven one wakes \
             every period. " em { "Status" } ": whether the firings agree with the reference \
             model for the operations as applied. The charts draw each run's whole lateness \
             distribution (a CDF on a log scale of 1 / (1 − p)); a record written before live \
             schema 3 keeps only p50, p99, p99.9 and the largest, and is drawn through \
             those."
        }
        p.note {
            (super::format::engine_badge()) " rows are another runtime's own timers on the \
             same timers (" code { "timerbench engine --micro lateness" } ", docs/engines.md), \
             measured inside the engine's process: lateness from the call that scheduled the \
             timer, wake-ups as the engine counts them (Netty: its worker thread's voluntary \
             context switches), CPU of its worker; no bare loop, no useless wake-ups."
        }
    }
}

/// The name of a record's point in the CPU chart.
fn point_name(record: &LiveRecord) -> String {
    format!("{} {}", record.implementation, wait_label(record))
}

/// One `live.jsonl`: where it came from, the machine's settings, and each workload.
fn source_part(
    source: &LiveSource,
    index: usize,
    points: &[String],
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Markup> {
    let heading = html! { h3 { "Live runs in " code { (source.path.display()) } } };
    if source.records.is_empty() {
        return Ok(html! { (heading) p { "No live runs in this file." } });
    }
    let mut parts = Vec::new();
    for workload in source.workloads() {
        let records = source.of_workload(workload);
        let id = format!("live-{}-{}", index + 1, slug(workload));
        let lateness = lateness_charts(source, workload, &id, drawn)?;
        let cpu = cpu_chart(&records, &id, points, drawn)?;
        parts.push(html! {
            h4 { (workload) }
            (table(&records))
            (reasons(&records))
            div.charts { @for figure in lateness { (figure) } (cpu) }
        });
    }
    let slack = |r: &LiveRecord| format!("{} µs", micros(r.timer_slack_ns));
    let pinned = |cpu: Option<usize>| cpu.map_or("not pinned".to_string(), |c| format!("CPU {c}"));
    Ok(html! {
        (heading)
        p.note {
            (source.records.len()) " runs on " (source.settings(|r| r.host.clone()))
            " · kernel " (source.settings(|r| r.kernel.clone()))
            " · clock source " (source.settings(|r| r.clock_source.clone()))
            " · timer slack " (source.settings(slack))
            " · policy " (source.settings(policy))
            " · loop " (source.settings(|r| pinned(r.loop_cpu)))
            " · feeder " (source.settings(|r| pinned(r.feeder_cpu)))
            " · revision " (source.settings(|r| r.git_revision.clone()))
            " · started " (source.settings(|r| r.started.clone()))
        }
        @if let Some(runtimes) = super::live_runtimes::table(&source.records) { (runtimes) }
        @for part in parts { (part) }
    })
}

/// `other`, or a real-time policy with its priority: `fifo 50`.
fn policy(record: &LiveRecord) -> String {
    if record.priority == 0 {
        record.policy.clone()
    } else {
        format!("{} {}", record.policy, record.priority)
    }
}

/// One row per record; the TCP mode's columns when any record has them.
fn table(records: &[&LiveRecord]) -> Markup {
    let tcp = records.iter().any(|r| r.tcp.is_some());
    html! {
        div.scroll {
            table.cells.live {
                tr.group {
                    th colspan="5" {}
                    th.sep colspan="4" { "lateness, µs" }
                    th.sep colspan="4" { "bare loop, µs" }
                    th.sep { "loaded, µs" }
                    th.sep colspan="2" { "wakeups/s" }
                    th.sep colspan="2" {}
                    @if tcp { th.sep colspan="5" { "TCP connections" } }
                }
                tr {
                    th { "Structure" }
                    th { "wait" }
                    th { "status" }
                    th.num { "firings" }
                    th.num title="fired before their deadline" { "early" }
                    th.num.sep { "p50" } th.num { "p99" } th.num { "p99.9" } th.num { "max" }
                    th.num.sep { "p50" } th.num { "p99" } th.num { "p99.9" } th.num { "max" }
                    th.num.sep title="the loaded baseline: the bare loop's waits while the same \
                                      operations arrive, read and dropped" { "p99" }
                    th.num.sep { "all" } th.num title="no timer fired, no I/O" { "useless" }
                    th.num.sep title="the loop thread's CPU time per wall second" { "CPU ms/s" }
                    th.num title="wakeups per second with nothing pending" { "idle wakeups/s" }
                    @if tcp {
                        th.num.sep { "opened" }
                        th.num title="closed within the structure's declared lateness plus the \
                                      bare loop's p99.9, of those closed by their timer" {
                            "closed on time"
                        }
                        th.num title="closed although a keepalive came within the timeout" {
                            "closed wrongly"
                        }
                        th.num title="the server process's peak resident set" { "server MiB" }
                        th.num title="the client process's peak resident set" { "client MiB" }
                    }
                }
                @for record in records { (row(record, tcp)) }
            }
        }
    }
}

fn row(record: &LiveRecord, tcp: bool) -> Markup {
    let lateness = &record.lateness.total;
    let spread = |s: &timerbench_results::live::Spread| {
        [s.p50_ns, s.p99_ns, s.p999_ns, s.max_ns].map(|ns| {
            if s.count == 0 {
                "–".to_string()
            } else {
                micros(ns)
            }
        })
    };
    let [l50, l99, l999, lmax] = spread(lateness);
    let [b50, b99, b999, bmax] = spread(&record.baseline);
    // None with --tcp, for an engine, and before live schema 5.
    let loaded = record
        .loaded_baseline
        .as_ref()
        .map_or("–".to_string(), |loaded| {
            spread(&loaded.lateness)[1].clone()
        });
    let phase = &record.workload_phase;
    // An engine's server counts no wakeups (`engine.wakeups_of` says so): not 0, none.
    // A lateness answer counts its worker's wake-ups but does not tell useless ones apart.
    let server = record.engine.is_some() && record.tcp.is_some();
    let wakeups = |rate: f64| match server {
        true => "n/c".to_string(),
        false => per_second(rate),
    };
    let useless = match (server, record.is_engine()) {
        (true, _) => "n/c".to_string(),
        (false, true) => "–".to_string(),
        (false, false) => per_second(phase.useless_per_second),
    };
    html! {
        tr data-structure=(record.implementation) data-wait=(record.wait) {
            td {
                span.impl { (record.implementation) }
                @if record.is_engine() { " " (super::format::engine_badge()) }
            }
            td { (wait_label(record)) }
            td { span.badge.(record.status) { (record.status) } }
            td.num { (record.firings) }
            td.num { (record.lateness.early) }
            td.num.sep { (l50) } td.num { (l99) } td.num { (l999) } td.num { (lmax) }
            td.num.sep { (b50) } td.num { (b99) } td.num { (b999) } td.num { (bmax) }
            td.num.sep { (loaded) }
            td.num.sep { (wakeups(phase.wakeups_per_second)) }
            td.num { (useless) }
            td.num.sep { (format!("{:.2}", phase.cpu_ms_per_second)) }
            td.num { (wakeups(record.idle_phase.wakeups_per_second)) }
            @if tcp { (tcp_cells(record)) }
        }
    }
}

/// The TCP mode's figures of a row (dashes for a run fed over the socket pair).
fn tcp_cells(record: &LiveRecord) -> Markup {
    let mib = |bytes: u64| format!("{:.1}", bytes as f64 / f64::from(1 << 20));
    html! {
        @match &record.tcp {
            Some(tcp) => {
                td.num.sep title=(tcp.connections_why) { (thousands(tcp.connections)) }
                td.num { (thousands(tcp.closed_on_time)) " of " (thousands(tcp.closed)) }
                td.num { (thousands(tcp.closed_wrongly)) }
                td.num { (mib(tcp.server_peak_rss_bytes)) }
                td.num { (mib(tcp.client_peak_rss_bytes)) }
            }
            None => { td.num.sep { "–" } td.num { "–" } td.num { "–" } td.num { "–" } td.num { "–" } }
        }
    }
}

/// Every reason a record gives (why unverified, cut, or behind real time), by its row.
fn reasons(records: &[&LiveRecord]) -> Markup {
    let with_reasons: Vec<&&LiveRecord> =
        records.iter().filter(|r| !r.reasons.is_empty()).collect();
    html! {
        @if !with_reasons.is_empty() {
            ul.note.reasons {
                @for record in with_reasons {
                    @for reason in &record.reasons {
                        li { strong { (record.implementation) " with " (wait_label(record)) } ": " (reason) }
                    }
                }
            }
        }
    }
}

/// The look of a wait strategy's line (its bare loop's: the same colour, dotted).
fn wait_look(wait: &str, bare: bool) -> ((u8, u8, u8), LineStyle) {
    let color = PALETTE[wait_index(wait) % PALETTE.len()];
    let style = if bare {
        LineStyle {
            dash: Dash::Dotted,
            marker: Marker::Square,
        }
    } else {
        LineStyle::PLAIN
    };
    (color, style)
}

/// The latest record of each wait strategy of `structure` on `workload`, in [`WAITS`]
/// order (a file may hold several runs of one).
fn latest_by_wait<'s>(
    source: &'s LiveSource,
    workload: &str,
    structure: &str,
) -> Vec<&'s LiveRecord> {
    let mut latest: Vec<&LiveRecord> = Vec::new();
    for record in &source.records {
        if record.workload == workload && record.implementation == structure {
            latest.retain(|r| r.wait != record.wait);
            latest.push(record);
        }
    }
    latest.sort_by_key(|r| wait_index(&r.wait));
    latest
}

/// One chart per structure: its lateness and its bare loop's against the percentile, per
/// wait strategy, all on the same axes.
fn lateness_charts(
    source: &LiveSource,
    workload: &str,
    id: &str,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Vec<Markup>> {
    let mut per_structure = Vec::new();
    for structure in source.structures(workload) {
        let mut series = Vec::new();
        for record in latest_by_wait(source, workload, structure) {
            for bare in [false, true] {
                let (color, style) = wait_look(&record.wait, bare);
                let name = if bare {
                    format!("bare {}", record.wait)
                } else {
                    record.wait.clone()
                };
                series.push(Series {
                    name,
                    color,
                    style,
                    hollow: false,
                    points: lateness_curve(record, bare)
                        .with_context(|| format!("{}", source.path.display()))?,
                });
            }
        }
        per_structure.push((structure, series));
    }
    let fit = |points: &[(f64, f64)]| {
        let x = Axis::fit(
            "percentile (log scale of 1 / (1 − p))",
            Scale::Log,
            Unit::Percentile,
            points.iter().map(|p| p.0),
        );
        let y = Axis::fit(
            "lateness on the wall clock (log scale)",
            Scale::Log,
            Unit::Nanoseconds,
            points.iter().map(|p| p.1),
        );
        (x, y)
    };
    let look = PerStructure {
        id: &format!("{id}-lateness"),
        title: "lateness by percentile",
        caption: "Solid: the structure's lateness per wait strategy; dotted: the bare loop's.",
        empty: "no firing to draw",
        scope: LATENESS_SCOPE,
    };
    per_structure_figures(per_structure, fit, &look, drawn)
}

/// The loop's CPU time per wall second against its wakeups per second, one point per
/// structure and wait strategy (the latest run of each).
fn cpu_chart(
    records: &[&LiveRecord],
    id: &str,
    points: &[String],
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Markup> {
    let mut series: Vec<Series> = Vec::new();
    // An engine's record has no wakeup count to place it by.
    for record in records.iter().filter(|r| r.engine.is_none()) {
        let name = point_name(record);
        let (color, style) = nth(points.iter().position(|p| *p == name).unwrap_or(0));
        let phase = &record.workload_phase;
        let point = (phase.wakeups_per_second, phase.cpu_ms_per_second * 1e6);
        series.retain(|s| s.name != name);
        series.push(Series {
            name,
            color,
            style,
            hollow: false,
            points: vec![point],
        });
    }
    let x = Axis::fit(
        "wakeups per second (log scale)",
        Scale::Log,
        Unit::Count,
        series.iter().map(|s| s.points[0].0),
    );
    let y = Axis::fit(
        "loop CPU time per wall second (log scale)",
        Scale::Log,
        Unit::Nanoseconds,
        series.iter().map(|s| s.points[0].1),
    );
    let chart = Chart {
        id: format!("{id}-cpu"),
        title: "loop CPU against wakeups".to_string(),
        x,
        y,
        series,
        markers: true,
        small: false,
        labelled: true,
    };
    scoped_figure(
        chart,
        "One point per structure and wait strategy, over the workload phase: a loop that \
         wakes more pays more CPU per second; a point above the others at the same wakeups \
         spends more per wakeup.",
        "no run to draw",
        Some(CPU_SCOPE),
        drawn,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::WAITS;

    #[test]
    fn every_wait_and_its_bare_loop_look_apart() {
        let mut looks = Vec::new();
        for wait in WAITS {
            for bare in [false, true] {
                let (color, style) = wait_look(wait, bare);
                looks.push((color, style.dash));
            }
        }
        for (index, look) in looks.iter().enumerate() {
            assert!(!looks[..index].contains(look), "look {index} repeats");
        }
    }
}
