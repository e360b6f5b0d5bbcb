//! A `counted` cell process: the child `timerbench run --counts` and `ab --metric` start
//! under Callgrind. It verifies the implementation with the warm-up replay every
//! measuring process takes (uncounted: Callgrind collects only inside the counted
//! function), then builds a fresh queue, replays the fill, replays the lines after the
//! fill once inside [`timerbench_counted_replay`], and checks that replay against the
//! reference as a timed sample is checked. It answers with one [`CountedReplay`] line;
//! the counts themselves are in Callgrind's out file, read by the parent.

use super::warm_up::{WarmUp, split, warm_up};
use crate::cell_core::timed::{Operations, Recipe, timerbench_counted_replay};
use crate::schema::{CellSpec, CountedReplay};
use timerbench_impls::{QueueVisitor, TimerQueue, Variant, registry};
use timerbench_workloads::{Program, load_unchecked};

/// The counted replay of `spec`'s cell. An error is a workload that cannot be read.
pub fn measure_counted(spec: &CellSpec) -> anyhow::Result<CountedReplay> {
    let program = load_unchecked(&spec.workload_path)?;
    let variant = Variant::parse(&spec.cell.key.implementation).map_err(anyhow::Error::msg)?;
    registry::visit(
        &variant,
        Counted {
            spec,
            program: &program,
        },
    )
}

struct Counted<'a> {
    spec: &'a CellSpec,
    program: &'a Program,
}

impl QueueVisitor for Counted<'_> {
    type Output = anyhow::Result<CountedReplay>;

    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output {
        let (spec, program) = (self.spec, self.program);
        let split = split(program)?;
        let lines = split.operations(Operations::Lines);
        let problem = |problem: String, digest| CountedReplay {
            lines,
            problem: Some(problem),
            digest,
        };
        let (verified, reference) = match warm_up::<Q>(spec, variant, program)? {
            WarmUp::Verified {
                verified,
                reference,
                ..
            } => (verified, reference),
            WarmUp::Unverified { reason, digest } => return Ok(problem(reason, digest)),
        };
        let recipe = Recipe::verified(variant, &verified)?;
        let ready = match split.fresh_queue::<Q>(recipe) {
            Ok(ready) => ready,
            Err(error) => return Ok(problem(format!("the fill's replay: {error}"), None)),
        };
        let replayed = timerbench_counted_replay(ready);
        Ok(match replayed.check(&reference) {
            Ok(()) => CountedReplay {
                lines,
                problem: None,
                digest: Some(verified.summary.digest),
            },
            Err(message) => problem(
                format!("the counted replay, after a warm-up that verified: {message}"),
                None,
            ),
        })
    }
}
