//! `cron`: long-range timers, from seconds to days, as a job scheduler, a cache with TTLs or
//! connection tracking keeps them (Linux's timer wheel notes that the longest timeouts it
//! sees, about 5 days, come from network connection tracking; its HZ=1000 wheel covers
//! about 12 days). Such timers stress the upper levels of hierarchical wheels (cascading,
//! overflow, caps) and the empty-time skipping of single wheels.
//!
//! **Shape.** N timers pending at all times, at 1 ms ticks. Delays are log-uniform between
//! `min` and `max` (every decade of duration equally likely). A share `periodic` of the N
//! timers, drawn at random, are periodic (a cron entry, a ticker): each has its own period,
//! log-uniform like the delays, starts at a random phase (a first delay uniform in
//! `[1, period]`) and, every time it fires, is started again with its period (`s ID P`,
//! the same ID). The others are one-shot: when one fires, the scheduler takes a new job,
//! a fresh ID with a fresh log-uniform delay. The workload is driven by `n`: each step
//! sleeps to the earliest deadline and fires what is due, as a scheduler's event loop does,
//! then the restarts and new jobs follow.
//!
//! Because short timers come back quickly and long ones stay, the pending population
//! drifts towards long delays over the run (it starts log-uniform: 45% beyond an hour),
//! while the firings are dominated by the short ones.
//!
//! **Parameters.**
//! - `min` (default 1000 = 1 s) and `max` (default 2592000000 = 30 days): the delay and
//!   period range, ms; 1 ≤ min ≤ max ≤ 2^50.
//! - `periodic` (default 0.25): the share of periodic timers, [0, 1].
//!
//! **Sizes.** `--timers` is N. `--ops` is the number of firings, each followed by a restart
//! or a new job (default N); generation stops after the `n` step that reaches it. With N
//! large against the range, one `n` fires many timers (10M timers put hundreds on each
//! 1 ms tick near the short end), so counting `n` steps would not bound the workload.

use super::common::{
    MonotoneQueue, emitter, guard, ops_or, probability, seeded, timers, whole_in, workload,
};
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;
use rand::RngExt;
use rand::rngs::SmallRng;

/// Long-range and periodic timers.
pub struct Cron;

static INFO: FamilyInfo = FamilyInfo {
    name: "cron",
    models: "long-range timers of a scheduler: seconds to days, some periodic",
    shape: "N pending timers with log-uniform delays in [1 s, 30 d]; each `n` step fires the \
            earliest, periodic ones restart with their period, one-shot ones are replaced",
    ops: "firings (each restarted or replaced), default N",
    tick: "1ms",
    params: &[
        Param {
            name: "min",
            default: "1000",
            help: "shortest delay or period, ms (1 s)",
        },
        Param {
            name: "max",
            default: "2592000000",
            help: "longest delay or period, ms (30 days)",
        },
        Param {
            name: "periodic",
            default: "0.25",
            help: "share of timers that are periodic, [0, 1]",
        },
    ],
};

/// Log-uniform whole delays in `[min, max]`.
struct LogUniform {
    low: f64,
    span: f64,
    min: u64,
    max: u64,
}

impl LogUniform {
    fn new(min: u64, max: u64) -> Self {
        let low = (min as f64).ln();
        LogUniform {
            low,
            span: (max as f64).ln() - low,
            min,
            max,
        }
    }

    fn sample(&self, rng: &mut SmallRng) -> u64 {
        let value = (self.low + self.span * rng.random::<f64>()).exp().round() as u64;
        value.clamp(self.min, self.max)
    }
}

impl Family for Cron {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let size = timers(spec, params)?;
        let firings = ops_or(spec, params, size)?;
        let min = whole_in(params, "min", 1, 1 << 50)?;
        let max = whole_in(params, "max", 1, 1 << 50)?;
        if max < min {
            return Err(params.bad("max", format!("must be at least min ({min})")));
        }
        let periodic_share = probability(params, "periodic")?;
        let delays = LogUniform::new(min, max);
        let mut rng = seeded(spec);
        let mut out = emitter(params, firings.saturating_mul(2).saturating_add(size))?;

        // The period of each of the first N IDs (0 for one-shot); later IDs are new jobs.
        let mut periods = Vec::with_capacity(size as usize);
        let mut queue = MonotoneQueue::new();
        for id in 0..size {
            let periodic = rng.random::<f64>() < periodic_share;
            let (period, first) = if periodic {
                let period = delays.sample(&mut rng);
                (period, rng.random_range(1..=period))
            } else {
                (0, delays.sample(&mut rng))
            };
            periods.push(period);
            out.start_at(id, first);
            queue.push(first, id);
        }
        let periodic_count = periods.iter().filter(|&&p| p > 0).count();

        let mut next_id = size;
        let mut fired = Vec::new();
        let mut restarts = 0u64;
        let mut done = 0u64;
        let mut steps = 0u64;
        while done < firings {
            let Some(target) = queue.pop_all_least(&mut fired) else {
                break;
            };
            out.next_to(target);
            steps += 1;
            done += fired.len() as u64;
            for id in fired.drain(..) {
                let period = periods.get(id as usize).copied().unwrap_or(0);
                let (id, delay) = if period > 0 {
                    restarts += 1;
                    (id, period)
                } else {
                    next_id += 1;
                    (next_id - 1, delays.sample(&mut rng))
                };
                let deadline = guard(params, target + delay)?;
                out.start_at(id, deadline);
                queue.push(deadline, id);
            }
        }

        Ok(workload(
            format!(
                "long-range timers: {size} pending, delays log-uniform in [{min}, {max}] ms, \
                 {periodic_count} periodic; {done} firings in {steps} `n` steps"
            ),
            vec![
                ("periodic-timers", periodic_count.to_string()),
                ("firings", done.to_string()),
                ("periodic-restarts", restarts.to_string()),
                ("new-jobs", (next_id - size).to_string()),
            ],
            out.into_ops(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{make, number, refuse, replay, replay_with, spec};
    use crate::op::Op;
    use std::collections::BTreeMap;

    #[test]
    fn periodic_timers_restart_with_their_period() {
        let timers = 5_000u64;
        let workload = make("cron", &spec(timers, Some(20_000), 1, &[]));
        // Per ID: the delays it was started with, after the first.
        let mut restarts: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        let mut seen = vec![false; timers as usize];
        let mut previous_fired = Vec::new();
        let summary = replay_with(&workload, |index, op, model, fired| {
            match op {
                Op::Next => {
                    assert!(!fired.is_empty());
                    previous_fired = fired.iter().map(|e| e.id).collect();
                }
                Op::Start { id, delay } => {
                    assert!((1..=2_592_000_000).contains(&delay));
                    if id < timers && seen[id as usize] {
                        assert!(
                            previous_fired.contains(&id),
                            "{id} restarted without firing"
                        );
                        restarts.entry(id).or_default().push(delay);
                    }
                    if id < timers {
                        seen[id as usize] = true;
                    }
                }
                other => panic!("unexpected {other}"),
            }
            assert!(model.pending() <= timers as usize);
            if workload.ops.get(index + 1) == Some(&Op::Next) {
                assert_eq!(model.pending(), timers as usize);
            }
        });
        assert_eq!(summary.pending, timers);
        assert_eq!(
            restarts.values().map(Vec::len).sum::<usize>() as u64,
            number(&workload, "periodic-restarts")
        );
        assert!(
            restarts.len() > 10,
            "{} periodic timers restarted",
            restarts.len()
        );
        for (id, delays) in &restarts {
            assert!(delays.windows(2).all(|w| w[0] == w[1]), "{id}: {delays:?}");
        }
        assert!(restarts.len() as u64 <= number(&workload, "periodic-timers"));
        assert!(number(&workload, "new-jobs") > 0);
    }

    #[test]
    fn all_periodic_keeps_the_ids() {
        let workload = make("cron", &spec(1_000, Some(5_000), 2, &[("periodic", "1")]));
        for op in &workload.ops {
            if let Op::Start { id, .. } = op {
                assert!(*id < 1_000);
            }
        }
        assert_eq!(replay(&workload).pending, 1_000);
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = make("cron", &spec(1_000, None, 5, &[]));
        let b = make("cron", &spec(1_000, None, 5, &[]));
        let c = make("cron", &spec(1_000, None, 6, &[]));
        assert_eq!(a, b);
        assert_ne!(a.ops, c.ops);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [
            ("min", "0"),
            ("max", "500"),
            ("max", "99999999999999999999"),
            ("periodic", "2"),
        ] {
            refuse("cron", &spec(100, None, 1, &[(key, value)]));
        }
        // 2^12 periods of 2^50 ticks would pass the 2^62 guard: an error, not a wrap.
        let long = (1u64 << 50).to_string();
        let error = refuse(
            "cron",
            &spec(1, Some(10_000), 1, &[("min", &long), ("max", &long)]),
        );
        assert!(error.to_string().contains("2^62"), "{error}");
    }
}
