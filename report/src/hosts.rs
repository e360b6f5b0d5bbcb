//! Hosts as a dimension: runs of one plan on different machines, each ranked on its own,
//! and the pairs of implementations whose order flips between two hosts.
//!
//! **A flip.** At one size of a workload, two implementations' order on host X is the
//! reverse of their order on host Y, and on each host the difference stands beyond that
//! host's noise: `|median i − median j| > K × √(σi² + σj²)`, `σ = 1.4826 × MAD` of each
//! cell's samples, `K` = 3: the rule `compare` judges a change by
//! ([`timerbench_results::stats::NOISE_K`]). An order within one host's noise is no order,
//! so it flips nothing; a cell with fewer than two samples has no spread and takes no
//! part. With a count metric the spread is 0: counts are exact, any reversal is one.
//!
//! A ranking's geometric mean can hold while single sizes flip, and the reverse: the
//! flips say where a conclusion drawn on one processor does not carry to another.

use crate::catalog::Catalog;
use crate::figures::figure;
use crate::model::Model;
use crate::ranking::{FamilyRanking, RunRankings};
use crate::runs::{Run, load_group};
use std::collections::BTreeSet;
use timerbench_results::counts::Metric;
use timerbench_results::shards::RunGroup;
use timerbench_results::stats::{MAD_TO_SIGMA, NOISE_K};
use timerbench_results::{CellRecord, Environment, Status, is_floor, spread};

/// A pair whose order flips between two hosts at one size of a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    pub workload: String,
    pub timers: u64,
    /// The implementation ahead (the smaller figure) on the first host.
    pub ahead_on_first: String,
    /// The implementation ahead on the second host.
    pub ahead_on_second: String,
    /// On the first host, the second implementation's figure over the first's (> 1).
    pub margin_first: f64,
    /// On the second host, the same the other way round (> 1).
    pub margin_second: f64,
}

/// A cell's figure and its σ.
type Reading = (f64, f64);

/// A cell's figure in `metric` and its σ (0 for a count); `None` without a figure or,
/// for the time, with fewer than two samples.
fn figure_and_sigma(record: &CellRecord, metric: Metric) -> Option<Reading> {
    if record.status != Status::Ok || is_floor(&record.key.implementation) {
        return None;
    }
    let value = figure(record, metric)?;
    if metric.is_count() {
        return Some((value, 0.0));
    }
    let samples = &record.throughput.as_ref()?.ns_per_op.samples;
    (samples.len() >= 2).then(|| (value, MAD_TO_SIGMA * spread(samples.clone()).mad))
}

/// Which of two cells is ahead beyond their noise: `Some(true)` for the first,
/// `Some(false)` for the second, `None` within noise.
fn ahead(i: Reading, j: Reading) -> Option<bool> {
    let noise = NOISE_K * (i.1 * i.1 + j.1 * j.1).sqrt();
    let difference = j.0 - i.0;
    (difference.abs() > noise).then_some(difference > 0.0)
}

/// The flips (the module's rule) between the runs `a` and `b`, by workload, size and pair.
pub fn flips(a: &Run, b: &Run, metric: Metric) -> Vec<Flip> {
    let sizes: BTreeSet<(&str, u64)> = a
        .records
        .keys()
        .map(|k| (k.workload.as_str(), k.timers))
        .collect();
    let mut found = Vec::new();
    for (workload, timers) in sizes {
        let both: Vec<(&str, Reading, Reading)> = a
            .records
            .values()
            .filter(|r| r.key.workload == workload && r.key.timers == timers)
            .filter_map(|ra| {
                let rb = b.cell(workload, timers, &ra.key.implementation)?;
                Some((
                    ra.key.implementation.as_str(),
                    figure_and_sigma(ra, metric)?,
                    figure_and_sigma(rb, metric)?,
                ))
            })
            .collect();
        for (index, &(i, ia, ib)) in both.iter().enumerate() {
            for &(j, ja, jb) in &both[index + 1..] {
                let (Some(on_a), Some(on_b)) = (ahead(ia, ja), ahead(ib, jb)) else {
                    continue;
                };
                if on_a == on_b {
                    continue;
                }
                let (first, second, margin_first, margin_second) = if on_a {
                    (i, j, ja.0 / ia.0, ib.0 / jb.0)
                } else {
                    (j, i, ia.0 / ja.0, jb.0 / ib.0)
                };
                found.push(Flip {
                    workload: workload.to_string(),
                    timers,
                    ahead_on_first: first.to_string(),
                    ahead_on_second: second.to_string(),
                    margin_first,
                    margin_second,
                });
            }
        }
    }
    found
}

/// One host's run and its rankings.
pub struct HostRankings {
    /// The host ([`timerbench_results::shards::host_of`]), or the folder without an
    /// environment.
    pub host: String,
    /// The run's folders, as a message names them.
    pub folders: String,
    pub environment: Option<Environment>,
    /// The median memory probe over the run's processes, nanoseconds, when recorded.
    pub memory_probe_ns: Option<f64>,
    pub rankings: RunRankings,
}

/// The runs of several hosts side by side: each ranked, and the flips between each pair.
pub struct HostsView {
    pub hosts: Vec<HostRankings>,
    /// For each pair of hosts (indices into `hosts`, first < second), their flips.
    pub flips: Vec<(usize, usize, Vec<Flip>)>,
}

/// Reads the runs `groups` (one per host, all of one plan, else refused) and ranks each as
/// the report's summary does, with the flips between every pair.
pub fn rank_hosts_by(
    groups: &[RunGroup],
    catalog: &Catalog,
    metric: Metric,
) -> anyhow::Result<HostsView> {
    check_one_plan(groups)?;
    let runs = groups
        .iter()
        .enumerate()
        .map(|(index, group)| load_group(group, index))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let model = Model::new(runs, catalog)?;
    let hosts = model
        .runs
        .iter()
        .zip(groups)
        .map(|(run, group)| HostRankings {
            host: group
                .host()
                .unwrap_or_else(|| group.first().display().to_string()),
            folders: group.describe(),
            environment: run.environment.clone(),
            memory_probe_ns: memory_probe(run),
            rankings: rankings(&model, run, metric),
        })
        .collect();
    let mut pairs = Vec::new();
    for a in 0..model.runs.len() {
        for b in a + 1..model.runs.len() {
            pairs.push((a, b, flips(&model.runs[a], &model.runs[b], metric)));
        }
    }
    Ok(HostsView {
        hosts,
        flips: pairs,
    })
}

/// Refuses runs that are not of one recorded plan: flips between two plans would mix
/// what the hosts do with what the plans changed.
fn check_one_plan(groups: &[RunGroup]) -> anyhow::Result<()> {
    let first = &groups[0];
    for group in groups {
        match (first.plan(), group.plan()) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) => anyhow::bail!(
                "{} and {} are runs of different plans ({a} and {b}): hosts are set side by \
                 side over one plan's runs",
                first.describe(),
                group.describe()
            ),
            _ => {
                let without = if first.plan().is_none() { first } else { group };
                anyhow::bail!(
                    "{} has no plan in its environment.json (a run of an older timerbench): \
                     hosts are set side by side over one plan's runs; rank it alone",
                    without.describe()
                )
            }
        }
    }
    Ok(())
}

/// The rankings of `run` in `model`: overall and per family.
pub(crate) fn rankings(model: &Model, run: &Run, metric: Metric) -> RunRankings {
    let families = model
        .families()
        .into_iter()
        .map(|family| FamilyRanking {
            workloads: model
                .workloads
                .iter()
                .filter(|w| w.family == family)
                .map(|w| w.name.clone())
                .collect(),
            ranking: model.ranking_by(run, |w| w.family == family, metric),
            family,
        })
        .collect();
    RunRankings {
        name: run.name.clone(),
        workloads: model.workloads.len(),
        overall: model.ranking_by(run, |_| true, metric),
        families,
    }
}

/// The median memory probe over every reading of every process of `run`.
pub(crate) fn memory_probe(run: &Run) -> Option<f64> {
    let mut readings: Vec<f64> = run
        .records
        .values()
        .flat_map(|r| &r.conditions)
        .flat_map(|c| [c.memory_probe_before_ns, c.memory_probe_after_ns])
        .flatten()
        .collect();
    readings.sort_by(f64::total_cmp);
    readings.get(readings.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_order_flips_only_beyond_both_hosts_noise() {
        // Ahead beyond noise on one host, behind beyond noise on the other: a flip.
        assert_eq!(ahead((10.0, 0.1), (12.0, 0.1)), Some(true));
        assert_eq!(ahead((12.0, 0.1), (10.0, 0.1)), Some(false));
        // Within noise: no order, so no flip can be built on it.
        assert_eq!(ahead((10.0, 1.0), (12.0, 1.0)), None);
        // Counts are exact: any difference is an order.
        assert_eq!(ahead((10.0, 0.0), (10.5, 0.0)), Some(true));
    }
}
