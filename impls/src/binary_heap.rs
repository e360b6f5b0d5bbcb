//! `binary-heap`: a binary min-heap of deadlines with eager removal.
//!
//! # The idea
//!
//! The textbook priority queue (Williams 1964) as event loops use it for timers: libevent's
//! `min_heap`, libuv's timer heap, Java's `ScheduledThreadPoolExecutor`. Two details make it
//! a timer queue rather than a plain heap:
//!
//! - The heap array caches each timer's deadline next to its entry index, so sifting
//!   compares keys without leaving the array.
//! - Each arena entry keeps its current heap position (a back-index, updated on every
//!   move), so `stop` finds its timer in O(1) and removes it in O(log n) at once, instead of
//!   leaving a tombstone to be skipped later (the lazy deletion of `std`'s `BinaryHeap`
//!   users and of older Go runtimes).
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | heap slot: deadline (8), entry index (4), padding (4) | 16 |
//! | arena slot: value (8), heap position (4, the arena link), generation (4) | 16 |
//! | total | 32 |
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(log n) sift-up; O(1) on average for random deadlines; plus a copy of the heap and the arena when they double (see *Storage*) |
//! | `stop` | O(log n): move the last slot into the hole, sift it up or down |
//! | `restart` | O(log n): change the deadline in place, sift the entry up or down |
//! | `advance`, per fired timer | O(log n): pop the root |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `next_deadline` | O(1): the root's cached deadline; exact |
//!
//! # Storage
//!
//! The heap array and the arena are [`segmented::Storage`](crate::segmented::Storage): one
//! `Vec` each by default, segments that never copy with the feature `segmented-storage`
//! (its throughput cost is in METHODOLOGY.md, *Storage growth and segmented storage*).
//!
//! # Empty time
//!
//! The root is the earliest deadline, so `advance` compares it with `to` and stops: a jump
//! of 2^40 ticks costs one comparison.
//!
//! # Code
//!
//! `start`, `stop`, `restart` and `advance` are [`heap_core`](crate::heap_core)'s, shared
//! with `quad-heap`; this file is the array's shape: a plain array rooted at 0, and the
//! sift loops of [`binary_sift`](crate::binary_sift), shared with the other structures that
//! keep a binary heap.
//!
//! # Invariant
//!
//! `heap[i].deadline >= heap[(i - 1) / 2].deadline` for every `i > 0`, and for every
//! pending timer, `arena.link(heap[i].entry) == i`.

use crate::binary_sift;
use crate::contract::Tick;
use crate::heap_core::{HeapSlot, HeapTimers, Shape};

/// Where the heap lives: a `Vec`, or segments with `segmented-storage`.
type HeapStore = crate::segmented::Storage<HeapSlot>;

/// See the module documentation.
pub type BinaryHeapTimers<V> = HeapTimers<V, BinaryShape>;

/// A binary heap rooted at 0: the children of `i` are `2i + 1` and `2i + 2`.
pub struct BinaryShape {
    heap: HeapStore,
}

impl BinaryShape {
    /// The sift loops' view of a slot: its deadline.
    #[inline]
    fn key(slot: &HeapSlot) -> Tick {
        slot.deadline
    }
}

impl Shape for BinaryShape {
    const ROOT: usize = 0;
    const SLOT_BYTES: usize = std::mem::size_of::<HeapSlot>();
    /// The firing loop stays inside `advance`: with it out of line, this heap's timed empty
    /// tick ran slower on the wall clock (docs/evidence/2026-11-26-fair-fight.md).
    const FIRE_OUT_OF_LINE: bool = false;

    fn with_capacity(capacity: usize) -> Self {
        BinaryShape {
            heap: HeapStore::with_capacity(capacity),
        }
    }

    #[inline]
    fn slot(&self, position: usize) -> HeapSlot {
        self.heap[position]
    }

    #[inline]
    fn parent(position: usize) -> usize {
        (position - 1) / 2
    }

    #[inline]
    fn grow_to(&mut self, end: usize) {
        // The pushed copy is a placeholder: the sift writes the moving slot in the end.
        debug_assert_eq!(end, self.heap.len() + 1);
        self.heap.push(HeapSlot {
            deadline: Tick::MAX,
            entry: u32::MAX,
        });
    }

    #[inline]
    fn take_last(&mut self, last: usize) -> HeapSlot {
        debug_assert_eq!(last + 1, self.heap.len());
        self.heap.pop().expect("the heap holds the last position")
    }

    #[inline]
    fn sift_up(
        &mut self,
        position: usize,
        moving: HeapSlot,
        mut placed: impl FnMut(u32, usize),
    ) -> u64 {
        binary_sift::sift_up_into(&mut self.heap, position, moving, Self::key, |at, slot| {
            placed(slot.entry, at)
        })
    }

    #[inline]
    fn sift_down(
        &mut self,
        position: usize,
        moving: HeapSlot,
        _end: usize,
        mut placed: impl FnMut(u32, usize),
    ) -> u64 {
        binary_sift::sift_down_into(&mut self.heap, position, moving, Self::key, |at, slot| {
            placed(slot.entry, at)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::TimerQueue;

    #[test]
    fn a_pending_timer_costs_32_bytes() {
        assert_eq!(std::mem::size_of::<HeapSlot>(), 16);
        assert_eq!(BinaryHeapTimers::<u64>::BYTES_PER_TIMER, 32);
    }

    #[test]
    fn back_indices_follow_every_move() {
        let mut queue = BinaryHeapTimers::new();
        let ids: Vec<_> = (0..200u64)
            .map(|i| queue.start((i * 7919) % 211, i))
            .collect();
        for id in ids.iter().step_by(3) {
            queue.stop(*id);
        }
        for (i, id) in ids.iter().enumerate().skip(1).step_by(5) {
            queue.restart(*id, (i as u64 * 31) % 97, 0);
        }
        queue.check_back_indices();
    }
}
