//! `start-stop`: start and cancel of short timers on a queue loaded with far-future timers.
//! It models Go's `BenchmarkStartStop` (`src/time/sleep_test.go`: 1000 one-hour timers
//! started then stopped, over 32,768 "garbage" `AfterFunc(Hour)` timers per P) and the
//! resident-timer table of RussellLuo/timingwheel, a Go port of Kafka's wheel
//! (`AfterFunc(1s)` + `Stop` with 1M, 5M and 10M timers already pending, their delays
//! spread over `i % 10000` ms). It is the RPC-deadline pattern: almost every timeout is
//! cancelled before it fires.
//!
//! **Shape.** N background timers (IDs `0..N`) start at clock 0 with delays of `far` plus a
//! uniform random part of `[0, spread)` ms. Then `--ops` pairs: `s ID delay` of a short
//! timer with a fresh ID (`N`, `N+1`, …) and its `x ID`. Pairs come in batches of `batch`:
//! the batch's starts, then its stops in the same order (`batch=1`, the default, is
//! RussellLuo's start-then-stop; `batch=1000` is Go's `BenchmarkStartStop1000`). So that the
//! clock is not frozen (a real event loop's clock moves while it works), `a 1` follows every
//! batch that completes `advance-every` pairs since the last move: with the defaults the
//! clock moves 1 ms per 1000 pairs, so 10M pairs move it 10 s, far short of the first
//! background deadline (1 hour), and nothing fires. Short timers are always stopped before
//! the clock moves, so they never fire.
//!
//! `@expected-fired` is the number of background timers whose deadlines the clock reaches
//! (0 unless `far` is short against `--ops` / `advance-every`).
//!
//! **Parameters.**
//! - `far` (default 3600000 = 1 h): the smallest background delay, ms, ≥ 1.
//! - `spread` (default 10000): background delays spread over `[far, far + spread)`, ms, ≥ 1.
//! - `delay` (default 1000 = 1 s): the short timers' delay, ms (0 is allowed: a timer due
//!   on the next clock move, stopped before it).
//! - `batch` (default 1): short timers started before they are stopped, ≥ 1.
//! - `advance-every` (default 1000): pairs between `a 1` moves of the clock, ≥ 1.
//!
//! **Sizes.** `--timers` is N, the background (resident) timers; the table's rows are
//! `--timers 1000000`, `5000000` and `10000000`. `--ops` is the number of start/stop pairs
//! (default N).
//!
//! **Figures.** RussellLuo/timingwheel's README (2018, Go ≤ 1.11): 329, 363 and 440 ns per
//! start+stop for the timing wheel at 1M, 5M and 10M resident timers, against 199, 644 and
//! 2434 ns for the Go runtime heap of the time (before per-P heaps).

use super::common::{emitter, guard, ops_or, seeded, timers, whole_in, workload};
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;
use rand::RngExt;

/// Go's start/stop benchmark over resident timers.
pub struct StartStop;

static INFO: FamilyInfo = FamilyInfo {
    name: "start-stop",
    models: "Go's BenchmarkStartStop and RussellLuo/timingwheel's 1M/5M/10M resident-timer table",
    shape: "N far-future background timers, then pairs of `s` + `x` of a short timer \
            (in batches), with `a 1` now and then",
    ops: "start/stop pairs, default N",
    tick: "1ms",
    params: &[
        Param {
            name: "far",
            default: "3600000",
            help: "smallest background delay, ms (1 hour)",
        },
        Param {
            name: "spread",
            default: "10000",
            help: "background delays are uniform in [far, far + spread), ms",
        },
        Param {
            name: "delay",
            default: "1000",
            help: "short timer delay, ms",
        },
        Param {
            name: "batch",
            default: "1",
            help: "short timers started before they are stopped (1000 = Go's StartStop1000)",
        },
        Param {
            name: "advance-every",
            default: "1000",
            help: "start/stop pairs between `a 1` clock moves",
        },
    ],
};

impl Family for StartStop {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let background = timers(spec, params)?;
        let pairs = ops_or(spec, params, background)?;
        let far = whole_in(params, "far", 1, 1 << 50)?;
        let spread = whole_in(params, "spread", 1, 1 << 50)?;
        let delay = whole_in(params, "delay", 0, 1 << 50)?;
        let batch = whole_in(params, "batch", 1, 1 << 32)?;
        let every = whole_in(params, "advance-every", 1, u64::MAX)?;
        let mut rng = seeded(spec);
        let mut out = emitter(
            params,
            pairs
                .saturating_mul(2)
                .saturating_add(background + pairs / every),
        )?;

        let mut deadlines = Vec::with_capacity(background as usize);
        for id in 0..background {
            let deadline = far + rng.random_range(0..spread);
            out.start_at(id, deadline);
            deadlines.push(deadline);
        }

        let mut next_id = background;
        let mut done = 0u64;
        let mut since_move = 0u64;
        while done < pairs {
            let size = batch.min(pairs - done);
            let first = next_id;
            for id in first..first + size {
                out.start_at(id, guard(params, out.now() + delay)?);
            }
            for id in first..first + size {
                out.stop(id);
            }
            next_id += size;
            done += size;
            since_move += size;
            if since_move >= every {
                since_move = 0;
                out.advance_to(out.now() + 1);
            }
        }

        let end = out.now();
        let expected_fired = deadlines.iter().filter(|&&d| d <= end).count();
        Ok(workload(
            format!(
                "start/stop over resident timers (Go BenchmarkStartStop, RussellLuo/timingwheel): \
                 {background} background timers at {far}..{} ms, {pairs} start/stop pairs of a \
                 {delay} ms timer in batches of {batch}, `a 1` every {every} pairs",
                far + spread
            ),
            vec![
                ("background-timers", background.to_string()),
                ("pairs", pairs.to_string()),
                ("expected-fired", expected_fired.to_string()),
            ],
            out.into_ops(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{make, number, refuse, replay, replay_with, spec};
    use crate::op::Op;

    #[test]
    fn ends_with_the_background_pending_and_nothing_fired() {
        for batch in ["1", "1000"] {
            let workload = make(
                "start-stop",
                &spec(10_000, Some(20_000), 1, &[("batch", batch)]),
            );
            let mut advances = 0;
            let summary = replay_with(&workload, |index, op, model, fired| {
                assert!(fired.is_empty());
                match op {
                    Op::Advance { ticks: 1 } => advances += 1,
                    Op::Start { .. } if index >= 10_000 => {
                        assert!(model.pending() <= 10_000 + 1000)
                    }
                    Op::Start { .. } | Op::Stop { .. } => {}
                    other => panic!("unexpected {other}"),
                }
            });
            assert_eq!(summary.pending, 10_000);
            assert_eq!(summary.fired, 0);
            assert_eq!(summary.stopped, 20_000);
            assert_eq!(summary.misses, 0);
            assert_eq!(advances, 20);
            assert_eq!(number(&workload, "expected-fired"), 0);
        }
    }

    #[test]
    fn a_short_far_lets_background_timers_fire() {
        let workload = make(
            "start-stop",
            &spec(
                1_000,
                Some(10_000),
                1,
                &[("far", "5"), ("spread", "10"), ("advance-every", "100")],
            ),
        );
        let summary = replay(&workload);
        assert_eq!(summary.fired, number(&workload, "expected-fired"));
        assert!(summary.fired > 0);
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = make("start-stop", &spec(1_000, None, 5, &[]));
        let b = make("start-stop", &spec(1_000, None, 5, &[]));
        let c = make("start-stop", &spec(1_000, None, 6, &[]));
        assert_eq!(a, b);
        assert_ne!(a.ops, c.ops);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [
            ("far", "0"),
            ("spread", "0"),
            ("delay", "-1"),
            ("batch", "0"),
            ("advance-every", "0"),
            ("far", "1h"),
        ] {
            refuse("start-stop", &spec(100, None, 1, &[(key, value)]));
        }
    }
}
