//! The `restart` rows of the contract: observably `stop` then `start`, whether a structure
//! keeps the default or moves the entry in place.

use crate::counting_allocator::live_bytes;
use crate::horizon::Reach;
use crate::suite::{BASE_CLOCKS, WALKER_BASE_CLOCKS, advance, boundary_delays, values, walker};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timerbench_impls::{Release, TimerQueue};

/// A pending timer moved later and earlier fires at its new deadline only, carrying the
/// new value; `restart` returns the old value, and the old handle is stale afterwards.
pub fn restart_moves_a_pending_timer<Q: TimerQueue<u64>>(name: &str) {
    let adapted = "restart_moves_a_pending_timer_within_the_walk_horizon";
    if let Some(reach) = walker::<Q>(name, adapted) {
        return restart_moves_a_pending_timer_within_the_walk_horizon::<Q>(name, reach);
    }
    let delays: Vec<u64> = boundary_delays().filter(|&d| d < 1 << 40).collect();
    restart_moves_a_pending_timer_from::<Q>(name, BASE_CLOCKS, &delays);
}

/// The same check for a walker: from the walker's base clocks, with the boundary delays
/// below 2^19 ticks (with a step of 1), so that the clock moves at most 2^20 + 2.
pub fn restart_moves_a_pending_timer_within_the_walk_horizon<Q: TimerQueue<u64>>(
    name: &str,
    reach: Reach,
) {
    let delays: Vec<u64> = boundary_delays()
        .filter(|&d| d < reach.ticks(1 << 19))
        .collect();
    restart_moves_a_pending_timer_from::<Q>(name, WALKER_BASE_CLOCKS, &delays);
}

fn restart_moves_a_pending_timer_from<Q: TimerQueue<u64>>(
    name: &str,
    bases: &[u64],
    delays: &[u64],
) {
    for &base in bases {
        for &delay in delays {
            let mut queue = Q::new();
            advance(&mut queue, base, name);
            let neighbour = queue.start(base + delay / 2 + 1, 100);
            let first = queue.start(base + delay + 1, 1);
            let (later, old) = queue.restart(first, base + 2 * delay + 2, 2);
            assert_eq!(old, Some(1), "{name}: restart returns the old value");
            assert_eq!(queue.stop(first), None, "{name}: the old handle is stale");
            assert_eq!(queue.len(), 2, "{name}: a restart is no new timer");
            let (earlier, old) = queue.restart(later, base + delay / 4 + 1, 3);
            assert_eq!(old, Some(2), "{name}");
            assert_eq!(
                queue.stop(later),
                None,
                "{name}: stale after the second move"
            );
            let fired = advance(&mut queue, base + 2 * delay + 2, name);
            // Sorted: for tiny delays the two deadlines coincide, and order among equal
            // deadlines is the structure's own.
            let mut got: Vec<_> = fired.iter().map(|f| (f.deadline, f.value, f.id)).collect();
            got.sort();
            let mut expected = vec![
                (base + delay / 4 + 1, 3, earlier),
                (base + delay / 2 + 1, 100, neighbour),
            ];
            expected.sort();
            assert_eq!(got, expected, "{name}: base {base}, delay {delay}");
        }
    }
}

/// A restart of a handle that names no pending timer (fired, stopped, never issued) starts
/// a new timer and returns no old value.
pub fn restart_of_a_timer_not_pending_is_a_start<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    let fired = queue.start(5, 1);
    let stopped = queue.start(50, 2);
    assert_eq!(queue.stop(stopped), Some(2), "{name}");
    assert_eq!(values(&advance(&mut queue, 5, name)), [1], "{name}");
    let (again, old) = queue.restart(fired, 20, 3);
    assert_eq!(old, None, "{name}: a fired timer has no old value");
    let (revived, old) = queue.restart(stopped, 10, 4);
    assert_eq!(old, None, "{name}: a stopped timer has no old value");
    let forged = timerbench_impls::TimerId::from_parts(54_321, 7);
    let (fresh, old) = queue.restart(forged, 10, 5);
    assert_eq!(old, None, "{name}");
    assert_eq!(queue.len(), 3, "{name}: three starts");
    let fired = advance(&mut queue, 20, name);
    let mut got: Vec<_> = fired.iter().map(|f| (f.deadline, f.value, f.id)).collect();
    got.sort();
    let mut expected = vec![(10, 4, revived), (10, 5, fresh), (20, 3, again)];
    expected.sort();
    assert_eq!(got, expected, "{name}");
}

/// Restarting a past-due timer (deadline `<= now`) fires it on the next advance, and
/// restarting a due timer into the future keeps it from firing.
pub fn restart_to_and_from_the_past<Q: TimerQueue<u64>>(name: &str) {
    let mut queue = Q::new();
    advance(&mut queue, 1_000, name);
    let far = queue.start(1_000_000, 1);
    let (due, _) = queue.restart(far, 10, 2);
    let soon = queue.start(999, 3);
    let (moved, _) = queue.restart(soon, 5_000, 4);
    assert_eq!(values(&advance(&mut queue, 1_001, name)), [2], "{name}");
    assert_eq!(queue.stop(due), None, "{name}: it fired");
    assert_eq!(queue.stop(moved), Some(4), "{name}: it had moved to 5,000");
}

/// A refresh loop (every pending timer restarted over and over) neither leaks nor grows.
pub fn memory_stops_growing_under_restarts<Q: TimerQueue<u64>>(name: &str) {
    if let Release::Later(when) = Q::new().release() {
        eprintln!(
            "{name} frees a stopped timer's entry later ({when}): checked \
             memory_stops_growing_under_restarts_once_the_clock_passes_them"
        );
        return memory_stops_growing_under_restarts_once_the_clock_passes_them::<Q>(name);
    }
    let mut queue = Q::new();
    let mut random = SmallRng::seed_from_u64(91);
    let mut ids: Vec<_> = (0..1_000)
        .map(|value| queue.start(1_000 + random.next_u64() % 30_000, value))
        .collect();
    let mut refresh = |queue: &mut Q, ids: &mut Vec<_>, rounds: u64| {
        for round in 0..rounds {
            let pick = (random.next_u64() % ids.len() as u64) as usize;
            let deadline = queue.now() + 1_000 + random.next_u64() % 30_000;
            let (id, old) = queue.restart(ids[pick], deadline, round);
            assert!(old.is_some(), "{name}: every timer is pending");
            ids[pick] = id;
            if round % 64 == 0 {
                let to = queue.now() + 1;
                advance(queue, to, name);
            }
        }
    };
    refresh(&mut queue, &mut ids, 20_000);
    let before = live_bytes();
    refresh(&mut queue, &mut ids, 500_000);
    let after = live_bytes();
    const SLACK: isize = 4096;
    assert!(
        after <= before + SLACK,
        "{name}: live bytes grew from {before} to {after} over 500k restarts"
    );
    assert_eq!(queue.len(), 1_000, "{name}");
}

/// The refresh loop for a structure that keeps a restarted timer's old entry until later
/// ([`Release::Later`]): the clock must pass the old deadlines for their entries to go, so
/// it moves a tick every second restart, and each of the 1,000 timers is refreshed in turn
/// (every 1,000 restarts, 500 ticks) to a deadline 1,000 to 4,000 ticks ahead, so that none
/// fires. An old entry is then due within 4,000 ticks, 8,000 restarts: live bytes must not
/// grow between the 20,000th restart and the 520,000th. A structure that kept them would
/// hold 500k entries more.
pub fn memory_stops_growing_under_restarts_once_the_clock_passes_them<Q: TimerQueue<u64>>(
    name: &str,
) {
    const TIMERS: u64 = 1_000;
    let mut queue = Q::new();
    let mut random = SmallRng::seed_from_u64(91);
    let mut ids: Vec<_> = (0..TIMERS)
        .map(|value| queue.start(1_000 + random.next_u64() % 3_000, value))
        .collect();
    let mut refresh = |queue: &mut Q, ids: &mut Vec<_>, rounds: std::ops::Range<u64>| {
        for round in rounds {
            let pick = (round % TIMERS) as usize;
            let deadline = queue.now() + 1_000 + random.next_u64() % 3_000;
            let (id, old) = queue.restart(ids[pick], deadline, round);
            assert!(old.is_some(), "{name}: every timer is pending");
            ids[pick] = id;
            if round % 2 == 1 {
                let to = queue.now() + 1;
                let fired = advance(queue, to, name);
                assert!(
                    fired.is_empty(),
                    "{name}: a refreshed timer fired: {fired:?}"
                );
            }
        }
    };
    refresh(&mut queue, &mut ids, 0..20_000);
    let before = live_bytes();
    refresh(&mut queue, &mut ids, 20_000..520_000);
    let after = live_bytes();
    const SLACK: isize = 4096;
    assert!(
        after <= before + SLACK,
        "{name}: live bytes grew from {before} to {after} over 500k restarts, the clock \
         moving a tick every two"
    );
    assert_eq!(queue.len(), 1_000, "{name}");
}
