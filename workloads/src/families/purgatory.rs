//! `purgatory`: Kafka's `TestPurgatoryPerformance`, the benchmark behind the hierarchical
//! timing-wheel purgatory (Yasuhiro Matsuda, "Apache Kafka, Purgatory, and Hierarchical
//! Timing Wheels", Confluent blog, 2015), with the semantics of the original Scala test:
//! a request that completes does so at its sampled latency, not at its timeout (the later
//! Java port completes every such request at the timeout instant, racing the expiry).
//!
//! **Shape.** Requests arrive as a Poisson process of `rate` per second (exponential gaps,
//! kept as exact times; a request arrives on the 1 ms tick its time falls in). Request `i`
//! (its timer ID) starts a timer of the timeout T when it arrives (`s i T`) and draws a
//! completion latency L from a log-normal with μ = ln p50 and σ = (ln p75 − μ) / 0.67449
//! (0.67449 being the 75th percentile of the standard normal), so that p50 and p75 are the
//! median and 75th percentile of L. If the whole part of L is less than T the request
//! completes at arrival + ⌊L⌋ and stops its timer (`x i`); otherwise it times out and its
//! timer fires at arrival + T. Operations are in time order: `a` jumps from one event tick
//! to the next (firing the timeouts in between), and at each tick the arrivals come before
//! the completions. A final `a` reaches the last deadline, so nothing is pending at the end.
//!
//! The generator counts the requests that time out: `@expected-timeouts`, which is the
//! number of timers the replay fires.
//!
//! **Parameters.**
//! - `rate` (default 10000): requests per second, (0, 10^7].
//! - `timeout` (default 200): T, in ms (ticks), 1 to 2^40.
//! - `p50` (default 20) and `p75` (default 60): the completion latency's median and 75th
//!   percentile, in ms; 0 < p50 ≤ p75. The defaults are the blog's low-timeout case; its
//!   high-timeout case is `p50=200 p75=400`.
//!
//! **Sizes.** `--timers` is the number of requests (the blog used 1,000,000). `--ops` is not
//! used (the request count fixes the length): giving it is an error.
//!
//! **Figures.** With T = 200 ms, P(L ≥ T) = 1 − Φ((ln T − μ) / σ): 20/60 gives
//! σ = ln 3 / 0.67449 ≈ 1.629 and about 7.9% of requests time out; 200/400 puts T at the
//! median, so about 50% time out. The blog: "in low timeout scenario the old implementation
//! was saturated around 40000 RPS … in high timeout scenario the old implementation was
//! saturated around 25000 RPS, whereas the new implementation was saturated 105000 RPS"
//! (tick 1 ms, wheel size 20, 1M requests). Here the rate sets how many requests are in
//! flight (about rate × E[min(L, T)]), not a wall-clock load.

use super::common::{emitter, guard, positive, seeded, timers, whole_in, workload};
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Kafka's purgatory benchmark.
pub struct Purgatory;

/// The 75th percentile of the standard normal distribution, as Kafka's test writes it.
const NORMAL_P75: f64 = 0.674490;

static INFO: FamilyInfo = FamilyInfo {
    name: "purgatory",
    models: "Kafka's TestPurgatoryPerformance (Confluent blog 2015), Scala semantics",
    shape: "Poisson requests each start a timeout timer; a log-normal completion latency \
            below the timeout stops it (`x`), otherwise it fires; `a` jumps between event ticks",
    ops: "not used (the request count, --timers, fixes the length)",
    tick: "1ms",
    params: &[
        Param {
            name: "rate",
            default: "10000",
            help: "requests per second (Poisson arrivals)",
        },
        Param {
            name: "timeout",
            default: "200",
            help: "request timeout T, ms",
        },
        Param {
            name: "p50",
            default: "20",
            help: "median completion latency, ms (high-timeout case: 200)",
        },
        Param {
            name: "p75",
            default: "60",
            help: "75th-percentile completion latency, ms (high-timeout case: 400)",
        },
    ],
};

impl Family for Purgatory {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let requests = timers(spec, params)?;
        if spec.ops.is_some() {
            return Err(params
                .invalid("--ops is not used: the number of requests (--timers) fixes the length"));
        }
        let rate = positive(params, "rate", 1e7)?;
        let timeout = whole_in(params, "timeout", 1, 1 << 40)?;
        let p50 = positive(params, "p50", 1e12)?;
        let p75 = positive(params, "p75", 1e12)?;
        if p75 < p50 {
            return Err(params.bad("p75", format!("must be at least p50 ({p50})")));
        }
        let mu = p50.ln();
        let sigma = (p75.ln() - mu) / NORMAL_P75;
        let mean_gap = 1000.0 / rate;

        let mut rng = seeded(spec);
        let mut out = emitter(params, requests * 3)?;
        // Completions waiting to happen, by (tick, request).
        let mut completions: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
        let mut arrival_time = 0.0f64;
        let mut last_deadline = 0;
        let mut expired = 0u64;
        for id in 0..requests {
            arrival_time += -(1.0 - rng.random::<f64>()).ln() * mean_gap;
            let arrival = guard(params, arrival_time as u64)?;
            let normal: f64 = StandardNormal.sample(&mut rng);
            let latency = (mu + sigma * normal).exp();
            while let Some(&Reverse((due, done))) = completions.peek() {
                if due >= arrival {
                    break;
                }
                completions.pop();
                out.advance_to(due);
                out.stop(done);
            }
            out.advance_to(arrival);
            let deadline = guard(params, arrival + timeout)?;
            out.start_at(id, deadline);
            last_deadline = deadline;
            if latency < timeout as f64 {
                // ⌊L⌋ < T, so the stop comes before the deadline.
                completions.push(Reverse((arrival + latency as u64, id)));
            } else {
                expired += 1;
            }
        }
        while let Some(Reverse((due, done))) = completions.pop() {
            out.advance_to(due);
            out.stop(done);
        }
        out.advance_to(last_deadline);

        Ok(workload(
            format!(
                "Kafka purgatory (TestPurgatoryPerformance, Scala semantics): {requests} requests \
                 at {rate}/s, timeout {timeout} ms, log-normal completion p50 {p50} ms p75 {p75} ms: \
                 {expired} time out"
            ),
            vec![
                ("requests", requests.to_string()),
                ("expected-timeouts", expired.to_string()),
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
    fn timeouts_match_the_model_and_the_log_normal() {
        // Expected shares from the log-normal: 7.9% for 20/60, 50% for 200/400 (T = 200).
        for (p50, p75, share) in [("20", "60", 0.0786), ("200", "400", 0.5)] {
            let workload = make(
                "purgatory",
                &spec(20_000, None, 3, &[("p50", p50), ("p75", p75)]),
            );
            let mut stops = 0;
            let summary = replay_with(&workload, |_, op, model, fired| {
                if let Op::Stop { id } = op {
                    stops += 1;
                    assert!(fired.is_empty());
                    assert_eq!(model.deadline(id), None);
                }
            });
            let expected = number(&workload, "expected-timeouts");
            assert_eq!(summary.fired, expected);
            assert_eq!(summary.stopped, 20_000 - expected);
            assert_eq!(summary.stopped, stops);
            assert_eq!(summary.misses, 0);
            assert_eq!(summary.pending, 0);
            let measured = expected as f64 / 20_000.0;
            assert!((measured - share).abs() < 0.015, "{p50}/{p75}: {measured}");
        }
    }

    #[test]
    fn operations_are_in_time_order() {
        let workload = make("purgatory", &spec(5_000, None, 1, &[("rate", "100000")]));
        let mut previous_was_advance = false;
        for op in &workload.ops {
            let advance = matches!(op, Op::Advance { .. });
            assert!(!(advance && previous_was_advance), "two advances in a row");
            assert!(matches!(
                op,
                Op::Advance { .. } | Op::Start { .. } | Op::Stop { .. }
            ));
            previous_was_advance = advance;
        }
        assert_eq!(replay(&workload).started, 5_000);
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = make("purgatory", &spec(1_000, None, 5, &[]));
        let b = make("purgatory", &spec(1_000, None, 5, &[]));
        let c = make("purgatory", &spec(1_000, None, 6, &[]));
        assert_eq!(a, b);
        assert_ne!(a.ops, c.ops);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [
            ("rate", "0"),
            ("rate", "-5"),
            ("timeout", "0"),
            ("p50", "0"),
            ("p75", "10"),
            ("p50", "x"),
        ] {
            refuse("purgatory", &spec(100, None, 1, &[(key, value)]));
        }
        refuse("purgatory", &spec(100, Some(10), 1, &[]));
    }
}
