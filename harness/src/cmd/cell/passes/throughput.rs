//! The throughput pass: `repeat` timed samples of the whole workload, each replay on a
//! fresh queue and checked against the reference, reported per operation line and per
//! unit, with and without the fill, and per firing.
//!
//! A sample repeats the replay until it has run at least the minimum sample time (10 ms by
//! default, `timerbench run --min-sample-ms`), so that a workload whose replay lasts well
//! under a millisecond (1k timers) is not one reading near the clock's and the scheduler's
//! resolution; its figures are the sample's total time over its total operations. Each
//! replay is [`TimedWorkload::after_fill`]'s timed replay, the loop `cargo bench` samples
//! too, with the fill timed apart. The page faults inside `drive` are read just outside
//! its clock (`getrusage`), so that they cost the timed replay nothing: they tell a replay
//! that takes fresh pages from one that reuses them, and go into the record
//! (`page_faults`) and the diagnostics. Allocation counting is off by
//! now ([`crate::alloc::stop_counting`], after the memory pass): the allocations inside
//! `drive` are the memory pass's diagnostics.

use super::timed::{Operations, Recipe, TimedWorkload};
use crate::cell_core::os::page_faults;
use crate::cmd::cell::diagnostics::Diagnostics;
use crate::schema::{PageFaults, Throughput, spread};
use std::time::Duration;
use timerbench_impls::TimerQueue;
use timerbench_workloads::reference::Summary;

/// Times `repeats` samples of `workload` (split at its fill) through fresh `Q`s built by
/// `recipe`, each sample as many replays as it takes to run at least `min_sample`: the
/// record's throughput, or how a replay disagreed with the verified `reference`.
pub(in crate::cmd::cell) fn throughput<Q: TimerQueue<u64>>(
    workload: &TimedWorkload,
    recipe: Recipe<'_>,
    repeats: u32,
    min_sample: Duration,
    reference: &Summary,
    diagnostics: &mut Diagnostics,
) -> Result<Throughput, String> {
    let fill = workload.fill_operations();
    let timed_lines = workload.operations(Operations::Lines);
    let timed_units = workload.operations(Operations::Units);
    let per = |count: u64| count.max(1) as f64;
    let mut figures = [(); 5].map(|()| Vec::with_capacity(repeats as usize));
    let mut iterations = Vec::with_capacity(repeats as usize);
    let mut all_faults = PageFaults::default();
    for repeat in 1..=repeats {
        let disagreed = |message: String| format!("timed sample {repeat}: {message}");
        let (mut fill_ns, mut timed_ns, mut replays, mut faults) = (0.0, 0.0, 0u64, 0);
        while replays == 0 || fill_ns + timed_ns < min_sample.as_nanos() as f64 {
            let ready = workload
                .fresh_queue::<Q>(recipe)
                .map_err(|e| disagreed(e.to_string()))?;
            let (minor_before, major_before) = page_faults();
            let timed = ready.time();
            let (minor_after, major_after) = page_faults();
            let minor = minor_after.saturating_sub(minor_before);
            faults += minor;
            all_faults.add(&PageFaults {
                minor,
                major: major_after.saturating_sub(major_before),
                replays: 1,
            });
            timed.replayed.check(reference).map_err(disagreed)?;
            fill_ns += timed.fill_elapsed.as_nanos() as f64;
            timed_ns += timed.elapsed.as_nanos() as f64;
            replays += 1;
        }
        let replays_f = replays as f64;
        let whole_ns = (fill_ns + timed_ns) / replays_f;
        let after_fill_ns = timed_ns / replays_f;
        let [per_op, per_unit, per_op_after, per_unit_after, per_fired] = &mut figures;
        per_op.push(whole_ns / per(fill + timed_lines));
        per_unit.push(whole_ns / per(fill + timed_units));
        per_op_after.push(after_fill_ns / per(timed_lines));
        per_unit_after.push(after_fill_ns / per(timed_units));
        per_fired.push(whole_ns / per(reference.fired));
        iterations.push(replays);
        diagnostics.throughput_drive_page_faults.push(faults);
    }
    let [per_op, per_unit, per_op_after, per_unit_after, per_fired] = figures;
    let ns_per_op = spread(per_op);
    Ok(Throughput {
        repeats,
        processes: 1,
        process_medians: vec![ns_per_op.median],
        ns_per_op,
        ns_per_fired: (reference.fired > 0).then(|| spread(per_fired)),
        ns_per_unit: Some(spread(per_unit)),
        ns_per_op_after_fill: Some(spread(per_op_after)),
        ns_per_unit_after_fill: Some(spread(per_unit_after)),
        fill_operations: fill,
        iterations,
        min_sample_ns: min_sample.as_nanos() as u64,
        page_faults: Some(all_faults),
    })
}
