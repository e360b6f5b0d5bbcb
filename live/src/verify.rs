//! Verification of a live run: its firings against the reference model, for the
//! operations as they were actually applied.
//!
//! Live, operations land at the tick they arrive and the clock moves where the wait
//! strategy woke, so the workload file's own expected log does not apply. The loop keeps
//! instead the log of what it did to the structure (every start and stop with its
//! deadline, every clock move) and what fired on each move. That log is a workload in its
//! own right (`a 0` where a move stayed at the same tick), and the existing checks apply:
//!
//! - an exact structure must have fired, on each move, exactly the timers the reference
//!   model fires on it;
//! - an approximate one is replayed through the same log in lockstep with the model
//!   ([`replay_within_bound`]), which checks every firing against its declared window,
//!   and its firings there must be the live ones (the structure is deterministic, so a
//!   difference is a bug in the loop).

use std::path::Path;
use timerbench_impls::{TimerQueue, Variant};
use timerbench_workloads::op::Op;
use timerbench_workloads::program::Firing;
use timerbench_workloads::replay::replay_within_bound;
use timerbench_workloads::{Program, Workload};

/// One thing the loop did to the structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// `start(deadline)` of `slot`.
    Start {
        /// The timer.
        slot: u32,
        /// Its deadline.
        deadline: u64,
    },
    /// `stop` of `slot`.
    Stop {
        /// The timer.
        slot: u32,
    },
    /// `restart(deadline)` of `slot`.
    Restart {
        /// The timer.
        slot: u32,
        /// Its new deadline.
        deadline: u64,
    },
    /// `advance(to)`.
    Move {
        /// The new clock.
        to: u64,
    },
}

/// A live firing: the index of the move that fired it in [`AppliedLog::ops`], the timer
/// and its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LiveFiring {
    /// Index of the move.
    pub step: u32,
    /// The timer.
    pub slot: u32,
    /// Its deadline.
    pub deadline: u64,
}

/// What the loop did, in order.
#[derive(Debug, Clone, Default)]
pub struct AppliedLog {
    /// The operations and moves.
    pub ops: Vec<Applied>,
    /// What fired.
    pub firings: Vec<LiveFiring>,
}

impl AppliedLog {
    /// Appends `op`; its index, for the firings of a move.
    pub fn push(&mut self, op: Applied) -> u32 {
        self.ops.push(op);
        (self.ops.len() - 1) as u32
    }

    /// The log as a workload (timer names are the slots), checked and compiled by the
    /// reference model.
    pub fn program(&self) -> Result<Program, String> {
        let mut clock = 0u64;
        let ops = self
            .ops
            .iter()
            .map(|&applied| match applied {
                Applied::Start { slot, deadline } => Op::Start {
                    id: u64::from(slot),
                    delay: deadline - clock,
                },
                Applied::Stop { slot } => Op::Stop {
                    id: u64::from(slot),
                },
                Applied::Restart { slot, deadline } => Op::Restart {
                    id: u64::from(slot),
                    delay: deadline - clock,
                },
                Applied::Move { to } => {
                    let ticks = to - clock;
                    clock = to;
                    Op::Advance { ticks }
                }
            })
            .collect();
        let workload = Workload {
            ops,
            ..Workload::default()
        };
        timerbench_workloads::compile(&workload, Path::new("applied operations"))
            .map_err(|e| format!("the applied operations are not a valid workload: {e}"))
    }
}

/// Checks `log` for `variant` (whose type is `Q`): `Ok` if verified, else the first
/// disagreement in words.
pub fn verify<Q: TimerQueue<u64>>(variant: &Variant, log: &AppliedLog) -> Result<(), String> {
    let program = log.program()?;
    let mut live = log.firings.clone();
    live.sort_unstable_by_key(|f| (f.step, f.deadline, f.slot));
    let named = |firings: &[Firing]| {
        let mut named: Vec<LiveFiring> = firings
            .iter()
            .map(|f| LiveFiring {
                step: f.step,
                slot: program.keys[f.slot as usize] as u32,
                deadline: f.deadline,
            })
            .collect();
        named.sort_unstable_by_key(|f| (f.step, f.deadline, f.slot));
        named
    };
    if variant.declarations().precision.is_exact() {
        return compare(&named(&program.expected), &live, log, "the reference model");
    }
    let queue: Q = variant.build(0);
    let mut replayed = Vec::new();
    replay_within_bound(queue, &program, &mut replayed)
        .map_err(|e| format!("outside its declared bound: {e}"))?;
    compare(
        &named(&replayed),
        &live,
        log,
        "a replay of the same operations",
    )
}

/// The first difference between `expected` and `live`, in words.
fn compare(
    expected: &[LiveFiring],
    live: &[LiveFiring],
    log: &AppliedLog,
    against: &str,
) -> Result<(), String> {
    let first = expected
        .iter()
        .zip(live)
        .position(|(e, l)| e != l)
        .or_else(|| (expected.len() != live.len()).then(|| expected.len().min(live.len())));
    let Some(index) = first else {
        return Ok(());
    };
    let show = |f: Option<&LiveFiring>| {
        f.map_or("no firing".to_string(), |f| {
            format!(
                "timer {} (deadline {}) on move {} ({:?})",
                f.slot, f.deadline, f.step, log.ops[f.step as usize]
            )
        })
    };
    Err(format!(
        "firing {index} differs from {against}: expected {}, live {} ({} expected, {} live)",
        show(expected.get(index)),
        show(live.get(index)),
        expected.len(),
        live.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerbench_impls::Variant;
    use timerbench_impls::binary_heap::BinaryHeapTimers;
    use timerbench_impls::netty_wheel::NettyWheel;
    use timerbench_impls::registry::find;

    /// Start 3 at deadline 5 and 4 at deadline 9, move to 6 (3 fires), stop 4, move to 10.
    fn log(fired_on_first_move: &[LiveFiring]) -> AppliedLog {
        let mut log = AppliedLog::default();
        log.push(Applied::Start {
            slot: 3,
            deadline: 5,
        });
        log.push(Applied::Start {
            slot: 4,
            deadline: 9,
        });
        log.push(Applied::Move { to: 6 });
        log.push(Applied::Stop { slot: 4 });
        log.push(Applied::Move { to: 10 });
        log.firings.extend_from_slice(fired_on_first_move);
        log
    }

    const THREE_AT_SIX: LiveFiring = LiveFiring {
        step: 2,
        slot: 3,
        deadline: 5,
    };

    #[test]
    fn an_exact_run_that_fired_as_the_model_says_is_verified() {
        let heap = Variant::of(find("binary-heap").unwrap());
        assert_eq!(
            verify::<BinaryHeapTimers<u64>>(&heap, &log(&[THREE_AT_SIX])),
            Ok(())
        );
    }

    #[test]
    fn a_missing_an_extra_or_a_late_firing_is_not() {
        let heap = Variant::of(find("binary-heap").unwrap());
        let missing = verify::<BinaryHeapTimers<u64>>(&heap, &log(&[]));
        assert!(missing.unwrap_err().contains("live no firing"));
        let stopped_one = LiveFiring {
            step: 4,
            slot: 4,
            deadline: 9,
        };
        let extra = verify::<BinaryHeapTimers<u64>>(&heap, &log(&[THREE_AT_SIX, stopped_one]));
        assert!(extra.unwrap_err().contains("timer 4 (deadline 9)"));
        let late = LiveFiring {
            step: 4,
            ..THREE_AT_SIX
        };
        assert!(verify::<BinaryHeapTimers<u64>>(&heap, &log(&[late])).is_err());
    }

    #[test]
    fn an_approximate_run_is_checked_against_its_own_replay() {
        let netty = Variant::parse("netty-wheel:tick=4").unwrap();
        // Netty's worker ticks at 4, 8, ...: timer 3 (deadline 5) fires on the move to 10.
        let on_time = verify::<NettyWheel<u64>>(&netty, &log(&[THREE_AT_SIX]));
        assert!(
            on_time.is_err(),
            "Netty at tick 4 cannot fire on the move to 6"
        );
        let late = LiveFiring {
            step: 4,
            ..THREE_AT_SIX
        };
        assert_eq!(verify::<NettyWheel<u64>>(&netty, &log(&[late])), Ok(()));
    }

    #[test]
    fn a_log_the_model_refuses_is_reported() {
        let mut log = AppliedLog::default();
        log.push(Applied::Start {
            slot: 1,
            deadline: 5,
        });
        log.push(Applied::Start {
            slot: 1,
            deadline: 7,
        });
        let heap = Variant::of(find("binary-heap").unwrap());
        let error = verify::<BinaryHeapTimers<u64>>(&heap, &log).unwrap_err();
        assert!(error.contains("not a valid workload"), "{error}");
    }
}
