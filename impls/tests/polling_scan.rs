//! `polling-scan` through its public API: what it declares (a scanned clock, a suite
//! limit), one sweep per clock move on the work counter, the cached next deadline, and
//! random sequences against the reference model with `check_invariants` after every step.

#[path = "support/random_program.rs"]
mod random_program;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use random_program::{Counts, Mix, Past, Program, mixed_delay, recent};
use timerbench_impls::polling_scan::PollingScan;
use timerbench_impls::{EmptyTime, TimerQueue};

#[test]
fn random_sequences_match_the_model() {
    let program = Program {
        mix: Mix::ALL,
        past: Some(Past::SOMETIMES),
        delay: mixed_delay,
        pick: |rng, len| recent(rng, len, 24),
        step: |rng, _| rng.random_range(0..400),
    };
    let mut rng = SmallRng::seed_from_u64(3);
    let mut counts = Counts::default();
    for _ in 0..40 {
        let mut queue = PollingScan::<u64>::new();
        counts += program.run(&mut rng, &mut queue, 1_500, |queue, _, _| {
            queue.check_invariants()
        });
    }
    assert!(counts.stopped > 1_000 && counts.restarted > 1_000 && counts.fired > 1_000);
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
