//! The rankings: which implementation is fastest over a set of workloads, and how one run
//! compares with another.
//!
//! The *ratio to the best* of a cell is its ns/op over the smallest ns/op any *exact*
//! implementation reached at the same size in the same run: 1.00 is the best, 2.00 twice
//! as slow. Exact structures are ranked among themselves; the approximate ones, which may
//! fire late and so do less, are ranked apart against the same yardstick (below 1.00 is
//! faster than the fastest exact), their lateness beside their speed, and never crowned
//! over a mixed field. A ranking orders the implementations by the geometric mean of
//! their ratios over the sizes they verified, so that no one size (or workload) dominates
//! by its absolute times. A cell without figures is left out of the mean; an unsupported
//! one (beyond the implementation's declared range) is counted apart, never as a failure.
//!
//! Coverage comes first: only an implementation that verified as many cells as any in its
//! table (the *full* coverage) can be the best; one with fewer follows them, its cells
//! beside it, since a mean over the small sizes alone is not comparable with one over all.
//!
//! [`rank_run`] gives one run's rankings as the summary shows them, for `timerbench rank`
//! to print in the terminal from this same code; [`rank_run_by`] ranks by a count per line
//! instead (`timerbench rank --metric`), the fewest being the best. A size where the best
//! count is 0 (no structure missed the last level, say) gives no ratio and is left out of
//! that ranking, as a size where no cell verified is.

use crate::catalog::Catalog;
use crate::figures::{
    figure, geometric_mean, lateness, measured_under_load, ns_per_op, slowest_call, thousands,
};
use crate::model::{Model, Workload};
use crate::runs::{Run, load_group};
use std::path::Path;
use timerbench_results::counts::Metric;
use timerbench_results::shards::RunGroup;

/// One run's rankings as the report's summary shows them: over all workloads, then one per
/// workload family.
pub struct RunRankings {
    /// The folder's own name.
    pub name: String,
    /// The workloads in the run.
    pub workloads: usize,
    /// Over every workload.
    pub overall: Ranking,
    /// One per family, in the order of the family's first workload (the report's order).
    pub families: Vec<FamilyRanking>,
}

/// The ranking of one workload family.
pub struct FamilyRanking {
    /// The family.
    pub family: String,
    /// Its workloads in the run, in the report's order.
    pub workloads: Vec<String>,
    /// The ranking over them.
    pub ranking: Ranking,
}

/// Reads the results folder `folder` (any error names the file and line) and ranks its
/// implementations as the report's summary does, with `catalog` giving the orders.
pub fn rank_run(folder: &Path, catalog: &Catalog) -> anyhow::Result<RunRankings> {
    rank_run_by(folder, catalog, Metric::Ns)
}

/// [`rank_run`] by `metric`: the ratios are of each cell's figure in it to the best's.
pub fn rank_run_by(
    folder: &Path,
    catalog: &Catalog,
    metric: Metric,
) -> anyhow::Result<RunRankings> {
    let group = RunGroup {
        folders: vec![folder.to_path_buf()],
        environment: None,
    };
    rank_group_by(&group, catalog, metric)
}

/// [`rank_run_by`] of the run `group`: one folder, or the shards of one plan merged.
pub fn rank_group_by(
    group: &RunGroup,
    catalog: &Catalog,
    metric: Metric,
) -> anyhow::Result<RunRankings> {
    let run = load_group(group, 0)?;
    let model = Model::new(vec![run], catalog)?;
    Ok(crate::hosts::rankings(&model, &model.runs[0], metric))
}

/// The ranking of the implementations over some cells of one run.
pub struct Ranking {
    /// Cells (workload, timers) where at least one implementation verified.
    pub cells: usize,
    /// The exact implementations: those with full coverage best first, then those with
    /// fewer cells, then those with no verified cell.
    pub entries: Vec<RankEntry>,
    /// The approximate ones, ranked apart in the same order against the same yardstick.
    pub approximate: Vec<RankEntry>,
}

impl Ranking {
    /// The best exact implementation: the first with full coverage.
    pub fn best(&self) -> Option<&RankEntry> {
        self.entries
            .first()
            .filter(|e| e.geomean.is_some() && !e.partial)
    }
}

/// The most cells any entry of a table verified.
fn full_coverage(entries: &[RankEntry]) -> usize {
    entries.iter().map(|e| e.covered).max().unwrap_or(0)
}

/// Sorts a table: full coverage first, by geometric mean; then the others, by it too;
/// those with no verified cell last.
fn sort_table(entries: &mut [RankEntry]) {
    let full = full_coverage(entries);
    for entry in entries.iter_mut() {
        entry.partial = entry.covered < full;
    }
    entries.sort_by(|a, b| {
        let key = |e: &RankEntry| (e.geomean.is_none(), e.partial);
        key(a)
            .cmp(&key(b))
            .then_with(|| match (a.geomean, b.geomean) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                _ => std::cmp::Ordering::Equal,
            })
    });
}

/// One implementation in a [`Ranking`].
pub struct RankEntry {
    /// The implementation.
    pub implementation: String,
    /// The geometric mean of its ratios to the best, when it verified any cell.
    pub geomean: Option<f64>,
    /// Its largest ratio to the best, and where.
    pub worst: Option<(f64, String)>,
    /// Whether the cell of its largest ratio was measured under load (its figure may be
    /// inflated, which could make it the worst).
    pub worst_under_load: bool,
    /// The slowest single call over the cells it verified: the tail next to the speed,
    /// since a structure fast on average can still stall an event loop for milliseconds.
    pub slowest: Option<SlowestCall>,
    /// The geometric mean of its ratios to the floor over the cells it verified where the
    /// run has the floor (`timerbench run --floor`).
    pub floor: Option<f64>,
    /// An approximate one's lateness over the cells it verified: the most ticks late and
    /// the largest fraction of a timer's delay.
    pub lateness: Option<LatenessFigures>,
    /// Whether it verified fewer cells than the most any one of its table (exact or
    /// approximate) verified: listed with its coverage after the others, never the best.
    pub partial: bool,
    /// The cells it verified (of [`Ranking::cells`]).
    pub covered: usize,
    /// Of them, those measured under load: in the mean like the others, but their figures
    /// may be inflated.
    pub under_load: usize,
    /// Of the others, those left out before they ran (beyond its declared range, or
    /// above its suite limit): left out like any cell it has no figure for, but said
    /// apart, since they are no failure.
    pub unsupported: usize,
    /// Whether it is an engine (another runtime's timers, results/FORMAT.md `engine`):
    /// ranked beside the Rust structures against their best, marked apart.
    pub engine: bool,
}

/// How late an approximate implementation fired over the cells of a ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatenessFigures {
    /// The most ticks one firing came late.
    pub most_ticks: u64,
    /// The largest lateness as a fraction of its timer's delay.
    pub largest_fraction: f64,
}

/// The slowest call of an implementation over the cells of a ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowestCall {
    /// How long it took, nanoseconds (the `max` of its kind's latency).
    pub ns: u64,
    /// The operation kind: `start`, `advance`, ...
    pub kind: &'static str,
    /// The cell: `workload at N`.
    pub at: String,
    /// Whether that cell was measured under load: a busy machine stretches single calls
    /// most of all, so its figure may be the load's rather than the structure's.
    pub under_load: bool,
}

impl Model {
    /// The ranking of `run` over the workloads for which `include` holds.
    pub fn ranking(&self, run: &Run, include: impl Fn(&Workload) -> bool) -> Ranking {
        self.ranking_by(run, include, Metric::Ns)
    }

    /// [`Model::ranking`] by `metric`: the sizes with a best above 0 in it, each cell's
    /// figure in it over that best.
    pub fn ranking_by(
        &self,
        run: &Run,
        include: impl Fn(&Workload) -> bool,
        metric: Metric,
    ) -> Ranking {
        let sizes: Vec<(&Workload, u64)> = self
            .workloads
            .iter()
            .filter(|w| include(w))
            .flat_map(|w| w.sizes.iter().map(move |&t| (w, t)))
            .filter(|(w, t)| {
                run.best_exact_by(&w.name, *t, metric)
                    .is_some_and(|b| b > 0.0)
            })
            .collect();
        let entries: Vec<RankEntry> = self
            .implementations
            .iter()
            // Only the implementations this part of the run tried; never the floor, a
            // yardstick that is not verified.
            .filter(|i| !timerbench_results::is_floor(&i.name))
            .filter(|i| {
                sizes
                    .iter()
                    .any(|(w, t)| run.cell(&w.name, *t, &i.name).is_some())
            })
            .map(|implementation| {
                let mut ratios = Vec::new();
                let mut worst: Option<(f64, String)> = None;
                let mut worst_under_load = false;
                let mut slowest: Option<SlowestCall> = None;
                let mut under_load = 0;
                let mut unsupported = 0;
                let mut floors = Vec::new();
                let mut late: Option<LatenessFigures> = None;
                for &(workload, timers) in &sizes {
                    let record = run.cell(&workload.name, timers, &implementation.name);
                    unsupported += usize::from(record.is_some_and(|r| r.status.left_out()));
                    let Some((record, ratio)) = record.and_then(|record| {
                        let best = run.best_exact_by(&workload.name, timers, metric)?;
                        Some((record, figure(record, metric)? / best))
                    }) else {
                        continue;
                    };
                    ratios.push(ratio);
                    // The floor is a time: no yardstick of a count.
                    if !metric.is_count() {
                        floors.extend(run.ratio_to_floor(record));
                    }
                    if let Some(lateness) = lateness(record) {
                        late = Some(merge_lateness(late, lateness));
                    }
                    let at = || format!("{} at {}", workload.name, thousands(timers));
                    let loaded = measured_under_load(record);
                    under_load += usize::from(loaded);
                    if let Some((kind, ns)) = slowest_call(record)
                        && slowest.as_ref().is_none_or(|s| ns > s.ns)
                    {
                        slowest = Some(SlowestCall {
                            ns,
                            kind,
                            at: at(),
                            under_load: loaded,
                        });
                    }
                    if worst.as_ref().is_none_or(|(w, _)| ratio > *w) {
                        worst = Some((ratio, at()));
                        worst_under_load = loaded;
                    }
                }
                RankEntry {
                    implementation: implementation.name.clone(),
                    geomean: geometric_mean(&ratios),
                    floor: geometric_mean(&floors),
                    lateness: late,
                    partial: false,
                    worst,
                    worst_under_load,
                    slowest,
                    covered: ratios.len(),
                    under_load,
                    unsupported,
                    engine: implementation.engine,
                }
            })
            .collect();
        let (mut approximate, mut entries): (Vec<RankEntry>, Vec<RankEntry>) =
            entries.into_iter().partition(|e| {
                self.implementation(&e.implementation)
                    .is_some_and(|i| i.is_approximate())
            });
        sort_table(&mut entries);
        sort_table(&mut approximate);
        Ranking {
            cells: sizes.len(),
            entries,
            approximate,
        }
    }

    /// The geometric mean of `run`'s ns/op over the baseline's (the first run's), over the
    /// cells of `implementation` in the workloads for which `include` holds that verified
    /// in both, with how many there were.
    pub fn run_ratio(
        &self,
        run: &Run,
        implementation: &str,
        include: impl Fn(&Workload) -> bool,
    ) -> Option<(f64, usize)> {
        let baseline = &self.runs[0];
        let mut ratios = Vec::new();
        for workload in self.workloads.iter().filter(|w| include(w)) {
            for &timers in &workload.sizes {
                let speed = |run: &Run| {
                    run.cell(&workload.name, timers, implementation)
                        .and_then(ns_per_op)
                };
                if let (Some(base), Some(other)) = (speed(baseline), speed(run)) {
                    ratios.push(other / base);
                }
            }
        }
        geometric_mean(&ratios).map(|g| (g, ratios.len()))
    }
}

/// The lateness so far with one more cell's.
fn merge_lateness(
    so_far: Option<LatenessFigures>,
    cell: &timerbench_results::Lateness,
) -> LatenessFigures {
    let most_ticks = cell.percentiles.get("max").copied().unwrap_or(0);
    let figures = LatenessFigures {
        most_ticks,
        largest_fraction: cell.largest_fraction_of_delay,
    };
    match so_far {
        None => figures,
        Some(s) => LatenessFigures {
            most_ticks: s.most_ticks.max(figures.most_ticks),
            largest_fraction: s.largest_fraction.max(figures.largest_fraction),
        },
    }
}
