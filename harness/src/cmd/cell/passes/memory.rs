//! The memory pass: one untimed replay under the counting allocator ([`crate::alloc`]),
//! giving the queue's peak live bytes and its allocations.
//!
//! It runs before the timed passes because it is also the replay that settles the
//! allocator: without it the first timed repeat is the first to write a queue of full
//! capacity, and pays the page faults of memory fresh from the kernel (METHODOLOGY.md,
//! *Warm-up and the memory pass*).
//!
//! The figures are differences of the allocator's counters, so everything but the queue
//! (the handle table, the counts) exists before the baseline is taken, and the queue is
//! the only thing built between the readings.

use super::timed::{Recipe, Replayed};
use crate::alloc;
use crate::cmd::cell::diagnostics::Diagnostics;
use crate::schema::Memory;
use timerbench_impls::TimerQueue;
use timerbench_workloads::Program;
use timerbench_workloads::reference::Summary;
use timerbench_workloads::replay::{Counts, Quiet, drive, empty_handles};

/// Replays `program` through a fresh `Q` built by `recipe`, counting its allocations:
/// the record's memory figures (but `peak_rss_bytes`, read at the very end of the cell),
/// or how the replay disagreed with the verified `reference`. `peak_pending` is the
/// verified peak.
pub(in crate::cmd::cell) fn memory<Q: TimerQueue<u64>>(
    program: &Program,
    reference: &Summary,
    peak_pending: u64,
    recipe: Recipe<'_>,
    diagnostics: &mut Diagnostics,
) -> Result<Memory, String> {
    let mut handles = empty_handles(program);
    let mut counts = Counts::default();
    let baseline = alloc::live_bytes();
    alloc::reset_peak();
    let before = alloc::allocations();
    let mut queue = recipe.build::<Q>();
    let built = alloc::allocations();
    let result = drive(&mut queue, program, &mut handles, &mut counts, &mut Quiet);
    let peak = alloc::peak_bytes();
    let after = alloc::allocations();
    let replayed = Replayed {
        result,
        counts,
        queue,
    };
    if let Err(message) = replayed.check(reference) {
        return Err(format!("memory pass: {message}"));
    }
    drop(replayed);
    diagnostics.construction_allocations = built - before;
    diagnostics.memory_drive_allocations = after - built;
    let peak_live_bytes = peak.saturating_sub(baseline);
    let allocations = after - before;
    Ok(Memory {
        peak_live_bytes,
        peak_pending,
        bytes_per_pending_timer: if peak_pending == 0 {
            0.0
        } else {
            peak_live_bytes as f64 / peak_pending as f64
        },
        allocations,
        allocations_per_op: allocations as f64 / reference.operations.max(1) as f64,
        peak_rss_bytes: 0,
    })
}
