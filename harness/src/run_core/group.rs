//! One size of one workload, measured across its implementations: where the samples of
//! several processes are interleaved.
//!
//! On a virtual machine the figures of one process can differ from another's by tens of
//! percent (where the allocator's pages land after other processes churned memory, the
//! machine's drift), while the samples within one process agree within a few
//! (METHODOLOGY.md, *Between processes*). One process per cell cannot see that, and
//! whichever implementation runs during a slow spell takes all of it. So a group runs:
//!
//! 1. each implementation's `full` process, in order (A B C): verification, memory, its
//!    samples, latency;
//! 2. then `processes - 1` rounds of `samples` processes, each round starting one
//!    implementation later (B C A, then C A B, ...), so that drift spreads over all of
//!    them alike. Each verifies on its own before it samples;
//! 3. then, up to `max_processes`, more rounds for the cells whose process medians still
//!    disagree (their spread between processes, the MAD of the medians over their median,
//!    above [`SETTLED`]), whose replay is under [`QUICK_REPLAY`] and which hold fewer than
//!    [`EXTRA_PROCESSES_BELOW`] timers, in rotating order among those cells only. The time
//!    goes where the noise is: at 1k and 100k extra processes settle most cells and make
//!    two runs agree better. At 1M they do not: there what differs is the run, not the
//!    process. The slow replays (a skip list or the purge heap at 1M, seconds each) take
//!    none either: their processes already agree closely, and each one more would cost
//!    seconds (METHODOLOGY.md, *Processes and extra processes*).
//!
//! With `--spread-from N` (a study switch, off by default) the groups from N timers up are
//! measured as one block instead ([`measure_block`]): the steps above, each taken for every
//! group of the block before the next, so that a group's rounds lie apart across the block.
//! It did not make two runs agree better at 1M: what moves the 1M cells lasts longer than
//! the block, so spreading within a run cannot reach it (METHODOLOGY.md, *Between runs at
//! 1M*).
//!
//! Each cell's record then holds every process's samples (the spreads recomputed over
//! all), the median of each process, and each process's conditions; the records are
//! appended when the group is done, so a cell is recorded once, whole. A samples process
//! that does not verify, crashes or runs out of time ends its cell with that status and
//! reason and no figures; the other cells go on.

use super::cache::Prepared;
use super::cell_name;
use super::child::{self, Sampling};
use super::plan::{Cell, StructureCell};
use super::progress::Progress;
use crate::schema::{CellRecord, Status};
use std::time::{Duration, Instant};

/// The spread between processes at which a cell takes no more processes: 2% (the MAD of
/// the process medians over their median), well inside the ±5% two runs should agree.
pub(super) const SETTLED: f64 = 0.02;

/// The longest replay (the cell's median ns/op times its operations) of a cell that takes
/// processes beyond `--processes`: half a second, the cell's own `SLOW_REPLAY`, above
/// which a process also takes fewer samples.
pub(super) const QUICK_REPLAY: Duration = Duration::from_millis(500);

/// The size from which a cell takes no processes beyond `--processes`: 1M timers. Below
/// it the extra processes firm the median up; at 1M a run's cells move together against
/// another run's (the host's state over tens of minutes, [`measure_block`]), more
/// processes of the same run cannot reach that, and they would cost a large share of the
/// suite's time (METHODOLOGY.md, *Processes and extra processes*).
pub(super) const EXTRA_PROCESSES_BELOW: u64 = 1_000_000;

/// Whether a group of `timers` is large: at and above [`EXTRA_PROCESSES_BELOW`], it takes
/// `--processes-at-1m` processes per cell instead of `--processes`, and none beyond them.
pub(super) fn is_large(timers: u64) -> bool {
    timers >= EXTRA_PROCESSES_BELOW
}

/// How a group measures.
#[derive(Clone)]
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

/// One group of a block: its cells (one workload at one size, each an implementation),
/// the workload, the index of its first cell in the run (for the progress lines) and its
/// records as they fill.
pub(super) struct Group<'a> {
    pub cells: &'a [StructureCell<'a>],
    pub workload: &'a Prepared,
    pub first: usize,
    records: Vec<CellRecord>,
}

impl<'a> Group<'a> {
    pub fn new(cells: &'a [StructureCell<'a>], workload: &'a Prepared, first: usize) -> Self {
        Group {
            cells,
            workload,
            first,
            records: Vec::new(),
        }
    }
}

/// Measures a block of groups and returns each group's records, in the groups' order.
///
/// A block of one group is the group measured on its own, as the module documentation
/// says. A block of several (`--spread-from`: the groups from that size up) runs
/// every group's `full` processes, then round 1 of every group, then round 2, and so on:
/// the rounds of one group are spread over the whole block instead of following each
/// other. At 1M one group takes minutes, and two runs' 1M cells moved by workload, whole
/// groups faster or slower together: the machine's state over minutes (its share of the
/// host's cache), which a group measured at one stretch takes whole (METHODOLOGY.md,
/// *Between runs at 1M*). Spread, each cell's median is taken over the block's whole span.
pub(super) fn measure_block(
    mut groups: Vec<Group>,
    settings: &Settings,
    progress: &Progress,
) -> Vec<Vec<CellRecord>> {
    full_processes(&mut groups, settings, progress);
    fixed_rounds(&mut groups, settings);
    extra_rounds(&mut groups, settings);
    groups
        .into_iter()
        .map(|group| {
            if settings.processes > 1 {
                for (cell, record) in group.cells.iter().zip(&group.records) {
                    progress.note(&summary_line(cell.cell, record));
                }
            }
            group.records
        })
        .collect()
}

/// Step 1: each group's `full` processes, in order, which start every cell's record.
fn full_processes(groups: &mut [Group], settings: &Settings, progress: &Progress) {
    for group in groups {
        group.records = group
            .cells
            .iter()
            .enumerate()
            .map(|(offset, cell)| {
                let label = label(cell.cell);
                progress.start(group.first + offset, &label);
                let inject = settings.inject_panic.as_deref() == Some(&cell_name(&cell.cell.key()));
                let record = child::run_cell(
                    *cell,
                    group.workload,
                    settings.sampling,
                    settings.limit,
                    inject,
                );
                progress.finish_cell(group.first + offset, &label, &record);
                record
            })
            .collect();
    }
}

/// Step 2: `processes - 1` rounds of one `samples` process per measured cell, each round
/// of a group starting one implementation later.
fn fixed_rounds(groups: &mut [Group], settings: &Settings) {
    for round in 1..settings.processes as usize {
        for group in groups.iter_mut() {
            let order = (0..group.cells.len()).map(|i| (i + round) % group.cells.len());
            for index in order {
                if group.records[index].status == Status::Ok {
                    one_more_process(group, index, settings);
                }
            }
        }
    }
}

/// Step 3: up to `max_processes`, rounds for the [`unsettled`] cells only, in rotating
/// order among them, until none is left.
fn extra_rounds(groups: &mut [Group], settings: &Settings) {
    let mut round = settings.processes as usize;
    while round < settings.max_processes as usize && settings.processes > 1 {
        let mut any = false;
        for group in groups.iter_mut() {
            let unsettled: Vec<usize> = (0..group.cells.len())
                .filter(|&i| unsettled(&group.records[i]))
                .collect();
            for offset in 0..unsettled.len() {
                one_more_process(
                    group,
                    unsettled[(offset + round) % unsettled.len()],
                    settings,
                );
            }
            any |= !unsettled.is_empty();
        }
        if !any {
            break;
        }
        round += 1;
    }
}

/// One more `samples` process of the group's cell `index`, merged into its record (or
/// ending it, with its reason, if the process fails).
fn one_more_process(group: &mut Group, index: usize, settings: &Settings) {
    let sampling = as_the_full_process(settings.sampling, &group.records[index]);
    let started = Instant::now();
    let outcome = child::run_samples(group.cells[index], group.workload, sampling, settings.limit);
    let record = &mut group.records[index];
    record.elapsed_seconds += started.elapsed().as_secs_f64();
    match outcome {
        Ok(set) => child::merge(record, set),
        Err((status, reason)) => *record = fail(record.clone(), status, reason),
    }
}

/// `sampling` with as many samples per process as the cell's `full` process took: fewer
/// than `--repeat` for a slow replay (`cmd/cell/warm_up.rs`'s `SLOW_REPLAY`), so that every
/// process of a cell contributes alike.
fn as_the_full_process(sampling: Sampling, record: &CellRecord) -> Sampling {
    let repeat = record
        .throughput
        .as_ref()
        .map(|t| t.repeats / t.processes.max(1))
        .filter(|&each| each > 0)
        .unwrap_or(sampling.repeat);
    Sampling { repeat, ..sampling }
}

/// Whether a measured cell's process medians still disagree by more than [`SETTLED`],
/// one more process of it is cheap (its replay under [`QUICK_REPLAY`]), and it is below
/// the size where more processes stop helping ([`EXTRA_PROCESSES_BELOW`]).
fn unsettled(record: &CellRecord) -> bool {
    record.status == Status::Ok
        && record.key.timers < EXTRA_PROCESSES_BELOW
        && record.throughput.as_ref().is_some_and(|t| {
            let replay_ns = t.ns_per_op.median * record.operations as f64;
            t.between_processes() > SETTLED && replay_ns < QUICK_REPLAY.as_nanos() as f64
        })
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
        counts: None,
        others_load: None,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{CellKey, Throughput, spread};
    use timerbench_results::CellIdentity;

    /// An `ok` record of `operations` lines whose `processes` took `per_process` samples
    /// each, the process medians as given (ns/op).
    fn measured(operations: u64, medians: &[f64], per_process: u32) -> CellRecord {
        at_size(1000, operations, medians, per_process)
    }

    /// [`measured`] of a cell of `timers` timers.
    fn at_size(timers: u64, operations: u64, medians: &[f64], per_process: u32) -> CellRecord {
        let identity = CellIdentity {
            key: CellKey {
                workload: "hold-exponential".into(),
                timers,
                implementation: "btree".into(),
            },
            family: "hold".into(),
            params: Default::default(),
            ops: None,
            seed: 1,
            generator: "timerbench gen hold --timers 1000 --seed 1".into(),
            peer: false,
            implementation_base: "btree".into(),
            implementation_parameters: Default::default(),
            precision: "exact".into(),
            operations,
            fired: 1000,
            reference_digest: "0".into(),
        };
        let mut record = CellRecord::for_spec(identity, Status::Ok, None);
        let samples: Vec<f64> = medians
            .iter()
            .flat_map(|&m| std::iter::repeat_n(m, per_process as usize))
            .collect();
        record.throughput = Some(Throughput {
            repeats: samples.len() as u32,
            ns_per_op: spread(samples),
            ns_per_fired: None,
            ns_per_unit: None,
            ns_per_op_after_fill: None,
            ns_per_unit_after_fill: None,
            fill_operations: 0,
            iterations: Vec::new(),
            min_sample_ns: 10_000_000,
            processes: medians.len() as u32,
            process_medians: medians.to_vec(),
            page_faults: None,
        });
        record
    }

    #[test]
    fn only_a_quick_cell_below_1m_whose_processes_disagree_takes_more() {
        // 10,000 lines at 100 ns: a 1 ms replay.
        assert!(unsettled(&measured(10_000, &[100.0, 90.0, 110.0], 3)));
        assert!(!unsettled(&measured(10_000, &[100.0, 101.0, 99.5], 3)));
        // 1M lines at 100 ns: a 100 ms replay, still quick.
        assert!(unsettled(&measured(1_000_000, &[100.0, 90.0, 110.0], 3)));
        // 10M lines at 100 ns: a 1 s replay, past QUICK_REPLAY, however they disagree.
        assert!(!unsettled(&measured(10_000_000, &[100.0, 90.0, 110.0], 3)));
        // The same quick replay at 1M timers: the extra processes stop at that size.
        assert!(unsettled(&at_size(
            999_999,
            10_000,
            &[100.0, 90.0, 110.0],
            3
        )));
        assert!(!unsettled(&at_size(
            1_000_000,
            10_000,
            &[100.0, 90.0, 110.0],
            3
        )));
        let mut failed = measured(10_000, &[100.0, 90.0, 110.0], 3);
        failed.status = Status::Unverified;
        assert!(!unsettled(&failed));
    }

    #[test]
    fn samples_processes_take_as_many_samples_as_the_full_one() {
        let sampling = Sampling {
            repeat: 3,
            min_sample: Duration::from_millis(10),
        };
        let slow = measured(1_000_000, &[900.0], 2);
        assert_eq!(as_the_full_process(sampling, &slow).repeat, 2);
        let merged = measured(1_000_000, &[900.0, 910.0], 2);
        assert_eq!(as_the_full_process(sampling, &merged).repeat, 2);
        let quick = measured(1_000, &[20.0], 3);
        assert_eq!(as_the_full_process(sampling, &quick).repeat, 3);
    }
}
