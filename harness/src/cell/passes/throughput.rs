//! The throughput pass: `repeat` timed replays of the whole workload, each on a fresh
//! queue and checked against the reference, reported per operation and per firing.
//!
//! Each repeat is [`TimedWorkload::whole`]'s timed replay, the loop `cargo bench` samples
//! too. What the record has no field for is read just outside its clock, so that it costs
//! the timed replay nothing: the allocations and minor page faults inside `drive`, which
//! tell a structure sized by `with_capacity` from one that still allocates, and an
//! allocator that hands back fresh pages from one that reuses them.

use super::timed::{Operations, Recipe, Timed, TimedWorkload};
use crate::alloc;
use crate::cell::Diagnostics;
use crate::cell::os::minor_page_faults;
use crate::schema::{Throughput, spread};
use timerbench_impls::TimerQueue;
use timerbench_workloads::reference::Summary;

/// Times `repeats` replays of `workload` through fresh `Q`s built by `recipe`: the
/// record's throughput, or how a repeat disagreed with the verified `reference`.
pub(in crate::cell) fn throughput<Q: TimerQueue<u64>>(
    workload: &TimedWorkload,
    recipe: Recipe<'_>,
    repeats: u32,
    reference: &Summary,
    diagnostics: &mut Diagnostics,
) -> Result<Throughput, String> {
    // `ns_per_op` counts lines, the fill included (the cell has no untimed fill).
    let operations = workload.operations(Operations::Lines).max(1) as f64;
    let mut per_op = Vec::with_capacity(repeats as usize);
    let mut per_fired = Vec::with_capacity(repeats as usize);
    for repeat in 1..=repeats {
        let disagreed = |message: String| format!("timed repeat {repeat}: {message}");
        let ready = workload
            .fresh_queue::<Q>(recipe)
            .map_err(|e| disagreed(e.to_string()))?;
        let faults = minor_page_faults();
        let allocations = alloc::allocations();
        let Timed { elapsed, replayed } = ready.time();
        diagnostics
            .throughput_drive_allocations
            .push(alloc::allocations() - allocations);
        diagnostics
            .throughput_drive_page_faults
            .push(minor_page_faults().saturating_sub(faults));
        replayed.check(reference).map_err(disagreed)?;
        drop(replayed);
        let elapsed = elapsed.as_nanos() as f64;
        per_op.push(elapsed / operations);
        per_fired.push(elapsed / reference.fired.max(1) as f64);
    }
    Ok(Throughput {
        repeats,
        ns_per_op: spread(per_op),
        ns_per_fired: (reference.fired > 0).then(|| spread(per_fired)),
    })
}
