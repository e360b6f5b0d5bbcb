//! Handles and queries: `stop` returns a value once, stale and never-issued handles are
//! refused, `next_deadline` bounds the earliest timer, `len` counts what is pending.

use crate::boundaries::BOUNDARY_DELAYS;
use crate::horizon::Reach;
use crate::suite::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timerbench_impls::{Tick, TimerId, TimerQueue};

pub fn stop_returns_the_value_once<Q: TimerQueue<u64>>(name: &str) {
    let adapted = "stop_returns_the_value_once_within_the_walk_horizon";
    if let Some(reach) = walker::<Q>(name, adapted) {
        return stop_returns_the_value_once_within_the_walk_horizon::<Q>(name, reach);
    }
    stop_returns_the_value_once_with_far::<Q>(name, 1 << 40);
}

/// The same check for a walker: the far timer, stopped, lies at the end of the longest
/// move (2^21 ticks with a step of 1) instead of 2^40, and the clock moves onto it.
pub fn stop_returns_the_value_once_within_the_walk_horizon<Q: TimerQueue<u64>>(
    name: &str,
    reach: Reach,
) {
    stop_returns_the_value_once_with_far::<Q>(name, reach.max_move() / 2);
}

fn stop_returns_the_value_once_with_far<Q: TimerQueue<u64>>(name: &str, far: Tick) {
    let mut queue = Q::new();
    let a = queue.start(10, 1);
    let b = queue.start(10, 2);
    let c = queue.start(far, 3);
    assert_eq!(queue.stop(a), Some(1), "{name}");
    assert_eq!(queue.stop(a), None, "{name}: a stopped timer stops once");
    assert_eq!(queue.stop(c), Some(3), "{name}: a far timer stops too");
    assert_eq!(queue.len(), 1, "{name}");
    assert_eq!(values(&advance(&mut queue, 2 * far, name)), [2], "{name}");
    assert_eq!(queue.stop(b), None, "{name}");
    assert_eq!(queue.stop(c), None, "{name}: nor after its deadline");
}

pub fn stop_of_a_fired_timer_is_none<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    let early = queue.start(5, 1);
    let late = queue.start(500, 2);
    assert_eq!(values(&advance(&mut queue, 5, name)), [1], "{name}");
    assert_eq!(queue.stop(early), None, "{name}");
    assert_eq!(queue.len(), 1, "{name}: the fired stop changed nothing");
    assert_eq!(queue.stop(late), Some(2), "{name}");
}

pub fn stop_of_never_issued_handles_is_none<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    let real = queue.start(10, 1);
    for forged in [
        TimerId::from_parts(12_345, 1),
        TimerId::from_parts(real.index(), real.generation().wrapping_add(2)),
        TimerId::from_parts(real.index(), 0),
        TimerId::from_parts(u32::MAX, u32::MAX),
        TimerId::from_parts(u32::MAX - 1, 1),
    ] {
        assert_eq!(queue.stop(forged), None, "{name}: {forged:?}");
    }
    assert_eq!(queue.len(), 1, "{name}");
    let fired = advance(&mut queue, 10, name);
    assert_eq!(fired.len(), 1, "{name}");
    assert_eq!(
        fired[0].id, real,
        "{name}: on_fire reports the handle start gave"
    );
}

pub fn stale_handles_leave_the_new_occupant_alone<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    // Stopped, then its storage reused.
    let stopped = queue.start(100, 1);
    assert_eq!(queue.stop(stopped), Some(1), "{name}");
    let reuser = queue.start(100, 2);
    assert_ne!(reuser, stopped, "{name}: a new timer gets a new handle");
    assert_eq!(queue.stop(stopped), None, "{name}: stale handle after stop");
    assert_eq!(queue.len(), 1, "{name}: the new timer is untouched");
    // Fired, then its storage reused.
    let fired_id = queue.start(50, 3);
    assert_eq!(values(&advance(&mut queue, 50, name)), [3], "{name}");
    let second_reuser = queue.start(200, 4);
    assert_eq!(
        queue.stop(fired_id),
        None,
        "{name}: stale handle after firing"
    );
    assert_eq!(queue.len(), 2, "{name}");
    let fired = advance(&mut queue, 200, name);
    assert_eq!(
        fired.iter().map(|f| (f.id, f.value)).collect::<Vec<_>>(),
        [(reuser, 2), (second_reuser, 4)],
        "{name}"
    );
    // Many generations of one slot.
    let mut stale = Vec::new();
    for value in 0..1_000 {
        let id = queue.start(1_000, value);
        stale.push(id);
        assert_eq!(queue.stop(id), Some(value), "{name}");
    }
    let survivor = queue.start(1_000, 7);
    for id in stale {
        assert_eq!(queue.stop(id), None, "{name}");
    }
    assert_eq!(queue.stop(survivor), Some(7), "{name}");
}

pub fn next_deadline_is_a_bound_that_reaches_the_earliest_timer<Q: TimerQueue<u64>>(name: &str) {
    let adapted = "next_deadline_reaches_the_earliest_timer_within_the_walk_horizon";
    if let Some(reach) = walker::<Q>(name, adapted) {
        return next_deadline_reaches_the_earliest_timer_within_the_walk_horizon::<Q>(name, reach);
    }
    next_deadline_reaches_the_earliest_timer_with_delays_below::<Q>(name, 1 << 30, 1 << 40);
}

/// The same check for a walker, whose clock follows the earliest timer over 400 rounds:
/// random delays below 2^16 ticks instead of 2^30 (with a step of 1), and the boundary
/// delays up to that.
pub fn next_deadline_reaches_the_earliest_timer_within_the_walk_horizon<Q: TimerQueue<u64>>(
    name: &str,
    reach: Reach,
) {
    let below = reach.ticks(1 << 16);
    next_deadline_reaches_the_earliest_timer_with_delays_below::<Q>(name, below, below);
}

/// Rounds of starts (random delays below `random_below`, boundary delays up to
/// `boundary_up_to`) and stops of the earliest, each followed by a sleep to
/// `next_deadline` as an event loop would.
fn next_deadline_reaches_the_earliest_timer_with_delays_below<Q: TimerQueue<u64>>(
    name: &str,
    random_below: Tick,
    boundary_up_to: Tick,
) {
    let boundaries: Vec<u64> = BOUNDARY_DELAYS
        .iter()
        .copied()
        .filter(|&delay| delay <= boundary_up_to)
        .collect();
    let mut queue = Q::new();
    assert_eq!(queue.next_deadline(), None, "{name}");
    let steps = queue.next_deadline_steps();
    assert!(steps >= 1, "{name}");
    let mut random = SmallRng::seed_from_u64(12345);
    let mut pending: Vec<(TimerId, u64)> = Vec::new();
    for round in 0..400 {
        // Keep a mix of near, boundary and far timers pending; stop some, often the
        // earliest, so that a structure's bookkeeping goes stale.
        for _ in 0..3 {
            let delay = match random.next_u64() % 3 {
                0 => random.next_u64() % 100,
                1 => boundaries[(random.next_u64() % boundaries.len() as u64) as usize],
                _ => random.next_u64() % random_below,
            };
            let deadline = queue.now() + delay;
            pending.push((queue.start(deadline, deadline), deadline));
        }
        if round % 2 == 0 {
            pending.sort_by_key(|&(_, deadline)| deadline);
            let (id, deadline) = pending.remove(0);
            assert_eq!(queue.stop(id), Some(deadline), "{name}");
        }
        let earliest = pending.iter().map(|&(_, d)| d).min();
        let bound = queue.next_deadline();
        assert_eq!(bound.is_some(), earliest.is_some(), "{name}");
        let (Some(bound), Some(earliest)) = (bound, earliest) else {
            continue;
        };
        assert!(
            bound <= earliest,
            "{name}: next_deadline {bound} > earliest {earliest}"
        );
        if steps == 1 {
            assert_eq!(
                bound, earliest,
                "{name}: an exact structure returns the deadline"
            );
        }
        // Sleep until the next timer, as an event loop would.
        let mut rounds = 0;
        loop {
            rounds += 1;
            let bound = queue.next_deadline().expect("still pending");
            assert!(
                bound <= earliest,
                "{name}: next_deadline passed the earliest timer"
            );
            let to = bound.max(queue.now());
            let fired = advance(&mut queue, to, name);
            if let Some(first) = fired.first() {
                assert_eq!(first.deadline, earliest, "{name}: the earliest fires first");
                pending.retain(|&(_, d)| d > queue.now());
                break;
            }
            assert!(
                rounds < steps,
                "{name}: the earliest timer did not fire within {steps} rounds"
            );
        }
    }
}

pub fn len_counts_pending_timers<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    let ids: Vec<TimerId> = (0..100).map(|i| queue.start(i * 10, i)).collect();
    assert_eq!(queue.len(), 100, "{name}");
    for id in ids.iter().step_by(3) {
        queue.stop(*id);
    }
    assert_eq!(queue.len(), 66, "{name}");
    let fired = advance(&mut queue, 495, name);
    assert_eq!(queue.len(), 66 - fired.len(), "{name}");
    assert_eq!(fired.len(), 33, "{name}");
    advance(&mut queue, 10_000, name);
    assert_eq!(queue.len(), 0, "{name}");
    assert!(queue.is_empty(), "{name}");
}
