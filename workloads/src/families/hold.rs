//! `hold`: the classic hold model of priority-queue benchmarks (Vaucher and Duval 1975;
//! Jones, "An Empirical Comparison of Priority-Queue and Event-Set Implementations", CACM
//! 29(4), 1986; Brown's calendar queue, CACM 31(10), 1988; the ladder queue of Tang, Goh and
//! Thng, TOMACS 15(3), 2005).
//!
//! **Shape.** Fill the queue with N timers (`s ID X` for `ID` in `0..N`, `X` drawn from
//! the increment distribution). Then repeat a hold step: `n` sleeps to the earliest
//! deadline and fires what is due, and every timer that fired is started again (`s ID`,
//! the same ID, now not pending) at its exact firing time plus a fresh increment. N timers
//! are pending before every `n`: the queue size never changes, which is the point of the
//! model (a *hold* is "a dequeue followed immediately by an enqueue", Brown 1988).
//!
//! Timer times are kept as real numbers and each deadline is the whole part of the exact
//! time, so the integer increments (`deadline - now`) average exactly the distribution's
//! mean over a long run instead of losing half a tick to rounding.
//!
//! With N timers of mean increment m pending, about N/m deadlines fall on each tick, so
//! when N exceeds m one `n` fires several timers (a tie at integer resolution) and the
//! step restarts each of them. For the one-at-a-time hold of the papers, pick `mean` well
//! above N (for example 100 × N).
//!
//! **Parameters.**
//! - `dist` (default `exponential`): `exponential`, `uniform` (`[0, 2m]`), `narrow`
//!   (`[0.9m, 1.1m]`), `bimodal`, `triangular`, `pareto`, `camel`; the exact definitions,
//!   each with mean m, are in [`super::increments`].
//! - `mean` (default 1000): the mean increment m, in ticks (a real number, 0 < m ≤ 2^40).
//!
//! **Sizes.** `--timers` is N, the queue size (the literature sweeps 1k to 10M). `--ops` is
//! the number of holds, i.e. timers fired and restarted (default N): generation stops after
//! the `n` that brings the count to at least `--ops`. The tick is abstract; it is reported
//! as `1us`.
//!
//! **Published figures.** Brown 1988: the calendar queue's hold time is flat in N for Jones's
//! distributions, about 3× shorter than a splay tree's at N = 10,000. Tang et al. 2005: the
//! ladder queue is O(1) from 100 to 10^7 events, Pareto included. Jones 1986: splay trees
//! fast and stable, heaps O(log n).

use super::common::{MonotoneQueue, emitter, guard, ops_or, seeded, ticks, timers, workload};
use super::increments::Increments;
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;

/// The hold model.
pub struct Hold;

static INFO: FamilyInfo = FamilyInfo {
    name: "hold",
    models: "the hold model of Jones 1986 (the classic priority-queue benchmark)",
    shape: "fill to N timers, then each step sleeps to the earliest deadline (`n`) and \
            restarts every timer that fired at its time plus a random increment: N pending",
    ops: "holds (timers fired and restarted), default N",
    tick: "1us",
    params: &[
        Param {
            name: "dist",
            default: "exponential",
            help: "increment distribution: exponential, uniform, narrow, bimodal, triangular, \
                   pareto, camel (all of mean `mean`)",
        },
        Param {
            name: "mean",
            default: "1000",
            help: "mean increment, ticks",
        },
    ],
};

impl Family for Hold {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let size = timers(spec, params)?;
        let holds = ops_or(spec, params, size)?;
        let increments = Increments::from_params(params, "dist", "mean")?;
        let mut rng = seeded(spec);
        let mut out = emitter(params, holds.saturating_mul(2).saturating_add(size))?;

        // The exact time of each timer, by ID; the queue gives the timers on the earliest
        // deadline, which are exactly those one `n` fires.
        let mut exact = Vec::with_capacity(size as usize);
        let mut queue = MonotoneQueue::new();
        for id in 0..size as u32 {
            let time = increments.sample(&mut rng);
            let deadline = guard(params, ticks(time))?;
            exact.push(time);
            out.start_at(u64::from(id), deadline);
            queue.push(deadline, id);
        }

        let mut done = 0u64;
        let mut fired = Vec::new();
        while done < holds {
            // Every deadline is at least the clock, so the earliest is where `n` goes.
            let Some(target) = queue.pop_all_least(&mut fired) else {
                break;
            };
            out.next_to(target);
            for id in fired.drain(..) {
                let time = exact[id as usize] + increments.sample(&mut rng);
                // The exact time never goes back, so neither does its whole part.
                let deadline = guard(params, ticks(time))?.max(target);
                exact[id as usize] = time;
                out.start_at(u64::from(id), deadline);
                queue.push(deadline, id);
                done += 1;
            }
        }

        Ok(workload(
            format!(
                "Jones's hold model: {size} timers pending, {done} holds, {} increments of mean {} ticks",
                increments.name(),
                increments.mean()
            ),
            vec![
                ("dist", increments.name().to_string()),
                ("holds", done.to_string()),
            ],
            out.into_ops(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{make, refuse, replay, replay_with, spec};
    use super::super::increments::DISTRIBUTIONS;
    use crate::op::Op;

    #[test]
    fn keeps_the_queue_full_and_increments_have_the_mean() {
        for dist in DISTRIBUTIONS {
            let timers = 2_000;
            let workload = make(
                "hold",
                &spec(timers, Some(20_000), 1, &[("dist", dist), ("mean", "1000")]),
            );
            let mut delays = Vec::new();
            let summary = replay_with(&workload, |index, op, model, _| {
                match op {
                    // The fill is the first `timers` operations; every later start is a hold.
                    Op::Start { delay, .. } if index >= timers as usize => delays.push(delay),
                    Op::Start { .. } | Op::Next => {}
                    other => panic!("unexpected {other}"),
                }
                if let Some(Op::Next) = workload.ops.get(index + 1).copied() {
                    assert_eq!(model.pending(), timers as usize, "{dist} before op {index}");
                }
            });
            assert_eq!(summary.pending, timers);
            assert!(summary.fired >= 20_000, "{dist}: {}", summary.fired);
            assert_eq!(summary.fired, delays.len() as u64);
            let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64;
            let tolerance = if *dist == "pareto" { 0.15 } else { 0.05 };
            assert!(
                (mean / 1000.0 - 1.0).abs() < tolerance,
                "{dist}: mean increment {mean}"
            );
        }
    }

    #[test]
    fn a_large_mean_gives_one_firing_per_step() {
        let workload = make("hold", &spec(1_000, None, 3, &[("mean", "100000000")]));
        let mut multiple = 0;
        let summary = replay_with(&workload, |_, op, _, fired| {
            if op == Op::Next && fired.len() != 1 {
                multiple += 1;
            }
        });
        assert_eq!(summary.fired, 1_000);
        assert!(multiple <= 5, "{multiple} steps fired other than one timer");
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = make("hold", &spec(1_000, Some(3_000), 5, &[("dist", "camel")]));
        let b = make("hold", &spec(1_000, Some(3_000), 5, &[("dist", "camel")]));
        let c = make("hold", &spec(1_000, Some(3_000), 6, &[("dist", "camel")]));
        assert_eq!(a, b);
        assert_ne!(a.ops, c.ops);
        replay(&c);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [
            ("dist", "gaussian"),
            ("mean", "0"),
            ("mean", "-5"),
            ("mean", "nan"),
            ("mean", "inf"),
            ("mean", "1e20"),
            ("mean", "ten"),
        ] {
            refuse("hold", &spec(100, None, 1, &[(key, value)]));
        }
        refuse("hold", &spec(100, Some(0), 1, &[]));
        refuse("hold", &spec(100, None, 1, &[("deviation", "3")]));
    }
}
