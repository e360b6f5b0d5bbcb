//! `skynet-wheel` through its public API where the shared suites cannot take it: a walker
//! reaches neither its 32-bit counter's wrap (2^32 ticks) nor the end of time from 0, so
//! these tests start empty wheels there ([`SkynetWheel::starting_at`]) and run random
//! sequences against the reference model across the wrap, the level edges and `u64::MAX`,
//! with `check_invariants` after every step. Also: later epochs wait in the overflow list
//! through a wrap, and stopped timers' entries are held until their slots come due.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::skynet_wheel::SkynetWheel;
use timerbench_impls::{Tick, TimerId, TimerQueue};

/// The wheel and the model side by side, both at `now`.
struct Pair {
    wheel: SkynetWheel<u64>,
    model: ReferenceQueue<u64>,
    /// Per value: the wheel's and the model's handle.
    issued: Vec<(TimerId, TimerId)>,
}

impl Pair {
    fn at(now: Tick) -> Self {
        let mut model = ReferenceQueue::new();
        model.advance(now, |_, _, _| unreachable!("empty"));
        Pair {
            wheel: SkynetWheel::starting_at(now, 0),
            model,
            issued: Vec::new(),
        }
    }

    fn now(&self) -> Tick {
        self.model.now()
    }

    fn start(&mut self, deadline: Tick) {
        let value = self.issued.len() as u64;
        let wheel = self.wheel.start(deadline, value);
        let model = self.model.start(deadline, value);
        self.issued.push((wheel, model));
    }

    fn stop(&mut self, pick: usize) {
        let (wheel, model) = self.issued[pick];
        assert_eq!(
            self.wheel.stop(wheel),
            self.model.stop(model),
            "stop {pick}"
        );
    }

    fn restart(&mut self, pick: usize, deadline: Tick) {
        let (wheel, model) = self.issued[pick];
        let value = self.issued.len() as u64;
        let expected = self.model.stop(model);
        let model = self.model.start(deadline, value);
        let (wheel, old) = self.wheel.restart(wheel, deadline, value);
        assert_eq!(old, expected, "restart {pick}");
        self.issued.push((wheel, model));
    }

    /// Advances both to `to`: the same timers fire, the wheel's in deadline order, each
    /// with the handle its start gave.
    fn advance(&mut self, to: Tick) -> usize {
        let mut fired = Vec::new();
        self.wheel
            .advance(to, |id, value, deadline| fired.push((deadline, value, id)));
        let mut expected = Vec::new();
        self.model
            .advance(to, |_, value, deadline| expected.push((deadline, value)));
        assert!(
            fired.is_sorted_by_key(|&(deadline, _, _)| deadline),
            "advance({to}) out of order: {fired:?}"
        );
        for &(_, value, id) in &fired {
            assert_eq!(id, self.issued[value as usize].0, "handle of {value}");
        }
        let mut got: Vec<_> = fired.iter().map(|&(d, v, _)| (d, v)).collect();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected, "advance({to})");
        got.len()
    }

    fn check(&mut self) {
        self.wheel.check_invariants();
        assert_eq!(self.wheel.len(), self.model.len(), "len");
        assert_eq!(self.wheel.now(), self.model.now(), "now");
        assert_eq!(self.wheel.next_deadline(), self.model.next_deadline());
        self.wheel.check_invariants();
    }
}

/// A delay that lands on or near an edge of skynet's wheel, a later epoch, or nothing in
/// particular.
fn delay(random: &mut SmallRng) -> Tick {
    let edge = [
        0,
        1,
        255,
        256,
        257,
        (1 << 14) - 1,
        1 << 14,
        (1 << 14) + 1,
        (1 << 20) - 1,
        1 << 20,
        (1 << 26) - 1,
        1 << 26,
        (1 << 32) - 1,
        1 << 32,
        (1 << 32) + 1,
        1 << 40,
        u64::MAX,
    ];
    match random.next_u64() % 8 {
        0..=2 => random.next_u64() % 300,
        3 => random.next_u64() % 20_000,
        4 => random.next_u64() % (1 << 18),
        5 => random.next_u64() % (1 << 34),
        _ => {
            let edge = edge[(random.next_u64() % edge.len() as u64) as usize];
            edge.saturating_add(random.next_u64() % 3).saturating_sub(1)
        }
    }
}

/// A random sequence from `base` against the model: starts (some in the past), stops,
/// restarts, short moves, ticks and sleeps to the next deadline when it is near, then a
/// stop of every handle. The clock moves by at most about `walk` ticks in all.
fn matches_the_reference_from(base: Tick, seed: u64, walk: Tick) {
    let mut random = SmallRng::seed_from_u64(seed);
    let mut pair = Pair::at(base);
    let end = base.saturating_add(walk);
    let mut fired = 0;
    for _ in 0..4_000 {
        let now = pair.now();
        match random.next_u64() % 20 {
            0..=7 => {
                let deadline = if random.next_u64() % 8 == 0 {
                    now.saturating_sub(random.next_u64() % 600)
                } else {
                    now.saturating_add(delay(&mut random))
                };
                pair.start(deadline);
            }
            8..=10 if !pair.issued.is_empty() => {
                let pick = (random.next_u64() % pair.issued.len() as u64) as usize;
                pair.stop(pick);
            }
            11 if !pair.issued.is_empty() => {
                let pick = (random.next_u64() % pair.issued.len() as u64) as usize;
                let deadline = now.saturating_add(delay(&mut random));
                pair.restart(pick, deadline);
            }
            12..=14 => {
                let by = match random.next_u64() % 4 {
                    0 => 0,
                    1 => random.next_u64() % 8,
                    2 => random.next_u64() % 600,
                    _ => random.next_u64() % (walk / 200).max(1),
                };
                fired += pair.advance(now.saturating_add(by).min(end.max(now)));
            }
            15 => {
                for _ in 0..random.next_u64() % 40 {
                    let to = pair.now().saturating_add(1).min(end.max(pair.now()));
                    fired += pair.advance(to);
                }
            }
            _ => {
                if let Some(next) = pair.model.next_deadline()
                    && next <= end
                {
                    fired += pair.advance(next.max(pair.now()));
                }
            }
        }
        pair.check();
    }
    assert!(fired > 200, "base {base}: only {fired} timers fired");
    for pick in 0..pair.issued.len() {
        pair.stop(pick);
    }
    pair.check();
    assert!(pair.wheel.is_empty());
}

#[test]
fn matches_the_reference_across_the_first_wrap() {
    for seed in 0..3 {
        matches_the_reference_from((1 << 32) - 20_000, seed, 1 << 17);
    }
}

#[test]
fn matches_the_reference_across_a_later_wrap_and_level_edges() {
    matches_the_reference_from((7 << 32) - 70_000, 3, 1 << 18);
    matches_the_reference_from((1 << 26) - 5_000, 4, 1 << 17);
    matches_the_reference_from((5 << 32) + (1 << 20) - 5_000, 5, 1 << 17);
}

#[test]
fn matches_the_reference_at_the_end_of_time() {
    // The last wrap, then the very end: deadlines saturate at u64::MAX, the clock reaches it.
    matches_the_reference_from(u64::MAX - (1 << 32) - 30_000 + 1, 6, 1 << 17);
    matches_the_reference_from(u64::MAX - 60_000, 7, 1 << 17);
}

#[test]
fn later_epochs_wait_in_the_overflow_list_through_a_wrap() {
    let wrap = 3u64 << 32;
    let mut pair = Pair::at(wrap - 100);
    pair.start(wrap + (1 << 32) + 50); // two epochs on: stays in overflow after this wrap
    pair.start(wrap + 5); // the next epoch: filed at the wrap
    pair.start(wrap - 1);
    pair.start(u64::MAX);
    pair.check();
    assert_eq!(pair.advance(wrap - 1), 1);
    assert_eq!(pair.advance(wrap + 4), 0);
    pair.check();
    assert_eq!(pair.advance(wrap + 5), 1);
    assert_eq!(pair.advance(wrap + 10_000), 0);
    pair.check();
    assert_eq!(pair.wheel.next_deadline(), Some(wrap + (1 << 32) + 50));
    pair.stop(0);
    pair.stop(3);
    pair.check();
    assert!(pair.wheel.is_empty());
}

#[test]
fn stopped_entries_are_held_until_their_slots_come_due() {
    let mut wheel = SkynetWheel::new();
    let ids: Vec<TimerId> = (0..1_000u64)
        .map(|value| wheel.start(1 + value % 500, value))
        .collect();
    let keep = wheel.start(10_000, 7);
    for (value, &id) in ids.iter().enumerate() {
        assert_eq!(wheel.stop(id), Some(value as u64));
    }
    assert_eq!((wheel.len(), wheel.dead()), (1, 1_000), "held, not pending");
    let mut fired = Vec::new();
    wheel.advance(255, |_, value, _| fired.push(value));
    assert!(fired.is_empty(), "stopped timers never fire");
    assert_eq!(
        wheel.dead(),
        490,
        "deadlines 1 to 255, twice each, came due"
    );
    wheel.advance(500, |_, value, _| fired.push(value));
    assert_eq!((fired.len(), wheel.dead()), (0, 0));
    wheel.check_invariants();
    assert_eq!(wheel.stop(keep), Some(7));
}
