//! Verify before timing: one replay of the whole workload, logging every firing, whose
//! summary must equal the reference's in every field before any time is taken. The cell's
//! warm-up pass, and what `cargo bench` runs once per implementation before its first
//! sample: a wrong structure's speed is never reported.
//!
//! The replay compares summaries, not firing logs, because the cell loads its workload
//! without the model (the parent checked it and hands over the summary): there is no
//! expected log to compare with, and the digest covers the log. When they disagree,
//! [`Mismatch::explain`] finds the first differing firing with a full replay against the
//! workload loaded with the model, which only a failing implementation pays for.

use anyhow::Context;
use std::sync::Arc;
use timerbench_impls::floor::{Firings, FiringsRecorder, building_with};
use timerbench_impls::{TimerQueue, Variant};
use timerbench_workloads::Program;
use timerbench_workloads::bounded::Lateness;
use timerbench_workloads::reference::Summary;
use timerbench_workloads::replay::{
    Counts, Quiet, Recorder, ReplayError, describe, drive, empty_handles, replay,
    replay_within_bound, summarize,
};

/// An implementation that replayed a workload exactly as the reference did.
#[derive(Debug, Clone)]
pub struct Verified {
    /// Its summary, equal to the reference's.
    pub summary: Summary,
    /// The most timers pending at once: the capacity every later queue is built with.
    pub peak_pending: u64,
    /// The floor's: what it fires on this workload, which every later floor is built with
    /// ([`Recipe`](super::timed::Recipe)); `None` for a queue.
    pub firings: Option<Arc<Firings>>,
}

impl Verified {
    /// The capacity for `with_capacity`.
    pub fn capacity(&self) -> anyhow::Result<usize> {
        usize::try_from(self.peak_pending).context("peak pending overflows usize")
    }
}

/// A disagreement with the reference, before it is explained.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// What differed, as the verifying replay saw it.
    pub message: String,
    /// The implementation's digest, when its replay got that far.
    pub digest: Option<String>,
}

/// Replays `program` through a new `Q`, logging every firing: [`Verified`] when the
/// summary equals `reference` in every field and every handle reported was the one
/// `start` gave, else what differs. `program` may be loaded without the model.
pub fn verify<Q: TimerQueue<u64>>(
    variant: &Variant,
    program: &Program,
    reference: &Summary,
) -> Result<Verified, Mismatch> {
    let replayed = replay_recorded(variant.build::<Q>(0), program, reference.fired)?;
    let differences = differences(reference, &replayed.summary);
    if !differences.is_empty() {
        return Err(Mismatch {
            message: format!(
                "the summary differs from the reference: {}",
                differences.join("; ")
            ),
            digest: Some(replayed.summary.digest),
        });
    }
    Ok(replayed)
}

/// The floor's warm-up ([`timerbench_impls::floor`]): its firings recorded by one replay
/// through a [`FiringsRecorder`], then the same replay as [`verify`]'s through a floor that
/// fires them, its summary taken as it is. The floor reads what fires instead of finding
/// it, so it is never verified, and the summary only serves to check that its later
/// replays do the same as this one. The firings go with the result, for every later floor.
pub fn replay_unverified<Q: TimerQueue<u64>>(
    variant: &Variant,
    program: &Program,
) -> Result<Verified, Mismatch> {
    let firings = Arc::new(floor_firings(program).map_err(|e| Mismatch {
        message: format!("recording the floor's firings: {e}"),
        digest: None,
    })?);
    let queue = building_with(&firings, || variant.build::<Q>(0));
    let mut verified = replay_recorded(queue, program, firings.len() as u64)?;
    verified.firings = Some(firings);
    Ok(verified)
}

/// What a floor fires on `program`: one replay through a [`FiringsRecorder`], untimed.
pub fn floor_firings(program: &Program) -> Result<Firings, ReplayError> {
    let mut recorder = FiringsRecorder::<u64>::with_capacity(program.peak_pending as usize);
    let mut handles = empty_handles(program);
    let mut counts = Counts::default();
    drive(
        &mut recorder,
        program,
        &mut handles,
        &mut counts,
        &mut Quiet,
    )?;
    Ok(recorder.into_firings())
}

/// One replay through `queue`, a new one, logging every firing (`expected_firings` sizes
/// the log), summarised, with every handle reported checked against the one `start` gave.
fn replay_recorded<Q: TimerQueue<u64>>(
    mut queue: Q,
    program: &Program,
    expected_firings: u64,
) -> Result<Verified, Mismatch> {
    // The log's size is known; a spec claiming absurdly many firings must not abort here.
    let mut log = Vec::with_capacity(expected_firings.min(1 << 28) as usize);
    let mut handles = empty_handles(program);
    let mut counts = Counts::default();
    let mut recorder = Recorder {
        log: &mut log,
        wrong_handle: None,
    };
    let result = drive(
        &mut queue,
        program,
        &mut handles,
        &mut counts,
        &mut recorder,
    );
    let wrong_handle = recorder.wrong_handle;
    result.map_err(|e| Mismatch {
        message: e.to_string(),
        digest: None,
    })?;
    let summary =
        summarize(program, &mut log, &counts, queue.len() as u64, queue.now()).map_err(|e| {
            Mismatch {
                message: e.to_string(),
                digest: None,
            }
        })?;
    if let Some((firing, got)) = wrong_handle {
        let error = ReplayError::WrongHandle {
            line: program.lines[firing.step as usize],
            op: describe(program, firing.step),
            key: program.keys[firing.slot as usize],
            expected: handles[firing.slot as usize],
            got,
        };
        return Err(Mismatch {
            message: error.to_string(),
            digest: Some(summary.digest),
        });
    }
    Ok(Verified {
        summary,
        peak_pending: counts.peak_pending,
        firings: None,
    })
}

/// Replays `program` through a new `Q` (approximate) in lockstep with the reference
/// model, checking every firing against its declared window
/// ([`timerbench_workloads::bounded`]): [`Verified`] with the implementation's own summary
/// (which differs from the model's by design) and its lateness, or the first violation.
pub fn verify_within_bound<Q: TimerQueue<u64>>(
    variant: &Variant,
    program: &Program,
) -> Result<(Verified, Lateness), Mismatch> {
    let mut log = Vec::new();
    let replayed = replay_within_bound(variant.build::<Q>(0), program, &mut log);
    let replayed = replayed.map_err(|message| Mismatch {
        message: format!("beyond its declared bound: {message}"),
        digest: None,
    })?;
    let verified = Verified {
        summary: replayed.summary,
        peak_pending: replayed.peak_pending,
        firings: None,
    };
    Ok((verified, replayed.lateness))
}

impl Mismatch {
    /// Why `Q` disagreed with `reference`: the first differing firing from a full replay
    /// of `checked`, the workload loaded with the model, when that replay fails too; else
    /// which of the reference or the implementation is at fault.
    pub fn explain<Q: TimerQueue<u64>>(
        &self,
        variant: &Variant,
        checked: &Program,
        reference: &Summary,
    ) -> String {
        let mut log = Vec::new();
        let queue = variant.build::<Q>(checked.peak_pending as usize);
        match replay(queue, checked, &mut log) {
            Err(error) => error.to_string(),
            Ok(_) if checked.summary != *reference => format!(
                "{}; the implementation agrees with the reference model run on {}, whose \
                 summary differs from the one in the cell spec: {}",
                self.message,
                checked.path.display(),
                differences(reference, &checked.summary).join("; ")
            ),
            Ok(_) => format!(
                "{}; a second replay verified: the implementation does not replay \
                 deterministically",
                self.message
            ),
        }
    }
}

/// Each field of `got` that differs from `expected`, as `field: expected X, got Y`.
fn differences(expected: &Summary, got: &Summary) -> Vec<String> {
    let mut differences = Vec::new();
    let mut compare =
        |field: &str, expected: &dyn std::fmt::Display, got: &dyn std::fmt::Display| {
            let (expected, got) = (expected.to_string(), got.to_string());
            if expected != got {
                differences.push(format!("{field}: expected {expected}, got {got}"));
            }
        };
    compare("operations", &expected.operations, &got.operations);
    compare("started", &expected.started, &got.started);
    compare("fired", &expected.fired, &got.fired);
    compare("stopped", &expected.stopped, &got.stopped);
    compare("misses", &expected.misses, &got.misses);
    compare("pending", &expected.pending, &got.pending);
    compare("final clock", &expected.final_clock, &got.final_clock);
    compare("digest", &expected.digest, &got.digest);
    differences
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_core::testing::{generated, variant};
    use timerbench_impls::binary_heap::BinaryHeapTimers;

    /// `cargo bench` sizes its queues from the verification, as the cell does, where it
    /// used the model's peak before: the two must agree.
    #[test]
    fn a_verified_replay_has_the_models_summary_and_peak() {
        let heap = variant("binary-heap");
        for family in ["hold", "start-stop", "burst", "retransmit"] {
            let program = generated(family, 500, &[]);
            let verified =
                verify::<BinaryHeapTimers<u64>>(&heap, &program, &program.summary).unwrap();
            assert_eq!(verified.summary, program.summary, "{family}");
            assert_eq!(verified.peak_pending, program.peak_pending, "{family}");
        }
    }

    /// The floor fires from its recorded list what the model fires, so its replay, which is
    /// never verified, comes out as the model's; and a timed replay of it after the fill,
    /// built by the recipe, fires the same and ends with the model's pending count.
    #[test]
    fn the_floor_with_its_firings_replays_as_the_model_does() {
        use crate::cell_core::timed::{Recipe, TimedWorkload};
        use timerbench_impls::floor::Floor;
        let floor = Variant::parse("floor").unwrap();
        for family in ["hold", "start-stop", "burst", "retransmit", "keepalive"] {
            let program = generated(family, 500, &[]);
            let verified = replay_unverified::<Floor<u64>>(&floor, &program).unwrap();
            // hold fires at every sleep (`n`), which moves the clock only until one fires.
            assert!(
                family == "start-stop" || program.summary.fired > 0,
                "{family} fires"
            );
            assert_eq!(verified.summary, program.summary, "{family}");
            let firings = verified.firings.as_ref().expect("the floor's firings");
            assert_eq!(firings.len() as u64, program.summary.fired, "{family}");
            let split = TimedWorkload::after_fill(&program, program.fill_steps()).unwrap();
            let recipe = Recipe::verified(&floor, &verified).unwrap();
            let timed = split.fresh_queue::<Floor<u64>>(recipe).unwrap().time();
            assert_eq!(timed.replayed.check(&program.summary), Ok(()), "{family}");
        }
    }

    #[test]
    fn a_wrong_reference_is_a_mismatch_that_blames_the_reference() {
        let program = generated("hold", 100, &[]);
        let heap = variant("binary-heap");
        let mut reference = program.summary.clone();
        reference.fired += 1;
        let mismatch = verify::<BinaryHeapTimers<u64>>(&heap, &program, &reference).unwrap_err();
        assert!(
            mismatch.message.contains("fired: expected"),
            "{}",
            mismatch.message
        );
        assert_eq!(mismatch.digest.as_ref(), Some(&program.summary.digest));
        let reason = mismatch.explain::<BinaryHeapTimers<u64>>(&heap, &program, &reference);
        assert!(
            reason.contains("differs from the one in the cell spec"),
            "{reason}"
        );
    }
}
