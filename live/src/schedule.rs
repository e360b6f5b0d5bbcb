//! A workload laid out on the clock: when each operation is due, in ticks.
//!
//! A workload moves its own clock (`a`, `t`, `n`); live, the wall clock moves instead. So
//! the reference model replays the workload once, and each start, stop and restart is
//! given the model's clock when it runs: its scheduled tick. The leading starts (the fill:
//! the resident timers, connections already open) are applied by the loop itself before
//! its clock starts; every later operation is sent by the feeder at its scheduled time.
//! The clock moves are dropped: live, time passes by itself and the wait strategy decides
//! where the structure's clock moves.

use timerbench_workloads::Program;
use timerbench_workloads::program::{Slot, Step};
use timerbench_workloads::reference::ReferenceModel;

/// An operation that arrives as I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Start `slot`, `delay` ticks after the clock at which it is applied.
    Start {
        /// The timer.
        slot: Slot,
        /// Ticks.
        delay: u64,
    },
    /// Stop `slot`.
    Stop {
        /// The timer.
        slot: Slot,
    },
    /// Restart `slot`, `delay` ticks after the clock at which it is applied.
    Restart {
        /// The timer.
        slot: Slot,
        /// Ticks.
        delay: u64,
    },
}

/// One operation and its scheduled tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timed {
    /// The model's clock when the workload runs it.
    pub tick: u64,
    /// What to do.
    pub arrival: Arrival,
}

/// A workload on the clock. See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    /// The leading starts, `(slot, delay)`, applied at tick 0 before the clock starts.
    pub fill: Vec<(Slot, u64)>,
    /// Every later start, stop and restart, in workload order (ticks non-decreasing).
    pub arrivals: Vec<Timed>,
    /// The model's clock at the end of the workload.
    pub end_tick: u64,
    /// The number of timer slots.
    pub slots: usize,
}

impl Schedule {
    /// Lays `program` out on its clock.
    pub fn of(program: &Program) -> Schedule {
        let mut model = ReferenceModel::new();
        let fill_steps = program.fill_steps();
        let mut schedule = Schedule {
            slots: program.keys.len(),
            ..Schedule::default()
        };
        for (index, &step) in program.steps.iter().enumerate() {
            let tick = model.now();
            let arrival = match step {
                Step::Start { slot, delay } => {
                    model.start_at(u64::from(slot), tick + delay);
                    Some(Arrival::Start { slot, delay })
                }
                Step::Stop { slot } => {
                    model.stop_now(u64::from(slot));
                    Some(Arrival::Stop { slot })
                }
                Step::Restart { slot, delay } => {
                    model.stop_now(u64::from(slot));
                    model.start_at(u64::from(slot), tick + delay);
                    Some(Arrival::Restart { slot, delay })
                }
                Step::Advance { ticks } | Step::Tick { ticks } => {
                    model.move_to(tick + ticks, |_| {});
                    None
                }
                Step::Next => {
                    if let Some(deadline) = model.next_deadline() {
                        model.move_to(deadline.max(tick), |_| {});
                    }
                    None
                }
            };
            match arrival {
                Some(Arrival::Start { slot, delay }) if index < fill_steps => {
                    schedule.fill.push((slot, delay));
                }
                Some(arrival) => schedule.arrivals.push(Timed { tick, arrival }),
                None => {}
            }
        }
        schedule.end_tick = model.now();
        schedule
    }

    /// The arrivals scheduled before `limit_tick`: what a run cut at that tick sends.
    pub fn arrivals_before(&self, limit_tick: u64) -> usize {
        self.arrivals.partition_point(|t| t.tick < limit_tick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use timerbench_workloads::Workload;
    use timerbench_workloads::op::Op;

    fn program(ops: &[Op]) -> Program {
        let workload = Workload {
            ops: ops.to_vec(),
            ..Workload::default()
        };
        timerbench_workloads::compile(&workload, Path::new("test.tw")).unwrap()
    }

    #[test]
    fn operations_get_the_model_clock_and_the_fill_is_apart() {
        let program = program(&[
            Op::Start { id: 7, delay: 10 },
            Op::Start { id: 8, delay: 30 },
            Op::Advance { ticks: 5 },
            Op::Stop { id: 8 },
            Op::Next,
            Op::Restart { id: 7, delay: 4 },
            Op::Tick { ticks: 3 },
        ]);
        let schedule = Schedule::of(&program);
        assert_eq!(schedule.fill, vec![(0, 10), (1, 30)]);
        assert_eq!(
            schedule.arrivals,
            vec![
                Timed {
                    tick: 5,
                    arrival: Arrival::Stop { slot: 1 }
                },
                // `n` moved the clock to timer 7's deadline, 10.
                Timed {
                    tick: 10,
                    arrival: Arrival::Restart { slot: 0, delay: 4 }
                },
            ]
        );
        assert_eq!(schedule.end_tick, 13);
        assert_eq!(schedule.arrivals_before(10), 1);
        assert_eq!(schedule.arrivals_before(11), 2);
    }
}
