//! The two steps every measuring process takes, whatever else it does: the warm-up
//! replay that verifies the implementation before any time is taken (exactly, or within
//! its declared bound), and the timed samples of the throughput pass. A `full` cell
//! process ([`super::measure`]) and a `samples` one ([`super::samples`]) share them, so that
//! every process's figures rest on a verification of its own.

use super::diagnostics::Diagnostics;
use super::passes::throughput::throughput;
use super::passes::timed::{Recipe, TimedWorkload};
use super::passes::verify::{Verified, replay_unverified, verify, verify_within_bound};
use crate::schema::{CellSpec, Throughput};
use std::time::Duration;
use timerbench_impls::{Precision, TimerQueue, Variant, registry};
use timerbench_workloads::bounded::Lateness;
use timerbench_workloads::reference::Summary;
use timerbench_workloads::{Program, load};

/// What the warm-up made of the implementation.
pub(super) enum WarmUp {
    /// It replayed as it declares (the floor: it replayed, unverified, as it always is).
    Verified {
        /// Its summary and peak.
        verified: Verified,
        /// What every later replay must reproduce: the model's outcome for an exact queue,
        /// the queue's own verified outcome for an approximate one (it differs by design).
        reference: Summary,
        /// Its lateness, when approximate (boxed: a histogram is large).
        lateness: Option<Box<Lateness>>,
        /// As it declares it.
        precision: Precision,
    },
    /// It did not: why (its first differing firing, or the bound it broke).
    Unverified {
        reason: String,
        digest: Option<String>,
    },
}

/// Replays `program` once through a fresh `Q` of `variant`, verified as its precision asks.
/// An error is a workload that cannot be loaded again to explain a disagreement.
pub(super) fn warm_up<Q: TimerQueue<u64>>(
    spec: &CellSpec,
    variant: &Variant,
    program: &Program,
) -> anyhow::Result<WarmUp> {
    let precision = variant.build::<Q>(0).precision();
    if registry::is_floor(variant.implementation.name) {
        return Ok(match replay_unverified::<Q>(variant, program) {
            Ok(verified) => WarmUp::Verified {
                reference: verified.summary.clone(),
                verified,
                lateness: None,
                precision,
            },
            Err(mismatch) => WarmUp::Unverified {
                reason: mismatch.message,
                digest: mismatch.digest,
            },
        });
    }
    if precision.is_exact() {
        return Ok(match verify::<Q>(variant, program, &spec.reference) {
            Ok(verified) => WarmUp::Verified {
                verified,
                reference: spec.reference.clone(),
                lateness: None,
                precision,
            },
            Err(mismatch) => {
                let checked = load(&spec.workload_path)?;
                WarmUp::Unverified {
                    reason: mismatch.explain::<Q>(variant, &checked, &spec.reference),
                    digest: mismatch.digest,
                }
            }
        });
    }
    Ok(match verify_within_bound::<Q>(variant, program) {
        Ok((verified, lateness)) => WarmUp::Verified {
            reference: verified.summary.clone(),
            verified,
            lateness: Some(Box::new(lateness)),
            precision,
        },
        Err(mismatch) => WarmUp::Unverified {
            reason: mismatch.message,
            digest: mismatch.digest,
        },
    })
}

/// A replay this long or longer takes at most [`SLOW_REPEAT`] samples per process: half a
/// second, below the replays of the slowest structures at 1M timers (a skip list, the
/// purge heap: seconds each). Such a sample is one replay, far above the clock's
/// resolution, and such cells agree closely within and between processes, so a third
/// sample adds little that the other processes do not, at a large share of the suite's
/// time (METHODOLOGY.md, *How a cell is measured*). The `full`
/// process decides, from its memory pass's replay, and `timerbench run` hands its count
/// to the cell's `samples` processes.
pub(super) const SLOW_REPLAY: Duration = Duration::from_millis(500);

/// Samples per process of a slow replay: two, the fewest that still give a spread within
/// one process.
pub(super) const SLOW_REPEAT: u32 = 2;

/// `program` split at its fill for the throughput pass (the fill timed apart).
pub(super) fn split(program: &Program) -> anyhow::Result<TimedWorkload<'static>> {
    TimedWorkload::after_fill(program, program.fill_steps()).map_err(anyhow::Error::msg)
}

/// What warmed the allocator before the first sample. Without a warm-up the first
/// sample's queue lands on fresh pages and pays their faults (METHODOLOGY.md, *Warm-up and
/// the memory pass*); either way below, the replay just
/// before built a queue of the same size after the split was allocated, so the first
/// sample's queue reuses its pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Warmed {
    /// The verification replay (a `samples` process, whose sample count the parent gives).
    ByVerification,
    /// The memory pass (the `full` process), whose `replay` took this long: from it the
    /// process decides its sample count ([`SLOW_REPLAY`]). It replays the whole workload
    /// with the allocations counted, which costs a structure that allocates per timer a
    /// few percent more than a timed replay, so a replay just under the bound may count as
    /// slow. The memory pass replaces an untimed replay that would warm the allocator just
    /// as well and cost one replay more per cell (METHODOLOGY.md, *Warm-up and the memory
    /// pass*).
    ByMemoryPass { replay: Duration },
}

/// The throughput pass: `spec.repeat` samples (fewer for a slow replay: [`SLOW_REPLAY`])
/// of at least `spec.min_sample_ns` each, of `split` (the fill timed apart) for the four
/// figures of `FORMAT.md`'s *Per operation*; or how a replay disagreed with `reference`.
/// Switches this thread's allocation counting off first: the timed passes pay for nothing
/// but the structure (unless `TIMERBENCH_CELL_COUNT_ALLOCATIONS=1`, kept to measure what
/// counting costs).
pub(super) fn sample<Q: TimerQueue<u64>>(
    spec: &CellSpec,
    recipe: Recipe<'_>,
    split: &TimedWorkload,
    reference: &Summary,
    warmed: Warmed,
    diagnostics: &mut Diagnostics,
) -> anyhow::Result<Result<Throughput, String>> {
    if std::env::var("TIMERBENCH_CELL_COUNT_ALLOCATIONS").as_deref() != Ok("1") {
        crate::alloc::stop_counting();
    }
    let repeat = match warmed {
        Warmed::ByMemoryPass { replay } if replay >= SLOW_REPLAY => spec.repeat.min(SLOW_REPEAT),
        Warmed::ByMemoryPass { .. } | Warmed::ByVerification => spec.repeat,
    };
    let min_sample = Duration::from_nanos(spec.min_sample_ns);
    Ok(throughput::<Q>(
        split,
        recipe,
        repeat,
        min_sample,
        reference,
        diagnostics,
    ))
}
