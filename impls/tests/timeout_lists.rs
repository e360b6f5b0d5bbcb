//! `timeout-lists` through its public API: a fixed idle timeout keeps one list, lists come
//! and go with their delays, stale keys left by stops and restarts of list heads, past
//! deadlines, and random sequences against the reference model (a few shared delays, so
//! lists are long and their heads move; and any delays, so lists are many) with
//! `check_invariants` after every step.

#[path = "support/random_program.rs"]
mod random_program;

use rand::rngs::SmallRng;
use rand::{Rng, RngExt, SeedableRng};
use random_program::{Counts, Mix, Past, Program, recent};
use timerbench_impls::timeout_lists::TimeoutLists;
use timerbench_impls::{Tick, TimerId, TimerQueue};

fn fire_all(queue: &mut TimeoutLists<u64>, to: Tick) -> Vec<(Tick, u64)> {
    let mut fired = Vec::new();
    queue.advance(to, |_, value, deadline| fired.push((deadline, value)));
    queue.check_invariants();
    fired
}

/// A delay from a handful of shared ones, so that lists are long and their heads move.
fn shared_delay(rng: &mut SmallRng, _now: Tick) -> Tick {
    [0, 1, 5, 30, 30, 30, 200, 1000][rng.random_range(0..8)]
}

/// Any delay, so that lists are many.
fn any_delay(rng: &mut SmallRng, now: Tick) -> Tick {
    match rng.random_range(0..10) {
        0 => 0,
        1..=4 => rng.random_range(0..300),
        5 => 1 << 40,
        6 => rng.next_u64(),
        7 => u64::MAX - now,
        _ => rng.random_range(0..100_000),
    }
}

/// A fixed-seed random mix of start, stop, restart, advance and next-deadline against the
/// reference model, with delays from a few `shared` ones or any. Returns the counts of
/// effective stops, restarts of pending timers and firings.
fn differential(seed: u64, rounds: usize, ops: usize, shared: bool) -> Counts {
    let program = Program {
        mix: Mix::ALL,
        past: Some(Past::SOMETIMES),
        delay: if shared { shared_delay } else { any_delay },
        pick: |rng, len| recent(rng, len, 16),
        step: |rng, _| match rng.random_range(0..50) {
            0 => 1 << 40,
            1..=20 => 1,
            _ => rng.random_range(0..400),
        },
    };
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut counts = Counts::default();
    for _ in 0..rounds {
        let mut queue = TimeoutLists::<u64>::new();
        counts += program.run(&mut rng, &mut queue, ops, |queue, _, _| {
            queue.check_invariants()
        });
        fire_all(&mut queue, u64::MAX);
        assert!(queue.is_empty());
        assert_eq!(queue.list_count(), 0);
    }
    counts
}

#[test]
fn random_sequences_with_a_few_shared_delays_match_the_model() {
    let counts = differential(1, 40, 2_000, true);
    assert!(counts.stopped > 1_000 && counts.restarted > 1_000 && counts.fired > 5_000);
}

#[test]
fn random_sequences_with_any_delays_match_the_model() {
    let counts = differential(2, 40, 2_000, false);
    assert!(counts.stopped > 1_000 && counts.restarted > 1_000 && counts.fired > 5_000);
}

#[test]
fn a_fixed_idle_timeout_keeps_one_list_and_touches_no_heap() {
    const TIMEOUT: Tick = 30_000;
    let mut queue = TimeoutLists::new();
    let mut ids: Vec<TimerId> = (0..1_000u64).map(|c| queue.start(TIMEOUT, c)).collect();
    let mut rng = SmallRng::seed_from_u64(7);
    for tick in 1..=2_000u64 {
        fire_all(&mut queue, tick);
        for _ in 0..5 {
            let connection = rng.random_range(0..ids.len());
            let (id, old) = queue.restart(ids[connection], tick + TIMEOUT, connection as u64);
            assert!(old.is_some(), "nothing has timed out yet");
            ids[connection] = id;
        }
        assert_eq!(queue.list_count(), 1);
    }
    // Work per operation stays constant: no sift, no walk.
    let before = queue.work();
    for (connection, id) in ids.iter_mut().enumerate().take(100) {
        *id = queue.restart(*id, 2_000 + TIMEOUT, connection as u64).0;
    }
    assert_eq!(queue.work() - before, 100, "one step per refresh");
    let fired = fire_all(&mut queue, 2_000 + TIMEOUT);
    assert_eq!(fired.len(), 1_000);
}

#[test]
fn lists_merge_in_deadline_order_across_delays() {
    let mut queue = TimeoutLists::new();
    let mut expected = Vec::new();
    let mut fired = Vec::new();
    for now in 0..50u64 {
        let batch = fire_all(&mut queue, now);
        assert!(batch.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(batch.iter().all(|&(deadline, _)| deadline == now));
        fired.extend(batch);
        for delay in [7u64, 13, 100] {
            queue.start(now + delay, now * 1000 + delay);
            expected.push((now + delay, now * 1000 + delay));
        }
    }
    assert_eq!(queue.list_count(), 3);
    fired.extend(fire_all(&mut queue, 1_000));
    expected.sort_unstable();
    let mut sorted = fired.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected);
    assert!(fired.windows(2).all(|w| w[0].0 <= w[1].0));
}

#[test]
fn restarting_a_head_to_another_delay_moves_it_between_lists() {
    let mut queue = TimeoutLists::new();
    let head = queue.start(10, 1);
    queue.start(10, 2);
    let (moved, old) = queue.restart(head, 5, 3);
    assert_eq!(old, Some(1));
    assert_eq!(queue.list_count(), 2);
    queue.check_invariants();
    assert_eq!(queue.next_deadline(), Some(5));
    let (_, old) = queue.restart(moved, 0, 4);
    assert_eq!(old, Some(3));
    assert_eq!(queue.list_count(), 1, "the delay-5 list emptied and went");
    assert_eq!(queue.next_deadline(), Some(0));
    assert_eq!(fire_all(&mut queue, 20), [(0, 4), (10, 2)]);
}

#[test]
fn stopping_heads_that_share_a_deadline_leaves_the_key_exact() {
    let mut queue = TimeoutLists::new();
    let ids: Vec<_> = (0..10u64).map(|i| queue.start(100, i)).collect();
    fire_all(&mut queue, 1);
    queue.start(150, 10); // delay 149: a second list
    for id in &ids[..9] {
        queue.stop(*id); // the head each time; the key stays at 100
    }
    let before = queue.work();
    assert_eq!(queue.next_deadline(), Some(100), "the last of the ten");
    assert_eq!(queue.work(), before, "its key was exact all along");
    queue.stop(ids[9]);
    assert_eq!(queue.next_deadline(), Some(150));
    assert_eq!(fire_all(&mut queue, 1 << 40), [(150, 10)]);
}
