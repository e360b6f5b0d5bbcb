//! `hierarchical-wheel` through its public API: boundaries, the top of the clock, huge
//! jumps, crowded deadlines, stale handles, the due list, and random sequences against the
//! reference model. Tests of its private layout stay in `src/hierarchical_wheel.rs`.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timerbench_impls::hierarchical_wheel::*;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::{Tick, TimerId, TimerQueue};

type Wheel = HierarchicalWheel<u64>;

/// Advances `wheel` to `to` and returns the `(value, deadline)` pairs it fired, checking
/// the order and that the reported handles are no longer live.
fn fire(wheel: &mut Wheel, to: Tick) -> Vec<(u64, Tick)> {
    let mut fired = Vec::new();
    let mut ids = Vec::new();
    wheel.advance(to, |id, value, deadline| {
        ids.push(id);
        fired.push((value, deadline));
    });
    assert!(
        fired.windows(2).all(|w| w[0].1 <= w[1].1),
        "fired out of order: {fired:?}"
    );
    assert!(fired.iter().all(|&(_, deadline)| deadline <= to));
    for id in ids {
        assert_eq!(wheel.stop(id), None, "a fired handle is stale");
    }
    assert_eq!(wheel.now(), to);
    fired
}

fn deadlines(fired: &[(u64, Tick)]) -> Vec<Tick> {
    fired.iter().map(|&(_, d)| d).collect()
}

/// A delay drawn from the shapes that stress a wheel: zero, short, level boundaries,
/// long, and "to the end of time".
fn delay(seed: &mut SmallRng, now: Tick) -> Tick {
    let r = seed.next_u64();
    let room = u64::MAX - now;
    let pick = match r % 12 {
        0 => 0,
        1..=3 => seed.next_u64() % 100,
        4 => [63, 64, 65][(r >> 8) as usize % 3],
        5 => [4095, 4096, 4097][(r >> 8) as usize % 3],
        6 => [(1 << 36) - 1, 1 << 36, (1 << 36) + 1][(r >> 8) as usize % 3],
        7 => 1 << 40,
        8 => seed.next_u64() >> (seed.next_u64() % 64),
        9 => room,
        10 => seed.next_u64() % 5000,
        _ => seed.next_u64() % (1 << 20),
    };
    pick.min(room)
}

/// How far a random advance goes: mostly short steps, so that the clock crawls through
/// slots and cascades, with rare long jumps (and a very rare jump to the end of time,
/// after which everything is past due).
fn advance_step(seed: &mut SmallRng, now: Tick) -> Tick {
    let r = seed.next_u64();
    let room = u64::MAX - now;
    let pick = match r % 64 {
        0..=29 => seed.next_u64() % 70,
        30..=44 => seed.next_u64() % 5000,
        45..=54 => seed.next_u64() % (1 << 24),
        55..=58 => [63, 64, 65, 4095, 4096, 4097][(r >> 8) as usize % 6],
        59..=61 => (1 << 36) - 1 + seed.next_u64() % 3,
        62 => 1 << 40,
        _ if r % 4096 == 63 => room,
        _ => seed.next_u64() >> (20 + seed.next_u64() % 44),
    };
    pick.min(room)
}

fn compare_advance(wheel: &mut Wheel, model: &mut ReferenceQueue<u64>, to: Tick) {
    let mut ours = fire(wheel, to);
    let mut theirs = Vec::new();
    model.advance(to, |_, value, deadline| theirs.push((value, deadline)));
    ours.sort_unstable_by_key(|&(v, d)| (d, v));
    theirs.sort_unstable_by_key(|&(v, d)| (d, v));
    assert_eq!(ours, theirs, "advance({to})");
}

#[test]
fn deadlines_at_the_top_of_the_range() {
    let mut wheel = Wheel::new();
    wheel.start(u64::MAX, 1);
    wheel.start(u64::MAX - 1, 2);
    wheel.start(1 << 63, 3);
    assert_eq!(fire(&mut wheel, u64::MAX - 2), vec![(3, 1 << 63)]);
    assert_eq!(wheel.next_deadline().map(|t| t < u64::MAX), Some(true));
    assert_eq!(
        fire(&mut wheel, u64::MAX),
        vec![(2, u64::MAX - 1), (1, u64::MAX)]
    );
    assert!(wheel.is_empty());
    assert_eq!(wheel.next_deadline(), None);
    // At the end of time a new timer is past due and fires on the next advance.
    wheel.start(u64::MAX, 4);
    wheel.start(7, 5);
    assert_eq!(wheel.next_deadline(), Some(7));
    assert_eq!(fire(&mut wheel, u64::MAX), vec![(5, 7), (4, u64::MAX)]);
}

#[test]
fn boundary_deadlines_fire_exactly() {
    let offsets = [
        1,
        2,
        63,
        64,
        65,
        4095,
        4096,
        4097,
        (1 << 36) - 1,
        1 << 36,
        (1 << 36) + 1,
        1 << 40,
        (1 << 60) - 1,
        1 << 60,
    ];
    for origin in [
        0,
        1,
        63,
        64,
        (1 << 36) - 3,
        (1 << 36) + 5,
        u64::MAX - (1 << 61),
    ] {
        for &offset in &offsets {
            // Each deadline alone, and approached from one tick before.
            let mut wheel = Wheel::new();
            fire(&mut wheel, origin);
            let deadline = origin + offset;
            wheel.start(deadline, 9);
            let bound = wheel.next_deadline().unwrap();
            assert!(bound > origin && bound <= deadline);
            assert_eq!(fire(&mut wheel, deadline - 1), vec![]);
            assert_eq!(fire(&mut wheel, deadline), vec![(9, deadline)]);
        }
        // All of them together, stepping one deadline at a time.
        let mut wheel = Wheel::new();
        fire(&mut wheel, origin);
        for (value, &offset) in offsets.iter().enumerate() {
            wheel.start(origin + offset, value as u64);
        }
        for (value, &offset) in offsets.iter().enumerate() {
            let deadline = origin + offset;
            if deadline - 1 > wheel.now() {
                assert_eq!(fire(&mut wheel, deadline - 1), vec![]);
            }
            assert_eq!(fire(&mut wheel, deadline), vec![(value as u64, deadline)]);
        }
        assert!(wheel.is_empty());
    }
}

#[test]
fn huge_jump_costs_little_work() {
    let mut wheel = Wheel::new();
    fire(&mut wheel, 12345);
    for (value, offset) in [3u64, 70, 5000, 1 << 30, (1 << 40) - 1]
        .into_iter()
        .enumerate()
    {
        wheel.start(12345 + offset, value as u64);
    }
    wheel.start(12345 + (1 << 41), 99);
    let before = wheel.work();
    let fired = fire(&mut wheel, 12345 + (1 << 40));
    assert_eq!(fired.len(), 5);
    let spent = wheel.work() - before;
    assert!(spent <= 150, "a 2^40 jump over 6 timers cost {spent}");
    let before = wheel.work();
    fire(&mut wheel, u64::MAX);
    assert!(wheel.work() - before <= 60);
    assert!(wheel.is_empty());
}

#[test]
fn many_timers_on_one_deadline() {
    let mut wheel = Wheel::with_capacity(100_000);
    let deadline = (1 << 36) + 12345;
    for value in 0..100_000 {
        wheel.start(deadline, value);
    }
    assert_eq!(wheel.len(), 100_000);
    assert_eq!(fire(&mut wheel, deadline - 1), vec![]);
    let fired = fire(&mut wheel, deadline);
    assert_eq!(fired.len(), 100_000);
    assert!(fired.iter().all(|&(_, d)| d == deadline));
    let mut values: Vec<u64> = fired.iter().map(|&(v, _)| v).collect();
    values.sort_unstable();
    assert!(values.iter().copied().eq(0..100_000));
    assert!(wheel.is_empty());
    assert!(wheel.work() < 100_000 * (LEVELS as u64 + 2));
}

#[test]
fn moves_of_a_few_ticks_fire_ring_and_level_timers_on_time() {
    // Deadlines on both sides of a ring word's boundary, level slots starting at 4096 and
    // 8192 (reached by small moves, so their cascades are not skipped), a stopped timer
    // that empties its ring word, and moves of 1 and 3 ticks in turn: 1, 4, 5, 8, ...
    let mut wheel = Wheel::new();
    let deadlines = [63, 64, 65, 127, 4100, 8191, 8192, 8200, 12_000];
    for &deadline in &deadlines {
        wheel.start(deadline, deadline);
    }
    let stopped = wheel.start(300, 0);
    assert_eq!(wheel.stop(stopped), Some(0));
    let clocks: Vec<Tick> = (0..6050)
        .map(|k| 4 * (k / 2) + [1, 4][k as usize % 2])
        .collect();
    let mut fired = Vec::new();
    for &now in &clocks {
        wheel.advance(now, |_, value, deadline| fired.push((value, deadline, now)));
    }
    let expected: Vec<_> = deadlines
        .iter()
        .map(|&d| (d, d, *clocks.iter().find(|&&now| now >= d).unwrap()))
        .collect();
    assert_eq!(fired, expected);
    assert_eq!(wheel.next_deadline(), None);
}

#[test]
fn stale_handles_do_nothing() {
    let mut wheel = Wheel::new();
    let a = wheel.start(10, 1);
    assert_eq!(wheel.stop(a), Some(1));
    assert_eq!(wheel.stop(a), None);
    let b = wheel.start(10, 2);
    assert_eq!(b.index(), a.index(), "the slot is reused");
    assert_eq!(wheel.stop(a), None);
    assert_eq!(wheel.len(), 1);
    assert_eq!(fire(&mut wheel, 10), vec![(2, 10)]);
    assert_eq!(wheel.stop(b), None);
    assert_eq!(wheel.stop(TimerId::from_parts(1000, 1)), None);
    assert!(wheel.is_empty());
}

#[test]
fn past_due_timers_fire_sorted_and_first() {
    let mut wheel = Wheel::new();
    fire(&mut wheel, 1000);
    let mut seed = SmallRng::seed_from_u64(0x9E37_79B9_7F4A_7C15);
    let mut expected = Vec::new();
    let mut handles = Vec::new();
    for value in 0..1000 {
        let deadline = seed.next_u64() % 1001;
        handles.push(wheel.start(deadline, value));
        expected.push(deadline);
    }
    wheel.start(1001, 5000);
    // Stopping the minimum keeps next_deadline exact.
    let min_at = (0..1000).min_by_key(|&i| expected[i]).unwrap();
    wheel.stop(handles[min_at]);
    expected.remove(min_at);
    expected.sort_unstable();
    assert_eq!(wheel.next_deadline(), Some(expected[0]));
    let fired = fire(&mut wheel, 1001);
    let mut want = expected.clone();
    want.push(1001);
    assert_eq!(deadlines(&fired), want);
}

#[test]
fn due_minimum_stays_exact_through_stops() {
    let mut wheel = Wheel::new();
    fire(&mut wheel, 100);
    let a = wheel.start(10, 1);
    let b = wheel.start(20, 2);
    wheel.start(120, 3);
    assert_eq!(wheel.next_deadline(), Some(10));
    wheel.stop(a);
    assert_eq!(wheel.next_deadline(), Some(20));
    wheel.stop(b);
    let c = wheel.start(30, 4);
    wheel.stop(c);
    wheel.start(40, 5);
    wheel.start(40, 6);
    assert_eq!(wheel.next_deadline(), Some(40));
    assert_eq!(deadlines(&fire(&mut wheel, 100)), vec![40, 40]);
    assert_eq!(wheel.next_deadline(), Some(120), "exact at level 0");
}

#[test]
fn next_deadline_reaches_the_top_level_timer_within_the_step_bound() {
    for (origin, deadline) in [(0, u64::MAX), (5, 1 << 63), (3, (1 << 60) + 4097)] {
        let mut wheel = Wheel::new();
        fire(&mut wheel, origin);
        wheel.start(deadline, 1);
        let mut rounds = 0;
        while !wheel.is_empty() {
            rounds += 1;
            let bound = wheel.next_deadline().unwrap();
            assert!(bound <= deadline);
            let to = bound.max(wheel.now());
            fire(&mut wheel, to);
        }
        assert!(rounds <= wheel.next_deadline_steps(), "{rounds} rounds");
    }
}

#[test]
fn matches_the_reference_model() {
    for seed_start in [1u64, 0xDEAD_BEEF, 42, 7_777_777, 5, 99] {
        let mut seed = SmallRng::seed_from_u64(seed_start);
        let mut wheel = Wheel::new();
        let mut model = ReferenceQueue::<u64>::new();
        let mut handles = Vec::new();
        let mut next_value = 0u64;
        for _ in 0..6000 {
            let now = wheel.now();
            match seed.next_u64() % 10 {
                0..=4 => {
                    // Past deadlines too: from 0 up to now.
                    let deadline = if seed.next_u64().is_multiple_of(8) {
                        now.checked_add(1)
                            .map_or(seed.next_u64(), |span| seed.next_u64() % span)
                    } else {
                        now + delay(&mut seed, now)
                    };
                    let ours = wheel.start(deadline, next_value);
                    let theirs = model.start(deadline, next_value);
                    handles.push((ours, theirs));
                    next_value += 1;
                }
                5 | 6 if !handles.is_empty() => {
                    let pick = (seed.next_u64() % handles.len() as u64) as usize;
                    let (ours, theirs) = handles[pick];
                    assert_eq!(wheel.stop(ours), model.stop(theirs));
                }
                7 => {
                    let bound = wheel.next_deadline();
                    let exact = model.next_deadline();
                    assert_eq!(bound.is_some(), exact.is_some());
                    if let (Some(bound), Some(exact)) = (bound, exact) {
                        assert!(bound <= exact, "next_deadline {bound} > earliest {exact}");
                        // Drive to the earliest timer unless that would run the clock
                        // out to the end of time (and leave the rest of the run idle).
                        if exact - now.min(exact) > 1 << 44 {
                            continue;
                        }
                        let mut rounds = 0;
                        while model.next_deadline() == Some(exact) {
                            rounds += 1;
                            assert!(rounds <= wheel.next_deadline_steps());
                            let to = wheel.next_deadline().unwrap().max(wheel.now());
                            compare_advance(&mut wheel, &mut model, to);
                        }
                    }
                }
                _ => {
                    let to = now + advance_step(&mut seed, now);
                    compare_advance(&mut wheel, &mut model, to);
                }
            }
            assert_eq!(wheel.len(), model.len());
        }
        compare_advance(&mut wheel, &mut model, u64::MAX);
        assert!(wheel.is_empty());
    }
}
