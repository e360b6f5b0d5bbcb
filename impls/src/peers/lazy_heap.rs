//! `std-heap-lazy` and `dary-heap-lazy`: an off-the-shelf heap with lazy deletion, the way
//! timers are usually built on a library priority queue that cannot remove an arbitrary
//! element.
//!
//! # The idea
//!
//! `std::collections::BinaryHeap` and the `dary_heap` crate's `QuaternaryHeap` offer
//! `push`, `peek` and `pop` and nothing else. Cancelling a timer therefore cannot take its
//! entry out: `stop` frees the timer's value at once (and returns it) but leaves the heap
//! entry behind as a *zombie*, recognised later because its generation no longer matches
//! the live timer of its slot. Zombies are skipped when they reach the root; and when
//! they outnumber a quarter of the pending timers the heap is rebuilt with only the live
//! entries (`retain`, O(n)), so that garbage stays bounded. This is the Go runtime's
//! scheme (timers marked deleted, `cleantimers` at the top, `adjusttimers` when
//! `deletedTimers > len/4`), and what Rust programs written on `BinaryHeap` do.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | heap entry: deadline (8), slot (4), generation (4) | 16 |
//! | arena slot for the value: value (8), link (4, unused), generation (4) | 16 |
//! | total per pending timer | 32 |
//! | plus per zombie (a stopped timer's heap entry, until skipped or rebuilt) | 16 |
//!
//! Zombies are real memory and are not hidden: the heap's `Vec` holds them, and whatever
//! counts allocations counts them. The rebuild rule keeps them to at most a quarter of the
//! pending timers plus [`REBUILD_SLACK`] (so at most 16 × 1.25 + 16 bytes of heap per
//! pending timer, plus the slack), and the `Vec`'s capacity is whatever the largest heap
//! (live plus zombies) needed. [`LazyHeap::zombies`] tells how many there are.
//!
//! # Costs (n pending timers, z zombies)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(log(n + z)) push; O(1) on average for random deadlines |
//! | `stop` | O(1): free the value, count a zombie; every ~n/4 stops an O(n + z) rebuild, O(1) amortised |
//! | `advance`, per fired timer | O(log(n + z)) pop, plus one pop per zombie reaching the root |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `next_deadline` | pops zombies off the root, then O(1); exact |
//!
//! # Empty time
//!
//! As for any heap: `advance` compares the root with `to` and stops.
//!
//! # Precision
//!
//! Exact at tick granularity: deadlines are kept as given, and every timer fires in the
//! `advance` that reaches its deadline. Stale handles are refused by the value arena's
//! generation. No limits beyond the arena's (u32 slots).

use crate::arena::Arena;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use std::cmp::Reverse;

/// Zombies tolerated regardless of size before a rebuild, so that a tiny heap is not
/// rebuilt on every stop.
pub const REBUILD_SLACK: usize = 64;

/// A heap entry: ordered by deadline, then slot, then generation (the tie-breaks only
/// make the order total). `Reverse` turns the max-heaps into min-heaps.
type Entry = Reverse<(Tick, u32, u32)>;

/// The three operations a library max-heap offers, plus `retain` for the rebuild.
pub trait LibraryHeap: Sized {
    /// An empty heap with room for `capacity` entries.
    fn with_capacity(capacity: usize) -> Self;
    /// Adds an entry.
    fn push(&mut self, entry: Entry);
    /// The greatest entry (the earliest deadline, through `Reverse`).
    fn peek(&self) -> Option<&Entry>;
    /// Removes the greatest entry.
    fn pop(&mut self) -> Option<Entry>;
    /// Keeps only the entries `keep` accepts, and restores the heap order.
    fn retain(&mut self, keep: impl FnMut(&Entry) -> bool);
    /// Entries held, zombies included.
    fn len(&self) -> usize;
    /// Whether no entry is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Entries the heap has room for.
    fn capacity(&self) -> usize;
}

impl LibraryHeap for std::collections::BinaryHeap<Entry> {
    fn with_capacity(capacity: usize) -> Self {
        std::collections::BinaryHeap::with_capacity(capacity)
    }
    #[inline]
    fn push(&mut self, entry: Entry) {
        std::collections::BinaryHeap::push(self, entry)
    }
    #[inline]
    fn peek(&self) -> Option<&Entry> {
        std::collections::BinaryHeap::peek(self)
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        std::collections::BinaryHeap::pop(self)
    }
    fn retain(&mut self, keep: impl FnMut(&Entry) -> bool) {
        std::collections::BinaryHeap::retain(self, keep)
    }
    fn len(&self) -> usize {
        std::collections::BinaryHeap::len(self)
    }
    fn capacity(&self) -> usize {
        std::collections::BinaryHeap::capacity(self)
    }
}

impl LibraryHeap for dary_heap::QuaternaryHeap<Entry> {
    fn with_capacity(capacity: usize) -> Self {
        dary_heap::QuaternaryHeap::with_capacity(capacity)
    }
    #[inline]
    fn push(&mut self, entry: Entry) {
        dary_heap::QuaternaryHeap::push(self, entry)
    }
    #[inline]
    fn peek(&self) -> Option<&Entry> {
        dary_heap::QuaternaryHeap::peek(self)
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        dary_heap::QuaternaryHeap::pop(self)
    }
    fn retain(&mut self, keep: impl FnMut(&Entry) -> bool) {
        dary_heap::QuaternaryHeap::retain(self, keep)
    }
    fn len(&self) -> usize {
        dary_heap::QuaternaryHeap::len(self)
    }
    fn capacity(&self) -> usize {
        dary_heap::QuaternaryHeap::capacity(self)
    }
}

/// A library heap with lazy deletion. See the module documentation.
pub struct LazyHeap<H, V> {
    heap: H,
    /// The values of pending timers; a heap entry is live exactly when its
    /// `(slot, generation)` resolves here.
    values: Arena<V>,
    /// Heap entries whose timer was stopped.
    zombies: usize,
    now: Tick,
    work: u64,
}

/// `std-heap-lazy`: `std::collections::BinaryHeap` with lazy deletion.
pub type StdHeapLazy<V> = LazyHeap<std::collections::BinaryHeap<Entry>, V>;

/// `dary-heap-lazy`: `dary_heap::QuaternaryHeap` (4-ary) with lazy deletion.
pub type DaryHeapLazy<V> = LazyHeap<dary_heap::QuaternaryHeap<Entry>, V>;

impl<H: LibraryHeap, V> LazyHeap<H, V> {
    /// Stopped timers whose heap entries are still in the heap.
    pub fn zombies(&self) -> usize {
        self.zombies
    }

    /// Heap entries held, live and zombie.
    pub fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Bytes allocated by the heap and the value arena (capacity, zombies included).
    pub fn allocated_bytes(&self) -> usize {
        self.heap.capacity() * std::mem::size_of::<Entry>() + self.values.allocated_bytes()
    }

    #[inline]
    fn is_live(values: &Arena<V>, entry: &Entry) -> bool {
        let Reverse((_, slot, generation)) = *entry;
        values
            .resolve(TimerId::from_parts(slot, generation))
            .is_some()
    }

    /// Pops zombies off the root until the root is live or the heap is empty.
    #[inline]
    fn drop_dead_root(&mut self) {
        while let Some(root) = self.heap.peek() {
            if Self::is_live(&self.values, root) {
                break;
            }
            self.heap.pop();
            self.zombies -= 1;
            self.work += 1;
        }
    }

    /// Rebuilds the heap from its live entries.
    fn rebuild(&mut self) {
        let values = &self.values;
        self.heap.retain(|entry| Self::is_live(values, entry));
        self.work += self.heap.len() as u64 + self.zombies as u64;
        self.zombies = 0;
    }
}

impl<H: LibraryHeap, V> TimerQueue<V> for LazyHeap<H, V> {
    fn with_capacity(capacity: usize) -> Self {
        LazyHeap {
            heap: H::with_capacity(capacity),
            values: Arena::with_capacity(capacity),
            zombies: 0,
            now: 0,
            work: 0,
        }
    }

    #[inline]
    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.values.insert(0, value);
        self.heap
            .push(Reverse((deadline, id.index(), id.generation())));
        id
    }

    #[inline]
    fn stop(&mut self, id: TimerId) -> Option<V> {
        let slot = self.values.resolve(id)?;
        let (_, value) = self.values.remove(slot);
        self.zombies += 1;
        if self.zombies > self.values.len() / 4 + REBUILD_SLACK {
            self.rebuild();
        }
        Some(value)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        while let Some(&Reverse((deadline, slot, generation))) = self.heap.peek() {
            if deadline > to {
                break;
            }
            self.heap.pop();
            self.work += 1;
            let id = TimerId::from_parts(slot, generation);
            match self.values.resolve(id) {
                Some(slot) => {
                    let (_, value) = self.values.remove(slot);
                    on_fire(id, value, deadline);
                }
                None => self.zombies -= 1,
            }
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        self.drop_dead_root();
        self.heap.peek().map(|&Reverse((deadline, _, _))| deadline)
    }

    fn len(&self) -> usize {
        self.values.len()
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
    fn zombies_stay_bounded_and_are_reported() {
        let mut queue = StdHeapLazy::<u64>::new();
        let resident: Vec<_> = (0..1000u64)
            .map(|i| queue.start(1_000_000 + i, i))
            .collect();
        for i in 0..100_000u64 {
            let id = queue.start(10 + i % 7, i);
            assert_eq!(queue.stop(id), Some(i));
            assert!(queue.zombies() <= queue.len() / 4 + REBUILD_SLACK);
            assert_eq!(queue.heap_len(), queue.len() + queue.zombies());
        }
        assert_eq!(queue.len(), resident.len());
        assert_eq!(queue.next_deadline(), Some(1_000_000));
    }

    #[test]
    fn next_deadline_skips_zombies_at_the_root() {
        let mut queue = DaryHeapLazy::<u64>::new();
        let early = queue.start(5, 1);
        queue.start(9, 2);
        queue.stop(early);
        assert_eq!(queue.zombies(), 1);
        assert_eq!(queue.next_deadline(), Some(9));
        assert_eq!(queue.zombies(), 0);
    }
}
