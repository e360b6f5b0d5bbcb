//! Threads: each structure wrapped in each sharing scheme and driven from producer threads
//! (`timerbench threads`, `docs/threads.md`), per `threads.jsonl` and workload: a table per
//! structure, producer count and scheme (throughput, per-call latency, cross-thread stops
//! and the memory their pending commands hold, verification), and throughput against
//! producer threads, one chart per structure with a line per scheme.
//!
//! The lines are schemes, not implementations, so the figures carry a scope of their own
//! ([`super::charts::scoped_figure`]).

use super::Context;
use super::charts::{PerStructure, per_structure_figures};
use super::format::slug;
use crate::charts::{Axis, Chart, Scale, Series, Unit};
use crate::figures::thousands;
use crate::style::nth;
use crate::threads::{CALLS, CallLatency, ThreadsRun, ThreadsSource, scheme_index};
use maud::{Markup, html};

/// The scope of the throughput charts' lines (schemes).
const SCOPE: &str = "threads";

/// The section, when any threads record file was given or found; its charts into `drawn`.
pub(super) fn section(context: &Context, drawn: &mut Vec<Chart>) -> anyhow::Result<Option<Markup>> {
    let sources = &context.model.threads;
    if sources.is_empty() {
        return Ok(None);
    }
    let mut parts = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        parts.push(source_part(source, index, drawn)?);
    }
    Ok(Some(super::section(
        "threads",
        html! { (introduction()) @for part in parts { (part) } },
    )))
}

fn introduction() -> Markup {
    html! {
        p {
            "Each structure wrapped, unchanged, in a sharing scheme and driven from producer \
             threads (" code { "timerbench threads" } ", docs/threads.md): "
            code { "global-lock" } " (one mutex), " code { "owner" } " (an owner thread applies \
             commands from a multi-producer queue), " code { "per-thread" } " (a queue per \
             producer, another's stops sent to its owner) and " code { "locked-shards" }
            " (K queues each behind its lock, chosen by timer). Every run's shard logs are \
             replayed through the reference model: a timer lost, fired twice or after its stop \
             was acknowledged makes it unverified."
        }
        p.note {
            em { "Mops/s" } ": producer operations per second, until every shard has applied \
             everything. " em { "start, stop, restart" } ": each call's latency over all \
             producers, ns (for the owner scheme the call is the send). "
            em { "Cross-thread stop" } ": from a stop issued by another producer until the \
             timer can no longer fire, ns. " em { "Pending stops" } ": the most commands \
             waiting in one queue at a drain, and their bytes. " em { "over" } ": producers \
             plus helper threads (the ticker, the owner) exceed the machine's cores, so the \
             figures measure preempted lock holders and the scheduler as much as the scheme, \
             not scaling."
        }
    }
}

/// One `threads.jsonl`: each workload's table and charts.
fn source_part(
    source: &ThreadsSource,
    index: usize,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Markup> {
    let heading = html! { h3 { "Threads runs in " code { (source.path.display()) } } };
    if source.runs.is_empty() {
        return Ok(html! { (heading) p { "No threads runs in this file." } });
    }
    let mut parts = Vec::new();
    for workload in source.workloads() {
        let runs = source.of_workload(workload);
        let first = &runs[0].record;
        let id = format!("threads-{}-{}", index + 1, slug(workload));
        let charts = throughput_charts(source, workload, &id, drawn)?;
        parts.push(html! {
            h4 { (workload) }
            p.note {
                (runs.len()) " runs · seed " (first.seed) " · "
                (format!("{:.0}%", first.cross_share * 100.0))
                " of stops from another producer · " (first.cores) " cores"
            }
            (table(&runs))
            (offences(&runs))
            div.charts { @for figure in charts { (figure) } }
        });
    }
    Ok(html! { (heading) @for part in parts { (part) } })
}

fn table(runs: &[&ThreadsRun]) -> Markup {
    html! {
        div.scroll {
            table.cells.threads {
                tr.group {
                    th colspan="4" {}
                    @for call in CALLS { th.sep colspan="3" { (call) ", ns" } }
                    th.sep colspan="2" { "cross-thread stop, ns" }
                    th.sep colspan="2" { "pending stops" }
                    th.sep colspan="2" {}
                }
                tr {
                    th { "Structure" }
                    th { "scheme" }
                    th.num { "threads" }
                    th.num title="producer operations per second" { "Mops/s" }
                    @for _ in CALLS {
                        th.num.sep { "p50" } th.num { "p99" } th.num { "p99.99" }
                    }
                    th.num.sep { "p50" } th.num { "p99" }
                    th.num.sep title="the most commands waiting in one queue" { "peak" }
                    th.num title="their bytes" { "bytes" }
                    th.num.sep title="the owner thread's CPU time over the run's wall time" {
                        "owner CPU"
                    }
                    th { "verified" }
                }
                @for run in runs { (row(run)) }
            }
        }
    }
}

fn row(run: &ThreadsRun) -> Markup {
    let r = &run.record;
    let call = |name: &str| -> [String; 3] {
        match run.calls.get(name) {
            Some(&CallLatency {
                p50, p99, p9999, ..
            }) => [p50, p99, p9999].map(thousands),
            None => ["–".to_string(), "–".to_string(), "–".to_string()],
        }
    };
    let cross = |percentile: &str| {
        r.cross_stop
            .get(percentile)
            .map_or("–".to_string(), thousands)
    };
    let over = format!(
        "{} producers plus {} helper threads exceed the {} cores",
        r.threads, r.helper_threads, r.cores
    );
    let status = if r.verified { "verified" } else { "unverified" };
    html! {
        tr data-structure=(r.implementation) data-scheme=(r.scheme) data-threads=(r.threads) {
            td { span.impl { (r.implementation) } }
            td {
                span.impl {
                    (r.scheme)
                    @if r.scheme == "locked-shards" { " ×" (r.shards) }
                }
            }
            td.num {
                (r.threads)
                @if r.oversubscribed { span.badge.over title=(over) { "over" } }
            }
            td.num { (format!("{:.2}", r.ops_per_second / 1e6)) }
            @for name in CALLS {
                @let [p50, p99, p9999] = call(name);
                td.num.sep { (p50) } td.num { (p99) } td.num { (p9999) }
            }
            td.num.sep { (cross("p50")) } td.num { (cross("p99")) }
            td.num.sep { (thousands(r.peak_queued)) }
            td.num { (thousands(r.peak_queued_bytes)) }
            td.num.sep {
                (r.owner_cpu_share.map_or("–".to_string(), |s| format!("{:.0}%", s * 100.0)))
            }
            td { span.badge.(status) { (status) } }
        }
    }
}

/// The first offending timer of every run that did not verify.
fn offences(runs: &[&ThreadsRun]) -> Markup {
    let unverified: Vec<&&ThreadsRun> = runs.iter().filter(|r| !r.record.verified).collect();
    html! {
        @if !unverified.is_empty() {
            ul.note.reasons {
                @for run in unverified {
                    @let r = &run.record;
                    li {
                        strong { (r.scheme) " around " (r.implementation) " at " (r.threads) " threads" }
                        ": " (r.offence.as_deref().unwrap_or("no offence recorded"))
                    }
                }
            }
        }
    }
}

/// Throughput against producer threads, one chart per structure, a line per scheme (the
/// latest run of each producer count), all on the same axes.
fn throughput_charts(
    source: &ThreadsSource,
    workload: &str,
    id: &str,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Vec<Markup>> {
    let schemes = source.schemes(workload);
    let per_structure: Vec<(&str, Vec<Series>)> = source
        .structures(workload)
        .into_iter()
        .map(|structure| {
            let series = schemes
                .iter()
                .map(|scheme| {
                    let (color, style) = nth(scheme_look(&schemes, scheme));
                    Series {
                        name: scheme.to_string(),
                        color,
                        style,
                        hollow: false,
                        points: source.throughput(workload, structure, scheme),
                    }
                })
                .collect();
            (structure, series)
        })
        .collect();
    // Threads on a log axis: 1, 2, 4, ... as a larger machine runs them, no fractions;
    // throughput from zero, read against none.
    let fit = |points: &[(f64, f64)]| {
        let x = Axis::fit(
            "producer threads (log scale)",
            Scale::Log,
            Unit::Count,
            points.iter().map(|p| p.0),
        );
        let y = Axis::fit(
            "producer operations per second",
            Scale::Linear,
            Unit::Count,
            points.iter().map(|p| p.1).chain([0.0]),
        );
        (x, y)
    };
    let over = oversubscribed(source, workload);
    let look = PerStructure {
        id,
        title: "throughput against threads",
        caption: &over,
        empty: "no run to draw",
        scope: SCOPE,
    };
    per_structure_figures(per_structure, fit, &look, drawn)
}

/// A scheme's look: the known schemes' in their order, others after them.
fn scheme_look(schemes: &[&str], scheme: &str) -> usize {
    let index = scheme_index(scheme);
    if index < crate::threads::SCHEMES.len() {
        index
    } else {
        crate::threads::SCHEMES.len() + schemes.iter().position(|s| *s == scheme).unwrap_or(0)
    }
}

/// Which points are oversubscribed on the machine that ran them, per scheme.
fn oversubscribed(source: &ThreadsSource, workload: &str) -> String {
    let mut parts = Vec::new();
    for scheme in source.schemes(workload) {
        let mut counts: Vec<usize> = source
            .runs
            .iter()
            .map(|r| &r.record)
            .filter(|r| r.workload == workload && r.scheme == scheme && r.oversubscribed)
            .map(|r| r.threads)
            .collect();
        counts.sort_unstable();
        counts.dedup();
        if !counts.is_empty() {
            let counts: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
            parts.push(format!("{scheme} at {}", counts.join(", ")));
        }
    }
    if parts.is_empty() {
        "No point is oversubscribed.".to_string()
    } else {
        format!(
            "Oversubscribed (more threads than cores; not scaling): {}.",
            parts.join("; ")
        )
    }
}
