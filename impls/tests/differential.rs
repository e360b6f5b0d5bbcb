//! Differential test: every registered implementation against the reference model, on
//! random sequences of start, stop, restart, advance, tick and next-deadline operations.
//!
//! Each implementation gets `CASES` sequences of up to `MAX_OPS` operations (about 256k
//! operations on average), with delays drawn from a mix of zero, small, slot- and
//! level-boundary, large and huge values, deadlines in the past, and absolute deadlines at
//! the end of time. After every operation the two queues must agree on what fired (as
//! sets per call; the implementation's own order must be non-decreasing by deadline), on
//! every `stop`, on `len` and on `now`; `next_deadline` must be a bound that reaches the
//! earliest timer within the implementation's declared number of rounds. A failure
//! shrinks to a minimal sequence. `PROPTEST_CASES=N` overrides the number of sequences.
//!
//! A walker ([`EmptyTime::Walked`](timerbench_impls::EmptyTime), `support/horizon.rs`)
//! runs the same sequences within a walk horizon: every clock move (an advance, a sleep, the
//! final drain) is capped at `WALK_MOVE_VISITS` bucket visits and one sequence's clock at
//! `WALK_SEQUENCE_VISITS`, the larger jumps mapped into the cap; start delays between the
//! horizon and 2^40 are mapped into it so that they come due, and the farther ones stay as
//! they are: valid starts that are never reached, which the drain stops one by one against
//! the model instead of firing them. Every fire, stop, `len` and `now` is still compared.

#[path = "support/boundaries.rs"]
mod boundaries;
#[path = "support/horizon.rs"]
mod horizon;

use boundaries::BOUNDARY_DELAYS;
use horizon::Reach;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::{Tick, TimerId, TimerQueue, for_each_implementation};

const CASES: u32 = 512;
const MAX_OPS: usize = 1000;

/// The most bucket visits one clock move of a walker's sequence may cost.
const WALK_MOVE_VISITS: u64 = 1 << 16;
/// The most bucket visits all the clock moves of one walker's sequence may cost.
const WALK_SEQUENCE_VISITS: u64 = 1 << 18;

/// Where a started timer's deadline lies.
#[derive(Debug, Clone, Copy)]
enum Deadline {
    /// `now + delay`, saturating at `u64::MAX`.
    After(u64),
    /// `now - back`, saturating at 0: already due.
    Before(u64),
    /// An absolute tick, near the end of time.
    At(u64),
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Start(Deadline),
    /// Stop the `n`-th most recent handle (modulo how many were issued): pending, fired or
    /// stopped alike.
    Stop(usize),
    /// Stop and start again with a new deadline: the keepalive refresh.
    Restart(usize, Deadline),
    /// `advance(now + by)`, saturating.
    Advance(u64),
    /// `advance(now + 1)`, `n` times: the per-tick driver.
    Tick(u8),
    /// Check `next_deadline`, then sleep to it as an event loop would.
    Sleep,
}

fn delay() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => Just(0u64),
        10 => 1u64..100,
        6 => proptest::sample::select(BOUNDARY_DELAYS),
        4 => 100u64..100_000,
        2 => 100_000u64..(1 << 40),
        1 => (1u64 << 40)..(1 << 63),
        1 => Just(u64::MAX),
    ]
}

fn deadline() -> impl Strategy<Value = Deadline> {
    prop_oneof![
        20 => delay().prop_map(Deadline::After),
        2 => (0u64..200).prop_map(Deadline::Before),
        1 => (0u64..5_000).prop_map(|back| Deadline::At(u64::MAX - back)),
    ]
}

/// Which handle a stop names: mostly a recent one (likely still pending), sometimes any.
fn pick() -> impl Strategy<Value = usize> {
    prop_oneof![3 => 0usize..8, 1 => any::<usize>()]
}

/// The `pick`-th most recent of `issued` handles.
fn picked<T: Copy>(issued: &[T], pick: usize) -> Option<T> {
    let last = issued.len().checked_sub(1)?;
    Some(issued[last - pick % issued.len()])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => deadline().prop_map(Op::Start),
        10 => pick().prop_map(Op::Stop),
        5 => (pick(), deadline()).prop_map(|(n, d)| Op::Restart(n, d)),
        10 => prop_oneof![
            6 => 1u64..70,
            3 => proptest::sample::select(BOUNDARY_DELAYS),
            2 => 70u64..20_000,
            // Rare and bounded, so that the clock stays far from the end of time for most
            // of a sequence; the final drain and `Deadline::At` cover the end of time.
            1 => (1u64 << 20)..(1 << 44),
        ]
        .prop_map(Op::Advance),
        3 => (1u8..40).prop_map(Op::Tick),
        6 => Just(Op::Sleep),
    ]
}

/// The implementation and the model side by side, with the handles each gave out.
struct Pair<Q> {
    subject: Q,
    model: ReferenceQueue<u64>,
    /// Per value (the index of the start): the subject's and the model's handle.
    issued: Vec<(TimerId, TimerId)>,
    /// How far the subject's clock may move.
    reach: Reach,
    /// For a walker: the ticks its clock may still move in this sequence.
    walk_left: Tick,
    /// What the sequence exercised: timers fired, effective stops, sleeps that fired.
    fired: usize,
    stopped: usize,
    slept: usize,
}

impl<Q: TimerQueue<u64>> Pair<Q> {
    /// `subject` against a fresh model, within `reach`.
    fn new(subject: Q, reach: Reach) -> Self {
        Pair {
            subject,
            model: ReferenceQueue::new(),
            issued: Vec::new(),
            reach,
            walk_left: reach.ticks(WALK_SEQUENCE_VISITS),
            fired: 0,
            stopped: 0,
            slept: 0,
        }
    }

    /// For a walker, a start delay between the sequence's horizon and 2^40 mapped to
    /// between an eighth and three eighths of the horizon, where a sequence's clock often
    /// comes; anything else as drawn (a farther deadline is a valid start that the walker
    /// never reaches).
    fn walkable_delay(&self, delay: Tick) -> Tick {
        let horizon = self.reach.ticks(WALK_SEQUENCE_VISITS);
        if self.reach.is_walker() && delay > horizon && delay < 1 << 40 {
            horizon / 8 + delay % (horizon / 4)
        } else {
            delay
        }
    }

    /// The clock `now + by` would reach, within a walker's horizon: a jump beyond one move
    /// is mapped into the upper half of a move, and the sequence's remaining ticks cap it.
    fn reachable(&self, by: Tick) -> Tick {
        let now = self.model.now();
        if !self.reach.is_walker() {
            return now.saturating_add(by);
        }
        let longest = self.reach.ticks(WALK_MOVE_VISITS);
        let by = if by > longest {
            longest / 2 + by % (longest / 2)
        } else {
            by
        };
        now.saturating_add(by.min(self.walk_left))
    }

    /// For a walker, the farthest clock its next move may reach.
    fn farthest(&self) -> Tick {
        let longest = self.reach.ticks(WALK_MOVE_VISITS);
        self.model.now().saturating_add(longest.min(self.walk_left))
    }

    fn deadline(&self, deadline: Deadline) -> Tick {
        let now = self.model.now();
        match deadline {
            Deadline::After(delay) => now.saturating_add(self.walkable_delay(delay)),
            Deadline::Before(back) => now.saturating_sub(back),
            Deadline::At(tick) => tick,
        }
    }

    fn start(&mut self, deadline: Deadline) {
        let deadline = self.deadline(deadline);
        let value = self.issued.len() as u64;
        let subject = self.subject.start(deadline, value);
        let model = self.model.start(deadline, value);
        self.issued.push((subject, model));
    }

    fn stop(&mut self, pick: usize) -> Result<(), TestCaseError> {
        let Some((subject, model)) = picked(&self.issued, pick) else {
            return Ok(());
        };
        let expected = self.model.stop(model);
        let got = self.subject.stop(subject);
        prop_assert_eq!(got, expected, "stop({:?})", subject);
        self.stopped += got.is_some() as usize;
        Ok(())
    }

    /// The subject's `restart` against the model's stop-then-start: the same old value,
    /// and afterwards the old handle is stale in both (a later `Stop` of it must miss).
    fn restart(&mut self, pick: usize, deadline: Deadline) -> Result<(), TestCaseError> {
        let Some((subject, model)) = picked(&self.issued, pick) else {
            self.start(deadline);
            return Ok(());
        };
        let deadline = self.deadline(deadline);
        let value = self.issued.len() as u64;
        let expected = self.model.stop(model);
        let model = self.model.start(deadline, value);
        let (restarted, got) = self.subject.restart(subject, deadline, value);
        prop_assert_eq!(got, expected, "restart({:?})", subject);
        self.issued.push((restarted, model));
        Ok(())
    }

    /// Advances both to `to`; returns how many timers fired.
    fn advance(&mut self, to: Tick) -> Result<usize, TestCaseError> {
        if self.reach.is_walker() {
            let by = to - self.model.now();
            assert!(
                by <= self.walk_left && self.reach.visits(by) <= WALK_MOVE_VISITS,
                "test bug: a walker moved by {by} ticks, {} left in the sequence",
                self.walk_left
            );
            self.walk_left -= by;
        }
        let mut fired = Vec::new();
        self.subject
            .advance(to, |id, value, deadline| fired.push((deadline, value, id)));
        let mut expected = Vec::new();
        self.model
            .advance(to, |_, value, deadline| expected.push((deadline, value)));
        for pair in fired.windows(2) {
            prop_assert!(
                pair[0].0 <= pair[1].0,
                "advance({}) fired deadline {} before {}",
                to,
                pair[0].0,
                pair[1].0
            );
        }
        for &(_, value, id) in &fired {
            let issued = self.issued.get(value as usize).map(|&(subject, _)| subject);
            prop_assert_eq!(
                Some(id),
                issued,
                "on_fire must report the handle start gave"
            );
        }
        let mut got: Vec<_> = fired.iter().map(|&(d, v, _)| (d, v)).collect();
        got.sort_unstable();
        expected.sort_unstable();
        prop_assert_eq!(got, expected, "advance({}) fired a different set", to);
        self.fired += fired.len();
        Ok(fired.len())
    }

    fn sleep(&mut self) -> Result<(), TestCaseError> {
        let steps = self.subject.next_deadline_steps();
        let earliest = self.model.next_deadline();
        let bound = self.subject.next_deadline();
        prop_assert_eq!(
            bound.is_some(),
            earliest.is_some(),
            "next_deadline emptiness"
        );
        let (Some(mut bound), Some(earliest)) = (bound, earliest) else {
            return Ok(());
        };
        prop_assert!(
            bound <= earliest,
            "next_deadline {} > earliest {}",
            bound,
            earliest
        );
        if steps == 1 {
            prop_assert_eq!(bound, earliest, "an exact structure returns the deadline");
        }
        for _ in 0..steps {
            let now = self.model.now();
            let to = bound.max(now);
            if self.reach.is_walker() && to > self.farthest() {
                // The earliest timer lies beyond the walk horizon: the bound was checked;
                // move as far as a walker may, and compare what fires on the way.
                self.advance(self.farthest())?;
                return Ok(());
            }
            if self.advance(to)? > 0 {
                self.slept += 1;
                return Ok(());
            }
            bound = match self.subject.next_deadline() {
                Some(bound) => bound,
                None => return Err(TestCaseError::fail("timers vanished while sleeping")),
            };
            prop_assert!(bound <= earliest, "next_deadline passed the earliest timer");
        }
        Err(TestCaseError::fail(format!(
            "the earliest timer ({earliest}) did not fire within {steps} rounds"
        )))
    }

    fn apply(&mut self, op: Op) -> Result<(), TestCaseError> {
        match op {
            Op::Start(deadline) => self.start(deadline),
            Op::Stop(pick) => self.stop(pick)?,
            Op::Restart(pick, deadline) => self.restart(pick, deadline)?,
            Op::Advance(by) => {
                let to = self.reachable(by);
                self.advance(to)?;
            }
            Op::Tick(n) => {
                for _ in 0..n {
                    let to = self.reachable(1);
                    self.advance(to)?;
                }
            }
            Op::Sleep => self.sleep()?,
        }
        prop_assert_eq!(self.subject.len(), self.model.len(), "len after {:?}", op);
        prop_assert_eq!(self.subject.now(), self.model.now(), "now after {:?}", op);
        Ok(())
    }
}

fn check<Q: TimerQueue<u64>>(ops: &[Op]) -> Result<(), TestCaseError> {
    let subject = Q::new();
    let reach = Reach::of(subject.empty_time());
    let mut pair = Pair::new(subject, reach);
    run(&mut pair, ops)
}

/// Applies `ops`, then drains: everything still pending fires at the end of time, and
/// agrees. A walker instead moves as far as it may and then stops every handle ever
/// issued, each stop compared with the model's (the value of a timer still pending, or
/// `None`).
fn run<Q: TimerQueue<u64>>(pair: &mut Pair<Q>, ops: &[Op]) -> Result<(), TestCaseError> {
    for &op in ops {
        pair.apply(op)?;
    }
    if pair.reach.is_walker() {
        let to = pair.farthest();
        pair.advance(to)?;
        for pick in 0..pair.issued.len() {
            pair.stop(pick)?;
        }
        prop_assert_eq!(pair.subject.len(), 0, "len after stopping every handle");
        prop_assert_eq!(pair.model.len(), 0, "the model agrees");
    } else {
        pair.advance(u64::MAX)?;
    }
    prop_assert!(pair.subject.is_empty());
    Ok(())
}

macro_rules! differential_tests {
    ($($module:ident :: $ty:ident, $name:literal, $summary:literal;)*) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]
            $(
                #[test]
                fn $module(ops in proptest::collection::vec(op(), 1..MAX_OPS)) {
                    check::<timerbench_impls::$module::$ty<u64>>(&ops)?;
                }
            )*
        }
    };
}

for_each_implementation!(differential_tests);

/// The generators reach what they are meant to: a differential test whose sequences never
/// fire anything, or never stop a pending timer, would pass vacuously.
#[test]
fn sequences_exercise_firing_stopping_and_sleeping() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut fired, mut stopped, mut slept) = (0usize, 0usize, 0usize);
    for _ in 0..20 {
        let ops = proptest::collection::vec(op(), 1..MAX_OPS)
            .new_tree(&mut runner)
            .expect("strategy")
            .current();
        let mut model: ReferenceQueue<u64> = ReferenceQueue::new();
        let mut issued = Vec::new();
        for op in ops {
            let now = model.now();
            let resolve = |d: Deadline| match d {
                Deadline::After(delay) => now.saturating_add(delay),
                Deadline::Before(back) => now.saturating_sub(back),
                Deadline::At(tick) => tick,
            };
            match op {
                Op::Start(d) => issued.push(model.start(resolve(d), 0)),
                Op::Stop(n) | Op::Restart(n, _) => {
                    if let Some(id) = picked(&issued, n) {
                        stopped += model.stop(id).is_some() as usize;
                    }
                }
                Op::Advance(by) => model.advance(now.saturating_add(by), |_, _, _| fired += 1),
                Op::Sleep => {
                    if let Some(t) = model.next_deadline() {
                        slept += 1;
                        model.advance(t.max(now), |_, _, _| fired += 1);
                    }
                }
                _ => {}
            }
        }
    }
    eprintln!("fired {fired}, stopped {stopped}, slept {slept}");
    assert!(fired > 1_000, "only {fired} firings in 20 sequences");
    assert!(
        stopped > 300,
        "only {stopped} effective stops in 20 sequences"
    );
    assert!(slept > 200, "only {slept} sleeps in 20 sequences");
}

/// A walker's sequences still reach what they are meant to within the walk horizon: the
/// mapping of moves and delays must leave plenty of firings, stops and sleeps, or the
/// differential test of a walker would pass vacuously. The model stands in for the walker
/// (its reach is set to a walker's).
#[test]
fn walker_sequences_exercise_firing_stopping_and_sleeping() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut fired, mut stopped, mut slept) = (0usize, 0usize, 0usize);
    for _ in 0..20 {
        let ops = proptest::collection::vec(op(), 1..MAX_OPS)
            .new_tree(&mut runner)
            .expect("strategy")
            .current();
        let mut pair = Pair::new(ReferenceQueue::new(), Reach::Walker { step: 1 });
        for op in ops {
            pair.apply(op).expect("the model agrees with itself");
        }
        fired += pair.fired;
        stopped += pair.stopped;
        slept += pair.slept;
    }
    eprintln!("walker: fired {fired}, stopped {stopped}, slept {slept}");
    assert!(fired > 1_000, "only {fired} firings in 20 sequences");
    assert!(
        stopped > 300,
        "only {stopped} effective stops in 20 sequences"
    );
    assert!(slept > 200, "only {slept} sleeps in 20 sequences");
}
