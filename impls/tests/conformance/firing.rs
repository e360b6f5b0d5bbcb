//! The firing rows of the contract: when and in what order timers fire, at boundaries and
//! driven tick by tick.

use crate::horizon::Reach;
use crate::suite::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timerbench_impls::TimerQueue;

pub fn new_queue_is_empty<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    assert_eq!(queue.len(), 0, "{name}");
    assert!(queue.is_empty(), "{name}");
    assert_eq!(queue.now(), 0, "{name}");
    assert_eq!(queue.next_deadline(), None, "{name}");
    assert!(advance(&mut queue, 0, name).is_empty());
    assert!(advance(&mut queue, 10, name).is_empty());
    assert_eq!(queue.next_deadline(), None, "{name}");
    let mut sized = Q::with_capacity(1000);
    assert!(sized.is_empty(), "{name}");
    assert_eq!(sized.next_deadline(), None, "{name}");
}

pub fn past_and_present_deadlines_fire_on_the_next_advance<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    advance(&mut queue, 100, name);
    queue.start(50, 50);
    queue.start(100, 100);
    queue.start(0, 0);
    queue.start(99, 99);
    queue.start(101, 101);
    assert_eq!(queue.len(), 5, "{name}: start never fires anything");
    assert!(
        queue.next_deadline().is_some_and(|t| t == 0),
        "{name}: the earliest deadline is 0, and 0 is the only lower bound"
    );
    let fired = advance(&mut queue, 100, name);
    assert_eq!(
        values(&fired),
        [0, 50, 99, 100],
        "{name}: an advance to the same clock fires what is due, in deadline order"
    );
    assert_eq!(queue.len(), 1, "{name}");
    assert_eq!(values(&advance(&mut queue, 101, name)), [101], "{name}");
}

pub fn fires_in_deadline_order_within_one_advance<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    let mut random = SmallRng::seed_from_u64(0x9e37_79b9_7f4a_7c15);
    let mut expected = Vec::new();
    for value in 0..20_000u64 {
        // Spread over several wheel levels, with many ties.
        let deadline = match value % 4 {
            0 => random.next_u64() % 64,
            1 => random.next_u64() % 5_000,
            2 => random.next_u64() % 300_000,
            _ => (random.next_u64() % 1_000) * 1_000,
        };
        queue.start(deadline, value);
        expected.push((deadline, value));
    }
    let fired = advance(&mut queue, 1_000_000, name);
    let mut got: Vec<_> = fired.iter().map(|f| (f.deadline, f.value)).collect();
    got.sort_unstable();
    expected.sort_unstable();
    assert_eq!(
        got, expected,
        "{name}: every timer fires once with its deadline"
    );
    assert!(queue.is_empty(), "{name}");
}

pub fn fires_exactly_at_the_deadline_around_boundaries<Q: TimerQueue<u64>>(name: &str) {
    let adapted = "fires_exactly_at_boundaries_within_the_walk_horizon";
    if let Some(reach) = walker::<Q>(name, adapted) {
        return fires_exactly_at_boundaries_within_the_walk_horizon::<Q>(name, reach);
    }
    let delays: Vec<u64> = boundary_delays().collect();
    fires_exactly_at_the_deadlines::<Q>(name, BASE_CLOCKS, &delays);
}

/// The same check for a walker: from the walker's base clocks, every boundary delay it
/// can reach in one move (up to 2^20 + 1 with a step of 1: skynet's near block and
/// first two levels).
pub fn fires_exactly_at_boundaries_within_the_walk_horizon<Q: TimerQueue<u64>>(
    name: &str,
    reach: Reach,
) {
    let delays: Vec<u64> = boundary_delays()
        .filter(|&delay| delay <= reach.ticks(1 << 20) + 1)
        .collect();
    assert!(
        delays.len() > 30,
        "{name}: most boundaries stay within reach"
    );
    fires_exactly_at_the_deadlines::<Q>(name, WALKER_BASE_CLOCKS, &delays);
}

/// From each of `bases`, timers at each of `delays`, one at a time and then all at once,
/// each silent until the tick before its deadline and fired on it.
fn fires_exactly_at_the_deadlines<Q: TimerQueue<u64>>(name: &str, bases: &[u64], delays: &[u64]) {
    for &base in bases {
        // One timer at a time: silent until the tick before, fires on its tick.
        for &delay in delays {
            let mut queue = Q::new();
            advance(&mut queue, base, name);
            let deadline = base + delay;
            let id = queue.start(deadline, delay);
            assert!(
                advance(&mut queue, deadline - 1, name).is_empty(),
                "{name}: timer at {deadline} (now was {base}) fired early"
            );
            let fired = advance(&mut queue, deadline, name);
            assert_eq!(
                fired,
                [Fired {
                    deadline,
                    value: delay,
                    id
                }],
                "{name}: timer at {deadline} (started at {base}) must fire on its tick"
            );
        }
        // All at once, the clock walking from deadline to deadline in mixed steps.
        let mut queue = Q::new();
        advance(&mut queue, base, name);
        for &delay in delays {
            queue.start(base + delay, delay);
        }
        for &delay in delays {
            let deadline = base + delay;
            if deadline - 1 > queue.now() {
                assert!(
                    advance(&mut queue, deadline - 1, name).is_empty(),
                    "{name}: something fired before {deadline} (base {base})"
                );
            }
            assert_eq!(
                values(&advance(&mut queue, deadline, name)),
                [delay],
                "{name}: base {base}, deadline {deadline}"
            );
        }
        assert!(queue.is_empty(), "{name}");
    }
}

pub fn fires_exactly_when_driven_tick_by_tick<Q: TimerQueue<u64>>(name: &str) {
    let adapted = "fires_exactly_when_driven_tick_by_tick_from_reachable_clocks";
    if walker::<Q>(name, adapted).is_some() {
        return fires_exactly_when_driven_tick_by_tick_from_reachable_clocks::<Q>(name);
    }
    fires_exactly_when_driven_tick_by_tick_from::<Q>(name, &[0, 4000, (1 << 24) - 70]);
}

/// The same check for a walker, from clocks it reaches in one move: the last base is
/// just below 2^20 (where skynet's level 1 ends) instead of 2^24.
pub fn fires_exactly_when_driven_tick_by_tick_from_reachable_clocks<Q: TimerQueue<u64>>(
    name: &str,
) {
    fires_exactly_when_driven_tick_by_tick_from::<Q>(name, &[0, 4000, (1 << 20) - 70]);
}

fn fires_exactly_when_driven_tick_by_tick_from<Q: TimerQueue<u64>>(name: &str, bases: &[u64]) {
    for &base in bases {
        let mut queue = Q::new();
        advance(&mut queue, base, name);
        let mut deadlines: Vec<u64> = (0..300).map(|d| base + d).collect();
        deadlines.extend([4095, 4096, 4097, 4160, 4200].map(|d| base + d));
        for &deadline in &deadlines {
            queue.start(deadline, deadline);
        }
        let fired = advance(&mut queue, base, name);
        assert_eq!(values(&fired), [base], "{name}: the deadline equal to now");
        for now in base + 1..=base + 4200 {
            let fired = advance(&mut queue, now, name);
            let expected: Vec<u64> = deadlines.iter().copied().filter(|&d| d == now).collect();
            assert_eq!(values(&fired), expected, "{name}: tick {now}");
        }
        assert!(queue.is_empty(), "{name}");
    }
}
