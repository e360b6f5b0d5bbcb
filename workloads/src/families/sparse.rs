//! `sparse`: the empty-tick problem of single timing wheels. A wheel driven tick by tick
//! (Netty's `HashedWheelTimer`, skynet, Varghese and Lauck's scheme 6) pays for every tick
//! whether or not a timer is due; with few timers far apart, nearly all of that work is on
//! empty slots. Structures that skip empty time (heaps, trees, wheels with an occupancy
//! bitmap or a min-heap of slots, Kafka's delay queue of buckets) pay only per timer.
//!
//! **Shape.** N timers (IDs `0..N`) fire one after another, each `gap` ticks (on average)
//! after the previous: timer k's deadline is the sum of k + 1 gaps, each uniform on
//! `[gap − gap/2, gap + gap/2]` (whole ticks, at least 1), so no two share a deadline.
//! `pending` timers are in flight at a time: the first `pending` start at clock 0, and
//! each time one fires the next is started, so its delay is about `pending × gap`. The
//! clock moves only to the next deadline: with `drive=tick` by `t K` (K single-tick calls),
//! with `drive=next` by `n` (sleep to the next timer). Each move fires exactly one timer.
//!
//! **Total ticks.** The clock ends at the last deadline, about N × `gap` ticks (at most
//! N × 1.5 × `gap`). A tick-by-tick replay makes that many calls, so the defaults keep it
//! modest: `--timers 1000` with the default gap gives about 10M ticks. Combinations whose
//! bound N × 1.5 × `gap` exceeds 2^40 ticks (about 1.1 × 10^12) are rejected.
//!
//! **Parameters.**
//! - `gap` (default 10000): the mean gap between consecutive deadlines, ticks (ms), ≥ 1.
//! - `drive` (default `tick`): `tick` (`t`) or `next` (`n`).
//! - `pending` (default 1): timers in flight at once, ≥ 1.
//!
//! **Sizes.** `--timers` is N, the number of timers in all. `--ops` is not used: giving it
//! is an error.

use super::common::{choice, emitter, seeded, timers, whole_in, workload};
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;
use rand::RngExt;
use std::collections::VecDeque;

/// Few timers, far apart.
pub struct Sparse;

/// The most ticks a sparse workload may span (2^40).
pub const MAX_TOTAL_TICKS: u64 = 1 << 40;

static INFO: FamilyInfo = FamilyInfo {
    name: "sparse",
    models: "the empty-tick problem of single timing wheels driven tick by tick",
    shape: "N timers one after another, `gap` ticks apart; the clock moves to each deadline \
            by `t` (tick by tick) or `n` (jump); total ticks about N × gap",
    ops: "not used (--timers and gap fix the length)",
    tick: "1ms",
    params: &[
        Param {
            name: "gap",
            default: "10000",
            help: "mean ticks between consecutive deadlines (uniform in [gap/2, 3gap/2])",
        },
        Param {
            name: "drive",
            default: "tick",
            help: "how the clock moves: tick (`t`) or next (`n`)",
        },
        Param {
            name: "pending",
            default: "1",
            help: "timers in flight at once",
        },
    ],
};

impl Family for Sparse {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let count = timers(spec, params)?;
        if spec.ops.is_some() {
            return Err(params.invalid("--ops is not used: --timers and gap fix the length"));
        }
        let gap = whole_in(params, "gap", 1, MAX_TOTAL_TICKS)?;
        let tick = choice(params, "drive", &["tick", "next"])? == "tick";
        let pending = whole_in(params, "pending", 1, u64::MAX)?.min(count);
        let widest = gap + gap / 2;
        if count
            .checked_mul(widest)
            .is_none_or(|total| total > MAX_TOTAL_TICKS)
        {
            return Err(params.invalid(format!(
                "{count} timers × up to {widest} ticks apart may span more than 2^40 ticks; \
                 use fewer timers or a smaller gap"
            )));
        }
        let mut rng = seeded(spec);
        let mut out = emitter(params, 2 * count)?;

        // Deadlines are drawn as timers are started: each is the previous plus one gap.
        let narrowest = (gap - gap / 2).max(1);
        let mut last = 0u64;
        let mut next_deadline = || {
            last += rng.random_range(narrowest..=widest);
            last
        };
        // The deadlines of the timers in flight, earliest first; timer `k` has the k-th.
        let mut in_flight = VecDeque::with_capacity(pending as usize);
        for id in 0..pending {
            let deadline = next_deadline();
            out.start_at(id, deadline);
            in_flight.push_back(deadline);
        }
        for fired in 0..count {
            let due = in_flight
                .pop_front()
                .expect("a timer is in flight until the last has fired");
            if tick {
                out.tick_to(due);
            } else {
                out.next_to(due);
            }
            if fired + pending < count {
                let deadline = next_deadline();
                out.start_at(fired + pending, deadline);
                in_flight.push_back(deadline);
            }
        }

        let drive = if tick { "tick" } else { "next" };
        let total = out.now();
        let ops = out.into_ops();
        Ok(workload(
            format!(
                "empty ticks: {count} timers about {gap} ticks apart, {pending} in flight, \
                 driven by {drive}; {total} ticks in all"
            ),
            vec![("total-ticks", total.to_string())],
            ops,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{make, number, refuse, replay_with, spec};
    use crate::op::Op;

    #[test]
    fn each_drive_moves_the_clock_only_its_way() {
        for (drive, pending) in [("tick", "1"), ("next", "1"), ("tick", "4"), ("next", "4")] {
            let workload = make(
                "sparse",
                &spec(
                    1_000,
                    None,
                    1,
                    &[("drive", drive), ("gap", "1000"), ("pending", pending)],
                ),
            );
            let mut moves = 0;
            let summary = replay_with(&workload, |_, op, model, fired| {
                match (drive, op) {
                    ("tick", Op::Tick { .. }) | ("next", Op::Next) => {
                        assert_eq!(fired.len(), 1);
                        moves += 1;
                    }
                    (_, Op::Start { .. }) => {}
                    (_, other) => panic!("{drive}: unexpected {other}"),
                }
                assert!(model.pending() <= pending.parse().unwrap());
            });
            assert_eq!(moves, 1_000);
            assert_eq!(summary.fired, 1_000);
            assert_eq!(summary.pending, 0);
            assert_eq!(summary.final_clock, number(&workload, "total-ticks"));
            assert!((500_000..=1_500_000).contains(&summary.final_clock));
        }
    }

    #[test]
    fn drives_give_the_same_firings() {
        let tick = make("sparse", &spec(500, None, 3, &[("drive", "tick")]));
        let next = make("sparse", &spec(500, None, 3, &[("drive", "next")]));
        let a = replay_with(&tick, |_, _, _, _| {});
        let b = replay_with(&next, |_, _, _, _| {});
        assert_eq!(a, b);
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = make("sparse", &spec(100, None, 5, &[]));
        let b = make("sparse", &spec(100, None, 5, &[]));
        let c = make("sparse", &spec(100, None, 6, &[]));
        assert_eq!(a, b);
        assert_ne!(a.ops, c.ops);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [("gap", "0"), ("drive", "advance"), ("pending", "0")] {
            refuse("sparse", &spec(100, None, 1, &[(key, value)]));
        }
        refuse(
            "sparse",
            &spec(1_000_000, None, 1, &[("gap", "1000000000")]),
        );
        refuse("sparse", &spec(10, Some(5), 1, &[]));
    }
}
