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
//! (1.7 times slower on `start_stop/1M`, measured in `segmented.rs`).
//!
//! # Empty time
//!
//! The root is the earliest deadline, so `advance` compares it with `to` and stops: a jump
//! of 2^40 ticks costs one comparison.
//!
//! # Invariant
//!
//! `heap[i].deadline >= heap[(i - 1) / 2].deadline` for every `i > 0`, and for every
//! pending timer, `arena.link(heap[i].entry) == i`.

use crate::arena::Arena;
use crate::binary_sift;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};

/// Where the heap lives: a `Vec`, or segments with `segmented-storage`.
type HeapStore = crate::segmented::Storage<HeapSlot>;

/// A heap element: the deadline, cached, and the arena index of its timer.
#[derive(Clone, Copy, Debug)]
struct HeapSlot {
    deadline: Tick,
    entry: u32,
}

/// See the module documentation.
pub struct BinaryHeapTimers<V> {
    heap: HeapStore,
    /// Values, with each timer's heap position as the arena link.
    entries: Arena<V>,
    now: Tick,
    work: u64,
}

impl<V> BinaryHeapTimers<V> {
    /// Bytes one pending timer costs: its heap slot and its arena slot.
    pub const BYTES_PER_TIMER: usize = std::mem::size_of::<HeapSlot>() + Arena::<V>::SLOT_BYTES;

    /// Moves the slot at `position` towards the root until its parent is not later.
    fn sift_up(&mut self, position: usize) {
        // Every slot written learns its new position: the back-index `stop` starts from.
        self.work += binary_sift::sift_up(
            &mut self.heap,
            position,
            |slot| slot.deadline,
            |at, slot| self.entries.set_link(slot.entry, at as u32),
        );
    }

    /// Moves the slot at `position` towards the leaves until no child is earlier.
    fn sift_down(&mut self, position: usize) {
        self.work += binary_sift::sift_down(
            &mut self.heap,
            position,
            |slot| slot.deadline,
            |at, slot| self.entries.set_link(slot.entry, at as u32),
        );
    }

    /// Takes the slot at `position` out of the heap, filling the hole with the last slot.
    fn remove_at(&mut self, position: usize) -> HeapSlot {
        let removed = self.heap[position];
        let last = self.heap.pop().expect("position is in the heap");
        if position < self.heap.len() {
            self.heap[position] = last;
            if position > 0 && self.heap[(position - 1) / 2].deadline > last.deadline {
                self.sift_up(position);
            } else {
                self.sift_down(position);
            }
        }
        removed
    }
}

impl<V> TimerQueue<V> for BinaryHeapTimers<V> {
    fn with_capacity(capacity: usize) -> Self {
        BinaryHeapTimers {
            heap: HeapStore::with_capacity(capacity),
            entries: Arena::with_capacity(capacity),
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let position = self.heap.len();
        let id = self.entries.insert(position as u32, value);
        self.heap.push(HeapSlot {
            deadline,
            entry: id.index(),
        });
        self.sift_up(position);
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        let position = self.entries.link(index) as usize;
        self.remove_at(position);
        Some(self.entries.remove(index).1)
    }

    /// In place: the entry keeps its heap slot and arena slot, takes the new deadline and
    /// sifts up or down from where it is, one O(log n) sift instead of a removal and an
    /// insertion.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.entries.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        let position = self.entries.link(index) as usize;
        let (id, old) = self.entries.reissue(index, value);
        let earlier = deadline < self.heap[position].deadline;
        self.heap[position].deadline = deadline;
        if earlier {
            self.sift_up(position);
        } else {
            self.sift_down(position);
        }
        (id, Some(old))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        while let Some(&root) = self.heap.first() {
            if root.deadline > to {
                break;
            }
            self.remove_at(0);
            let id = self.entries.id(root.entry);
            let (_, value) = self.entries.remove(root.entry);
            on_fire(id, value, root.deadline);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        self.heap.first().map(|root| root.deadline)
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn work(&self) -> u64 {
        self.work
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for (position, slot) in queue.heap.iter().enumerate() {
            assert_eq!(queue.entries.link(slot.entry) as usize, position);
            if position > 0 {
                assert!(queue.heap[(position - 1) / 2].deadline <= slot.deadline);
            }
        }
    }
}
