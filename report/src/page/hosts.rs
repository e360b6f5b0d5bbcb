//! Hosts side by side, when the runs are of more than one host (their `--host-label`, else
//! their CPU model): each host's environment and ranking over every
//! workload, then the pairs whose order flips between two hosts beyond both hosts' noise
//! ([`crate::hosts`]). The comparison between runs says how much faster a host is; this
//! says whether it ranks the structures the same way.

use super::Context;
use super::format;
use crate::hosts::{flips, memory_probe, rankings};
use crate::model::Model;
use maud::{Markup, html};
use std::collections::BTreeSet;
use timerbench_results::counts::Metric;
use timerbench_results::shards::host_of;
use timerbench_results::stats::{MAD_TO_SIGMA, NOISE_K};

/// Whether the runs are one plan's from more than one host: each records the same plan,
/// and they name at least two hosts. Runs of different plans are compared, not set side
/// by side as hosts: their differences are the plans' as much as the hosts'.
pub(super) fn several_hosts(model: &Model) -> bool {
    let environments: Option<Vec<&timerbench_results::Environment>> = model
        .runs
        .iter()
        .map(|run| run.environment.as_ref())
        .collect();
    let Some(environments) = environments else {
        return false;
    };
    let plans: BTreeSet<Option<&str>> = environments.iter().map(|e| e.plan.as_deref()).collect();
    let hosts: BTreeSet<String> = environments.iter().map(|e| host_of(e)).collect();
    plans.len() == 1 && !plans.contains(&None) && hosts.len() > 1
}

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let body = html! {
        p {
            "Each host's run ranked on its own over every workload (× best: the geometric \
             mean of the ratios to the fastest exact structure, as in the summary), then, for \
             each pair of hosts, the structures whose order at one size of a workload is \
             reversed beyond both hosts' noise: on each host |a − b| > " (NOISE_K)
            " × √(σa² + σb²), σ = " (MAD_TO_SIGMA) " × the MAD of a cell's samples."
        }
        @for run in &model.runs {
            @let environment = run.environment.as_ref();
            h4 {
                (run.title()) ": "
                (environment.map_or(String::new(), host_of))
            }
            @if let Some(e) = environment {
                p.note {
                    (e.cpu) " · " (e.cores) " cores · "
                    (format!("{:.1}", e.memory_bytes as f64 / (1u64 << 30) as f64)) " GiB · "
                    (e.os) " · revision " (e.git_revision) " · memory probe "
                    (memory_probe(run).map_or("not recorded".to_string(), |ns| format!("{ns:.1} ns")))
                }
            }
            @let ranking = rankings(model, run, Metric::Ns).overall;
            table {
                tr { th.num { "#" } th { "Implementation" } th.num { "× best" } th.num { "cells" } }
                @for (index, entry) in ranking.entries.iter().enumerate() {
                    tr {
                        td.num {
                            @if entry.geomean.is_some() && !entry.partial { (index + 1) } @else { "–" }
                        }
                        td { (format::implementation(model, &entry.implementation)) }
                        td.num { (entry.geomean.map_or("–".to_string(), |g| format!("{g:.2}×"))) }
                        td.num { (entry.covered) " of " (ranking.cells) }
                    }
                }
            }
        }
        @for (a, first) in model.runs.iter().enumerate() {
            @for second in &model.runs[a + 1..] {
                @let found = flips(first, second, Metric::Ns);
                h4 { "Flips between " (first.label) " and " (second.label) ": " (found.len()) }
                @if found.is_empty() {
                    p { "No pair's order differs between the two beyond both hosts' noise." }
                } @else {
                    table {
                        tr {
                            th { "Workload" } th.num { "timers" }
                            th { "ahead on " (first.label) } th { "ahead on " (second.label) }
                            th.num { "by, on " (first.label) } th.num { "by, on " (second.label) }
                        }
                        @for flip in &found {
                            tr {
                                td { (flip.workload) } td.num { (flip.timers) }
                                td { (flip.ahead_on_first) } td { (flip.ahead_on_second) }
                                td.num { (format!("{:.2}×", flip.margin_first)) }
                                td.num { (format!("{:.2}×", flip.margin_second)) }
                            }
                        }
                    }
                }
            }
        }
    };
    super::section("hosts", body)
}
