//! Every approximate implementation ([`for_each_approximate!`]) against the reference
//! model, within the windows it declares, driven by its declarations only.
//!
//! The exact suites cannot take an approximate structure: it fires at other ticks by
//! design. Instead, random sequences of start, stop, restart and clock moves (jumps, runs
//! of single ticks, sleeps to `next_deadline`) drive the structure and
//! [`ReferenceQueue`] side by side, each timer carrying the [`Window`] the structure
//! declared just before its start, and every timer must:
//!
//! - fire at most once, never after a stop (or a restart) took it;
//! - never fire before the model fires it (its deadline), unless its window allows early;
//! - be fired by the first clock move whose end reaches `max(deadline, now at start) +
//!   late`;
//! - agree with the model on stops: the same value, or a difference the window explains
//!   (a late timer the model already fired, an early one the model still holds).
//!
//! And `len` agrees with the model whenever no timer is late or early, and
//! `next_deadline` is `None` exactly when `len` is 0. How far the clock moves follows the
//! structure's [`EmptyTime`]: a walked structure visits a bucket per step, so its moves stay
//! within [`WALKED_MOVE`] ticks; the others take jumps of up to 2^32 and a last one of 2^45.
//!
//! A second check per implementation: start/stop churn does not grow memory once the clock
//! has moved past the stopped timers, whatever its [`Release`] (and, for a structure that
//! frees at once, not even without moving the clock).
//!
//! Each implementation runs with its defaults and with the parameter sets of
//! [`variants`], about 100,000 operations in all, in seeded runs of [`OPS_PER_RUN`].

#[path = "support/counting_allocator.rs"]
mod counting_allocator;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use timerbench_impls::for_each_approximate;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::{EmptyTime, Parameters, Range, Release, Tick, TimerId, TimerQueue, Window};

/// Parameter sets each implementation is checked with besides its defaults: small rings,
/// wide ticks, shapes where a delay spans many turns.
fn variants(name: &str) -> &'static [&'static [(&'static str, u64)]] {
    match name {
        "linux-wheel" => &[&[("levels", 8)]],
        "netty-wheel" => &[
            &[("slots", 64)],
            &[("slots", 8), ("tick", 16)],
            &[("slots", 2), ("tick", 1_000)],
        ],
        "ring-buckets" => &[
            &[("slots", 3), ("width", 1)],
            &[("slots", 30), ("width", 7)],
            &[("slots", 1), ("width", 1_000)],
        ],
        _ => &[],
    }
}

/// Operations per implementation, over all its parameter sets.
const OPS_PER_IMPLEMENTATION: usize = 100_000;
/// Operations per seeded run; each run starts from an empty structure.
const OPS_PER_RUN: usize = 5_000;
/// The most ticks a walked structure's clock moves in one operation.
const WALKED_MOVE: Tick = 1 << 16;
/// Above this many pending timers, a start becomes a clock move: the model is O(n).
const MOST_PENDING: usize = 400;

macro_rules! approximate_checks {
    ($($module:ident :: $ty:ident, $name:literal, $summary:literal;)*) => {
        $(
            #[allow(non_snake_case)]
            mod $module {
                type Queue = timerbench_impls::$module::$ty<u64>;

                #[test]
                fn fires_every_timer_once_within_its_window() {
                    crate::lockstep::check_all_variants::<Queue>($name);
                }

                #[test]
                fn memory_stops_growing_under_start_stop_churn() {
                    crate::churn::check::<Queue>($name);
                }
            }
        )*
    };
}

for_each_approximate!(approximate_checks);

/// The structure built with `name`'s defaults overridden by `variant`, and its label.
fn build<Q: TimerQueue<u64>>(name: &str, variant: &[(&str, u64)]) -> (Q, String) {
    let mut parameters = Parameters::defaults(Q::PARAMETERS);
    let mut label = name.to_string();
    for (i, &(key, value)) in variant.iter().enumerate() {
        parameters
            .set(key, value)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        label.push(if i == 0 { ':' } else { ',' });
        label.push_str(&format!("{key}={value}"));
    }
    (Q::with_parameters(0, &parameters), label)
}

mod lockstep {
    use super::*;

    /// What the test knows of one start.
    struct Timer {
        deadline: Tick,
        started: Tick,
        /// `max(deadline, started) + window.late`: the clock by which it must have fired.
        latest: Tick,
        early_allowed: bool,
        subject: TimerId,
        model: TimerId,
        /// Pending in the subject and in the model.
        in_subject: bool,
        in_model: bool,
    }

    /// The structure under test and the model, in lockstep.
    struct Pair<Q> {
        subject: Q,
        model: ReferenceQueue<u64>,
        timers: Vec<Timer>,
        /// Timers the model fired and the subject still holds: `(latest, timer)`.
        late: BTreeSet<(Tick, usize)>,
        /// Timers the subject fired (early, allowed) and the model still holds.
        early: usize,
        label: String,
    }

    impl<Q: TimerQueue<u64>> Pair<Q> {
        fn now(&self) -> Tick {
            self.model.now()
        }

        /// Records a start that `start_in_subject` (a start or a restart) makes, under the
        /// window the subject declares for it beforehand.
        fn record(
            &mut self,
            deadline: Tick,
            start_in_subject: impl FnOnce(&mut Q, u64) -> TimerId,
        ) {
            let window: Window = self.subject.window(deadline);
            let value = self.timers.len() as u64;
            let subject = start_in_subject(&mut self.subject, value);
            let model = self.model.start(deadline, value);
            let started = self.now();
            self.timers.push(Timer {
                deadline,
                started,
                latest: deadline.max(started).saturating_add(window.late),
                early_allowed: window.early,
                subject,
                model,
                in_subject: true,
                in_model: true,
            });
        }

        fn start(&mut self, deadline: Tick) {
            self.record(deadline, |subject, value| subject.start(deadline, value));
        }

        /// The model's stop of `pick` and the subject's answer `found`, checked.
        fn settle_stop(&mut self, pick: usize, found: Option<u64>) {
            let label = &self.label;
            let timer = &mut self.timers[pick];
            let in_model = self.model.stop(timer.model).is_some();
            assert_eq!(in_model, timer.in_model, "{label}: the model's own record");
            assert_eq!(
                found.is_some(),
                timer.in_subject,
                "{label}: stop of timer {pick} (deadline {}, started {}) found {found:?}",
                timer.deadline,
                timer.started
            );
            if let Some(value) = found {
                assert_eq!(value, pick as u64, "{label}: stop returned another value");
                if !timer.in_model {
                    // Late, and still within its window: the checks after every move
                    // would have failed past it.
                    assert!(self.late.remove(&(timer.latest, pick)));
                }
            } else if timer.in_model {
                assert!(timer.early_allowed, "{label}: timer {pick} fired early");
                self.early -= 1;
            }
            timer.in_subject = false;
            timer.in_model = false;
        }

        fn stop(&mut self, pick: usize) {
            let found = self.subject.stop(self.timers[pick].subject);
            self.settle_stop(pick, found);
        }

        fn restart(&mut self, pick: usize, deadline: Tick) {
            let old = self.timers[pick].subject;
            let mut found = None;
            self.record(deadline, |subject, value| {
                let (id, old_value) = subject.restart(old, deadline, value);
                found = old_value;
                id
            });
            self.settle_stop(pick, found);
        }

        fn advance(&mut self, to: Tick) -> usize {
            let label = &self.label;
            let mut fired_in_model = Vec::new();
            self.model
                .advance(to, |_, value, _| fired_in_model.push(value as usize));
            for pick in fired_in_model {
                let timer = &mut self.timers[pick];
                timer.in_model = false;
                if timer.in_subject {
                    self.late.insert((timer.latest, pick));
                } else {
                    self.early -= 1;
                }
            }
            let (timers, late, early) = (&mut self.timers, &mut self.late, &mut self.early);
            let mut fired = 0;
            self.subject.advance(to, |id, value, deadline| {
                fired += 1;
                let pick = value as usize;
                let timer = timers
                    .get_mut(pick)
                    .unwrap_or_else(|| panic!("{label}: fired value {value}, never given"));
                assert_eq!(
                    (id, deadline),
                    (timer.subject, timer.deadline),
                    "{label}: timer {pick} fired with another handle or deadline"
                );
                assert!(
                    timer.in_subject,
                    "{label}: timer {pick} fired at {to} but was stopped or already fired"
                );
                timer.in_subject = false;
                if timer.in_model {
                    assert!(
                        timer.early_allowed,
                        "{label}: timer {pick} (deadline {deadline}, started {}) fired early \
                         at {to}",
                        timer.started
                    );
                    *early += 1;
                } else {
                    late.remove(&(timer.latest, pick));
                }
            });
            assert_eq!(self.subject.now(), to, "{label}: the clock after advance");
            if let Some(&(latest, pick)) = self.late.first() {
                let timer = &self.timers[pick];
                assert!(
                    latest > to,
                    "{label}: timer {pick} (deadline {}, started {}) still pending at {to}, \
                     its window ended at {latest}",
                    timer.deadline,
                    timer.started
                );
            }
            fired
        }

        /// `n`: sleep to `next_deadline` until something fires, within the declared
        /// rounds; skipped when that is further than `most` ticks away.
        fn sleep(&mut self, most: Tick) {
            let steps = self.subject.next_deadline_steps();
            for _ in 0..steps {
                let Some(next) = self.subject.next_deadline() else {
                    return;
                };
                let to = next.max(self.now());
                if to - self.now() > most {
                    return;
                }
                if self.advance(to) > 0 {
                    return;
                }
            }
            panic!(
                "{}: {steps} rounds of advance(next_deadline) fired nothing",
                self.label
            );
        }

        /// The checks after an operation; `next_deadline` (a walk for some structures)
        /// only when `thorough`.
        fn check_counts(&mut self, thorough: bool) {
            let label = &self.label;
            if self.late.is_empty() && self.early == 0 {
                assert_eq!(
                    self.subject.len(),
                    self.model.len(),
                    "{label}: len with no timer late or early"
                );
            }
            if !thorough {
                return;
            }
            assert_eq!(
                self.subject.next_deadline().is_none(),
                self.subject.is_empty(),
                "{label}: next_deadline is None exactly when nothing is pending"
            );
        }
    }

    /// A deadline for a start at `now`: at or before it, near, far, very far; within
    /// `range`. Only a walked structure gets deadlines near `u64::MAX` (it never reaches
    /// them; a skipping one must fire all by the end).
    fn deadline(random: &mut SmallRng, now: Tick, walked: bool, range: Range) -> Tick {
        let delay = match random.next_u64() % 64 {
            0..=3 => return now.saturating_sub(random.next_u64() % 100),
            4..=7 => 0,
            8..=27 => random.next_u64() % 64,
            28..=47 => random.next_u64() % 4_096,
            48..=57 => random.next_u64() % 65_536,
            58..=60 => random.next_u64() % (1 << 20),
            61 => random.next_u64() % (1 << 28),
            62 => (1 << 40) + random.next_u64() % (1 << 40),
            _ if walked => Tick::MAX - now - random.next_u64() % 1_000,
            _ => random.next_u64() % 300_000,
        };
        now.saturating_add(delay.min(range.max_delay))
            .min(range.max_tick)
    }

    /// A clock move: short or long, and for a walked structure at most [`WALKED_MOVE`].
    fn clock_move(random: &mut SmallRng, walked: bool) -> Tick {
        if walked {
            match random.next_u64() % 20 {
                0..=13 => random.next_u64() % 64,
                14..=18 => random.next_u64() % 4_096,
                _ => random.next_u64() % WALKED_MOVE,
            }
        } else {
            match random.next_u64() % 3 {
                0 => random.next_u64() % 100,
                1 => random.next_u64() % 100_000,
                _ => random.next_u64() % (1 << 32),
            }
        }
    }

    /// A timer to stop or restart: often a recent one (likely pending), else any.
    fn pick(random: &mut SmallRng, count: usize) -> usize {
        if random.next_u64().is_multiple_of(2) {
            count - 1 - (random.next_u64() as usize % count.min(64))
        } else {
            random.next_u64() as usize % count
        }
    }

    fn run<Q: TimerQueue<u64>>(name: &str, variant: &[(&str, u64)], seed: u64, ops: usize) {
        let (subject, label) = build::<Q>(name, variant);
        let walked = matches!(subject.empty_time(), EmptyTime::Walked { .. });
        let range = subject.range();
        let mut pair = Pair {
            subject,
            model: ReferenceQueue::new(),
            timers: Vec::new(),
            late: BTreeSet::new(),
            early: 0,
            label: format!("{label} (seed {seed})"),
        };
        let mut random = SmallRng::seed_from_u64(0xa99_0000 + seed);
        let largest_move = if walked { WALKED_MOVE } else { 1 << 32 };
        for op in 0..ops {
            let now = pair.now();
            let crowded = pair.model.len() > MOST_PENDING;
            match random.next_u64() % 20 {
                0..=6 if !crowded => {
                    let deadline = deadline(&mut random, now, walked, range);
                    pair.start(deadline);
                }
                7..=8 if !pair.timers.is_empty() => {
                    let pick = pick(&mut random, pair.timers.len());
                    pair.stop(pick);
                }
                9..=11 if !pair.timers.is_empty() && !crowded => {
                    let pick = pick(&mut random, pair.timers.len());
                    let deadline = deadline(&mut random, now, walked, range);
                    pair.restart(pick, deadline);
                }
                12 => {
                    for _ in 0..random.next_u64() % 50 {
                        let to = pair.now() + 1;
                        pair.advance(to);
                    }
                }
                13..=14 => pair.sleep(largest_move),
                _ => {
                    let to = now.saturating_add(clock_move(&mut random, walked));
                    pair.advance(to.min(range.clock_limit()));
                }
            }
            pair.check_counts(op.is_multiple_of(8));
        }
        let end = pair
            .now()
            .saturating_add(if walked { WALKED_MOVE } else { 1 << 45 });
        pair.advance(end.min(range.clock_limit()));
        pair.check_counts(true);
        if !walked {
            assert!(
                pair.subject.is_empty(),
                "{}: timers left behind",
                pair.label
            );
        }
    }

    /// Defaults, then every variant, sharing [`OPS_PER_IMPLEMENTATION`].
    pub fn check_all_variants<Q: TimerQueue<u64>>(name: &str) {
        let sets: Vec<&[(&str, u64)]> = std::iter::once(&[][..])
            .chain(variants(name).iter().copied())
            .collect();
        let runs = (OPS_PER_IMPLEMENTATION / OPS_PER_RUN / sets.len()).max(1);
        for (index, variant) in sets.iter().enumerate() {
            for run_index in 0..runs {
                let seed = (index * 1_000 + run_index) as u64;
                run::<Q>(name, variant, seed, OPS_PER_RUN);
            }
        }
    }
}

mod churn {
    use super::*;
    use crate::counting_allocator::live_bytes;

    /// Pairs of start and stop per round, each timer due within [`SPAN`] ticks.
    const PAIRS: u64 = 1_000;
    const SPAN: Tick = 5_000;

    /// One round of churn; then, if `moving`, the clock past every timer it stopped.
    fn round<Q: TimerQueue<u64>>(queue: &mut Q, random: &mut SmallRng, moving: bool) {
        for value in 0..PAIRS {
            let deadline = queue.now() + 1 + random.next_u64() % SPAN;
            let id = queue.start(deadline, value);
            assert_eq!(queue.stop(id), Some(value));
        }
        if moving {
            let to = queue.now() + SPAN + 1;
            queue.advance(to, |_, value, _| panic!("stopped timer {value} fired"));
        }
    }

    pub fn check<Q: TimerQueue<u64>>(name: &str) {
        let (mut queue, label) = build::<Q>(name, &[]);
        let mut random = SmallRng::seed_from_u64(77);
        // Residents far beyond the clock the churn reaches (120 rounds of SPAN + 1).
        for value in 0..1_000 {
            queue.start(1_000_000 + random.next_u64() % 1_000_000, value);
        }
        const SLACK: isize = 4_096;
        let release = queue.release();
        let mut measure = |moving: bool| {
            for _ in 0..20 {
                round(&mut queue, &mut random, moving);
            }
            let before = live_bytes();
            for _ in 0..100 {
                round(&mut queue, &mut random, moving);
            }
            let after = live_bytes();
            assert!(
                after <= before + SLACK,
                "{label}: live bytes grew from {before} to {after} over 100,000 start/stop \
                 pairs (clock moving: {moving})"
            );
            assert_eq!(queue.len(), 1_000, "{label}");
        };
        measure(true);
        if release == Release::AtOnce {
            measure(false);
        }
    }
}
