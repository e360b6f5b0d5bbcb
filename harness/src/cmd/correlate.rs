//! `timerbench correlate TIMED COUNTS`: how far a count orders cells as the time does.
//!
//! Counts are exact where time is noisy, but they are of a simulated machine: a fixed
//! cost per instruction and per simulated miss, no overlap of independent misses, no
//! penalty for a chain of dependent ones. So before a count judges anything, this says,
//! per size, how well it ranks the cells of one run the way the measured time of another
//! run ranks them: Spearman's rank correlation over every cell (a workload and a
//! structure) present in both, then the cells whose two ranks differ most, where the
//! simulation is furthest from the machine.
//!
//! The time read is the ns per line after the fill (the record's `ns_per_op_after_fill`),
//! since the counts are of those lines and not of the fill.

use crate::stats::{median, ranks, spearman};
use crate::table::{Format, table};
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use timerbench_results::counts::Metric;
use timerbench_results::{CellKey, CellRecord, Status, latest_by_cell, read_run};

/// Rank the cells of a timed run and of a counts run of the same suite, per size, and say
/// how far the count's order follows the time's.
#[derive(clap::Args)]
pub struct Args {
    /// A results folder of `timerbench run` (timed).
    #[arg(value_name = "TIMED_DIR")]
    timed: PathBuf,
    /// A results folder of `timerbench run --counts` with cells of the same workloads,
    /// sizes and structures.
    #[arg(value_name = "COUNTS_DIR")]
    counts: PathBuf,
    /// The count to rank by: `est-cycles` (the default: the count meant to stand for
    /// time), `instructions`, `ll-misses`, `d1-misses` or `branch-mispredicts`.
    #[arg(long, default_value = "est-cycles", value_parser = count_metric)]
    metric: Metric,
    /// The cells listed per size whose two ranks differ most.
    #[arg(long, default_value_t = 5)]
    worst: usize,
    /// `text` (aligned columns) or `markdown` (GitHub tables).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// A count metric by its name; `ns` is refused, as it is the other side of the comparison.
fn count_metric(name: &str) -> Result<Metric, String> {
    let metric: Metric = name.parse()?;
    if !metric.is_count() {
        return Err("`ns` is the time this command ranks against; name a count".to_string());
    }
    Ok(metric)
}

/// One cell present in both runs.
struct Pair {
    key: CellKey,
    ns: f64,
    count: f64,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let timed = latest(&args.timed)?;
    let counted = latest(&args.counts)?;
    let mut by_size: BTreeMap<u64, Vec<Pair>> = BTreeMap::new();
    let mut without_counts = 0;
    for (key, record) in &timed {
        let Some(ns) = ns_after_fill(record) else {
            continue;
        };
        match counted.get(key).and_then(|r| args.metric.per_line(r)) {
            Some(count) => by_size.entry(key.timers).or_default().push(Pair {
                key: key.clone(),
                ns,
                count,
            }),
            None => without_counts += 1,
        }
    }
    if by_size.is_empty() {
        bail!(
            "no cell of {} has both a time and counts in {} (is the second a \
             `timerbench run --counts` of the same suite?)",
            args.timed.display(),
            args.counts.display()
        );
    }
    println!(
        "Spearman's rank correlation between {} per line ({}) and ns per line after the fill \
         ({}), per size, over the cells in both; 1 is the same order. {without_counts} timed \
         cell(s) have no counts.",
        args.metric.name(),
        args.counts.display(),
        args.timed.display()
    );
    let rows = by_size
        .iter()
        .map(|(timers, pairs)| {
            let (ns, count): (Vec<f64>, Vec<f64>) = pairs.iter().map(|p| (p.ns, p.count)).unzip();
            let within = within_workloads(pairs);
            vec![
                timers.to_string(),
                pairs.len().to_string(),
                format!("{:.3}", spearman(&ns, &count)),
                within.len().to_string(),
                format!("{:.3}", median(&within)),
                format!(
                    "{:.3}",
                    within.iter().copied().fold(f64::INFINITY, f64::min)
                ),
            ]
        })
        .collect();
    println!(
        "\n{}",
        table(
            &[
                "timers",
                "cells",
                "ρ over all cells",
                "workloads",
                "ρ within a workload: median",
                "lowest"
            ],
            rows,
            args.format
        )
    );
    println!(
        "\nOver all cells, the workloads' own costs (a few lines against many ticks) order \
         most of the pairs; within a workload, ρ is how far the count ranks the structures \
         as the time does."
    );
    for (timers, pairs) in &by_size {
        println!(
            "\nAt {timers} timers, the cells whose ranks among their workload's structures \
             differ most (rank 1: the fastest, the fewest):\n\n{}",
            table(
                &[
                    "cell",
                    "ns/line",
                    "rank by time",
                    args.metric.unit(),
                    "rank by count"
                ],
                disagreeing(pairs, args.worst),
                args.format
            )
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Spearman's ρ between time and count over the structures of each workload (of three
/// structures or more, where an order means something).
fn within_workloads(pairs: &[Pair]) -> Vec<f64> {
    let mut by_workload: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for pair in pairs {
        let (ns, count) = by_workload.entry(&pair.key.workload).or_default();
        ns.push(pair.ns);
        count.push(pair.count);
    }
    by_workload
        .values()
        .filter(|(ns, _)| ns.len() >= 3)
        .map(|(ns, count)| spearman(ns, count))
        .filter(|rho| rho.is_finite())
        .collect()
}

/// The latest record of each cell of the run in `folder`.
fn latest(folder: &Path) -> anyhow::Result<BTreeMap<CellKey, CellRecord>> {
    let files = read_run(folder).with_context(|| format!("run {}", folder.display()))?;
    Ok(latest_by_cell(
        files.records.into_iter().map(|line| line.record),
    ))
}

/// The verified cell's median ns per line after the fill.
fn ns_after_fill(record: &CellRecord) -> Option<f64> {
    if record.status != Status::Ok {
        return None;
    }
    let ns = record
        .throughput
        .as_ref()?
        .ns_per_op_after_fill
        .as_ref()?
        .median;
    (ns.is_finite() && ns > 0.0).then_some(ns)
}

/// The rows of the `worst` cells of `pairs` whose rank by time and rank by count among
/// their workload's structures differ most (ties by the larger time first, then by name,
/// so that the list is stable).
fn disagreeing(pairs: &[Pair], worst: usize) -> Vec<Vec<String>> {
    let mut by_time = vec![0.0; pairs.len()];
    let mut by_count = vec![0.0; pairs.len()];
    let mut workloads: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, pair) in pairs.iter().enumerate() {
        workloads.entry(&pair.key.workload).or_default().push(i);
    }
    for members in workloads.values() {
        let time = ranks(&members.iter().map(|&i| pairs[i].ns).collect::<Vec<_>>());
        let count = ranks(&members.iter().map(|&i| pairs[i].count).collect::<Vec<_>>());
        for (j, &i) in members.iter().enumerate() {
            by_time[i] = time[j];
            by_count[i] = count[j];
        }
    }
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    order.sort_by(|&a, &b| {
        let gap = |i: usize| (by_time[i] - by_count[i]).abs();
        gap(b)
            .total_cmp(&gap(a))
            .then(pairs[b].ns.total_cmp(&pairs[a].ns))
            .then(pairs[a].key.cmp(&pairs[b].key))
    });
    order
        .into_iter()
        .take(worst)
        .map(|i| {
            let p = &pairs[i];
            vec![
                format!("{} {}", p.key.workload, p.key.implementation),
                format!("{:.1}", p.ns),
                format!("{:.1}", by_time[i]),
                format!("{:.1}", p.count),
                format!("{:.1}", by_count[i]),
            ]
        })
        .collect()
}
