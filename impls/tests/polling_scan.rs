//! `polling-scan` through its public API: what it declares (a scanned clock, a suite
//! limit), one sweep per clock move on the work counter, the cached next deadline, and
//! random sequences against the reference model with `check_invariants` after every step.

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
use timerbench_impls::polling_scan::PollingScan;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::{EmptyTime, Tick, TimerId, TimerQueue};

fn delay(rng: &mut SmallRng, now: Tick) -> Tick {
    match rng.random_range(0..10) {
        0 => 0,
        1..=5 => rng.random_range(0..300),
        6 => 1 << 40,
        7 => u64::MAX - now,
        _ => rng.random_range(0..50_000),
    }
}

#[test]
fn random_sequences_match_the_model() {
    let mut rng = SmallRng::seed_from_u64(3);
    let (mut stopped, mut restarted, mut fired) = (0, 0, 0);
    for _ in 0..40 {
        let mut queue = PollingScan::<u64>::new();
        let mut model = ReferenceQueue::<u64>::new();
        let mut handles: Vec<(TimerId, TimerId)> = Vec::new();
        let mut by_value: HashMap<u64, TimerId> = HashMap::new();
        for _ in 0..1_500 {
            let now = queue.now();
            let value = handles.len() as u64;
            let len = handles.len();
            match rng.random_range(0..12) {
                0..=3 => {
                    let deadline = if rng.random_range(0..10) == 0 {
                        now - rng.random_range(0..now.min(40) + 1)
                    } else {
                        now.saturating_add(delay(&mut rng, now))
                    };
                    let ours = queue.start(deadline, value);
                    by_value.insert(value, ours);
                    handles.push((ours, model.start(deadline, value)));
                }
                4..=5 if len > 0 => {
                    let (ours, theirs) = handles[len - 1 - rng.random_range(0..len.min(24))];
                    let result = queue.stop(ours);
                    assert_eq!(result, model.stop(theirs));
                    stopped += usize::from(result.is_some());
                }
                6..=7 if len > 0 => {
                    let (ours, theirs) = handles[len - 1 - rng.random_range(0..len.min(24))];
                    let deadline = now.saturating_add(delay(&mut rng, now));
                    let (id, old) = queue.restart(ours, deadline, value);
                    assert_eq!(old, model.stop(theirs));
                    restarted += usize::from(old.is_some());
                    by_value.insert(value, id);
                    handles.push((id, model.start(deadline, value)));
                }
                8 => assert_eq!(queue.next_deadline(), model.next_deadline()),
                _ => {
                    let to = now.saturating_add(rng.random_range(0..400));
                    let mut ours = Vec::new();
                    queue.advance(to, |id, value, deadline| {
                        assert_eq!(by_value[&value], id, "handle of the fired timer");
                        ours.push((deadline, value));
                    });
                    assert!(ours.windows(2).all(|w| w[0].0 <= w[1].0), "order");
                    let mut theirs = Vec::new();
                    model.advance(to, |_, value, deadline| theirs.push((deadline, value)));
                    fired += ours.len();
                    ours.sort_unstable();
                    theirs.sort_unstable();
                    assert_eq!(ours, theirs, "fired at advance({to})");
                }
            }
            assert_eq!(queue.len(), model.len());
            queue.check_invariants();
        }
    }
    assert!(stopped > 1_000 && restarted > 1_000 && fired > 1_000);
}

#[test]
fn it_declares_a_scanned_clock_and_a_suite_limit() {
    let queue = PollingScan::<u64>::new();
    assert_eq!(queue.empty_time(), EmptyTime::Scanned);
    let limit = <PollingScan<u64> as TimerQueue<u64>>::SUITE_LIMIT.expect("a limit");
    assert_eq!(limit.max_timers, 60_000);
    assert!(queue.precision().is_exact());
}

#[test]
fn every_clock_move_costs_one_visit_per_pending_timer() {
    let mut queue = PollingScan::<u64>::new();
    for value in 0..500u64 {
        queue.start(1_000_000 + value, value);
    }
    for tick in 1..=100u64 {
        let before = queue.work();
        queue.advance(tick, |_, _, _| panic!("nothing is due"));
        assert_eq!(queue.work() - before, 1 + 500, "tick {tick}");
    }
    // A jump is one sweep too, not one per tick.
    let before = queue.work();
    queue.advance(999_999, |_, _, _| panic!("nothing is due"));
    assert_eq!(queue.work() - before, 1 + 500);
}

#[test]
fn next_deadline_sweeps_only_after_the_earliest_timer_left() {
    let mut queue = PollingScan::<u64>::new();
    let ids: Vec<_> = (0..1_000u64).map(|i| queue.start(100 + i, i)).collect();
    let before = queue.work();
    assert_eq!(queue.next_deadline(), Some(100));
    queue.stop(ids[500]);
    assert_eq!(queue.next_deadline(), Some(100));
    assert_eq!(queue.work() - before, 1, "one stop, no sweep");
    queue.stop(ids[0]);
    assert_eq!(queue.next_deadline(), Some(101));
    assert_eq!(
        queue.work() - before,
        2 + 998,
        "the earliest left: one sweep"
    );
    // The sweep of an advance also refreshes the cache.
    queue.stop(ids[1]);
    queue.advance(50, |_, _, _| {});
    let before = queue.work();
    assert_eq!(queue.next_deadline(), Some(102));
    assert_eq!(queue.work(), before);
}
