//! Memory: it stops growing under start/stop pairs, and a pending timer stays within its
//! budget.

use crate::counting_allocator::live_bytes;
use crate::suite::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use timerbench_impls::{Release, TimerQueue};

pub fn memory_stops_growing_under_start_stop_pairs<Q: TimerQueue<u64>>(name: &str) {
    if let Release::Later(when) = Q::new().release() {
        eprintln!(
            "{name} frees a stopped timer's entry later ({when}): checked \
             memory_stops_growing_under_start_stop_pairs_once_the_clock_passes_them"
        );
        return memory_stops_growing_under_start_stop_pairs_once_the_clock_passes_them::<Q>(name);
    }
    let mut queue = Q::new();
    let mut random = SmallRng::seed_from_u64(77);
    for value in 0..1_000 {
        queue.start(1_000_000 + random.next_u64() % 1_000_000, value);
    }
    let churn = |queue: &mut Q, random: &mut SmallRng, pairs: u64| {
        for value in 0..pairs {
            let deadline = queue.now() + 1 + random.next_u64() % 5_000;
            let id = queue.start(deadline, value);
            assert_eq!(queue.stop(id), Some(value));
        }
    };
    churn(&mut queue, &mut random, 10_000);
    let before = live_bytes();
    churn(&mut queue, &mut random, 1_000_000);
    let after = live_bytes();
    // A structure may still meet a rare shape for the first time (a tall skip-list
    // tower); anything that grows with the number of pairs blows far past this.
    const SLACK: isize = 4096;
    assert!(
        after <= before + SLACK,
        "{name}: live bytes grew from {before} to {after} over 1M start/stop pairs"
    );
    assert_eq!(queue.len(), 1_000, "{name}");
}

/// The same churn for a structure that keeps a stopped timer's entry until later
/// ([`Release::Later`]): in rounds of 10,000 start/stop pairs, the clock moved past each
/// round's deadlines (nothing fires) before the next round, while the 1,000 resident
/// timers stay pending. Live bytes must not grow between the first round and the 101st:
/// the dead entries of a round are gone once the clock has passed them, as the
/// declaration promises, and a structure that kept them would hold 1M entries.
pub fn memory_stops_growing_under_start_stop_pairs_once_the_clock_passes_them<
    Q: TimerQueue<u64>,
>(
    name: &str,
) {
    const PAIRS_PER_ROUND: u64 = 10_000;
    const SPREAD: u64 = 5_000;
    let mut queue = Q::new();
    let mut random = SmallRng::seed_from_u64(77);
    for value in 0..1_000 {
        queue.start(1_000_000 + random.next_u64() % 1_000_000, value);
    }
    let churn = |queue: &mut Q, random: &mut SmallRng, rounds: u64| {
        for _ in 0..rounds {
            for value in 0..PAIRS_PER_ROUND {
                let deadline = queue.now() + 1 + random.next_u64() % SPREAD;
                let id = queue.start(deadline, value);
                assert_eq!(queue.stop(id), Some(value));
            }
            let past_them = queue.now() + SPREAD;
            let fired = advance(queue, past_them, name);
            assert!(fired.is_empty(), "{name}: a stopped timer fired: {fired:?}");
        }
    };
    churn(&mut queue, &mut random, 1);
    let before = live_bytes();
    churn(&mut queue, &mut random, 100);
    let after = live_bytes();
    const SLACK: isize = 4096;
    assert!(
        after <= before + SLACK,
        "{name}: live bytes grew from {before} to {after} over 1M start/stop pairs, the \
         clock moved past each 10,000"
    );
    assert_eq!(queue.len(), 1_000, "{name}");
}

pub fn memory_per_pending_timer_is_within_budget<Q: TimerQueue<u64>>(name: &str) {
    const COUNT: usize = 1 << 16;
    let empty_start = live_bytes();
    let empty = Q::new();
    let empty_bytes = live_bytes() - empty_start;
    drop(empty);

    let start = live_bytes();
    let mut queue = Q::with_capacity(COUNT);
    let mut random = SmallRng::seed_from_u64(99);
    for value in 0..COUNT as u64 {
        queue.start(random.next_u64() % (1 << 32), value);
    }
    let per_timer = (live_bytes() - start - empty_bytes) as f64 / COUNT as f64;
    eprintln!("{name}: {per_timer:.2} bytes per pending timer (measured, {COUNT} timers)");
    // Beyond the whole bytes of a budget, storage in segments (`impls/src/segmented.rs`)
    // keeps at most 32 bytes of headers per 4096 elements (a pointer per full segment, a
    // `Vec` header per spare one): under 0.01 bytes per timer per store.
    const SEGMENT_HEADERS: f64 = 0.05;
    if let Some(budget) = crate::memory_budget(name) {
        assert!(
            per_timer <= budget as f64 + SEGMENT_HEADERS,
            "{name}: {per_timer:.2} bytes per pending timer, budget {budget}"
        );
    }
    drop(queue);
}
