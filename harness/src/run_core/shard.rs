//! A run's plan split into shards (`--shard K/N`), its identity (the plan's digest), and
//! the plan printed (`--plan`), so that a batch scheduler (a Slurm job array, GNU parallel
//! over ssh, a CI matrix) can run one plan on many machines, and the readers can merge
//! the shards' folders into the run one machine would have written (docs/scale-out.md).
//!
//! **The split.** Every host must split the same plan the same way, with no word passed
//! between them, so the rule depends on the plan alone: each cell's expected seconds
//! ([`expected_seconds`]), the cells taken longest first (ties by the cell's name), each
//! into the shard with the least expected time so far (ties to the lowest number). The
//! costliest cells (at 1M timers) are dealt out first, one per shard in turn, so they
//! spread, and the many small ones even out what is left.
//!
//! **The digest.** The folders of one plan must be told from those of another before they
//! are merged: the digest hashes the revision, the suite, the sampling settings and every
//! planned cell with its workload's definition (the generator, which holds a workload
//! file's hash), so two folders with one digest measured the same cells the same way.
//! The shard number is not in it: it is what tells the shards apart.

use super::estimate::costs_table;
use super::plan::Cell;
use super::{Args, cell_name, suite_word};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use timerbench_results::shards::Shard;
use timerbench_workloads::suite::STANDARD_COSTS;

/// The digest of the plan of `cells` under `args`: 16 hex digits of a SHA-256 over the
/// module's fields, one per line.
pub(super) fn digest(args: &Args, cells: &[Cell]) -> String {
    let mut text = String::from("timerbench plan 1\n");
    let _ = writeln!(text, "revision {}", crate::environment::git_revision());
    let _ = writeln!(text, "suite {}", suite_word(args));
    let _ = writeln!(
        text,
        "sampling repeat={} processes={} processes_at_1m={} max_processes={} \
         min_sample_ms={} spread_from={} timeout={} counts={} geometry={:?} counts_limit={}",
        args.repeat,
        args.processes,
        args.processes_at_1m,
        args.max_processes.max(args.processes),
        args.min_sample_ms,
        args.spread_from,
        args.timeout,
        args.counts,
        args.cache_geometry,
        args.counts_limit
    );
    for cell in cells {
        let definition = cell.definition();
        let skip = cell
            .structure()
            .and_then(|s| s.structure.skip.clone())
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "cell {}\t{}\t{:?}\t{:?}\t{}\t{:?}\t{}\t{skip}",
            cell_name(&definition.key),
            definition.family,
            definition.params,
            definition.ops,
            definition.seed,
            definition.implementation_parameters,
            cell.generator,
        );
    }
    let hash = Sha256::digest(text.as_bytes());
    hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Each cell's expected seconds, every process included, from the standard suite's costs
/// table (`workloads/suites/standard-costs.csv`, learned from a whole run): the cell's own
/// line; else the mean of the implementation's lines at that size; else the mean of the
/// size's lines; else the mean of the nearest size's lines scaled by the timers (a
/// cell's cost grows at least with its timers); 1 when the table says nothing. A cell
/// left out by design costs nothing. The same on every host: it reads no clock.
pub(super) fn expected_seconds(cells: &[Cell]) -> Vec<f64> {
    let table = costs_table(STANDARD_COSTS);
    let mut by_implementation: BTreeMap<(u64, &str), (f64, f64)> = BTreeMap::new();
    let mut by_size: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for ((_, timers, implementation), &seconds) in &table {
        let entry = by_implementation
            .entry((*timers, implementation.as_str()))
            .or_default();
        entry.0 += seconds;
        entry.1 += 1.0;
        let entry = by_size.entry(*timers).or_default();
        entry.0 += seconds;
        entry.1 += 1.0;
    }
    let mean = |(sum, n): (f64, f64)| sum / n;
    cells
        .iter()
        .map(|cell| {
            if cell.structure().is_some_and(|s| s.structure.skip.is_some()) {
                return 0.0;
            }
            let key = cell.key();
            let timers = key.timers;
            if let Some(&seconds) =
                table.get(&(key.workload.clone(), timers, key.implementation.clone()))
            {
                return seconds;
            }
            if let Some(&sums) = by_implementation.get(&(timers, key.implementation.as_str())) {
                return mean(sums);
            }
            if let Some(&sums) = by_size.get(&timers) {
                return mean(sums);
            }
            let nearest = by_size
                .iter()
                .min_by_key(|(size, _)| size.abs_diff(timers))
                .map(|(&size, &sums)| mean(sums) * timers as f64 / size as f64);
            nearest.unwrap_or(1.0)
        })
        .collect()
}

/// The shard (1-based) of each cell when the plan splits into `count`, by the module's
/// rule over `expected` (one figure per cell, in the plan's order).
pub(super) fn split(cells: &[Cell], expected: &[f64], count: u32) -> Vec<u32> {
    let names: Vec<String> = cells.iter().map(|c| cell_name(&c.key())).collect();
    split_named(&names, expected, count)
}

/// [`split`] of cells by their names.
fn split_named(names: &[String], expected: &[f64], count: u32) -> Vec<u32> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| {
        expected[b]
            .total_cmp(&expected[a])
            .then_with(|| names[a].cmp(&names[b]))
    });
    let mut load = vec![0.0_f64; count as usize];
    let mut shard_of = vec![0; names.len()];
    for index in order {
        let least = (0..load.len())
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .expect("at least one shard");
        load[least] += expected[index];
        shard_of[index] = least as u32 + 1;
    }
    shard_of
}

/// Whether each cell of the plan belongs to `shard` (all do without one).
pub(super) fn members(cells: &[Cell], shard: Option<Shard>) -> Vec<bool> {
    match shard {
        None => vec![true; cells.len()],
        Some(shard) => split(cells, &expected_seconds(cells), shard.count)
            .into_iter()
            .map(|k| k == shard.index)
            .collect(),
    }
}

/// What `run --plan` prints: the digest, every cell with its shard and expected seconds,
/// then each shard's cells and expected time, split into `count` shards.
pub(super) fn describe(args: &Args, cells: &[Cell], digest: &str, count: u32) -> String {
    let expected = expected_seconds(cells);
    let shard_of = split(cells, &expected, count);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "plan {digest}: revision {}, suite {}, {} cells, split into {count} shard{}",
        crate::environment::git_revision(),
        suite_word(args),
        cells.len(),
        if count == 1 { "" } else { "s" }
    );
    let mut table = crate::table::Table::new(&[">shard", "cell", ">expected s"]);
    for ((cell, seconds), shard) in cells.iter().zip(&expected).zip(&shard_of) {
        table.row(vec![
            format!("{shard}/{count}"),
            cell_name(&cell.key()),
            format!("{seconds:.2}"),
        ]);
    }
    out.push_str(&table.render("  "));
    out.push('\n');
    let mut totals = crate::table::Table::new(&[">shard", ">cells", ">expected s"]);
    for k in 1..=count {
        let mine = shard_of.iter().enumerate().filter(|(_, s)| **s == k);
        let (n, seconds) = mine.fold((0, 0.0), |(n, s), (i, _)| (n + 1, s + expected[i]));
        totals.row(vec![
            format!("{k}/{count}"),
            n.to_string(),
            format!("{seconds:.0}"),
        ]);
    }
    out.push_str("\nshards:\n");
    out.push_str(&totals.render("  "));
    out.push_str(
        "\nExpected seconds: each cell's cost in workloads/suites/standard-costs.csv (a whole \
         run's, on the machine that learned it), or its nearest like there; a machine's \
         speed scales them all alike. Run shard K with `timerbench run --shard K/N` and the \
         same other flags on any host of this revision.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::split_named;

    fn names(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("w/1000/impl-{i:02}")).collect()
    }

    #[test]
    fn the_costliest_cells_go_to_different_shards_and_the_rest_even_them_out() {
        // Three costly cells among many small ones of one cost.
        let mut expected = vec![1.0; 30];
        for costly in [3, 11, 20] {
            expected[costly] = 20.0;
        }
        let shard_of = split_named(&names(30), &expected, 3);
        let costly: Vec<u32> = [3, 11, 20].iter().map(|&i| shard_of[i]).collect();
        let mut distinct = costly.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "one costly cell a shard: {costly:?}");
        let load = |k: u32| -> f64 {
            (0..30)
                .filter(|&i| shard_of[i] == k)
                .map(|i| expected[i])
                .sum()
        };
        let loads: Vec<f64> = (1..=3).map(load).collect();
        let (least, most) = (
            loads.iter().copied().fold(f64::MAX, f64::min),
            loads.iter().copied().fold(0.0, f64::max),
        );
        assert!(most - least <= 1.0, "within one small cell: {loads:?}");
        assert!(shard_of.iter().all(|&k| (1..=3).contains(&k)));
    }

    #[test]
    fn the_split_depends_on_the_cells_alone_not_their_order() {
        let names = names(12);
        let expected: Vec<f64> = (0..12).map(|i| f64::from(i % 4)).collect();
        let once = split_named(&names, &expected, 4);
        // The same cells listed backwards land in the same shards: ties go by name.
        let reversed_names: Vec<String> = names.iter().rev().cloned().collect();
        let reversed_expected: Vec<f64> = expected.iter().rev().copied().collect();
        let mut again = split_named(&reversed_names, &reversed_expected, 4);
        again.reverse();
        assert_eq!(once, again);
    }
}
