//! `timerbench run --counts`: the same plan, filters, folder layout and records as a timed
//! run, but each cell is one counting process ([`crate::counts_core`]): verified, then its
//! lines after the fill replayed once under Callgrind. The record's `throughput` is `null`
//! and its `counts` filled.
//!
//! A count does not depend on the machine's load, so `--jobs` cells (default: the CPUs)
//! count at once; the records still land in plan order. A cell whose counting is estimated
//! above `--counts-limit` seconds is `skipped` with its estimate; an engine's cells are
//! `unsupported` (the counts are of Rust structures). The floor, when asked for, is
//! counted like a structure: its counts are the bookkeeping baseline.

use super::cache::case_id;
use super::cache::{self, Prepared};
use super::estimate::CellShape;
use super::plan::StructureCell;
use super::{Args, Cell, cell_name, child, engines, files, progress};
use crate::counts_core::{Valgrind, count_cell};
use crate::engines::Engine;
use crate::schema::{CellRecord, Status};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;
use timerbench_results::Appender;

/// The default folder's suffix: `results/<date>-<host>-<rev>-counts`.
pub(super) const FOLDER_SUFFIX: &str = "-counts";

/// Seconds a counting process takes before its first line: Valgrind's start and its
/// instrumentation of the binary, with the workload's load. The smoke suite's quickest
/// cells counted in just under a second each on this project's 2-core VM (Valgrind 3.19,
/// a release build, two cells at once).
const START_SECONDS: f64 = 1.0;

/// Seconds per workload line under Callgrind, both replays together (the verification,
/// instrumented but not collected, and the counted replay after the fill, with the cache
/// and branch simulation): the median over the smoke suite's cells, counted once on the
/// same machine, two at once. It is the typical structure's: one that scans or walks
/// (`polling-scan`, the lists), or a workload whose lines advance many ticks each
/// (`sparse-tick`), costs up to ten times more per line, and then the estimate errs
/// short; the cell's `--timeout` still bounds it, recorded `timeout` with its reason.
const SECONDS_PER_LINE: f64 = 2.0e-4;

/// `--counts-limit`'s default: the default suite's largest 100k cells (keepalive's, under
/// 800k lines) are estimated below it, its 1M ones (ten times the lines) far above, and
/// would each count for most of an hour.
pub(super) const DEFAULT_LIMIT_SECONDS: u64 = 300;

/// The estimated seconds of counting a cell of a workload with `lines` lines.
pub(super) fn estimate_seconds(lines: u64) -> f64 {
    START_SECONDS + SECONDS_PER_LINE * lines as f64
}

/// Finds and checks Valgrind (with the geometry), before anything is written. The timed
/// run's sampling flags are refused beside --counts by the flags themselves
/// (`conflicts_with`), and the counts' flags without it (`requires`): a reader of the
/// command would think they shaped what was recorded.
pub(super) fn check(args: &Args) -> anyhow::Result<Option<Valgrind>> {
    Valgrind::check(args.cache_geometry)
}

/// Counts the cells of `todo` into `results` in plan order, `--jobs` at a time, then
/// records the engine cells as not counted; gives the number that failed.
pub(super) fn measure(
    args: &Args,
    valgrind: &Valgrind,
    inputs: &[files::FileInput],
    todo: &[&Cell],
    results: &mut Appender,
) -> anyhow::Result<usize> {
    let structures: Vec<StructureCell> = todo.iter().filter_map(|cell| cell.structure()).collect();
    let engine_cells: Vec<(&Cell, &'static Engine)> = todo
        .iter()
        .filter_map(|cell| Some((*cell, cell.engine()?)))
        .collect();
    let prepared = super::prepare(todo, inputs, &cache::folder())?;
    let binary = std::env::current_exe()?;
    let jobs = args.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    let shapes = structures
        .iter()
        .map(|StructureCell { cell, structure }| CellShape {
            workload: cell.key().workload,
            implementation: cell.key().implementation,
            timers: cell.key().timers,
            lines: prepared[&case_id(&cell.case)].reference.operations,
            // Above the limit a cell is skipped at once: it costs the estimate nothing.
            skipped: structure.skip.is_some()
                || estimate_seconds(prepared[&case_id(&cell.case)].reference.operations)
                    > args.counts_limit as f64,
        })
        .collect();
    let progress = progress::Progress::new(shapes).for_counts(jobs as u32);
    let limit = Duration::from_secs(args.timeout);
    let next = AtomicUsize::new(0);
    let (sender, receiver) = mpsc::channel::<(usize, CellRecord)>();
    let count_one = |index: usize| {
        let cell = structures[index];
        let workload = &prepared[&case_id(&cell.cell.case)];
        progress.start(index, &cell_name(&cell.cell.key()));
        one_cell(args, valgrind, &binary, cell, workload, limit)
    };
    let mut not_ok = 0;
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let total = structures.len();
        for _ in 0..jobs.min(total) {
            let sender = sender.clone();
            let (next, count_one) = (&next, &count_one);
            scope.spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= total || sender.send((index, count_one(index))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        // The records land in plan order: a finished cell waits for those before it.
        let mut waiting = BTreeMap::new();
        let mut landed = 0;
        for (index, record) in receiver {
            waiting.insert(index, record);
            while let Some(record) = waiting.remove(&landed) {
                progress.start_block(landed);
                progress.finish_block(landed, [&record]);
                progress.finish_cell(landed, &cell_name(&record.key), &record);
                results.append(&record)?;
                if record.status != Status::Ok && !record.status.left_out() {
                    not_ok += 1;
                }
                landed += 1;
            }
        }
        Ok(())
    })?;
    for &(cell, engine) in &engine_cells {
        let record = engines::not_counted(cell, engine, &prepared[&case_id(&cell.case)]);
        println!(
            "  {} (engine): {}",
            cell_name(&record.key),
            record.status.as_str()
        );
        results.append(&record)?;
    }
    progress.done();
    Ok(not_ok)
}

/// One cell's record: left out by the plan or its range, skipped above the limit, or
/// counted.
fn one_cell(
    args: &Args,
    valgrind: &Valgrind,
    binary: &std::path::Path,
    cell: StructureCell,
    workload: &Prepared,
    limit: Duration,
) -> CellRecord {
    let sampling = child::Sampling {
        repeat: 1,
        min_sample: Duration::ZERO,
    };
    let spec = child::spec_of(cell, workload, sampling, false);
    if let Some(record) = child::left_out(cell, workload, &spec) {
        return record;
    }
    let estimate = estimate_seconds(workload.reference.operations);
    if estimate > args.counts_limit as f64 {
        return CellRecord::for_spec(
            &spec,
            Status::Skipped,
            Some(format!(
                "counting would take about {estimate:.0} s ({} lines under Callgrind), above \
                 --counts-limit {} s",
                workload.reference.operations, args.counts_limit
            )),
        );
    }
    count_cell(valgrind, binary, &spec, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_grows_with_the_lines_from_the_start_cost() {
        assert_eq!(estimate_seconds(0), START_SECONDS);
        let (one, two) = (estimate_seconds(1_000_000), estimate_seconds(2_000_000));
        assert!(
            (two - one - (one - START_SECONDS)).abs() < 1e-9,
            "{one} {two}"
        );
    }
}
