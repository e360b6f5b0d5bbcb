//! `up-down`: the up/down access pattern of Rönngren and Ayani, "A comparative study of
//! parallel and sequential priority queue algorithms" (ACM TOMACS 7(2), 1997), also used by
//! the ladder-queue paper (Tang, Goh and Thng 2005).
//!
//! **Shape.** One cycle starts N timers (`s ID X`, `ID` in `0..N`, `X` an increment of the
//! chosen distribution rounded to whole ticks), so the queue grows from empty to N, then
//! empties it again:
//! - `mode=fire`: `n` until nothing is pending. Each `n` fires every timer on the earliest
//!   deadline (several when deadlines tie), so there are as many `n` as distinct deadlines,
//!   and the clock ends on the last deadline. Fired == N per cycle.
//! - `mode=stop`: `x ID` of every timer, in a random order (a permutation drawn from the
//!   seed); the clock never moves and nothing fires.
//!
//! The transient is what the model measures: structures that resize (calendar queues) or
//! cascade (hierarchical wheels) do it on the way up and down, and the worst-case access
//! time shows it (Rönngren and Ayani: calendar and lazy queues have the best averages at
//! 5,000 elements or more "but very long worst-case access times").
//!
//! **Parameters.**
//! - `mode` (default `fire`): `fire` or `stop`.
//! - `dist` (default `exponential`) and `mean` (default 1000 ticks): the delays, as in
//!   `hold` (definitions in [`super::increments`]).
//!
//! **Sizes.** `--timers` is N. `--ops` is the number of up/down cycles (default 1); the IDs
//! are reused in every cycle, since none is pending at the end of one. The tick is
//! abstract, reported as `1us`.

use super::common::{choice, emitter, guard, ops_or, seeded, ticks, timers, workload};
use super::increments::Increments;
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;
use rand::seq::SliceRandom;

/// The up/down model.
pub struct UpDown;

static INFO: FamilyInfo = FamilyInfo {
    name: "up-down",
    models: "the up/down model of Rönngren & Ayani 1997",
    shape: "start N timers, then fire them all (`n` until empty) or stop them all \
            (random order); repeat per cycle",
    ops: "up/down cycles, default 1",
    tick: "1us",
    params: &[
        Param {
            name: "mode",
            default: "fire",
            help: "how the queue empties: fire (`n` until empty) or stop (`x` each, random order)",
        },
        Param {
            name: "dist",
            default: "exponential",
            help: "delay distribution: exponential, uniform, narrow, bimodal, triangular, \
                   pareto, camel (all of mean `mean`)",
        },
        Param {
            name: "mean",
            default: "1000",
            help: "mean delay, ticks",
        },
    ],
};

impl Family for UpDown {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let size = timers(spec, params)?;
        let cycles = ops_or(spec, params, 1)?;
        let fire = choice(params, "mode", &["fire", "stop"])? == "fire";
        let increments = Increments::from_params(params, "dist", "mean")?;
        let mut rng = seeded(spec);
        let mut out = emitter(params, cycles.saturating_mul(2 * size))?;

        let mut deadlines = Vec::with_capacity(size as usize);
        let mut order: Vec<u64> = (0..size).collect();
        for _ in 0..cycles {
            deadlines.clear();
            for id in 0..size {
                let deadline = guard(
                    params,
                    out.now() + ticks(increments.sample(&mut rng).round()),
                )?;
                out.start_at(id, deadline);
                deadlines.push(deadline);
            }
            if fire {
                deadlines.sort_unstable();
                deadlines.dedup();
                for &deadline in &deadlines {
                    out.next_to(deadline);
                }
            } else {
                order.shuffle(&mut rng);
                for &id in &order {
                    out.stop(id);
                }
            }
        }

        let mode = if fire { "fire" } else { "stop" };
        Ok(workload(
            format!(
                "Rönngren & Ayani's up/down: {cycles} cycle(s) of {size} starts then {mode} all, \
                 {} delays of mean {} ticks",
                increments.name(),
                increments.mean()
            ),
            vec![("mode", mode.to_string()), ("cycles", cycles.to_string())],
            out.into_ops(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{make, refuse, replay, replay_with, spec};
    use crate::op::Op;

    #[test]
    fn fire_mode_fires_every_timer_each_cycle() {
        let workload = make("up-down", &spec(5_000, Some(3), 1, &[("mode", "fire")]));
        let mut fired_in_cycle = 0;
        let mut cycles = 0;
        let summary = replay_with(&workload, |index, op, model, fired| {
            fired_in_cycle += fired.len();
            let next = workload.ops.get(index + 1).copied();
            if op == Op::Next && !matches!(next, Some(Op::Next)) {
                assert_eq!(model.pending(), 0);
                assert_eq!(fired_in_cycle, 5_000);
                fired_in_cycle = 0;
                cycles += 1;
            }
        });
        assert_eq!(cycles, 3);
        assert_eq!(summary.fired, 15_000);
        assert_eq!(summary.pending, 0);
    }

    #[test]
    fn stop_mode_fires_nothing() {
        let workload = make("up-down", &spec(5_000, Some(2), 1, &[("mode", "stop")]));
        let summary = replay(&workload);
        assert_eq!(summary.fired, 0);
        assert_eq!(summary.stopped, 10_000);
        assert_eq!(summary.misses, 0);
        assert_eq!(summary.pending, 0);
    }

    #[test]
    fn deterministic_and_seeded() {
        for mode in ["fire", "stop"] {
            let a = make("up-down", &spec(1_000, None, 5, &[("mode", mode)]));
            let b = make("up-down", &spec(1_000, None, 5, &[("mode", mode)]));
            let c = make("up-down", &spec(1_000, None, 6, &[("mode", mode)]));
            assert_eq!(a, b);
            assert_ne!(a.ops, c.ops);
        }
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [("mode", "drain"), ("dist", "zipf"), ("mean", "-1")] {
            refuse("up-down", &spec(100, None, 1, &[(key, value)]));
        }
        refuse("up-down", &spec(100, Some(0), 1, &[]));
    }
}
