//! Each peer's documented limits: the panic past each one, and what holds just within it.

use timerbench_impls::TimerQueue;
use timerbench_impls::peers::delay_queue::TokioDelayQueue;
use timerbench_impls::peers::hhwt::Hhwt;
use timerbench_impls::peers::lazy_heap::{DaryHeapLazy, REBUILD_SLACK, StdHeapLazy};
use timerbench_impls::peers::tokio_sleep::{MAX_DELAY, TokioSleep};

#[test]
#[should_panic(expected = "2^36 - 2^30 ms or more past DelayQueue's wheel clock")]
fn delay_queue_refuses_deadlines_past_its_wheel_horizon() {
    let mut queue = TokioDelayQueue::<u64>::new();
    queue.start(10, 0);
    queue.start((1 << 36) - (1 << 30) + 10, 1);
}

#[test]
fn delay_queue_rebases_an_empty_queue_instead_of_refusing() {
    let mut queue = TokioDelayQueue::<u64>::new();
    queue.advance(1 << 40, |_, _, _| {});
    queue.start((1 << 40) + (1 << 35), 1);
    let mut fired = Vec::new();
    queue.advance((1 << 40) + (1 << 35), |_, value, deadline| {
        fired.push((deadline, value))
    });
    assert_eq!(fired, [((1 << 40) + (1 << 35), 1)]);
}

#[test]
#[should_panic(expected = "more than the adapter's limit of 2^40 ticks")]
fn hhwt_refuses_deadlines_past_2_to_the_40() {
    let mut queue = Hhwt::<u64>::new();
    queue.start((1 << 40) + 1, 0);
}

/// Delays just under 2^32 that the crate files a cycle early, and 2^32 − 1 at clock 0
/// that it cannot take: the adapter's carriers make them fire exactly.
#[test]
fn hhwt_fires_the_delays_the_crate_misfiles_exactly() {
    for start_at in [
        0u64,
        1,
        255,
        65_536,
        3_000_000_000,
        4_294_967_000,
        279_452_474_215,
    ] {
        let mut queue = Hhwt::<u64>::new();
        queue.advance(start_at, |_, _, _| {});
        let delays = [
            (1u64 << 32) - (1 << 24) + 1,
            (1 << 32) - 3_830_871,
            (1 << 32) - 256,
            (1 << 32) - 2,
            (1 << 32) - 1,
            1 << 32,
        ];
        for (value, delay) in delays.iter().enumerate() {
            queue.start(start_at + delay, value as u64);
        }
        let mut fired = Vec::new();
        let mut clock = start_at;
        while let Some(bound) = queue.next_deadline() {
            clock = bound.max(clock);
            queue.advance(clock, |_, value, deadline| {
                assert_eq!(deadline, clock, "fired at {clock}, due {deadline}");
                fired.push(value)
            });
        }
        assert_eq!(fired, [0, 1, 2, 3, 4, 5], "from {start_at}");
    }
}

#[test]
fn hhwt_reaches_overflow_deadlines() {
    let mut queue = Hhwt::<u64>::new();
    for (value, deadline) in [(1u64 << 32) + 5, 1 << 33, (1 << 39) + 3]
        .iter()
        .enumerate()
    {
        queue.start(*deadline, value as u64);
    }
    let mut fired = Vec::new();
    queue.advance(1 << 40, |_, value, deadline| fired.push((deadline, value)));
    assert_eq!(
        fired,
        [((1 << 32) + 5, 0), (1 << 33, 1), ((1 << 39) + 3, 2)]
    );
}

/// The lazy heaps' garbage: bounded by a quarter of the pending timers plus a slack,
/// and there to be seen.
#[test]
fn lazy_heaps_keep_their_zombies_bounded() {
    let mut std_heap = StdHeapLazy::<u64>::new();
    let mut dary_heap = DaryHeapLazy::<u64>::new();
    for i in 0..10_000u64 {
        std_heap.start(1_000_000 + i, i);
        dary_heap.start(1_000_000 + i, i);
    }
    let mut most = 0;
    for i in 0..200_000u64 {
        let a = std_heap.start(1 + i % 100, i);
        let b = dary_heap.start(1 + i % 100, i);
        std_heap.stop(a);
        dary_heap.stop(b);
        most = most.max(std_heap.zombies());
        assert!(std_heap.zombies() <= std_heap.len() / 4 + REBUILD_SLACK);
        assert!(dary_heap.zombies() <= dary_heap.len() / 4 + REBUILD_SLACK);
    }
    assert_eq!(most, 10_000 / 4 + REBUILD_SLACK);
    assert_eq!(std_heap.heap_len(), std_heap.len() + std_heap.zombies());
    assert!(std_heap.allocated_bytes() >= 32 * std_heap.len());
}

/// What the fuzz target found, each replayed as it was found.
fn fired<Q: TimerQueue<u64>>(queue: &mut Q, to: u64) -> Vec<(u64, u64)> {
    let mut fired = Vec::new();
    queue.advance(to, |_, value, deadline| fired.push((value, deadline)));
    fired
}

#[test]
fn tokio_a_past_due_start_after_a_long_empty_stretch() {
    let mut queue = TokioDelayQueue::<u64>::new();
    let far = (1 << 40) + (1 << 20);
    assert!(fired(&mut queue, far).is_empty());
    queue.start(far, 1);
    queue.start(0, 2);
    queue.start(far + 1, 3);
    assert_eq!(fired(&mut queue, far + 1), [(2, 0), (1, far), (3, far + 1)]);
}

#[test]
fn tokio_next_deadline_stays_exact_when_the_overdue_minimum_is_stopped() {
    let mut queue = TokioDelayQueue::<u64>::new();
    fired(&mut queue, 52);
    let early = queue.start(0, 1);
    queue.start(52, 2);
    assert_eq!(queue.next_deadline(), Some(0));
    queue.restart(early, 2_304_793_492, 3);
    assert_eq!(queue.next_deadline(), Some(52));
    let late = queue.start(40, 4);
    assert_eq!(queue.next_deadline(), Some(40));
    queue.stop(late);
    assert_eq!(queue.next_deadline(), Some(52));
}

/// Found by the fuzz target (its program): two timers due at 2^40 + 6904, one started
/// at tick 6904 and one at 2^26 - 2, then `advance(next_deadline)` until they fire. It
/// takes 595,461 rounds, more than one timer's `STEPS` (525,313), the bound declared
/// before; the rounds stop at both timers' carrier hops, and the bound is now per
/// pending timer.
#[test]
fn hhwt_next_deadline_rounds_stay_within_the_declared_bound_with_carriers() {
    let mut queue = Hhwt::<u64>::new();
    queue.start(1, 0);
    queue.start(6904, 1);
    queue.start(67_108_862, 2);
    assert_eq!(fired(&mut queue, 6904), [(0, 1), (1, 6904)]);
    let far = (1 << 40) + 6904;
    queue.start(far, 3);
    assert_eq!(fired(&mut queue, 67_108_862), [(2, 67_108_862)]);
    queue.start(far, 4);
    let declared = queue.next_deadline_steps();
    let mut rounds = 0u64;
    let fired = loop {
        rounds += 1;
        assert!(
            rounds <= u64::from(declared),
            "{rounds} rounds, {declared} declared"
        );
        let to = queue.next_deadline().unwrap().max(queue.now());
        let fired = fired(&mut queue, to);
        if !fired.is_empty() {
            break fired;
        }
    };
    assert!(rounds > u64::from(timerbench_impls::peers::hhwt::STEPS));
    let mut fired = fired;
    fired.sort_unstable();
    assert_eq!(fired, [(3, far), (4, far)]);
}

#[test]
fn hhwt_a_delay_whose_overflow_remainder_the_crate_misfiles() {
    for delay in [(1u64 << 36) - 1, (1 << 35) - 1, (1 << 32) + (1 << 31) - 1] {
        let mut queue = Hhwt::<u64>::new();
        queue.start(delay, 7);
        assert!(fired(&mut queue, delay - 1).is_empty(), "{delay}");
        assert_eq!(fired(&mut queue, delay + 1), [(7, delay)], "{delay}");
    }
}

/// tokio's runtime keeps deadlines past its top level's 2^36 ms (its top level is a ring
/// that a far timer goes round): each fires exactly and in order, the earlier ones
/// included (DelayQueue, whose top level lacks the runtime's now-slot offset, fired the
/// earlier timer of the first pair late), and `next_deadline` names each exactly.
#[test]
fn tokio_sleep_fires_deadlines_past_the_top_level_ring_exactly() {
    let far = [
        10,
        (1 << 36) - (1 << 30) + 10,
        (1 << 36) - 1,
        1 << 36,
        (1 << 36) + 5,
        (1 << 37) + 63,
        (1 << 40) + 3,
        MAX_DELAY,
    ];
    let mut queue = TokioSleep::<u64>::new();
    for (value, &deadline) in far.iter().enumerate().rev() {
        queue.start(deadline, value as u64);
    }
    let mut order = Vec::new();
    while let Some(next) = queue.next_deadline() {
        let fired = fired(&mut queue, next);
        assert_eq!(fired.len(), 1, "at {next}: {fired:?}");
        assert_eq!(fired[0].1, next, "next_deadline is exact");
        order.push(fired[0]);
    }
    let expected: Vec<_> = far
        .iter()
        .enumerate()
        .map(|(v, &d)| (v as u64, d))
        .collect();
    assert_eq!(order, expected);
    // The same in one jump, from a clock past a turn of the ring.
    let start = queue.now();
    for (value, &delay) in far.iter().enumerate() {
        queue.start(start + delay, value as u64);
    }
    let expected: Vec<_> = far
        .iter()
        .enumerate()
        .map(|(v, &d)| (v as u64, start + d))
        .collect();
    assert_eq!(fired(&mut queue, start + MAX_DELAY), expected);
}

#[test]
#[should_panic(expected = "past the adapter's limits")]
fn tokio_sleep_refuses_delays_past_its_limit() {
    let mut queue = TokioSleep::<u64>::new();
    queue.advance(1_000, |_, _, _| {});
    queue.start(1_000 + MAX_DELAY + 1, 0);
}

/// `next_deadline` moves the runtime's clock (its auto-advance), never the adapter's:
/// what it fired, and what a start or restart between the two clocks fires in the runtime
/// at once, is held until an `advance` reaches it.
#[test]
fn tokio_sleep_holds_what_the_runtime_fired_ahead_of_the_clock() {
    let mut queue = TokioSleep::<u64>::new();
    let a = queue.start(100, 1);
    queue.start(200, 2);
    assert_eq!(queue.next_deadline(), Some(100));
    assert_eq!(queue.held(), 1, "the runtime fired the timer at 100");
    assert_eq!(queue.now(), 0);
    // Between the adapter's clock (0) and the runtime's (100): fired in the runtime as it
    // registers, held.
    let c = queue.start(50, 3);
    assert_eq!(queue.next_deadline(), Some(50));
    assert_eq!(fired(&mut queue, 60), [(3, 50)]);
    assert_eq!(queue.stop(c), None, "fired");
    // A held timer restarted later is registered again and fires at its new deadline.
    let (a, old) = queue.restart(a, 150, 4);
    assert_eq!(old, Some(1));
    assert_eq!(queue.next_deadline(), Some(150));
    assert_eq!(fired(&mut queue, 149), []);
    // A held timer restarted into the past fires on the next advance, once.
    let (a, old) = queue.restart(a, 120, 5);
    assert_eq!(old, Some(4));
    assert_eq!(queue.next_deadline(), Some(120));
    assert_eq!(fired(&mut queue, 150), [(5, 120)]);
    assert_eq!(queue.stop(a), None);
    // A held timer stopped is not reported.
    let d = queue.start(170, 6);
    assert_eq!(queue.next_deadline(), Some(170));
    assert_eq!(queue.stop(d), Some(6));
    assert_eq!(queue.next_deadline(), Some(200));
    assert_eq!(fired(&mut queue, 1_000), [(2, 200)]);
    assert!(queue.is_empty());
    assert_eq!(queue.next_deadline(), None);
}
