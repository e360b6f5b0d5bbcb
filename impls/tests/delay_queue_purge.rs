//! `delay-queue-purge` through its public API: the purge interval as a parameter, garbage
//! bounded by it under any mix, completed elements never firing (also after their slot is
//! reused), and random sequences against the reference model with purge intervals from 1
//! (eager) to Kafka's 1,000, with `check_invariants` after every step.

#[path = "support/random_program.rs"]
mod random_program;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use random_program::{Counts, Mix, Program, mixed_delay, recent};
use timerbench_impls::delay_queue_purge::{DEFAULT_PURGE_INTERVAL, DelayQueuePurge};
use timerbench_impls::{Parameters, Release, TimerQueue};

/// A fixed-seed random mix against the reference model, stop-heavy so that purges run.
/// Returns (effective stops, purges, firings).
fn differential(interval: u64, seed: u64, rounds: usize, ops: usize) -> (usize, u64, usize) {
    let program = Program {
        mix: Mix {
            start: 5,
            stop: 3,
            restart: 1,
            next_deadline: 1,
            advance: 2,
        },
        past: None,
        delay: mixed_delay,
        pick: |rng, len| recent(rng, len, 24),
        step: |rng, _| rng.random_range(0..500),
    };
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut counts, mut purges) = (Counts::default(), 0);
    for _ in 0..rounds {
        let mut queue = DelayQueuePurge::<u64>::with_purge_interval(interval, 0);
        counts += program.run(&mut rng, &mut queue, ops, |queue, _, _| {
            assert!((queue.completed() as u64) < interval, "garbage bound");
            queue.check_invariants();
        });
        queue.advance(u64::MAX, |_, _, _| {});
        assert!(queue.is_empty());
        assert_eq!(
            queue.completed(),
            0,
            "the drain popped every completed element"
        );
        purges += queue.purges();
    }
    (counts.stopped, purges, counts.fired)
}

#[test]
fn random_sequences_match_the_model_at_every_purge_interval() {
    for (seed, interval) in [1, 2, 7, 64, DEFAULT_PURGE_INTERVAL]
        .into_iter()
        .enumerate()
    {
        let (stopped, purges, fired) = differential(interval, seed as u64, 30, 1_500);
        assert!(stopped > 1_000 && fired > 1_000, "interval {interval}");
        if interval <= 64 {
            assert!(purges > 0, "interval {interval}: purges ran");
        }
    }
}

#[test]
fn the_parameter_sets_the_interval_and_refuses_zero() {
    let declared = <DelayQueuePurge<u64> as TimerQueue<u64>>::PARAMETERS;
    let mut parameters = Parameters::defaults(declared);
    assert_eq!(parameters.get("purge_interval"), 1_000);
    assert!(parameters.set("purge_interval", 0).is_err());
    parameters.set("purge_interval", 3).unwrap();
    let mut queue = DelayQueuePurge::<u64>::with_parameters(0, &parameters);
    let ids: Vec<_> = (0..10).map(|i| queue.start(100 + i, i)).collect();
    queue.stop(ids[0]);
    queue.stop(ids[1]);
    assert_eq!((queue.completed(), queue.purges()), (2, 0));
    queue.stop(ids[2]);
    assert_eq!((queue.completed(), queue.purges()), (0, 1));
    assert!(matches!(queue.release(), Release::Later(_)));
}

#[test]
fn a_completed_element_never_fires_even_after_its_slot_is_reused() {
    let mut queue = DelayQueuePurge::<u64>::new();
    let first = queue.start(10, 1);
    assert_eq!(queue.stop(first), Some(1));
    // The same arena slot, a later deadline: the old element (deadline 10) is still queued.
    let second = queue.start(20, 2);
    assert_eq!(second.index(), first.index());
    assert_eq!(queue.completed(), 1);
    let mut fired = Vec::new();
    queue.advance(15, |id, value, deadline| fired.push((id, value, deadline)));
    assert!(
        fired.is_empty(),
        "the completed element was dropped, not fired"
    );
    assert_eq!(queue.completed(), 0);
    queue.advance(20, |id, value, deadline| fired.push((id, value, deadline)));
    assert_eq!(fired, [(second, 2, 20)]);
}

#[test]
fn garbage_stays_below_the_interval_under_restart_churn() {
    let mut queue = DelayQueuePurge::<u64>::with_purge_interval(100, 0);
    let mut ids: Vec<_> = (0..1_000u64)
        .map(|i| queue.start(1_000_000 + i, i))
        .collect();
    let mut peak = 0;
    for round in 0..100_000u64 {
        let slot = (round * 7919) as usize % ids.len();
        ids[slot] = queue.restart(ids[slot], 2_000_000 + round, round).0;
        peak = peak.max(queue.completed());
    }
    assert_eq!(peak, 99);
    assert_eq!(queue.purges(), 1_000);
    assert_eq!(queue.len(), 1_000);
    queue.check_invariants();
}
