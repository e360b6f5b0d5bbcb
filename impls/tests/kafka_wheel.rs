//! `kafka-wheel` through its public API: the level count, exact firing around wheel and
//! level boundaries from odd and lagging clocks, the top of the clock, the due list, huge
//! jumps, crowded deadlines, stale handles, emptied buckets, and random sequences against
//! the reference model for several wheel sizes, with `check_invariants` between steps.
//! Tests of its private layout stay in `src/kafka_wheel.rs`.

use rand::rngs::SmallRng;
use rand::{Rng, RngExt, SeedableRng};
use std::collections::HashMap;
use timerbench_impls::kafka_wheel::*;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::{Tick, TimerId, TimerQueue};

/// Advances and returns `(value, deadline)` in firing order, checking the order, that
/// each handle matches the value it was started with, and that nothing fires early.
fn advance_collect(
    queue: &mut KafkaWheel<u64>,
    handles: &HashMap<u64, TimerId>,
    to: Tick,
) -> Vec<(u64, Tick)> {
    let mut fired = Vec::new();
    queue.advance(to, |id, value, deadline| {
        assert_eq!(handles.get(&value), Some(&id), "handle of timer {value}");
        assert!(
            deadline <= to,
            "timer {value} at {deadline} fired early at {to}"
        );
        fired.push((value, deadline));
    });
    assert!(
        fired.windows(2).all(|w| w[0].1 <= w[1].1),
        "out of order: {fired:?}"
    );
    fired
}

/// Starts timers at `deadlines` and advances through every deadline and its neighbours,
/// checking each timer fires in exactly the advance that first reaches it.
fn check_exact_firing(queue: &mut KafkaWheel<u64>, deadlines: &[Tick]) {
    let mut handles = HashMap::new();
    let first_value = 1_000_000;
    for (i, &deadline) in deadlines.iter().enumerate() {
        let value = first_value + i as u64;
        handles.insert(value, queue.start(deadline, value));
    }
    let mut points: Vec<Tick> = deadlines
        .iter()
        .flat_map(|&d| [d.saturating_sub(1), d, d.saturating_add(1)])
        .filter(|&t| t >= queue.now())
        .collect();
    points.sort_unstable();
    points.dedup();
    let mut pending: Vec<(u64, Tick)> = deadlines
        .iter()
        .enumerate()
        .map(|(i, &d)| (first_value + i as u64, d))
        .collect();
    for to in points {
        let mut fired = advance_collect(queue, &handles, to);
        let (mut expected, rest): (Vec<_>, Vec<_>) =
            pending.into_iter().partition(|&(_, d)| d <= to);
        pending = rest;
        fired.sort_unstable();
        expected.sort_unstable();
        assert_eq!(fired, expected, "advance to {to}");
    }
    assert!(pending.is_empty());
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.next_deadline(), None);
}

/// A queue whose wheel clock and `now` both sit at `clock`.
fn queue_at(size: u32, clock: Tick) -> KafkaWheel<u64> {
    let mut queue = KafkaWheel::with_wheel_size(size);
    queue.start(clock, 0);
    queue.advance(clock, |_, _, _| {});
    assert_eq!(queue.wheel_clock(), clock);
    queue
}

/// A delay from the mix of the brief: short, at level boundaries, 2^36 and 2^40, and
/// (for timers, not for clock moves, which would pin the clock at the top) anything.
fn random_delay(rng: &mut SmallRng, anything: bool) -> u64 {
    match rng.random_range(0..if anything { 12 } else { 11 }) {
        0 => 0,
        1..=4 => 1 + rng.random_range(0..100),
        5 => 19 + rng.random_range(0..3),
        6 => 63 + rng.random_range(0..3),
        7 => 399 + rng.random_range(0..3),
        8 => 4095 + rng.random_range(0..2),
        9 => (1 << 36) - 1 + rng.random_range(0..3),
        10 => 1 << 40,
        _ => rng.next_u64(),
    }
}

/// Advances both queues to `to` and checks they fired the same timers, ours in order.
fn advance_both(
    wheel: &mut KafkaWheel<u64>,
    model: &mut ReferenceQueue<u64>,
    to: Tick,
) -> Vec<(u64, Tick, TimerId)> {
    let mut ours = Vec::new();
    wheel.advance(to, |id, v, d| ours.push((v, d, id)));
    let mut theirs = Vec::new();
    model.advance(to, |_, v, d| theirs.push((v, d)));
    assert!(ours.windows(2).all(|w| w[0].1 <= w[1].1), "order {ours:?}");
    let mut ours_sorted: Vec<_> = ours.iter().map(|&(v, d, _)| (v, d)).collect();
    ours_sorted.sort_unstable();
    theirs.sort_unstable();
    assert_eq!(ours_sorted, theirs, "advance to {to}");
    ours
}

/// Runs random operations on a wheel of `size` and on the reference model, comparing
/// every observable result.
fn compare_with_reference(size: u32, seed: u64, operations: usize, start_clock: Tick) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut wheel = KafkaWheel::<u64>::with_wheel_size(size);
    let mut model = ReferenceQueue::<u64>::new();
    advance_both(&mut wheel, &mut model, start_clock);
    let (mut fired_count, mut most_rounds) = (0, 0);
    let mut handles: Vec<(TimerId, TimerId)> = Vec::new();
    let mut by_value: HashMap<u64, TimerId> = HashMap::new();
    let mut next_value = 0u64;
    let steps = wheel.next_deadline_steps();

    for _ in 0..operations {
        match rng.random_range(0..10) {
            0..=4 => {
                let now = wheel.now();
                let deadline = if rng.random_range(0..8) == 0 {
                    now.saturating_sub(rng.random_range(0..300))
                } else if rng.random_range(0..30) == 0 {
                    u64::MAX - rng.random_range(0..3)
                } else {
                    now.saturating_add(random_delay(&mut rng, true))
                };
                let value = next_value;
                next_value += 1;
                let ours = wheel.start(deadline, value);
                let theirs = model.start(deadline, value);
                handles.push((ours, theirs));
                by_value.insert(value, ours);
            }
            5 | 6 if !handles.is_empty() => {
                let (ours, theirs) = handles[rng.random_range(0..handles.len() as u64) as usize];
                assert_eq!(wheel.stop(ours), model.stop(theirs));
            }
            7 => {
                let to = wheel.now().saturating_add(random_delay(&mut rng, false));
                for (v, _, id) in advance_both(&mut wheel, &mut model, to) {
                    assert_eq!(by_value[&v], id);
                    fired_count += 1;
                }
            }
            _ => {
                // Rounds of advance(max(next_deadline, now)) reach the earliest timer.
                let earliest = model.next_deadline();
                let bound = wheel.next_deadline();
                assert_eq!(bound.is_some(), earliest.is_some());
                let Some(earliest) = earliest else { continue };
                let mut rounds = 0;
                while model.next_deadline() == Some(earliest)
                    && model.len() == wheel.len()
                    && rounds <= steps
                {
                    let t = wheel.next_deadline().expect("timers are pending");
                    assert!(t <= earliest, "next_deadline {t} > earliest {earliest}");
                    let to = t.max(wheel.now());
                    let fired = advance_both(&mut wheel, &mut model, to);
                    rounds += 1;
                    fired_count += fired.len();
                    if fired.iter().any(|&(_, d, _)| d == earliest) {
                        break;
                    }
                }
                assert!(rounds <= steps, "{rounds} rounds > {steps}");
                assert!(rounds <= wheel.levels_in_use() as u32);
                most_rounds = most_rounds.max(rounds);
            }
        }
        assert_eq!(wheel.len(), model.len());
        assert_eq!(wheel.now(), model.now());
        wheel.check_invariants();
    }
    wheel.check_invariants();
    let pending = wheel.len();
    advance_both(&mut wheel, &mut model, u64::MAX);
    assert_eq!(wheel.len(), 0);
    assert_eq!(wheel.next_deadline(), None);
    // Guard the test's own reach: plenty fired before the end, some needed many rounds.
    assert!(fired_count > operations / 10, "only {fired_count} fired");
    assert!(most_rounds >= 3, "at most {most_rounds} rounds");
    eprintln!("size {size}: {fired_count} fired, {pending} left, {most_rounds} rounds");
}

#[test]
fn level_counts_cover_u64() {
    assert_eq!(levels_to_cover_u64(20), 15);
    assert_eq!(levels_to_cover_u64(2), 64);
    assert_eq!(levels_to_cover_u64(16), 16);
    assert_eq!(levels_to_cover_u64(64), 11);
    assert_eq!(levels_to_cover_u64(MAX_WHEEL_SIZE), 4);
    for size in [2, 3, 7, 20, 64, 1000, MAX_WHEEL_SIZE] {
        let bound = (64.0 / f64::from(size).log2()).ceil() as u32 + 1;
        assert!(levels_to_cover_u64(size) <= bound);
    }
}

#[test]
fn boundaries_fire_exactly_from_odd_clocks() {
    let offsets = [
        0,
        1,
        2,
        18,
        19,
        20,
        21,
        39,
        40,
        41,
        399,
        400,
        401,
        799,
        800,
        7999,
        8000,
        8001,
        1 << 36,
        (1 << 36) - 1,
        (1 << 36) + 1,
    ];
    for clock in [0, 1, 7, 19, 20, 21, 381, 399, 401, 12_345, (1 << 36) + 3] {
        let deadlines: Vec<Tick> = offsets.iter().map(|&o| clock + o).collect();
        check_exact_firing(&mut queue_at(20, clock), &deadlines);
        // The same with the wheel clock lagging far behind `now`.
        let mut lagging = KafkaWheel::with_wheel_size(20);
        lagging.advance(clock, |_, _, _| {});
        check_exact_firing(&mut lagging, &deadlines);
    }
}

#[test]
fn deadlines_at_the_top_of_the_clock() {
    let deadlines = [u64::MAX, u64::MAX - 1, u64::MAX - 19, u64::MAX - 20, 0, 5];
    for size in [2, 20, 64] {
        check_exact_firing(&mut KafkaWheel::with_wheel_size(size), &deadlines);
        check_exact_firing(&mut queue_at(size, u64::MAX - 30), &deadlines[..4]);
        check_exact_firing(&mut queue_at(size, u64::MAX - 1), &deadlines[..2]);
    }
    let mut queue = queue_at(20, u64::MAX);
    let mut handles = HashMap::new();
    handles.insert(1, queue.start(u64::MAX, 1));
    handles.insert(2, queue.start(3, 2));
    assert_eq!(queue.next_deadline(), Some(3));
    let fired = advance_collect(&mut queue, &handles, u64::MAX);
    assert_eq!(fired, vec![(2, 3), (1, u64::MAX)]);
}

#[test]
fn top_level_never_overflows() {
    let mut queue = KafkaWheel::<u64>::with_wheel_size(20);
    queue.start(u64::MAX, 1);
    assert_eq!(queue.levels_in_use(), 15);
    assert_eq!(queue.level_tick(14), Some(20u64.pow(14)));
    let mut queue = KafkaWheel::<u64>::with_wheel_size(2);
    queue.start(u64::MAX, 1);
    assert_eq!(queue.levels_in_use(), 64);
    let mut fired = 0;
    queue.advance(u64::MAX, |_, _, d| {
        assert_eq!(d, u64::MAX);
        fired += 1;
    });
    assert_eq!(fired, 1);
}

#[test]
fn start_never_fires_and_past_deadlines_fire_sorted() {
    // Wheel clock at 1000: these go to the due list.
    let mut queue = queue_at(20, 1000);
    let mut handles = HashMap::new();
    for (value, deadline) in [(1, 500), (2, 3), (3, 1000), (4, 999), (5, 0), (6, 1001)] {
        handles.insert(value, queue.start(deadline, value));
    }
    handles.insert(7, queue.start(1500, 7));
    assert_eq!(queue.len(), 7);
    assert_eq!(queue.next_deadline(), Some(0));
    let stopped = queue.stop(handles[&5]);
    assert_eq!(stopped, Some(5));
    assert!(queue.next_deadline().unwrap() <= 3);
    let fired = advance_collect(&mut queue, &handles, 2000);
    let deadlines: Vec<Tick> = fired.iter().map(|&(_, d)| d).collect();
    assert_eq!(deadlines, [3, 500, 999, 1000, 1001, 1500]);

    // Wheel clock lagging at 0 while now = 1000: only 0 goes to the due list.
    let mut queue = KafkaWheel::with_wheel_size(20);
    queue.advance(1000, |_, _, _| {});
    let mut handles = HashMap::new();
    for (value, deadline) in [(1, 500), (2, 3), (3, 0), (4, 1000), (5, 1001)] {
        handles.insert(value, queue.start(deadline, value));
    }
    let fired = advance_collect(&mut queue, &handles, 1000);
    assert_eq!(fired, [(3, 0), (2, 3), (1, 500), (4, 1000)]);
    assert_eq!(queue.len(), 1);
}

#[test]
fn a_huge_jump_costs_buckets_not_ticks() {
    let mut queue = KafkaWheel::with_wheel_size(20);
    let mut handles = HashMap::new();
    for (value, deadline) in [(1, 5), (2, 1 << 20), (3, 1 << 39), (4, (1 << 40) - 1)] {
        handles.insert(value, queue.start(deadline, value));
    }
    let before = queue.work();
    let fired = advance_collect(&mut queue, &handles, 1 << 40);
    assert_eq!(fired.len(), 4);
    let spent = queue.work() - before;
    assert!(spent < 200, "advance of 2^40 cost {spent}");
    // And from a lagging clock to the end of time.
    handles.insert(5, queue.start(u64::MAX - 7, 5));
    let before = queue.work();
    let fired = advance_collect(&mut queue, &handles, u64::MAX);
    assert_eq!(fired, [(5, u64::MAX - 7)]);
    assert!(queue.work() - before < 100);
}

#[test]
fn many_timers_on_one_deadline() {
    let mut queue = KafkaWheel::with_capacity(100_000);
    let deadline = 123_456_789;
    let mut ids = Vec::new();
    for value in 0..100_000u64 {
        ids.push(queue.start(deadline, value));
    }
    assert!(queue.next_deadline().unwrap() <= deadline);
    queue.advance(deadline - 1, |_, _, _| panic!("early"));
    let before = queue.work();
    let mut seen = vec![false; 100_000];
    queue.advance(deadline, |id, value, d| {
        assert_eq!(d, deadline);
        assert_eq!(ids[value as usize], id);
        assert!(!std::mem::replace(&mut seen[value as usize], true));
    });
    assert!(seen.iter().all(|&s| s));
    assert!(queue.work() - before <= 100_000 * 8);
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.next_deadline(), None);
}

#[test]
fn stale_handles_touch_nothing() {
    let mut queue = KafkaWheel::new();
    let fired_id = queue.start(3, 1u64);
    let stopped_id = queue.start(50, 2);
    assert_eq!(queue.stop(stopped_id), Some(2));
    assert_eq!(queue.stop(stopped_id), None);
    let mut fired = Vec::new();
    queue.advance(10, |id, v, _| fired.push((id, v)));
    assert_eq!(fired, [(fired_id, 1)]);
    assert_eq!(queue.stop(fired_id), None);
    // The freed slots are reused; the old handles must not reach the new timers.
    let a = queue.start(20, 3);
    let b = queue.start(2, 4); // due: the wheel clock is at 3
    assert!(a.index() == fired_id.index() || a.index() == stopped_id.index());
    assert_eq!(queue.stop(fired_id), None);
    assert_eq!(queue.stop(stopped_id), None);
    assert_eq!(queue.stop(TimerId::from_parts(999, 1)), None);
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.stop(b), Some(4));
    assert_eq!(queue.next_deadline(), Some(20));
    assert_eq!(queue.stop(a), Some(3));
    assert_eq!(queue.next_deadline(), None);
}

#[test]
fn emptied_buckets_leave_the_heap_and_come_back() {
    let mut queue = KafkaWheel::new();
    let a = queue.start(10_000, 1u64);
    let b = queue.start(10_001, 2);
    let c = queue.start(9_000_000, 3);
    queue.stop(a);
    queue.stop(b);
    // The emptied level-2 bucket at 8000 is dropped before answering.
    let t = queue.next_deadline().unwrap();
    assert!(t <= 9_000_000 && t > 10_001, "{t}");
    // Reusing the dropped bucket offers it again.
    queue.start(10_002, 4);
    assert!(queue.next_deadline().unwrap() <= 10_002);
    let mut fired = Vec::new();
    queue.advance(10_002, |_, v, d| fired.push((v, d)));
    assert_eq!(fired, [(4, 10_002)]);
    assert_eq!(queue.stop(c), Some(3));
    assert_eq!(queue.next_deadline(), None);
    queue.advance(20_000_000, |_, _, _| panic!("nothing is pending"));
}

#[test]
fn matches_reference_with_kafka_size() {
    compare_with_reference(20, 0x9E37_79B9_7F4A_7C15, 6000, 0);
    compare_with_reference(20, 12345, 6000, 7_777_777_777);
}

#[test]
fn matches_reference_near_the_top_of_the_clock() {
    compare_with_reference(20, 777, 4000, u64::MAX - (1 << 42));
    compare_with_reference(2, 778, 2000, u64::MAX - (1 << 42));
}

#[test]
fn matches_reference_with_size_2() {
    compare_with_reference(2, 0xDEAD_BEEF, 4000, 0);
    compare_with_reference(2, 0xBEEF, 4000, 12_345);
}

#[test]
fn matches_reference_with_size_64() {
    compare_with_reference(64, 0x1234_5678_9ABC_DEF1, 6000, 0);
    compare_with_reference(64, 99, 6000, 1 << 40);
}
