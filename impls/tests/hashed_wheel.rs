//! `hashed-wheel` through its public API: slot counts, exact firing around the wheel size,
//! past deadlines, later rotations of one slot, the top of the clock, huge jumps and empty
//! ticks (on the work counter), crowded slots and inexact keys, stale handles, and random
//! sequences against the reference model with default and tiny wheels, with
//! `check_invariants` after every step. Tests of its private heap stay in the source file.

#[path = "support/random_program.rs"]
mod random_program;

use rand::rngs::SmallRng;
use rand::{Rng, RngExt, SeedableRng};
use random_program::{Mix, Past, Program};
use timerbench_impls::hashed_wheel::*;
use timerbench_impls::{Tick, TimerId, TimerQueue};

fn fire_all(wheel: &mut HashedWheel<u64>, to: Tick) -> Vec<(Tick, u64)> {
    let mut fired = Vec::new();
    wheel.advance(to, |_, value, deadline| fired.push((deadline, value)));
    wheel.check_invariants();
    fired
}

fn assert_sorted(fired: &[(Tick, u64)]) {
    assert!(
        fired.windows(2).all(|w| w[0].0 <= w[1].0),
        "out of order: {fired:?}"
    );
}

fn delay(rng: &mut SmallRng, now: Tick) -> Tick {
    match rng.random_range(0..14) {
        0 => 0,
        1..=4 => 1 + rng.random_range(0..100),
        5 => 63 + rng.random_range(0..3),
        6 => 4095 + rng.random_range(0..3),
        7 => (1 << 36) - 1 + rng.random_range(0..3),
        8 => 1 << 40,
        9 => rng.next_u64(),
        10 => u64::MAX - now,
        11 => rng.random_range(0..20),
        _ => 1 + rng.random_range(0..10_000),
    }
}

/// How far one `advance` moves the clock: mostly a few ticks, sometimes a wheel
/// rotation or more, rarely a huge jump or all the way to the end of time (after which
/// every later timer is due at once, so that is kept rare).
fn step(rng: &mut SmallRng, now: Tick) -> Tick {
    match rng.random_range(0..400) {
        0 => u64::MAX - now,
        1..=4 => 1 << 40,
        5..=14 => rng.random_range(0..1 << 37),
        15..=80 => rng.random_range(0..5000),
        81..=120 => 0,
        121..=260 => 1 + rng.random_range(0..8),
        _ => 1 + rng.random_range(0..200),
    }
}

/// Runs a fixed-seed mix of start, stop and advance against the reference model, in
/// `rounds` fresh pairs of queues of `ops` operations each. Returns how many stops hit a
/// pending timer and how many timers fired, so the caller can check the mix did something.
fn differential(bits: u32, seed: u64, rounds: usize, ops: usize) -> (usize, usize) {
    let program = Program {
        mix: Mix {
            start: 5,
            stop: 3,
            restart: 0,
            next_deadline: 0,
            advance: 2,
        },
        past: Some(Past {
            one_in: 8,
            at_most: 50,
        }),
        delay,
        // Mostly recent handles, which are more likely still pending; drawn from u64
        // ranges as before, so that each seed keeps its program.
        pick: |rng, len| {
            let len = len as u64;
            let pick = if rng.random_range(0..4) == 0 {
                rng.random_range(0..len)
            } else {
                len - 1 - rng.random_range(0..len.min(32))
            };
            pick as usize
        },
        step,
    };
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut stopped, mut fired) = (0, 0);
    for _ in 0..rounds {
        let mut wheel = HashedWheel::<u64>::with_slot_bits(bits);
        let counts = program.run(&mut rng, &mut wheel, ops, |wheel, model, rng| {
            // Not after every operation: `next_deadline` re-keys inexact slots, and
            // `advance` must also meet them.
            if rng.random_range(0..4) == 0 {
                assert_eq!(wheel.next_deadline(), model.next_deadline());
            }
            if bits <= 3 || rng.random_range(0..16) == 0 {
                wheel.check_invariants();
            }
        });
        wheel.check_invariants();
        stopped += counts.stopped;
        fired += counts.fired;
    }
    (stopped, fired)
}

#[test]
fn slot_count_follows_bits() {
    assert_eq!(HashedWheel::<u64>::new().slot_count(), 4096);
    assert_eq!(HashedWheel::<u64>::with_slot_bits(1).slot_count(), 2);
}

#[test]
#[should_panic(expected = "slot bits")]
fn zero_bits_are_rejected() {
    let _ = HashedWheel::<u64>::with_slot_bits(0);
}

#[test]
#[should_panic(expected = "slot bits")]
fn too_many_bits_are_rejected() {
    let _ = HashedWheel::<u64>::with_slot_bits(MAX_SLOT_BITS + 1);
}

#[test]
fn boundaries_around_the_wheel_size_fire_exactly() {
    let s = 4096u64;
    let deadlines = [s - 1, s, s + 1, 2 * s - 1, 2 * s, 2 * s + 1, 0, 1];
    let mut wheel = HashedWheel::new();
    for (value, &deadline) in deadlines.iter().enumerate() {
        wheel.start(deadline, value as u64);
    }
    wheel.check_invariants();
    let mut sorted = deadlines.to_vec();
    sorted.sort_unstable();
    let mut now = 0;
    for &deadline in &sorted {
        assert_eq!(wheel.next_deadline(), Some(deadline));
        if deadline > now {
            // One tick short: nothing fires early.
            assert!(fire_all(&mut wheel, deadline - 1).is_empty());
        }
        let fired = fire_all(&mut wheel, deadline);
        assert_eq!(fired.len(), 1);
        assert_eq!(fired[0].0, deadline);
        now = deadline;
    }
    assert!(wheel.is_empty());
    assert_eq!(wheel.next_deadline(), None);
}

#[test]
fn past_deadlines_fire_sorted_on_the_next_advance() {
    let mut wheel = HashedWheel::with_slot_bits(2);
    fire_all(&mut wheel, 1000);
    // Several in the same slot (mod 4) and several rotations behind `now`.
    for (value, deadline) in [999u64, 5, 1, 997, 9, 13, 1000, 0].into_iter().enumerate() {
        wheel.start(deadline, value as u64);
    }
    assert_eq!(wheel.next_deadline(), Some(0));
    let fired = fire_all(&mut wheel, 1000);
    let deadlines: Vec<_> = fired.iter().map(|&(d, _)| d).collect();
    assert_eq!(deadlines, [0, 1, 5, 9, 13, 997, 999, 1000]);
}

#[test]
fn same_slot_later_rotations_wait_for_their_turn() {
    // Slot 1 holds 1 and 5; slot 2 holds 2. Visiting slot 1 at 1 must not fire 5 before 2.
    let mut wheel = HashedWheel::with_slot_bits(2);
    wheel.start(5, 0);
    wheel.start(1, 1);
    wheel.start(2, 2);
    wheel.start(6, 3);
    let fired = fire_all(&mut wheel, 10);
    assert_eq!(fired, [(1, 1), (2, 2), (5, 0), (6, 3)]);
}

#[test]
fn deadlines_at_the_top_of_the_clock() {
    let mut wheel = HashedWheel::new();
    let top = wheel.start(u64::MAX, 1);
    wheel.start(u64::MAX - 1, 2);
    wheel.start(u64::MAX, 3);
    assert_eq!(wheel.next_deadline(), Some(u64::MAX - 1));
    assert!(fire_all(&mut wheel, u64::MAX - 2).is_empty());
    assert_eq!(fire_all(&mut wheel, u64::MAX - 1), [(u64::MAX - 1, 2)]);
    assert_eq!(wheel.stop(top), Some(1));
    assert_eq!(fire_all(&mut wheel, u64::MAX), [(u64::MAX, 3)]);
    // At the end of time everything started fires on the next advance to the same tick.
    wheel.start(u64::MAX, 4);
    wheel.start(7, 5);
    assert_eq!(fire_all(&mut wheel, u64::MAX), [(7, 5), (u64::MAX, 4)]);
    assert_eq!(wheel.now(), u64::MAX);
}

#[test]
fn a_huge_jump_costs_little_work() {
    let mut wheel = HashedWheel::new();
    let far = 1u64 << 40;
    for (value, deadline) in [3u64, far - 1, far, far + 4096, 1 << 39]
        .into_iter()
        .enumerate()
    {
        wheel.start(deadline, value as u64);
    }
    let before = wheel.work();
    let fired = fire_all(&mut wheel, far);
    assert_eq!(fired.len(), 4);
    assert_sorted(&fired);
    let spent = wheel.work() - before;
    assert!(spent < 100, "a jump of 2^40 cost {spent} work units");
    assert_eq!(wheel.next_deadline(), Some(far + 4096));
}

#[test]
fn empty_ticks_cost_one_unit_each() {
    let mut wheel = HashedWheel::new();
    wheel.start(1_000_000, 0);
    let before = wheel.work();
    for tick in 1..=10_000 {
        wheel.advance(tick, |_, _, _| panic!("nothing is due"));
    }
    assert_eq!(wheel.work() - before, 10_000);
}

#[test]
fn many_timers_on_one_deadline() {
    let mut wheel = HashedWheel::with_capacity(100_000);
    for value in 0..100_000u64 {
        wheel.start(12_345, value);
    }
    assert_eq!(wheel.len(), 100_000);
    assert_eq!(wheel.next_deadline(), Some(12_345));
    assert!(fire_all(&mut wheel, 12_344).is_empty());
    let before = wheel.work();
    let mut seen = vec![false; 100_000];
    wheel.advance(12_345, |_, value, deadline| {
        assert_eq!(deadline, 12_345);
        assert!(!std::mem::replace(&mut seen[value as usize], true));
    });
    assert!(seen.iter().all(|&s| s));
    assert!(wheel.is_empty());
    assert!(wheel.work() - before <= 100_010);
    wheel.check_invariants();
}

#[test]
fn stopping_the_earliest_of_a_crowded_slot_keeps_next_deadline_exact() {
    let s = 4096u64;
    let mut wheel = HashedWheel::new();
    // Slot 7 holds four rotations; another slot holds something in between.
    let ids: Vec<_> = (0..4u64)
        .map(|rotation| wheel.start(7 + rotation * s, rotation))
        .collect();
    wheel.start(3 * s + 100, 99);
    assert_eq!(wheel.next_deadline(), Some(7));
    assert_eq!(wheel.stop(ids[0]), Some(0));
    wheel.check_invariants();
    assert_eq!(wheel.next_deadline(), Some(7 + s));
    assert_eq!(wheel.stop(ids[2]), Some(2)); // not the earliest: key unchanged
    assert_eq!(wheel.next_deadline(), Some(7 + s));
    assert_eq!(wheel.stop(ids[1]), Some(1));
    wheel.check_invariants();
    assert_eq!(wheel.next_deadline(), Some(3 * s + 7));
    assert_eq!(wheel.stop(ids[3]), Some(3));
    assert_eq!(wheel.next_deadline(), Some(3 * s + 100));
    wheel.check_invariants();
}

#[test]
fn stopping_a_slot_minimum_does_not_walk_the_slot() {
    let s = 4096u64;
    let mut wheel = HashedWheel::new();
    for rotation in 1..=1000 {
        wheel.start(7 + rotation * s, rotation);
    }
    let before = wheel.work();
    for value in 0..1000 {
        let id = wheel.start(7, value);
        assert_eq!(wheel.stop(id), Some(value));
    }
    let spent = wheel.work() - before;
    assert!(spent < 10_000, "1000 start/stop pairs cost {spent}");
    wheel.check_invariants();
    assert_eq!(wheel.next_deadline(), Some(7 + s));
    wheel.check_invariants();
}

#[test]
fn advance_meets_inexact_keys_in_order() {
    // Slot 1 of 4 holds 1 and 9; stopping 1 leaves its key at 1 while its minimum is 9.
    let mut wheel = HashedWheel::with_slot_bits(2);
    let first = wheel.start(1, 0);
    wheel.start(9, 1);
    wheel.start(2, 2);
    wheel.start(8, 3);
    wheel.start(1, 4); // slot 1 again: still its minimum after the stop below
    assert_eq!(wheel.stop(first), Some(0));
    wheel.check_invariants();
    assert_eq!(fire_all(&mut wheel, 1), [(1, 4)]);
    // Key 1 was inexact and then exact again (a second timer at 1); now 9.
    let other = wheel.start(5, 5);
    assert_eq!(wheel.stop(other), Some(5)); // key 5 left inexact below 9
    assert_eq!(fire_all(&mut wheel, 20), [(2, 2), (8, 3), (9, 1)]);
    assert!(wheel.is_empty());
    assert_eq!(wheel.next_deadline(), None);
}

#[test]
fn stale_handles_are_refused() {
    let mut wheel = HashedWheel::new();
    let fired = wheel.start(5, 1);
    let stopped = wheel.start(6, 2);
    assert_eq!(wheel.stop(stopped), Some(2));
    assert_eq!(wheel.stop(stopped), None);
    assert_eq!(fire_all(&mut wheel, 5), [(5, 1)]);
    assert_eq!(wheel.stop(fired), None);
    // New timers reuse the freed arena slots; the old handles must not reach them.
    let reused_a = wheel.start(10, 3);
    let reused_b = wheel.start(11, 4);
    assert_eq!(wheel.stop(fired), None);
    assert_eq!(wheel.stop(stopped), None);
    assert_eq!(wheel.stop(TimerId::from_parts(1_000, 1)), None);
    assert_eq!(wheel.len(), 2);
    assert_eq!(wheel.stop(reused_a), Some(3));
    assert_eq!(wheel.stop(reused_b), Some(4));
    wheel.check_invariants();
}

#[test]
fn on_fire_receives_the_started_handle() {
    let mut wheel = HashedWheel::new();
    let id = wheel.start(4, 9);
    let mut got = None;
    wheel.advance(4, |fired, value, _| got = Some((fired, value)));
    assert_eq!(got, Some((id, 9)));
}

#[test]
#[should_panic(expected = "never runs backwards")]
fn advancing_backwards_panics() {
    let mut wheel = HashedWheel::<u64>::new();
    wheel.advance(10, |_, _, _| {});
    wheel.advance(9, |_, _, _| {});
}

#[test]
fn matches_the_reference_with_default_slots() {
    let (stopped, fired) = differential(DEFAULT_SLOT_BITS, 0x9E37_79B9_7F4A_7C15, 4, 2000);
    assert!(
        stopped > 500 && fired > 1000,
        "weak mix: {stopped} stops, {fired} fired"
    );
}

#[test]
fn matches_the_reference_with_tiny_wheels() {
    for bits in [1, 2, 3, 6] {
        let seed = 0xD1B5_4A32_D192_ED03 ^ u64::from(bits);
        let (stopped, fired) = differential(bits, seed, 4, 1000);
        assert!(
            stopped > 200 && fired > 500,
            "weak mix: {stopped} stops, {fired} fired"
        );
    }
}
