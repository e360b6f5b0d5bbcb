//! One size of one workload, measured across its implementations: where the samples of
//! several processes are interleaved.
//!
//! On a virtual machine the figures of one process can differ from another's by tens of
//! percent (where the allocator's pages land after other processes churned memory, the
//! machine's drift), while the samples within one process agree within a few
//! (`shared/research/measurement-variance.md`). One process per cell cannot see that, and
//! whichever implementation runs during a slow spell takes all of it. So a group runs:
//!
//! 1. each implementation's `full` process, in order (A B C): verification, memory, its
//!    samples, latency;
//! 2. then `processes - 1` rounds of `samples` processes, each round starting one
//!    implementation later (B C A, then C A B, ...), so that drift spreads over all of
//!    them alike. Each verifies on its own before it samples;
//! 3. then, up to `max_processes`, more rounds for the cells whose process medians still
//!    disagree (their spread between processes, the MAD of the medians over their median,
//!    above [`SETTLED`]), in rotating order among those cells only. The time goes where
//!    the noise is: at 1M timers the medians of processes differ by tens of percent where
//!    one process's samples agree within a few, and a median of three such processes
//!    moves with which of them drew a slow placement; most cells settle in three.
//!
//! Each cell's record then holds every process's samples (the spreads recomputed over
//! all), the median of each process, and each process's conditions; the records are
//! appended when the group is done, so a cell is recorded once, whole. A samples process
//! that does not verify, crashes or runs out of time ends its cell with that status and
//! reason and no figures; the other cells go on.

use super::cache::Prepared;
use super::child::{self, Sampling};
use super::progress::Progress;
use super::{Cell, cell_name};
use crate::schema::{CellRecord, Status};
use std::time::Duration;

/// The spread between processes at which a cell takes no more processes: 2% (the MAD of
/// the process medians over their median), well inside the ±5% two runs should agree.
pub(super) const SETTLED: f64 = 0.02;

/// How a group measures.
pub(super) struct Settings {
    pub sampling: Sampling,
    /// Processes that take samples of each cell, the `full` one included.
    pub processes: u32,
    /// The most processes a cell takes while its process medians disagree.
    pub max_processes: u32,
    pub limit: Duration,
    /// The cell (`WORKLOAD/TIMERS/IMPL`) whose process must panic, for the tests.
    pub inject_panic: Option<String>,
}

/// Measures `cells` (one workload at one size, each an implementation) on `workload`;
/// `first` is the index of the first in the run, for the progress lines.
pub(super) fn measure(
    cells: &[&Cell],
    workload: &Prepared,
    settings: &Settings,
    progress: &Progress,
    first: usize,
) -> Vec<CellRecord> {
    let mut records: Vec<CellRecord> = cells
        .iter()
        .enumerate()
        .map(|(offset, cell)| {
            let label = label(cell);
            progress.start(first + offset, &label);
            let inject = settings.inject_panic.as_deref() == Some(&cell_name(&cell.key()));
            let record = child::run_cell(cell, workload, settings.sampling, settings.limit, inject);
            progress.finish_cell(first + offset, &label, &record);
            record
        })
        .collect();
    for round in 1..settings.processes as usize {
        let order = (0..cells.len()).map(|i| (i + round) % cells.len());
        for index in order {
            if records[index].status != Status::Ok {
                continue;
            }
            let outcome =
                child::run_samples(cells[index], workload, settings.sampling, settings.limit);
            let record = &mut records[index];
            match outcome {
                Ok(set) => child::merge(record, set),
                Err((status, reason)) => *record = fail(record.clone(), status, reason),
            }
        }
    }
    let mut round = settings.processes as usize;
    while round < settings.max_processes as usize && settings.processes > 1 {
        let unsettled: Vec<usize> = (0..cells.len())
            .filter(|&i| unsettled(&records[i]))
            .collect();
        if unsettled.is_empty() {
            break;
        }
        for offset in 0..unsettled.len() {
            let index = unsettled[(offset + round) % unsettled.len()];
            let outcome =
                child::run_samples(cells[index], workload, settings.sampling, settings.limit);
            let record = &mut records[index];
            match outcome {
                Ok(set) => child::merge(record, set),
                Err((status, reason)) => *record = fail(record.clone(), status, reason),
            }
        }
        round += 1;
    }
    if settings.processes > 1 {
        for (cell, record) in cells.iter().zip(&records) {
            progress.note(&summary_line(cell, record));
        }
    }
    records
}

/// Whether a measured cell's process medians still disagree by more than [`SETTLED`].
fn unsettled(record: &CellRecord) -> bool {
    record.status == Status::Ok
        && record
            .throughput
            .as_ref()
            .is_some_and(|t| t.between_processes() > SETTLED)
}

/// `record` stripped of its figures, ended with `status` and `reason`.
fn fail(record: CellRecord, status: Status, reason: String) -> CellRecord {
    CellRecord {
        status,
        reason: Some(reason),
        throughput: None,
        latency: Default::default(),
        clock: None,
        advance_series: None,
        memory: None,
        lateness: None,
        fixed_costs: None,
        ..record
    }
}

fn label(cell: &Cell) -> String {
    let key = cell.key();
    format!("{} {} {}", key.workload, key.timers, key.implementation)
}

/// `hold 1000 btree: 23.1 ns/op over 3 processes, ±1.2% between them, ±0.4% within`.
fn summary_line(cell: &Cell, record: &CellRecord) -> String {
    match (&record.status, &record.throughput) {
        (Status::Ok, Some(t)) => format!(
            "  {}: {:.1} ns/op over {} processes, ±{:.1}% between them, ±{:.1}% within",
            label(cell),
            t.ns_per_op.median,
            t.processes,
            100.0 * t.between_processes(),
            100.0 * t.within_process()
        ),
        (status, _) => format!(
            "  {}: {}: {}",
            label(cell),
            status.as_str(),
            record.reason.as_deref().unwrap_or("")
        ),
    }
}
