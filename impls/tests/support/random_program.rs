//! The random-program driver of the per-structure tests: a fixed-seed mix of `start`,
//! `stop`, `restart`, `next_deadline` and `advance` run on the structure under test and on
//! the [`ReferenceQueue`] side by side, every result compared.
//!
//! A test file says what is its own in a [`Program`]: how often each operation comes up, the
//! deadlines, handles and clock moves its structure needs exercised; and, around
//! [`Program::run`], how it builds the queue and what it checks after every operation and at
//! the end of a round. The driver does the rest the same way for all: values are unique
//! start numbers, so fired timers are compared by value (and each fired handle checked
//! against the one its start or restart returned); ours must fire in deadline order, the
//! model's in any; lengths must agree after every operation.
//!
//! The random stream is drawn in a fixed order (the operation, then what it needs, then the
//! caller's own draws in `after_each`), so a seed names one program.

// Each test file uses its own part of this file.
#![allow(dead_code)]

use rand::RngExt;
use rand::rngs::SmallRng;
use std::collections::HashMap;
use std::ops::AddAssign;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::{Tick, TimerId, TimerQueue};

/// How often each operation comes up: each is drawn with probability its weight over the
/// sum. A `stop` or `restart` drawn before any start is an `advance` instead.
#[derive(Debug, Clone, Copy)]
pub struct Mix {
    pub start: i32,
    pub stop: i32,
    pub restart: i32,
    pub next_deadline: i32,
    pub advance: i32,
}

impl Mix {
    /// Every operation, restarts as often as stops, and an advance in four.
    pub const ALL: Mix = Mix {
        start: 4,
        stop: 2,
        restart: 2,
        next_deadline: 1,
        advance: 3,
    };
}

/// Starts at or before now: one in `one_in`, at most `at_most` ticks back.
#[derive(Debug, Clone, Copy)]
pub struct Past {
    pub one_in: i32,
    pub at_most: Tick,
}

impl Past {
    /// One start in ten, up to 40 ticks back.
    pub const SOMETIMES: Past = Past {
        one_in: 10,
        at_most: 40,
    };
}

/// What a test file's random programs are made of.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    pub mix: Mix,
    /// Starts at or before now, if any; every other start and every restart is `delay`
    /// ticks ahead.
    pub past: Option<Past>,
    /// The delay of a start or restart from `now` (the second argument).
    pub delay: fn(&mut SmallRng, Tick) -> Tick,
    /// Which of the `len` handles so far a stop or restart takes.
    pub pick: fn(&mut SmallRng, usize) -> usize,
    /// How far one `advance` moves the clock from `now` (the second argument).
    pub step: fn(&mut SmallRng, Tick) -> Tick,
}

/// What a program did, so that its caller can check that the mix reached what it meant to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Stops that took a pending timer.
    pub stopped: usize,
    /// Restarts of a pending timer.
    pub restarted: usize,
    /// Timers fired.
    pub fired: usize,
}

impl AddAssign for Counts {
    fn add_assign(&mut self, other: Counts) {
        self.stopped += other.stopped;
        self.restarted += other.restarted;
        self.fired += other.fired;
    }
}

/// A delay of 0, a few ticks, a few thousand, 2^40 or to the end of time (from `now`).
pub fn mixed_delay(rng: &mut SmallRng, now: Tick) -> Tick {
    match rng.random_range(0..10) {
        0 => 0,
        1..=5 => rng.random_range(0..300),
        6 => 1 << 40,
        7 => u64::MAX - now,
        _ => rng.random_range(0..50_000),
    }
}

/// One of the `within` most recent of `len` handles: recent handles are more likely still
/// pending, so that most stops and restarts find a timer.
pub fn recent(rng: &mut SmallRng, len: usize, within: usize) -> usize {
    len - 1 - rng.random_range(0..len.min(within))
}

enum Operation {
    Start,
    Stop,
    Restart,
    NextDeadline,
    Advance,
}

impl Mix {
    fn total(&self) -> i32 {
        self.start + self.stop + self.restart + self.next_deadline + self.advance
    }

    /// The operation a draw from `0..total()` stands for.
    fn operation(&self, draw: i32) -> Operation {
        let mut bound = 0;
        for (weight, operation) in [
            (self.start, Operation::Start),
            (self.stop, Operation::Stop),
            (self.restart, Operation::Restart),
            (self.next_deadline, Operation::NextDeadline),
        ] {
            bound += weight;
            if draw < bound {
                return operation;
            }
        }
        Operation::Advance
    }
}

impl Program {
    /// Runs `ops` operations on `queue` and a fresh model, drawing from `rng`. After every
    /// operation the lengths are compared and `after_each` runs, for the structure's own
    /// checks.
    pub fn run<Q: TimerQueue<u64>>(
        &self,
        rng: &mut SmallRng,
        queue: &mut Q,
        ops: usize,
        mut after_each: impl FnMut(&mut Q, &mut ReferenceQueue<u64>, &mut SmallRng),
    ) -> Counts {
        let mut model = ReferenceQueue::<u64>::new();
        let mut handles: Vec<(TimerId, TimerId)> = Vec::new();
        let mut by_value: HashMap<u64, TimerId> = HashMap::new();
        let mut counts = Counts::default();
        for _ in 0..ops {
            let now = queue.now();
            let value = handles.len() as u64;
            let operation = self.mix.operation(rng.random_range(0..self.mix.total()));
            match operation {
                Operation::Start => {
                    let deadline = match self.past {
                        Some(past) if rng.random_range(0..past.one_in) == 0 => {
                            now - rng.random_range(0..now.min(past.at_most) + 1)
                        }
                        _ => now.saturating_add((self.delay)(rng, now)),
                    };
                    let ours = queue.start(deadline, value);
                    by_value.insert(value, ours);
                    handles.push((ours, model.start(deadline, value)));
                }
                Operation::Stop if !handles.is_empty() => {
                    let (ours, theirs) = handles[(self.pick)(rng, handles.len())];
                    let result = queue.stop(ours);
                    assert_eq!(result, model.stop(theirs));
                    counts.stopped += usize::from(result.is_some());
                }
                Operation::Restart if !handles.is_empty() => {
                    let (ours, theirs) = handles[(self.pick)(rng, handles.len())];
                    let deadline = now.saturating_add((self.delay)(rng, now));
                    let (id, old) = queue.restart(ours, deadline, value);
                    assert_eq!(old, model.stop(theirs), "restart's old value");
                    counts.restarted += usize::from(old.is_some());
                    by_value.insert(value, id);
                    handles.push((id, model.start(deadline, value)));
                }
                Operation::NextDeadline => {
                    assert_eq!(queue.next_deadline(), model.next_deadline());
                }
                Operation::Stop | Operation::Restart | Operation::Advance => {
                    let to = now.saturating_add((self.step)(rng, now));
                    let mut ours = Vec::new();
                    queue.advance(to, |id, value, deadline| {
                        assert_eq!(by_value[&value], id, "handle of the fired timer");
                        ours.push((deadline, value));
                    });
                    assert!(
                        ours.windows(2).all(|w| w[0].0 <= w[1].0),
                        "out of order: {ours:?}"
                    );
                    let mut theirs = Vec::new();
                    model.advance(to, |_, value, deadline| theirs.push((deadline, value)));
                    counts.fired += ours.len();
                    ours.sort_unstable();
                    theirs.sort_unstable();
                    assert_eq!(ours, theirs, "fired at advance({to})");
                }
            }
            assert_eq!(queue.len(), model.len());
            after_each(queue, &mut model, rng);
        }
        counts
    }
}
