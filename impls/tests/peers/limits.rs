//! Each peer's documented limits: the panic past each one, and what holds just within it.

use timerbench_impls::TimerQueue;
use timerbench_impls::peers::delay_queue::TokioDelayQueue;
use timerbench_impls::peers::hhwt::Hhwt;
use timerbench_impls::peers::lazy_heap::{DaryHeapLazy, REBUILD_SLACK, StdHeapLazy};

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
