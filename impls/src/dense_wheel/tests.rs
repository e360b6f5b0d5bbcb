//! The dense wheel's own checks: its layout, the back-indices its swap-removals keep, and
//! growth that moves nothing. The contract itself is the conformance suite's.

use super::*;
use crate::hierarchical_wheel::RING_SLOTS;
use chunks::{BLOCK_CHUNKS, ITEMS};
use entries::BLOCK;

type Wheel = DenseWheel<u64>;

/// Every item of every array names a pending entry whose back-index is that item, and the
/// arrays hold `len` items in all; each slot's bit is set exactly when it holds items.
fn check_back_indices(wheel: &Wheel) {
    let mut items = 0;
    let homes = (0..LISTS as u32).map(|home| (home, wheel.slots.heads[home as usize]));
    for (home, tail) in homes.chain([(DUE, wheel.due)]) {
        wheel.pool.for_each(tail, |address, index| {
            let timer = wheel.entries.get(index);
            assert_eq!((timer.home, timer.at), (home, address), "entry {index}");
            items += 1;
        });
        if (home as usize) < RING_SLOTS {
            let bit = wheel.slots.ring[home as usize / 64] >> (home % 64) & 1;
            assert_eq!(bit == 1, !tail.is_empty(), "ring slot {home}'s bit");
        }
    }
    assert_eq!(items, wheel.len());
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
