//! The dense wheel's own checks: its layout, the back-indices its swap-removals keep, and
//! growth that moves nothing. The contract itself is the conformance suite's.

use super::*;
use crate::hierarchical_wheel::{LEVEL_BASE, RING_SLOTS};
use crate::wheel_core::SLOTS;
use chunks::{BLOCK_CHUNKS, ITEMS};
use drain::{DRAIN_AHEAD, DRAIN_BUDGET, HELD_AHEAD, Phase};
use entries::BLOCK;

type Wheel = DenseWheel<u64>;

/// Every item of every array names a pending entry whose back-index is that item, and the
/// arrays hold `len` items in all; each slot's bit is set exactly when it holds items (the
/// draining slot's also while the held array does); a held array has a draining slot.
fn check_back_indices(wheel: &Wheel) {
    let mut items = 0;
    let homes = (0..LISTS as u32).map(|home| (home, wheel.slots.heads[home as usize]));
    let extra = [(DUE, wheel.due), (HELD, wheel.held)];
    for (home, tail) in homes.chain(extra) {
        wheel.pool.for_each(tail, |address, index| {
            let timer = wheel.entries.get(index);
            assert_eq!((timer.home, timer.at), (home, address), "entry {index}");
            items += 1;
        });
        let holds = !tail.is_empty() || (home == wheel.draining && !wheel.held.is_empty());
        if (home as usize) < RING_SLOTS {
            let bit = wheel.slots.ring[home as usize / 64] >> (home % 64) & 1;
            assert_eq!(bit == 1, holds, "ring slot {home}'s bit");
        } else if (home as usize) < LISTS {
            let (level, slot) = ((home as usize - LEVEL_BASE) / SLOTS, home as usize % SLOTS);
            let bit = wheel.slots.occupied[level] >> slot & 1;
            assert_eq!(bit == 1, holds, "level {level} slot {slot}'s bit");
        }
    }
    assert!(wheel.held.is_empty() || wheel.draining != NOT_DRAINING);
    assert_eq!(items, wheel.len());
}

/// The items of the array `tail`.
fn count(wheel: &Wheel, tail: Tail) -> usize {
    let mut items = 0;
    wheel.pool.for_each(tail, |_, _| items += 1);
    items
}

#[test]
fn one_entry_is_32_bytes() {
    assert_eq!(Entries::<u64>::SLOT_BYTES, 32);
}

#[test]
fn stops_anywhere_in_a_slot_of_several_chunks_keep_every_back_index() {
    let mut wheel = Wheel::new();
    // Three chunks and a bit in one ring slot, and a few in a level slot.
    let count = 3 * ITEMS as u64 + 4;
    let mut ids: Vec<_> = (0..count).map(|v| (wheel.start(100, v), v)).collect();
    ids.extend((0..5).map(|v| (wheel.start(9_000, 100 + v), 100 + v)));
    check_back_indices(&wheel);
    // The first, the last, the middle of an old chunk, then every third of the rest.
    for position in [Some(0), None, Some(ITEMS as usize + 3)] {
        let (id, value) = ids.remove(position.unwrap_or(ids.len() - 1));
        assert_eq!(wheel.stop(id), Some(value));
        check_back_indices(&wheel);
    }
    let mut kept = Vec::new();
    for (n, (id, value)) in ids.into_iter().enumerate() {
        if n % 3 == 0 {
            assert_eq!(wheel.stop(id), Some(value));
            check_back_indices(&wheel);
        } else {
            kept.push(value);
        }
    }
    let mut fired = Vec::new();
    wheel.advance(u64::MAX, |_, value, _| fired.push(value));
    fired.sort_unstable();
    assert_eq!(fired, kept);
    check_back_indices(&wheel);
    assert_eq!(wheel.slots.ring, [0; RING_SLOTS / 64]);
    assert!(wheel.slots.heads.iter().all(|tail| tail.is_empty()));
}

#[test]
fn restarts_move_timers_between_slots_and_the_due_array() {
    let mut wheel = Wheel::new();
    wheel.advance(1_000, |_, _, _| unreachable!());
    let mut ids: Vec<_> = (0..40).map(|v| wheel.start(1_000 + v % 7, v)).collect();
    for (n, id) in ids.iter_mut().enumerate() {
        // Into the past, into a level, into the ring, in turn.
        let deadline = [500 + n as u64, 70_000, 1_002][n % 3];
        let (new, old) = wheel.restart(*id, deadline, 100 + n as u64);
        assert_eq!(old, Some(n as u64));
        *id = new;
        check_back_indices(&wheel);
    }
    // The due array's minimum is stopped: the next deadline comes from a rescan.
    assert_eq!(wheel.next_deadline(), Some(500));
    assert_eq!(wheel.stop(ids[0]), Some(100));
    assert_eq!(wheel.next_deadline(), Some(503));
    check_back_indices(&wheel);
    let mut fired = Vec::new();
    wheel.advance(u64::MAX, |_, value, deadline| fired.push((deadline, value)));
    assert!(fired.windows(2).all(|pair| pair[0].0 <= pair[1].0));
    assert_eq!(fired.len(), 39);
}

#[test]
fn a_level_slot_cascades_into_the_ring_and_fires_in_order() {
    let mut wheel = Wheel::new();
    // Level 2, slot 2 (8,192 to 12,287), more than a chunk of it, two deadlines.
    for v in 0..40 {
        wheel.start(12_000 - (v % 2) * 3_000, v);
    }
    assert_eq!(wheel.next_deadline(), Some(8_192), "the level slot's start");
    let mut fired = Vec::new();
    wheel.advance(9_000, |_, value, deadline| fired.push((deadline, value)));
    assert_eq!(fired.len(), 20);
    assert!(
        fired
            .iter()
            .all(|&(deadline, value)| deadline == 9_000 && value % 2 == 1)
    );
    check_back_indices(&wheel);
    assert_eq!(wheel.next_deadline(), Some(12_000));
}

/// Growth moves nothing: every block of entries and of chunks stays where it was
/// allocated, at the capacity it was allocated with, while the queue grows from empty to
/// 300,000 timers; so no `start` copies an entry or an item, whatever the size.
#[test]
fn growing_never_moves_a_block() {
    let mut wheel = Wheel::new();
    let mut entry_blocks = Vec::new();
    let mut chunk_blocks = Vec::new();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for value in 0..300_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        wheel.start(1 + state % 100_000, value);
        if value % 4_096 == 0 || value == 299_999 {
            let entries = wheel.entries.block_addresses();
            let chunks = wheel.pool.block_addresses();
            assert_eq!(entries[..entry_blocks.len()], entry_blocks[..]);
            assert_eq!(chunks[..chunk_blocks.len()], chunk_blocks[..]);
            (entry_blocks, chunk_blocks) = (entries, chunks);
        }
    }
    assert_eq!(entry_blocks.len(), 300_000_usize.div_ceil(BLOCK));
    // Full chunks, plus at most one partly filled chunk per slot.
    let bound = 300_000_u32.div_ceil(ITEMS) + LISTS as u32;
    assert!(wheel.pool.chunks_touched() <= bound);
    assert!(chunk_blocks.len() as u32 <= bound.div_ceil(BLOCK_CHUNKS));
    check_back_indices(&wheel);
}

/// A queue built with room for its timers allocates nothing more while it fills.
#[test]
fn a_presized_queue_does_not_grow() {
    let mut wheel = Wheel::with_capacity(50_000);
    let entries = wheel.entries.block_addresses();
    let chunks = wheel.pool.block_addresses().len();
    for value in 0..50_000 {
        wheel.start(5_000 + value % 3, value);
    }
    assert_eq!(wheel.entries.block_addresses(), entries);
    assert_eq!(wheel.pool.block_addresses().len(), chunks);
}

/// A first-level slot drains into the ring from `DRAIN_AHEAD` ticks before its start, at
/// most a budget (and a chunk) per move; what it holds back is only what the ring could not
/// take yet; what is left at the start is cascaded; and every timer fires at its deadline,
/// in order.
#[test]
fn a_first_level_slot_drains_into_the_ring_ahead_of_its_start() {
    let mut wheel = Wheel::new();
    // Slot 2 of the first level: deadlines 8,192 to 12,287, more than two budgets.
    let count_started = 2 * DRAIN_BUDGET as u64 + DRAIN_BUDGET as u64 / 2;
    for v in 0..count_started {
        wheel.start(8_192 + v * 4_096 / count_started, v);
    }
    let slot = LEVEL_BASE + 2 * SLOTS + 2;
    let begin = 8_192 - DRAIN_AHEAD;
    wheel.advance(begin - 1, |_, _, _| unreachable!());
    assert_eq!(
        wheel.draining, NOT_DRAINING,
        "nothing drains before the window"
    );
    assert_eq!(
        count(&wheel, wheel.slots.heads[slot]),
        count_started as usize
    );
    let mut left = count_started as usize;
    for now in begin..begin + 3 {
        wheel.advance(now, |_, _, _| unreachable!());
        check_back_indices(&wheel);
        let in_slot = count(&wheel, wheel.slots.heads[slot]);
        assert!(
            left - in_slot <= DRAIN_BUDGET + ITEMS as usize,
            "one budget a move"
        );
        assert!(
            left - in_slot >= DRAIN_BUDGET.min(left),
            "a whole budget a move"
        );
        left = in_slot;
    }
    assert_eq!(left, 0, "drained within three moves");
    wheel.advance(begin + 3, |_, _, _| unreachable!());
    assert_eq!(
        wheel.slots.level_bound(),
        8_192 - HELD_AHEAD,
        "with only held items left, the moves until their turn take the one-word path"
    );
    // Held: exactly the timers whose deadline was 4,096 or more ahead when taken out.
    let mut held = Vec::new();
    wheel.pool.for_each(wheel.held, |_, index| {
        held.push(wheel.entries.get(index).deadline)
    });
    assert!(!held.is_empty());
    assert!(held.iter().all(|&deadline| deadline >= begin + 4_096));
    assert!(held.len() <= (count_started * (DRAIN_AHEAD + 3) / 4_096) as usize + 1);
    // The held items' turn: those now less than 4,096 ahead go to the ring, the rest back
    // to the slot's array for its cascade, and nothing moves again before the start.
    let turn = 8_192 - HELD_AHEAD;
    wheel.advance(turn, |_, _, _| unreachable!());
    check_back_indices(&wheel);
    assert!(wheel.held.is_empty());
    let mut left_for_cascade = Vec::new();
    wheel.pool.for_each(wheel.slots.heads[slot], |_, index| {
        left_for_cascade.push(wheel.entries.get(index).deadline)
    });
    assert!(!left_for_cascade.is_empty());
    assert!(
        left_for_cascade
            .iter()
            .all(|&deadline| deadline >= turn + 4_096)
    );
    let in_range = held
        .iter()
        .filter(|&&deadline| deadline >= turn + 4_096)
        .count();
    assert_eq!(
        left_for_cascade.len(),
        in_range,
        "every held item still too far ahead"
    );
    assert_eq!(wheel.slots.level_bound(), 8_192);
    let mut fired = Vec::new();
    wheel.advance(u64::MAX, |_, value, deadline| fired.push((deadline, value)));
    assert_eq!(fired.len(), count_started as usize);
    assert!(fired.windows(2).all(|pair| pair[0].0 <= pair[1].0));
    for &(deadline, value) in &fired {
        assert_eq!(deadline, 8_192 + value * 4_096 / count_started);
    }
    assert_eq!(wheel.draining, NOT_DRAINING);
    check_back_indices(&wheel);
}

/// Starts, stops and restarts in every array while slots drain, against a plain model: each
/// move fires exactly the model's timers due by then, in deadline order, and the arrays
/// and bits stay consistent.
#[test]
fn drains_survive_stops_and_restarts_against_a_model() {
    use std::collections::BTreeMap;
    let mut wheel = Wheel::new();
    let mut model: BTreeMap<u64, (TimerId, u64)> = BTreeMap::new(); // value -> (id, deadline)
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut random = move |below: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below
    };
    let mut next_value = 0;
    for _ in 0..3_000 {
        let deadline = 4_096 + random(12_000);
        model.insert(next_value, (wheel.start(deadline, next_value), deadline));
        next_value += 1;
    }
    let mut now = 0;
    // Moves after which a slot drained and held some of it: the test must reach them.
    let mut holding = 0;
    // Moves after which the held items had their turn and some wait for the cascade.
    let mut done_with_items = 0;
    while now < 20_000 {
        for _ in 0..random(4) {
            let deadline = now + 1 + random(9_000);
            match random(3) {
                0 => {
                    model.insert(next_value, (wheel.start(deadline, next_value), deadline));
                    next_value += 1;
                }
                kind if !model.is_empty() => {
                    let key = *model
                        .keys()
                        .nth(random(model.len() as u64) as usize)
                        .unwrap();
                    let (id, _) = model.remove(&key).unwrap();
                    if kind == 1 {
                        assert_eq!(wheel.stop(id), Some(key));
                    } else {
                        let (id, old) = wheel.restart(id, deadline, next_value);
                        assert_eq!(old, Some(key));
                        model.insert(next_value, (id, deadline));
                        next_value += 1;
                    }
                }
                _ => {}
            }
        }
        now += random(3);
        let mut fired = Vec::new();
        wheel.advance(now, |_, value, deadline| fired.push((deadline, value)));
        assert!(fired.windows(2).all(|pair| pair[0].0 <= pair[1].0));
        fired.sort_unstable();
        let mut expected: Vec<_> = model
            .iter()
            .filter(|(_, (_, deadline))| *deadline <= now)
            .map(|(&value, &(_, deadline))| (deadline, value))
            .collect();
        expected.sort_unstable();
        assert_eq!(fired, expected, "fired by {now}");
        model.retain(|_, (_, deadline)| *deadline > now);
        holding += usize::from(!wheel.held.is_empty());
        let draining = wheel.draining as usize;
        done_with_items += usize::from(
            wheel.phase == Phase::Done
                && wheel.draining != NOT_DRAINING
                && !wheel.slots.heads[draining].is_empty(),
        );
        if now % 61 == 0 {
            check_back_indices(&wheel);
        }
    }
    check_back_indices(&wheel);
    assert!(
        holding > 100,
        "slots drained and held in {holding} moves only"
    );
    assert!(
        done_with_items > 10,
        "held items left for the cascade in {done_with_items} moves only"
    );
}
