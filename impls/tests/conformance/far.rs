//! Far deadlines and long moves: deadlines at `u64::MAX`, a huge `advance` that must not
//! step tick by tick (or, for a walker, costs the visits it declares), and many timers on
//! one deadline.

use crate::horizon::Reach;
use crate::suite::*;
use timerbench_impls::{Tick, TimerId, TimerQueue};

pub fn deadlines_at_and_near_u64_max<Q: TimerQueue<u64>>(name: &str) {
    let adapted = "deadlines_near_u64_max_held_without_walking_there";
    if let Some(reach) = walker::<Q>(name, adapted) {
        return deadlines_near_u64_max_held_without_walking_there::<Q>(name, reach);
    }
    let mut queue = Q::new();
    let max = u64::MAX;
    for deadline in [max, max - 1, max - 63, max - 64, max - 4096, 1 << 63, max] {
        queue.start(deadline, deadline);
    }
    assert!(
        advance(&mut queue, (1 << 63) - 1, name).is_empty(),
        "{name}"
    );
    assert_eq!(
        values(&advance(&mut queue, 1 << 63, name)),
        [1 << 63],
        "{name}"
    );
    assert!(advance(&mut queue, max - 4097, name).is_empty(), "{name}");
    assert_eq!(
        values(&advance(&mut queue, max - 1, name)),
        [max - 4096, max - 64, max - 63, max - 1],
        "{name}"
    );
    assert_eq!(
        values(&advance(&mut queue, max, name)),
        [max, max],
        "{name}"
    );
    assert!(queue.is_empty(), "{name}");
    // The clock at the very end: deadlines in the past and at now still fire, in order.
    queue.start(max, 3);
    queue.start(5, 1);
    queue.start(max - 1, 2);
    assert_eq!(queue.next_deadline(), Some(5), "{name}");
    assert_eq!(values(&advance(&mut queue, max, name)), [1, 2, 3], "{name}");
    assert!(advance(&mut queue, max, name).is_empty(), "{name}");
}

/// The counterpart of `deadlines_at_and_near_u64_max` for a walker, which cannot reach
/// the end of time: the same far deadlines are started beside near ones, some stopped;
/// `len` and `next_deadline` account for them while the clock moves as far as a walker
/// goes, the near timers fire alone, and every far one is still there to stop.
pub fn deadlines_near_u64_max_held_without_walking_there<Q: TimerQueue<u64>>(
    name: &str,
    reach: Reach,
) {
    let mut queue = Q::new();
    let max = u64::MAX;
    let far = [max, max - 1, max - 63, max - 64, max - 4096, 1 << 63, max];
    let ids: Vec<TimerId> = far.iter().map(|&d| queue.start(d, d)).collect();
    queue.start(300, 300);
    queue.start(5, 5);
    assert_eq!(queue.len(), 9, "{name}");
    let steps = queue.next_deadline_steps();
    let check_next = |queue: &mut Q, earliest: Tick| {
        let bound = queue.next_deadline().expect("pending");
        assert!(
            bound <= earliest,
            "{name}: next_deadline {bound} > {earliest}"
        );
        if steps == 1 {
            assert_eq!(bound, earliest, "{name}: an exact structure returns it");
        }
    };
    check_next(&mut queue, 5);
    assert_eq!(queue.stop(ids[1]), Some(max - 1), "{name}");
    assert_eq!(queue.stop(ids[5]), Some(1 << 63), "{name}");
    assert_eq!(queue.stop(ids[5]), None, "{name}: stopped once");
    assert_eq!(queue.len(), 7, "{name}");
    assert_eq!(values(&advance(&mut queue, 300, name)), [5, 300], "{name}");
    check_next(&mut queue, max - 4096);
    let horizon = queue.now() + reach.max_move();
    assert!(advance(&mut queue, horizon, name).is_empty(), "{name}");
    assert_eq!(queue.len(), 5, "{name}: the far timers are all pending");
    check_next(&mut queue, max - 4096);
    let mut stopped: Vec<u64> = [0, 2, 3, 4, 6]
        .into_iter()
        .filter_map(|i| queue.stop(ids[i]))
        .collect();
    stopped.sort_unstable();
    assert_eq!(
        stopped,
        [max - 4096, max - 64, max - 63, max, max],
        "{name}"
    );
    assert!(queue.is_empty(), "{name}");
    assert_eq!(queue.next_deadline(), None, "{name}");
    // A deadline in the past still fires on the next move, before a later one.
    queue.start(queue.now() + 2, 2);
    queue.start(7, 1);
    let to = queue.now() + 2;
    assert_eq!(values(&advance(&mut queue, to, name)), [1, 2], "{name}");
}

pub fn huge_advance_does_not_step_tick_by_tick<Q: TimerQueue<u64>>(name: &str) {
    let adapted = "walked_advance_costs_a_visit_per_step (a walker's declared nature)";
    if let Some(reach) = walker::<Q>(name, adapted) {
        return walked_advance_costs_a_visit_per_step::<Q>(name, reach);
    }
    // Generous against a few dozen structural steps, hopeless for 2^40 ticks.
    const WORK_LIMIT: u64 = 10_000;
    for base in [0u64, 12_345_678_901] {
        let mut queue = Q::new();
        advance(&mut queue, base, name);
        let jump = 1u64 << 40;
        for (value, delay) in [3, 1 << 20, (1 << 39) + 7, jump - 1, jump]
            .into_iter()
            .enumerate()
        {
            queue.start(base + delay, value as u64);
        }
        let before = queue.work();
        let fired = advance(&mut queue, base + jump, name);
        let work = queue.work() - before;
        assert_eq!(values(&fired), [0, 1, 2, 3, 4], "{name}");
        assert!(
            work <= WORK_LIMIT,
            "{name}: advance by 2^40 ticks with 5 timers cost {work} steps"
        );
        let before = queue.work();
        advance(&mut queue, base + 2 * jump, name);
        let work = queue.work() - before;
        assert!(
            work <= WORK_LIMIT,
            "{name}: advance by 2^40 empty ticks cost {work} steps"
        );
        // And to the end of time with one timer there.
        queue.start(u64::MAX, 9);
        let before = queue.work();
        assert_eq!(values(&advance(&mut queue, u64::MAX, name)), [9], "{name}");
        let work = queue.work() - before;
        assert!(
            work <= WORK_LIMIT,
            "{name}: advance to u64::MAX cost {work} steps"
        );
    }
}

/// The honest opposite of `huge_advance_does_not_step_tick_by_tick` for a structure that
/// declares `EmptyTime::Walked { step }`: a move of N ticks costs it about N / step
/// structural steps (`work()`), at least one per bucket, and no more than a few per
/// bucket with a thousand far timers pending and a few due on the way. A structure that
/// did not walk would not need the declaration; one whose walk grew with its pending
/// timers, or a `work()` that counted nothing, fails.
pub fn walked_advance_costs_a_visit_per_step<Q: TimerQueue<u64>>(name: &str, reach: Reach) {
    let mut queue = Q::new();
    for value in 0..1_000u64 {
        queue.start((1 << 40) + value, value);
    }
    for ticks in [
        reach.ticks(1 << 12),
        reach.ticks(1 << 16),
        reach.ticks(1 << 20),
    ] {
        let visits = reach.visits(ticks);
        for (phase, due) in [("with timers due", true), ("over empty time", false)] {
            let base = queue.now();
            if due {
                for delay in [3, ticks / 2, ticks - 1, ticks] {
                    queue.start(base + delay, delay);
                }
            }
            let before = queue.work();
            let fired = advance(&mut queue, base + ticks, name);
            let work = queue.work() - before;
            let expected: &[u64] = if due {
                &[3, ticks / 2, ticks - 1, ticks]
            } else {
                &[]
            };
            assert_eq!(values(&fired), expected, "{name}: {phase}");
            assert!(
                work >= visits,
                "{name}: a move of {ticks} ticks {phase} cost {work} steps, fewer than the \
                 {visits} bucket visits it declares"
            );
            assert!(
                work <= 4 * visits + 1_000,
                "{name}: a move of {ticks} ticks {phase} cost {work} steps, more than a few \
                 per bucket visit ({visits})"
            );
        }
    }
    assert_eq!(queue.len(), 1_000, "{name}");
}

pub fn hundred_thousand_timers_on_one_deadline<Q: TimerQueue<u64>>(name: &str) {
    const COUNT: u64 = 100_000;
    let mut queue = Q::new();
    advance(&mut queue, 7, name);
    for value in 0..COUNT {
        queue.start(1_000, value);
    }
    assert_eq!(queue.len(), COUNT as usize, "{name}");
    assert!(advance(&mut queue, 999, name).is_empty(), "{name}");
    let fired = advance(&mut queue, 1_000, name);
    assert_eq!(fired.len(), COUNT as usize, "{name}");
    let mut seen = values(&fired);
    seen.sort_unstable();
    assert!(seen.iter().copied().eq(0..COUNT), "{name}: each fires once");
    assert!(queue.is_empty(), "{name}");
}
