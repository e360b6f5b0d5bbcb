//! `linux-wheel` against the reference model, within its declared bound.
//!
//! The wheel is approximate, so it cannot pass the exact differential test. Instead, on
//! random sequences of start, stop, restart and clock moves (ticks, jumps, sleeps to
//! `next_deadline`), every timer must:
//!
//! - fire at most once, and only if it was started and not stopped or restarted away;
//! - never fire before its deadline, unless its deadline lay beyond the wheel's cut-off
//!   (then it is clamped and fires early, which the wheel counts);
//! - never be pending after a clock move reached `deadline + lateness_bound(delay)`;
//! - be accounted for by the reference: a stop that finds it pending in the wheel but
//!   fired in the reference is a stop of a late timer, allowed only within its bound.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timerbench_impls::linux_wheel::{LinuxWheel, lateness_bound};
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::{Tick, TimerId, TimerQueue};

/// What the test knows of one started timer.
struct Timer {
    deadline: Tick,
    /// `deadline - now` at its start, 0 when already due.
    delay: Tick,
    /// The clock by which it must have fired: `max(deadline, now at its start)` plus the
    /// declared bound of its delay.
    latest: Tick,
    clamped: bool,
    wheel: TimerId,
    model: TimerId,
    fired_in_model: Option<Tick>,
    fired_in_wheel: Option<Tick>,
    stopped: bool,
}

struct Pair {
    wheel: LinuxWheel<u64>,
    model: ReferenceQueue<u64>,
    timers: Vec<Timer>,
    levels: usize,
}

impl Pair {
    fn start(&mut self, deadline: Tick) {
        self.record(deadline, |wheel, value| wheel.start(deadline, value));
    }

    /// Starts a timer at `deadline` in the model and, through `start_in_wheel` (a start or
    /// a restart), in the wheel, and records what the test knows of it.
    fn record(
        &mut self,
        deadline: Tick,
        start_in_wheel: impl FnOnce(&mut LinuxWheel<u64>, u64) -> TimerId,
    ) {
        let now = self.model.now();
        let value = self.timers.len() as u64;
        let clamped_before = self.wheel.clamped();
        let window = self.wheel.window(deadline);
        let wheel = start_in_wheel(&mut self.wheel, value);
        let model = self.model.start(deadline, value);
        let delay = deadline.saturating_sub(now);
        // The window the harness verifies with is the one this test checks.
        let clamped = self.wheel.clamped() > clamped_before;
        assert_eq!(
            window.early, clamped,
            "declared early firing for delay {delay}"
        );
        if !clamped {
            assert_eq!(window.late, lateness_bound(self.levels, delay));
        }
        self.timers.push(Timer {
            deadline,
            delay,
            latest: deadline.max(now) + lateness_bound(self.levels, delay),
            clamped,
            wheel,
            model,
            fired_in_model: None,
            fired_in_wheel: None,
            stopped: false,
        });
    }

    /// Whether the wheel may still hold `timer` at clock `now`.
    fn may_be_late(timer: &Timer, now: Tick) -> bool {
        timer.clamped || now < timer.latest
    }

    fn stop(&mut self, pick: usize) {
        let now = self.model.now();
        let timer = &self.timers[pick];
        let in_model = self.model.stop(timer.model);
        let in_wheel = self.wheel.stop(timer.wheel);
        match (in_model, in_wheel) {
            (Some(a), Some(b)) => assert_eq!(a, b),
            (None, None) => {}
            (None, Some(_)) => {
                // Fired in the model, still pending in the wheel: late, within bound.
                assert!(
                    timer.fired_in_model.is_some(),
                    "a timer the model never had"
                );
                assert!(Self::may_be_late(timer, now), "stopped past its bound");
            }
            (Some(_), None) => assert!(timer.clamped, "the wheel fired {pick} early"),
        }
        self.timers[pick].stopped = true;
    }

    fn restart(&mut self, pick: usize, deadline: Tick) {
        self.stop_for_restart(pick);
        let old = self.timers[pick].wheel;
        self.record(deadline, |wheel, value| {
            wheel.restart(old, deadline, value).0
        });
    }

    /// The model's half of a restart: its stop, checked against what the wheel would say
    /// (asked without changing it: the wheel's restart does the removal).
    fn stop_for_restart(&mut self, pick: usize) {
        let now = self.model.now();
        let timer = &self.timers[pick];
        let in_model = self.model.stop(timer.model).is_some();
        let in_wheel = timer.fired_in_wheel.is_none() && !timer.stopped;
        if in_model {
            assert!(in_wheel || timer.clamped, "the wheel fired {pick} early");
        } else if in_wheel && !timer.stopped && timer.fired_in_model.is_some() {
            assert!(Self::may_be_late(timer, now), "restarted past its bound");
        }
        self.timers[pick].stopped = true;
    }

    fn advance(&mut self, to: Tick) {
        let mut fired = Vec::new();
        self.model.advance(to, |_, value, _| fired.push(value));
        for value in fired {
            self.timers[value as usize].fired_in_model = Some(to);
        }
        let mut fired = Vec::new();
        self.wheel.advance(to, |_, value, _| fired.push(value));
        for value in fired {
            let timer = &mut self.timers[value as usize];
            assert!(!timer.stopped, "stopped timer {value} fired");
            assert_eq!(timer.fired_in_wheel, None, "timer {value} fired twice");
            timer.fired_in_wheel = Some(to);
            if !timer.clamped {
                assert!(
                    timer.fired_in_model.is_some(),
                    "timer {value} fired early at {to}: deadline {}, delay {}",
                    timer.deadline,
                    timer.delay
                );
            }
        }
        for (value, timer) in self.timers.iter().enumerate() {
            let pending = !timer.stopped && timer.fired_in_wheel.is_none();
            if pending {
                assert!(
                    Self::may_be_late(timer, to),
                    "timer {value} (deadline {}, delay {}) still pending at {to}",
                    timer.deadline,
                    timer.delay
                );
            }
        }
    }
}

fn delay(random: &mut SmallRng, cutoff: Tick) -> Tick {
    match random.next_u64() % 8 {
        0 => 0,
        1 | 2 => random.next_u64() % 64,
        3 => random.next_u64() % 5_000,
        4 => random.next_u64() % 300_000,
        5 => random.next_u64() % (1 << 28),
        6 => cutoff - 2 + random.next_u64() % 4,
        _ => cutoff + random.next_u64() % (1 << 40),
    }
}

#[test]
fn fires_every_timer_once_within_its_declared_bound() {
    for seed in 0..24u64 {
        let levels = if seed % 3 == 0 { 8 } else { 9 };
        let mut random = SmallRng::seed_from_u64(0x11_4e5 + seed);
        let mut pair = Pair {
            wheel: LinuxWheel::with_levels(0, levels),
            model: ReferenceQueue::new(),
            timers: Vec::new(),
            levels,
        };
        let cutoff = pair.wheel.cutoff();
        for _ in 0..2_000 {
            let now = pair.model.now();
            match random.next_u64() % 10 {
                0..=3 => {
                    let deadline = if random.next_u64() % 10 == 0 {
                        now.saturating_sub(random.next_u64() % 100)
                    } else {
                        now + delay(&mut random, cutoff)
                    };
                    pair.start(deadline);
                }
                4 if !pair.timers.is_empty() => {
                    pair.stop((random.next_u64() % pair.timers.len() as u64) as usize)
                }
                5 if !pair.timers.is_empty() => {
                    let pick = (random.next_u64() % pair.timers.len() as u64) as usize;
                    pair.restart(pick, now + delay(&mut random, cutoff));
                }
                6 => {
                    for _ in 0..random.next_u64() % 200 {
                        let to = pair.model.now() + 1;
                        pair.advance(to);
                    }
                }
                7 | 8 => {
                    let by = match random.next_u64() % 3 {
                        0 => random.next_u64() % 100,
                        1 => random.next_u64() % 100_000,
                        _ => random.next_u64() % (1 << 32),
                    };
                    pair.advance(now + by);
                }
                _ => {
                    if let Some(next) = pair.wheel.next_deadline() {
                        let to = next.max(now);
                        let before = pair.wheel.len();
                        pair.advance(to);
                        assert!(
                            pair.wheel.len() < before,
                            "advance(next_deadline) fired nothing"
                        );
                    }
                }
            }
            assert_eq!(pair.wheel.now(), pair.model.now());
        }
        let end = pair.model.now() + (1 << 45);
        pair.advance(end);
        assert!(pair.wheel.is_empty(), "seed {seed}: timers left behind");
    }
}
