//! The summary: the headline (the fastest overall and per family), what the ranking
//! means and hides, and the ranking tables, overall and one card per workload family,
//! each with every implementation's slowest call beside its speed; with several runs,
//! the other runs' figures beside the first's.

use super::format::{self, ratio, ratio_class};
use super::{Context, load};
use crate::charts::nanoseconds_label;
use crate::model::{Workload, counts_against};
use crate::ranking::{RankEntry, Ranking, SlowestCall};
use maud::{Markup, html};

/// The tooltip of the count of cells measured under load in a ranking.
const UNDER_LOAD: &str = "of these cells, those measured under load (a load average above the \
CPUs the measurement left free during one of their processes): in the mean like the others, \
but their figures may be inflated";

/// The tooltip of a worst cell measured under load.
const WORST_UNDER_LOAD: &str = "this cell was measured under load: its figure may be inflated";

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let base = &model.runs[0];
    let overall = model.ranking(base, |_| true);
    let rankings: Vec<(String, Ranking)> = model
        .families()
        .into_iter()
        .map(|family| {
            let ranking = model.ranking(base, |w| w.family == family);
            (family, ranking)
        })
        .collect();
    let body = html! {
        (headline(context, &overall, &rankings))
        (load::summary(model))
        p {
            "A cell's " em { "ratio to the best" } " is its median time per operation over the \
             smallest any implementation reached on the same workload at the same size (1.00× \
             is the best, 2.00× twice as slow). An implementation's rank in an "
            em { "operation family" } " (a workload family: its workloads exercise the same \
             mix of operations) is the geometric mean of its ratios over the cells of the \
             family's workloads (each workload at each size) it verified; " em { "cells" }
            " counts them, out of the cells any implementation verified (a cell beyond an \
             implementation's declared range is unsupported: not run, said apart, and no \
             failure). " em { "Slowest call" } " is the longest single operation it took \
             over those cells (the largest " code { "max" } " latency of any operation kind, \
             from the pass that times each operation), with its kind: for an event loop a \
             stall of milliseconds matters more than the median."
            @if model.any_approximate() {
                " An approximate implementation (one that may fire late within a declared \
                 bound) is ranked by speed like the others; what its slack buys is weighed in "
                a href="#lateness" { "Lateness" } "."
            }
        }
        p.note {
            strong { "What the geometric mean hides." } " It weighs every size alike, so a \
             structure that is best on small sizes and falls apart at a million timers can rank \
             beside one that is steady everywhere; it says nothing of tail latency (an \
             occasional cascade of milliseconds; the slowest call column gives its worst, the \
             workload tables its p99.99 and max per operation kind) or memory, which the \
             workload tables show; and \
             cells an implementation failed or did not run are left out, not counted against \
             it: compare the cells column before the ratios."
            (uneven_example(&rankings))
        }
        h4 { "All workloads" }
        div.scroll { (ranking_table(context, &overall, |_| true, true)) }
        div.cards.wide[model.several()] {
            @for (family, ranking) in &rankings {
                (family_card(context, family, ranking))
            }
        }
    };
    super::section("summary", body)
}

/// The fastest overall and per family, and how many cells did not verify.
fn headline(context: &Context, overall: &Ranking, rankings: &[(String, Ranking)]) -> Markup {
    let model = context.model;
    let without_figures = model.without_figures();
    let not_verified = without_figures
        .iter()
        .filter(|(_, r)| counts_against(r.status))
        .count();
    let unsupported = without_figures.len() - not_verified;
    let winners: Vec<Markup> = rankings
        .iter()
        .filter_map(|(family, ranking)| {
            let first = ranking.entries.first()?;
            let geomean = first.geomean?;
            Some(html! {
                (family) ": " strong { (first.implementation) } " (" (ratio(geomean)) ")"
                @if let Some(RankEntry { implementation, geomean: Some(g), .. }) =
                    ranking.entries.get(1)
                {
                    ", then " (implementation) " (" (ratio(*g)) ")"
                }
            })
        })
        .collect();
    html! {
        p.headline {
            @match overall.entries.first() {
                Some(RankEntry { implementation, geomean: Some(g), covered, .. }) => {
                    "Over " (overall.cells) " cells (a workload at a size) of "
                    (model.workloads.len()) " workloads"
                    @if model.several() { " in run " (model.runs[0].label) }
                    ", " strong { (implementation) } " is the fastest overall: the geometric \
                     mean of its time per operation over the fastest's in each cell is "
                    (ratio(*g)) ", over the " (covered) " cells it verified."
                    @if !winners.is_empty() {
                        " Best per family: "
                        @for (index, winner) in winners.iter().enumerate() {
                            @if index > 0 { "; " }
                            (winner)
                        }
                        "."
                    }
                }
                _ => "No cell verified: there is no speed to compare.",
            }
            @if not_verified > 0 {
                " " (not_verified) " cell" @if not_verified != 1 { "s" } " did not verify; "
                a href="#not-verified" { "each is listed with its reason" } "."
            }
            @if unsupported > 0 {
                " " (unsupported) " not run on purpose (unsupported: beyond the \
                 implementation's declared range; or skipped: above its suite limit), not \
                 counted as failures: "
                a href="#not-verified" { "listed apart" } "."
            }
        }
    }
}

/// The implementation whose worst cell is furthest above its family average, as an
/// example of what the geometric mean hides (nothing when every one is even).
fn uneven_example(rankings: &[(String, Ranking)]) -> Markup {
    let gap = |entry: &RankEntry, worst: f64| worst / entry.geomean.unwrap_or(1.0);
    let example = rankings
        .iter()
        .flat_map(|(family, ranking)| {
            ranking.entries.iter().filter_map(move |entry| {
                let (worst, at) = entry.worst.as_ref()?;
                let uneven = entry.geomean.is_some_and(|g| *worst > g * 1.2);
                uneven.then_some((family, entry, *worst, at))
            })
        })
        .max_by(|a, b| gap(a.1, a.2).total_cmp(&gap(b.1, b.2)));
    html! {
        @if let Some((family, entry, worst, at)) = example {
            " Here, for example, " (entry.implementation) " averages "
            (ratio(entry.geomean.unwrap_or(1.0))) " in the " (family) " family but is "
            (ratio(worst)) " the best on " (at) "."
        }
    }
}

/// One family's card: what it models, its workloads, its ranking.
fn family_card(context: &Context, family: &str, ranking: &Ranking) -> Markup {
    let workloads: Vec<&Workload> = context
        .model
        .workloads
        .iter()
        .filter(|w| w.family == family)
        .collect();
    let models = workloads
        .iter()
        .find_map(|w| w.models.as_deref())
        .unwrap_or("");
    let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
    html! {
        div.card {
            h4 { (family) }
            div.note { (models) " (" (names.join(", ")) ")" }
            (ranking_table(context, ranking, |w| w.family == family, false))
        }
    }
}

/// A ranking as a table; with several runs, the other runs beside: in the `wide` table
/// (all workloads) each run's own geometric mean and the ratio between the runs, in a
/// family card the ratio only.
fn ranking_table(
    context: &Context,
    ranking: &Ranking,
    include: impl Fn(&Workload) -> bool,
    wide: bool,
) -> Markup {
    let model = context.model;
    let base = &model.runs[0];
    let others = &model.runs[1..];
    html! {
        table {
            tr {
                th.num { "#" }
                th { "Implementation" }
                th.num title="geometric mean of the ratios to the best" {
                    @if !others.is_empty() { (base.label) " " }
                    "× best"
                }
                th.num { "worst" }
                @if wide { th { "worst at" } }
                th.num.sep title="the longest single call over its verified cells, with its \
                                  operation kind" { "slowest call" }
                @if wide { th { "slowest at" } }
                th.num { "cells" }
                @for run in others {
                    @if wide { th.num.sep { (run.label) " × best" } }
                    th.num.sep[!wide]
                        title="geometric mean of the ratios of ns/op between the runs"
                    {
                        (run.label) "/" (base.label)
                    }
                }
            }
            @for (index, entry) in ranking.entries.iter().enumerate() {
                tr {
                    td.num {
                        @if entry.geomean.is_some() { (index + 1) } @else { "–" }
                    }
                    td { (format::implementation(model, &entry.implementation)) }
                    td.num.best[index == 0 && entry.geomean.is_some()] {
                        @match entry.geomean {
                            Some(g) => (ratio(g)),
                            None => "no verified cell",
                        }
                    }
                    td.num {
                        @if let Some((worst, _)) = &entry.worst { (ratio(*worst)) }
                    }
                    @if wide {
                        td {
                            @if let Some((_, at)) = &entry.worst {
                                (at)
                                @if entry.worst_under_load {
                                    " " span.badge.load title=(WORST_UNDER_LOAD) { "load" }
                                }
                            }
                        }
                    }
                    (slowest_cell(entry.slowest.as_ref(), wide))
                    td.num {
                        (entry.covered) " of " (ranking.cells)
                        @if entry.unsupported > 0 {
                            " " span.note title="beyond its declared range, or above its suite limit: not run" {
                                "(" (entry.unsupported) " not run)"
                            }
                        }
                        // In the wide table only: a family card has no room for it, and the
                        // workload tables mark each cell.
                        @if wide && entry.under_load > 0 {
                            " " span.badge.load title=(UNDER_LOAD) {
                                (entry.under_load) " load"
                            }
                        }
                    }
                    @for run in others {
                        @if wide {
                            @let own = model.ranking(run, &include);
                            @let geomean = own
                                .entries
                                .iter()
                                .find(|e| e.implementation == entry.implementation)
                                .and_then(|e| e.geomean.map(|g| (g, e.covered)));
                            td.num.sep {
                                @match geomean {
                                    Some((g, n)) => { (ratio(g)) " (" (n) ")" }
                                    None => "–",
                                }
                            }
                        }
                        @let between = model.run_ratio(run, &entry.implementation, &include);
                        td.num.sep[!wide].(between.map_or("", |(r, _)| ratio_class(r))) {
                            @match between {
                                Some((r, _)) => (ratio(r)),
                                None => "–",
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The slowest call of a ranking entry: `advance 9.8 ms`; in the wide table the cell it
/// was in beside it (marked when measured under load), in a card in the tooltip only.
fn slowest_cell(slowest: Option<&SlowestCall>, wide: bool) -> Markup {
    let Some(slowest) = slowest else {
        return html! {
            td.num.sep.na { "–" }
            @if wide { td {} }
        };
    };
    let title = format!(
        "{} took {} ({} ns) on {}",
        slowest.kind,
        nanoseconds_label(slowest.ns as f64),
        slowest.ns,
        slowest.at
    );
    html! {
        td.num.sep title=(title) {
            span.note { (slowest.kind) } " " (nanoseconds_label(slowest.ns as f64))
        }
        @if wide {
            td {
                (slowest.at)
                @if slowest.under_load {
                    " " span.badge.load title=(WORST_UNDER_LOAD) { "load" }
                }
            }
        }
    }
}
