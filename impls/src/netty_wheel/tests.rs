//! Unit tests of the netty-wheel: entry size, rounds, tick width, cancellation and the
//! transfer cap.

use super::*;

fn fire(wheel: &mut NettyWheel<u64>, to: Tick) -> Vec<u64> {
    let mut fired = Vec::new();
    wheel.advance(to, |_, value, _| fired.push(value));
    wheel.check_invariants();
    fired
}

#[test]
fn an_entry_is_40_bytes() {
    assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 40);
}

#[test]
fn a_timer_fires_on_its_tick_after_its_rounds() {
    let mut wheel = NettyWheel::with_slots_and_tick(0, 8, 1);
    wheel.start(3, 3u64);
    wheel.start(20, 20);
    wheel.start(0, 0);
    assert_eq!(fire(&mut wheel, 0), [0], "worker tick 0 runs at clock 0");
    // Transferred at tick 0: deadline 20 is bucket 4 with two rounds to go.
    let index = 1;
    assert_eq!(wheel.entries.get(index).rounds, 2);
    assert_eq!(fire(&mut wheel, 2), Vec::<u64>::new());
    assert_eq!(fire(&mut wheel, 3), [3]);
    assert_eq!(fire(&mut wheel, 19), Vec::<u64>::new());
    assert_eq!(wheel.entries.get(index).rounds, 0);
    assert_eq!(fire(&mut wheel, 20), [20]);
}

#[test]
fn a_wider_tick_rounds_deadlines_up_to_its_boundary() {
    let mut wheel = NettyWheel::with_slots_and_tick(0, 4, 10);
    wheel.start(11, 11u64);
    wheel.start(20, 20);
    wheel.start(21, 21);
    assert_eq!(wheel.window(25).late, 5);
    assert_eq!(fire(&mut wheel, 19), Vec::<u64>::new());
    assert_eq!(
        fire(&mut wheel, 20),
        [11, 20],
        "worker tick 2 takes (10, 20]"
    );
    assert_eq!(wheel.next_deadline(), Some(30));
    assert_eq!(fire(&mut wheel, 30), [21]);
    // Already due: the next worker tick, at 40.
    assert_eq!(wheel.window(5).late, 10);
}

#[test]
fn a_stopped_timer_keeps_its_entry_until_the_next_worker_tick() {
    let mut wheel = NettyWheel::with_slots_and_tick(0, 8, 1);
    let queued = wheel.start(5, 1u64);
    let bucketed = wheel.start(6, 2);
    fire(&mut wheel, 1);
    let stopped_while_queued = wheel.start(7, 3);
    assert_eq!(wheel.stop(bucketed), Some(2));
    assert_eq!(wheel.stop(bucketed), None, "the handle is stale at once");
    assert_eq!(wheel.stop(stopped_while_queued), Some(3));
    assert_eq!((wheel.len(), wheel.dead_entries()), (1, 2));
    wheel.check_invariants();
    assert_eq!(fire(&mut wheel, 2), Vec::<u64>::new());
    assert_eq!(wheel.dead_entries(), 0, "dropped by the worker's tick");
    assert_eq!(fire(&mut wheel, 10), [1]);
    assert_eq!(wheel.stop(queued), None);
}

#[test]
fn the_transfer_cap_delays_the_starts_behind_the_first_hundred_thousand() {
    let mut wheel = NettyWheel::with_slots_and_tick(0, 512, 1);
    for value in 0..TRANSFERS_PER_TICK {
        assert_eq!(wheel.window(0).late, 0);
        wheel.start(0, value);
    }
    assert_eq!(wheel.window(0).late, 1, "transferred one worker tick later");
    wheel.start(0, TRANSFERS_PER_TICK);
    assert_eq!(wheel.next_deadline(), Some(0));
    assert_eq!(fire(&mut wheel, 0).len(), TRANSFERS_PER_TICK as usize);
    assert_eq!(wheel.next_deadline(), Some(1));
    assert_eq!(fire(&mut wheel, 1), [TRANSFERS_PER_TICK]);
}

#[test]
fn saturated_rounds_are_recomputed_when_they_run_out() {
    let wheel = NettyWheel::<u64>::with_slots_and_tick(0, 2, 1);
    assert_eq!(wheel.rounds_between(1 << 40, 0), MANY_ROUNDS);
    assert_eq!(wheel.rounds_between(7, 1), 3);
    assert_eq!(wheel.rounds_between(1, 7), 0, "a late transfer is due now");
    let mut wheel = NettyWheel::with_slots_and_tick(0, 1, 1);
    wheel.start(u64::MAX, 1u64);
    fire(&mut wheel, 10);
    assert_eq!(wheel.entries.get(0).rounds, MANY_ROUNDS);
    // Pretend the clock is close to the end: the recomputed count fits again.
    wheel.next_tick = u64::MAX - 5;
    fire(&mut wheel, u64::MAX - 5);
    assert_eq!(wheel.entries.get(0).rounds, 4);
    assert_eq!(fire(&mut wheel, u64::MAX), [1]);
    assert!(wheel.worn_out);
}
