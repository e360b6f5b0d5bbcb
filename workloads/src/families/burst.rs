//! `burst`: a thundering herd, N timers on one deadline that all fire in one advance — a
//! fleet of connections opened together and timing out together, a batch of requests
//! with the same deadline, Go's `BenchmarkSimultaneousAfterFunc1000`.
//!
//! **Shape.** One burst starts N timers (IDs `0..N`) with the same delay (`s ID delay`),
//! then `a delay` reaches their deadline and fires all N in that one operation. The start
//! order is a random permutation of the IDs (`order=random`, drawn from the seed) or
//! `0, 1, …` (`order=ascending`); the firing order is the model's (by ID), so a structure
//! that keeps a slot's timers in insertion order must sort or scan them. Bursts repeat with
//! the same IDs, each after the previous one has fired.
//!
//! **Parameters.**
//! - `delay` (default 1000): the common delay, ms (ticks), 1 to 2^50.
//! - `order` (default `random`): `random` or `ascending` start order.
//!
//! **Sizes.** `--timers` is N. `--ops` is the number of bursts (default 1).

use super::common::{choice, emitter, guard, ops_or, seeded, timers, whole_in, workload};
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;
use rand::seq::SliceRandom;

/// The thundering herd.
pub struct Burst;

static INFO: FamilyInfo = FamilyInfo {
    name: "burst",
    models: "a thundering herd: many timers expiring at once",
    shape: "N timers on one deadline (`s ID delay`), then one `a delay` fires them all",
    ops: "bursts, default 1",
    tick: "1ms",
    params: &[
        Param {
            name: "delay",
            default: "1000",
            help: "the common delay, ms",
        },
        Param {
            name: "order",
            default: "random",
            help: "start order of the IDs: random (a permutation) or ascending",
        },
    ],
};

impl Family for Burst {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let size = timers(spec, params)?;
        let bursts = ops_or(spec, params, 1)?;
        let delay = whole_in(params, "delay", 1, 1 << 50)?;
        let shuffle = choice(params, "order", &["random", "ascending"])? == "random";
        let mut rng = seeded(spec);
        let mut out = emitter(params, bursts.saturating_mul(size + 1))?;
        let mut ids: Vec<u64> = (0..size).collect();
        for _ in 0..bursts {
            let deadline = guard(params, out.now() + delay)?;
            if shuffle {
                ids.shuffle(&mut rng);
            }
            for &id in &ids {
                out.start_at(id, deadline);
            }
            out.advance_to(deadline);
        }
        let order = if shuffle { "random" } else { "ascending" };
        Ok(workload(
            format!(
                "thundering herd: {bursts} burst(s) of {size} timers on one deadline {delay} ms \
                 out, started in {order} order, fired by one advance"
            ),
            vec![("bursts", bursts.to_string())],
            out.into_ops(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{make, refuse, replay_with, spec};
    use crate::op::Op;

    #[test]
    fn each_advance_fires_the_whole_burst() {
        for order in ["random", "ascending"] {
            let workload = make("burst", &spec(10_000, Some(2), 1, &[("order", order)]));
            let mut advances = 0;
            let summary = replay_with(&workload, |_, op, model, fired| match op {
                Op::Advance { ticks } => {
                    assert_eq!(ticks, 1000);
                    assert_eq!(fired.len(), 10_000);
                    assert_eq!(model.pending(), 0);
                    advances += 1;
                }
                Op::Start { delay, .. } => {
                    assert_eq!(delay, 1000);
                    assert!(fired.is_empty());
                }
                other => panic!("unexpected {other}"),
            });
            assert_eq!(advances, 2);
            assert_eq!(summary.fired, 20_000);
        }
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = make("burst", &spec(1_000, None, 5, &[]));
        let b = make("burst", &spec(1_000, None, 5, &[]));
        let c = make("burst", &spec(1_000, None, 6, &[]));
        assert_eq!(a, b);
        assert_ne!(a.ops, c.ops);
        let d = make("burst", &spec(1_000, None, 5, &[("order", "ascending")]));
        let e = make("burst", &spec(1_000, None, 6, &[("order", "ascending")]));
        assert_eq!(d.ops, e.ops);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [("delay", "0"), ("delay", "1.5"), ("order", "descending")] {
            refuse("burst", &spec(100, None, 1, &[(key, value)]));
        }
    }
}
