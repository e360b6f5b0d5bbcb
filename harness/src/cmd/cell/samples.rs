//! A `samples` cell process: one more process's timed samples of a cell whose `full`
//! process has run. `timerbench run` starts several per cell, interleaved with the other
//! implementations' in rotating order, so that what differs between processes (where the
//! allocator's pages land, the machine's drift) shows as a spread between processes and
//! is spread over every implementation alike.
//!
//! It loads the workload, verifies the implementation with a warm-up replay of its own,
//! takes the samples and answers with one [`SampleSet`] line; nothing else (no memory or
//! latency pass).

use super::diagnostics::Diagnostics;
use super::passes::timed::Recipe;
use super::warm_up::{WarmUp, Warmed, sample, split, warm_up};
use crate::schema::{CellSpec, SampleSet};
use timerbench_impls::{QueueVisitor, TimerQueue, Variant, registry};
use timerbench_workloads::{Program, load_unchecked};

/// The samples of `spec`'s cell, or why there are none: a set without `throughput` and
/// with its `problem`; and the diagnostics of its samples. An error is a workload that
/// cannot be read.
pub fn measure_samples(spec: &CellSpec) -> anyhow::Result<(SampleSet, Diagnostics)> {
    let program = load_unchecked(&spec.workload_path)?;
    let variant = Variant::parse(&spec.cell.key.implementation).map_err(anyhow::Error::msg)?;
    registry::visit(
        &variant,
        Samples {
            spec,
            program: &program,
        },
    )
}

struct Samples<'a> {
    spec: &'a CellSpec,
    program: &'a Program,
}

impl QueueVisitor for Samples<'_> {
    type Output = anyhow::Result<(SampleSet, Diagnostics)>;

    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output {
        let (spec, program) = (self.spec, self.program);
        // Split before the verification, so that the first sample's queue reuses the
        // verification queue's pages rather than landing past the split's copy.
        let split = split(program)?;
        let (verified, reference) = match warm_up::<Q>(spec, variant, program)? {
            WarmUp::Verified {
                verified,
                reference,
                ..
            } => (verified, reference),
            WarmUp::Unverified { reason, .. } => {
                let problem = format!("a samples process did not verify: {reason}");
                return Ok((SampleSet::problem(problem), Diagnostics::default()));
            }
        };
        let recipe = Recipe::verified(variant, &verified)?;
        let mut diagnostics = Diagnostics::default();
        let set = match sample::<Q>(
            spec,
            recipe,
            &split,
            &reference,
            Warmed::ByVerification,
            &mut diagnostics,
        )? {
            Ok(throughput) => SampleSet {
                throughput: Some(throughput),
                problem: None,
                conditions: None,
            },
            Err(message) => SampleSet::problem(format!(
                "{message} (in a samples process, after a warm-up that verified)"
            )),
        };
        Ok((set, diagnostics))
    }
}
