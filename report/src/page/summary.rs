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
             smallest any exact implementation reached on the same workload at the same size \
             (1.00× is the best, 2.00× twice as slow). An implementation's rank in an "
            em { "operation family" } " (a workload family: its workloads exercise the same \
             mix of operations) is the geometric mean of its ratios over the cells of the \
             family's workloads (each workload at each size) it verified; " em { "cells" }
            " counts them, out of the cells any implementation verified (a cell beyond an \
             implementation's declared range is unsupported: not run, said apart, and no \
             failure). Only an implementation that verified every cell of the table can be its \
             best: one with fewer follows the others, unranked, its cells beside it, since \
             a mean over the small sizes alone is not comparable with one over all. " em { "Slowest call" } " is the longest single operation it took \
             over those cells (the largest " code { "max" } " latency of any operation kind, \
             from the pass that times each operation), with its kind: for an event loop a \
             stall of milliseconds matters more than the median."
            @if model.any_approximate() {
                " An approximate implementation (one that may fire late within a declared \
                 bound) does less than an exact one, so it is ranked apart, against the same \
                 yardstick (the fastest exact one; below 1.00× is faster), with how late it \
                 fired beside its speed; what its slack buys is weighed in "
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
        div.scroll { (ranking_table(context, &overall, Table::Exact, |_| true, true)) }
        @if !overall.approximate.is_empty() {
            h4 { "All workloads: approximate structures, ranked apart" }
            div.scroll { (ranking_table(context, &overall, Table::Approximate, |_| true, true)) }
        }
        div.cards.wide[model.several()] {
            @for (family, ranking) in &rankings {
                (family_card(context, family, ranking))
            }
        }
    };
    super::section("summary", body)
}

/// The fastest exact structure overall and per family (among those that verified every
/// cell), what the approximate ones buy at what lateness, and how many cells did not
/// verify.
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
            let first = ranking.best()?;
            let geomean = first.geomean?;
            Some(html! {
                (family) ": " strong { (first.implementation) } " (" (ratio(geomean)) ")"
                @if let Some(RankEntry { implementation, geomean: Some(g), .. }) =
                    ranking.entries.get(1).filter(|e| !e.partial)
                {
                    ", then " (implementation) " (" (ratio(*g)) ")"
                }
            })
        })
        .collect();
    let approximate: Vec<&RankEntry> = overall
        .approximate
        .iter()
        .filter(|e| e.geomean.is_some())
        .collect();
    html! {
        p.headline data-fastest=[overall.best().map(|e| e.implementation.as_str())] {
            @match overall.best() {
                Some(RankEntry { implementation, geomean: Some(g), covered, .. }) => {
                    "Over " (overall.cells) " cells (a workload at a size) of "
                    (model.workloads.len()) " workloads"
                    @if model.several() { " in run " (model.runs[0].label) }
                    ", " strong { (implementation) } " is the fastest exact structure: the \
                     geometric mean of its time per operation over the fastest exact one's in \
                     each cell is " (ratio(*g)) ", over the " (covered) " cells it verified."
                    @if !winners.is_empty() {
                        " Best exact per family (among those that verified all of the family's \
                         cells): "
                        @for (index, winner) in winners.iter().enumerate() {
                            @if index > 0 { "; " }
                            (winner)
                        }
                        "."
                    }
                }
                _ => "No exact cell verified: there is no speed to compare.",
            }
            @if !approximate.is_empty() {
                " Approximate structures, which may fire late and so do less, are ranked apart: "
                @for (index, entry) in approximate.iter().enumerate() {
                    @if index > 0 { "; " }
                    (approximate_words(entry))
                }
                " ("
                a href="#lateness" { "Lateness" } " says why)."
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

/// What an approximate structure buys at what lateness: `ring-buckets takes 0.55× the
/// fastest exact's time, firing at most 999 ticks late and at most 12.5% of a timer's
/// delay late, over 20 cells`: two maxima, each said for itself, since the latest firing
/// in ticks and the latest for its delay are most often two different timers.
fn approximate_words(entry: &RankEntry) -> Markup {
    html! {
        strong { (entry.implementation) } " takes " (ratio(entry.geomean.unwrap_or(1.0)))
        " the fastest exact one's time"
        @if let Some(late) = entry.lateness {
            ", firing at most " (late.most_ticks) " tick" @if late.most_ticks != 1 { "s" }
            " late and at most " (super::lateness::fraction(late.largest_fraction))
            " of a timer's delay late"
        }
        ", over " (entry.covered) " cells"
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
            (ranking_table(context, ranking, Table::Exact, |w| w.family == family, false))
            @if !ranking.approximate.is_empty() {
                div.note { "Approximate, ranked apart:" }
                (ranking_table(context, ranking, Table::Approximate, |w| w.family == family, false))
            }
        }
    }
}

/// Which table of a ranking: the exact implementations or the approximate ones.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    Exact,
    Approximate,
}

/// A ranking's table (exact or approximate) as a table, the cells its entries verified
/// right after their speed so that no reader misses the coverage; with several runs, the
/// other runs beside: in the `wide` table (all workloads) each run's own geometric mean and
/// the ratio between the runs, in a family card the ratio only.
fn ranking_table(
    context: &Context,
    ranking: &Ranking,
    table: Table,
    include: impl Fn(&Workload) -> bool,
    wide: bool,
) -> Markup {
    let model = context.model;
    let base = &model.runs[0];
    let others = &model.runs[1..];
    let approximate = table == Table::Approximate;
    let entries = if approximate {
        &ranking.approximate
    } else {
        &ranking.entries
    };
    let floor = wide && base.has_floor();
    html! {
        table.ranking data-table=(if approximate { "approximate" } else { "exact" }) {
            tr {
                th.num { "#" }
                th { "Implementation" }
                th.num title="geometric mean of the ratios to the fastest exact implementation" {
                    @if !others.is_empty() { (base.label) " " }
                    "× best"
                }
                @if floor {
                    th.num title="geometric mean of the ratios to the floor (the cost of \
                                  reading the workload, no timer structure)" { "× floor" }
                }
                th.num { "cells" }
                @if approximate {
                    th.num title="the most ticks one firing came late, over its verified \
                                  cells" { "max late" }
                    th.num title="the largest lateness as a fraction of its timer's delay, \
                                  over its verified cells: most often not the timer latest in \
                                  ticks but a short delay a tick late" { "max late / delay" }
                }
                th.num { "worst" }
                @if wide { th { "worst at" } }
                th.num.sep title="the longest single call over its verified cells, with its \
                                  operation kind" { "slowest call" }
                @if wide { th { "slowest at" } }
                @for run in others {
                    @if wide { th.num.sep { (run.label) " × best" } }
                    th.num.sep[!wide]
                        title="geometric mean of the ratios of ns/op between the runs"
                    {
                        (run.label) "/" (base.label)
                    }
                }
            }
            @for (index, entry) in entries.iter().enumerate() {
                tr data-implementation=(entry.implementation) data-cells=(entry.covered)
                    data-partial=(entry.partial)
                {
                    td.num {
                        @if entry.geomean.is_some() && !entry.partial { (index + 1) }
                        @else { "–" }
                    }
                    td { (format::implementation(model, &entry.implementation)) }
                    td.num.best[index == 0 && !approximate && entry.geomean.is_some()] {
                        @match entry.geomean {
                            Some(g) => (ratio(g)),
                            None => "no verified cell",
                        }
                    }
                    @if floor {
                        td.num { @if let Some(f) = entry.floor { (ratio(f)) } }
                    }
                    (cells_cell(entry, ranking.cells, wide))
                    @if approximate {
                        td.num {
                            @if let Some(late) = entry.lateness {
                                (late.most_ticks) " tick" @if late.most_ticks != 1 { "s" }
                            }
                        }
                        td.num {
                            @if let Some(late) = entry.lateness {
                                (super::lateness::fraction(late.largest_fraction))
                            }
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
                    @for run in others {
                        @if wide {
                            @let own = model.ranking(run, &include);
                            @let geomean = own
                                .entries
                                .iter()
                                .chain(&own.approximate)
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
        @if entries.iter().any(|e| e.engine) { (format::engine_legend(None)) }
    }
}

/// The cells an entry verified, `3 of 3`: marked when fewer than its table's most (not
/// ranked), with those not run on purpose and (in the wide table) those under load.
fn cells_cell(entry: &RankEntry, cells: usize, wide: bool) -> Markup {
    html! {
        td.num.partial[entry.partial] title=[entry.partial.then_some(
            "fewer cells than the most any implementation of this table verified: \
             listed with its coverage, not ranked")]
        {
            (entry.covered) " of " (cells)
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
