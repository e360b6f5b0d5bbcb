//! `skiplist` through its public API: equal deadlines, the top of the clock, past-due
//! timers, stale and forged handles, huge jumps (on the work counter), and random sequences
//! against the reference model, with `check_invariants` after every step. Tests of its
//! towers' private storage stay in the source file.

use rand::rngs::SmallRng;
use rand::{Rng, RngExt, SeedableRng};
use std::collections::HashMap;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::skiplist::*;
use timerbench_impls::{Tick, TimerId, TimerQueue};

fn fire_all<V>(queue: &mut SkipListTimers<V>, to: Tick) -> Vec<(TimerId, V, Tick)> {
    let mut fired = Vec::new();
    queue.advance(to, |id, value, deadline| fired.push((id, value, deadline)));
    fired
}

/// A delay drawn from the edge cases of every structure in the crate.
fn delay(rng: &mut SmallRng, now: Tick) -> Tick {
    let room = u64::MAX - now;
    let delay = match rng.random_range(0..12) {
        0 => 0,
        1 => 1 + rng.random_range(0..100),
        2 => 63 + rng.random_range(0..3),
        3 => 4095 + rng.random_range(0..2),
        4 => (1 << 36) - 1 + rng.random_range(0..3),
        5 => 1 << 40,
        6 if rng.random_range(0..4) == 0 => rng.next_u64(),
        7 if rng.random_range(0..4) == 0 => room,
        8 if rng.random_range(0..4) == 0 => room.saturating_sub(rng.random_range(0..3)),
        6..=8 => rng.random_range(0..1 << 20),
        _ => rng.random_range(0..300),
    };
    delay.min(room)
}

#[test]
fn equal_deadlines_fire_in_order_and_stop_exactly() {
    let mut queue = SkipListTimers::new();
    let mut rng = SmallRng::seed_from_u64(7);
    let mut ids = Vec::new();
    for i in 0..2000u64 {
        let deadline = [3, 5, 5, 5, 5, 8][rng.random_range(0..6) as usize];
        ids.push((queue.start(deadline, i), deadline, i));
    }
    queue.check_invariants();
    // Stop every third timer: each search must find its node among many equal deadlines.
    let mut kept = HashMap::new();
    for (n, &(id, deadline, value)) in ids.iter().enumerate() {
        if n % 3 == 0 {
            assert_eq!(queue.stop(id), Some(value));
        } else {
            kept.insert(id, (value, deadline));
        }
    }
    queue.check_invariants();
    assert_eq!(queue.len(), kept.len());
    assert_eq!(queue.next_deadline(), Some(3));
    let fired = fire_all(&mut queue, 5);
    assert!(fired.windows(2).all(|w| w[0].2 <= w[1].2));
    assert!(fired.iter().all(|f| f.2 <= 5));
    for (id, value, deadline) in &fired {
        assert_eq!(kept.remove(id), Some((*value, *deadline)));
    }
    assert!(kept.values().all(|&(_, deadline)| deadline == 8));
    assert_eq!(queue.len(), kept.len());
    assert_eq!(queue.next_deadline(), Some(8));
    queue.check_invariants();
    assert_eq!(fire_all(&mut queue, 8).len(), kept.len());
    assert_eq!(queue.next_deadline(), None);
    queue.check_invariants(); // an emptied list has no lanes left
    queue.check_invariants();
}

#[test]
fn deadlines_at_the_top_of_the_clock() {
    let mut queue = SkipListTimers::new();
    let top = queue.start(u64::MAX, 1);
    let below = queue.start(u64::MAX - 1, 2);
    let zero = queue.start(0, 3);
    assert_eq!(queue.next_deadline(), Some(0));
    assert_eq!(fire_all(&mut queue, 0), vec![(zero, 3, 0)]);
    assert_eq!(fire_all(&mut queue, u64::MAX - 2), vec![]);
    assert_eq!(queue.next_deadline(), Some(u64::MAX - 1));
    assert_eq!(
        fire_all(&mut queue, u64::MAX - 1),
        vec![(below, 2, u64::MAX - 1)]
    );
    assert_eq!(queue.next_deadline(), Some(u64::MAX));
    assert_eq!(fire_all(&mut queue, u64::MAX), vec![(top, 1, u64::MAX)]);
    // At the end of time, new timers are all past due and still fire sorted.
    let late = queue.start(u64::MAX, 4);
    let early = queue.start(5, 5);
    assert_eq!(
        fire_all(&mut queue, u64::MAX),
        vec![(early, 5, 5), (late, 4, u64::MAX)]
    );
    assert_eq!(queue.now(), u64::MAX);
    assert!(queue.is_empty());
}

#[test]
fn past_due_timers_fire_sorted_on_next_advance() {
    let mut queue = SkipListTimers::new();
    queue.advance(1000, |_, _, _| unreachable!());
    let deadlines = [999, 3, 500, 1000, 0, 1001, 500];
    for (value, &deadline) in deadlines.iter().enumerate() {
        queue.start(deadline, value);
    }
    let fired: Vec<Tick> = fire_all(&mut queue, 1000).iter().map(|f| f.2).collect();
    assert_eq!(fired, vec![0, 3, 500, 500, 999, 1000]);
    assert_eq!(queue.next_deadline(), Some(1001));
    assert_eq!(queue.len(), 1);
}

#[test]
fn stale_and_forged_handles_change_nothing() {
    let mut queue = SkipListTimers::new();
    let fired = queue.start(10, 1u64);
    let stopped = queue.start(20, 2);
    assert_eq!(queue.stop(stopped), Some(2));
    assert_eq!(queue.stop(stopped), None);
    assert_eq!(fire_all(&mut queue, 10).len(), 1);
    assert_eq!(queue.stop(fired), None);
    // Both slots are reused by new timers; the old handles must not reach them.
    let a = queue.start(30, 3);
    let b = queue.start(30, 4);
    assert!([a.index(), b.index()].contains(&fired.index()));
    assert!([a.index(), b.index()].contains(&stopped.index()));
    assert_eq!(queue.stop(fired), None);
    assert_eq!(queue.stop(stopped), None);
    assert_eq!(queue.stop(TimerId::from_parts(999, 1)), None);
    assert_eq!(queue.stop(TimerId::from_parts(a.index(), 0)), None);
    assert_eq!(queue.len(), 2);
    queue.check_invariants();
    assert_eq!(queue.stop(b), Some(4));
    assert_eq!(queue.stop(a), Some(3));
    assert!(queue.is_empty());
}

#[test]
fn huge_jumps_cost_work_for_timers_only() {
    let mut queue = SkipListTimers::new();
    for i in 0..5u64 {
        queue.start((1 << 40) + i, i);
    }
    let before = queue.work();
    queue.advance(1 << 39, |_, _, _| unreachable!());
    assert_eq!(fire_all(&mut queue, 1 << 41).len(), 5);
    queue.advance(u64::MAX, |_, _, _| unreachable!());
    assert!(queue.work() - before <= 10, "{}", queue.work() - before);
}

#[test]
fn matches_the_reference_model() {
    for seed in 1..=8u64 {
        let mut rng = SmallRng::seed_from_u64(seed * 0x1234_5678_9ABC_DEF1);
        let mut queue = SkipListTimers::<u64>::new();
        let mut model = ReferenceQueue::<u64>::new();
        // Our handle -> the model's handle, for every timer ever started.
        let mut to_model = HashMap::new();
        let mut handles: Vec<TimerId> = Vec::new();
        for step in 0..6000u64 {
            let now = queue.now();
            let mut op = rng.random_range(0..10);
            // Even seeds advance rarely, so that their lists grow to thousands.
            if seed % 2 == 0 && op >= 8 && rng.random_range(0..8) != 0 {
                op = 0;
            }
            match op {
                0..=5 => {
                    let deadline = if rng.random_range(0..8) == 0 {
                        rng.random_range(0..now.saturating_add(1))
                    } else {
                        now + delay(&mut rng, now)
                    };
                    let ours = queue.start(deadline, step);
                    to_model.insert(ours, model.start(deadline, step));
                    handles.push(ours);
                }
                6..=7 if !handles.is_empty() => {
                    let ours = handles[rng.random_range(0..handles.len() as u64) as usize];
                    assert_eq!(queue.stop(ours), model.stop(to_model[&ours]));
                }
                _ => {
                    // Mostly short steps, so that the clock rarely reaches the end of
                    // time early in a run.
                    let to = match rng.random_range(0..64) {
                        0..=3 => now,
                        4..=29 => now.saturating_add(rng.random_range(0..200)),
                        30..=49 => queue.next_deadline().unwrap_or(now).max(now),
                        50..=59 => now.saturating_add(rng.random_range(0..5000)),
                        60 => now.saturating_add(1 << 36),
                        61 => now.saturating_add(1 << 40),
                        62 => now.saturating_add(rng.random_range(0..1 << 50)),
                        _ if rng.random_range(0..20) == 0 => u64::MAX,
                        _ => now.saturating_add(rng.random_range(0..1 << 20)),
                    };
                    let mut ours = Vec::new();
                    queue.advance(to, |id, value, deadline| {
                        ours.push((to_model[&id], value, deadline))
                    });
                    let mut theirs = Vec::new();
                    model.advance(to, |id, value, deadline| theirs.push((id, value, deadline)));
                    assert!(ours.windows(2).all(|w| w[0].2 <= w[1].2));
                    assert!(ours.iter().all(|f| f.2 <= to));
                    ours.sort_unstable();
                    theirs.sort_unstable();
                    assert_eq!(ours, theirs);
                }
            }
            assert_eq!(queue.len(), model.len());
            assert_eq!(queue.now(), model.now());
            assert_eq!(queue.next_deadline(), model.next_deadline());
            if step % 97 == 0 {
                queue.check_invariants();
            }
        }
        queue.check_invariants();
    }
}
