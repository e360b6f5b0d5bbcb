//! `std-heap-lazy` and `dary-heap-lazy`: an off-the-shelf heap with lazy deletion, the way
//! timers are usually built on a library priority queue that cannot remove an arbitrary
//! element.
//!
//! # The idea
//!
//! `std::collections::BinaryHeap` and the `dary_heap` crate's `QuaternaryHeap` offer
//! `push`, `peek` and `pop` and nothing else. Cancelling a timer therefore cannot take its
//! entry out: `stop` frees the timer at once (and returns its value) but leaves the heap
//! entry behind as a *zombie*, recognised later because its tag no longer matches the live
//! timer of its slot. Zombies are skipped when they reach the root; and when they
//! outnumber a quarter of the pending timers the heap is rebuilt with only the live
//! entries (O(n)), so that garbage stays bounded. This is the Go runtime's scheme (timers
//! marked deleted, `cleantimers` at the top, `adjusttimers` when `deletedTimers > len/4`),
//! and what Rust programs written on `BinaryHeap` do.
//!
//! `restart` follows Go's `modtimer` (Go 1.14 to 1.22, `runtime/time.go`): the timer keeps
//! its one heap entry and only its deadline changes, kept beside its value; the entry's
//! key goes stale. A timer moved later is re-keyed when its stale entry reaches the root
//! (`timerModifiedLater` in `cleantimers`); a timer moved earlier lowers a watermark, and
//! before the clock or `next_deadline` reaches it the whole heap is rebuilt with true keys
//! (`timerModifiedEarliest`, `adjusttimers`). No restart adds a heap entry or a zombie.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | heap entry: key (8), slot (4), tag (4) | 16 |
//! | arena slot: deadline (8), value (8), tag of its heap entry (4), generation (4) | 24 |
//! | total per pending timer | 40 |
//! | plus per zombie (a stopped timer's heap entry, until skipped or rebuilt) | 16 |
//!
//! The deadline beside the value is what in-place modification costs (Go's timer carries
//! `when` and `nextwhen` for the same reason). Zombies are real memory and are not hidden:
//! the heap's `Vec` holds them, and whatever counts allocations counts them. The rebuild
//! rule keeps them to at most a quarter of the pending timers plus [`REBUILD_SLACK`] (so
//! at most 16 × 1.25 + 24 bytes per pending timer, plus the slack), and the `Vec`'s
//! capacity is whatever the largest heap (live plus zombies) needed.
//! [`LazyHeap::zombies`] tells how many there are.
//!
//! # Costs (n pending timers, z zombies)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(log(n + z)) push; O(1) on average for random deadlines |
//! | `stop` | O(1): free the timer, count a zombie; every ~n/4 stops an O(n + z) rebuild, O(1) amortised |
//! | `restart` | O(1): a new deadline in the arena; moved later, one pop and push when its entry reaches the root; moved earlier, an O(n + z) rebuild before it is due |
//! | `advance`, per fired timer | O(log(n + z)) pop, plus one pop per zombie reaching the root |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `next_deadline` | pops zombies and re-keys moved entries at the root, then O(1); exact |
//!
//! # Empty time
//!
//! As for any heap: `advance` compares the root with `to` and stops.
//!
//! # Precision
//!
//! Exact at tick granularity: every timer fires in the `advance` that reaches its true
//! deadline (a stale key is never trusted for firing). Stale handles are refused by the
//! arena's generation. No limits beyond the arena's (u32 slots).

use crate::arena::Arena;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use std::cmp::Reverse;

/// Zombies tolerated regardless of size before a rebuild, so that a tiny heap is not
/// rebuilt on every stop.
pub const REBUILD_SLACK: usize = 64;

/// A heap entry: its key (the deadline when it was pushed), the timer's arena slot, and
/// the entry's own tag (see [`LazyHeap`]); ordered by key, then slot, then tag (the
/// tie-breaks only make the order total). `Reverse` turns the max-heaps into min-heaps.
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
    /// The entries, in no particular order, for a rebuild.
    fn into_vec(self) -> Vec<Entry>;
    /// A heap of `entries` (Floyd's O(n) heapify).
    fn from_vec(entries: Vec<Entry>) -> Self;
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
    fn into_vec(self) -> Vec<Entry> {
        std::collections::BinaryHeap::into_vec(self)
    }
    fn from_vec(entries: Vec<Entry>) -> Self {
        std::collections::BinaryHeap::from(entries)
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
    fn into_vec(self) -> Vec<Entry> {
        dary_heap::QuaternaryHeap::into_vec(self)
    }
    fn from_vec(entries: Vec<Entry>) -> Self {
        dary_heap::QuaternaryHeap::from(entries)
    }
    fn len(&self) -> usize {
        dary_heap::QuaternaryHeap::len(self)
    }
    fn capacity(&self) -> usize {
        dary_heap::QuaternaryHeap::capacity(self)
    }
}

/// A library heap with lazy deletion and Go's in-place modification. See the module
/// documentation.
///
/// Each pending timer has exactly one live heap entry. An entry is live when its slot is
/// occupied and the slot's arena link equals the entry's tag (the generation the timer
/// had when the entry was pushed); anything else is a zombie. The arena holds each
/// timer's true deadline; an entry's key can be stale after a `restart`:
///
/// - key < deadline (moved later): harmless for ordering; fixed when the entry reaches the
///   root, by popping it and pushing it again with its deadline (Go's `timerModifiedLater`
///   handled in `cleantimers`/`runtimer`).
/// - key > deadline (moved earlier): the timer could be reached too late, so
///   `modified_earliest` is at most every such deadline, and before the clock or
///   `next_deadline` reaches it the heap is rebuilt with true keys (Go's
///   `timerModifiedEarliest` and `adjusttimers`).
pub struct LazyHeap<H, V> {
    heap: H,
    /// Pending timers: their deadline and value; the link is the tag of their live entry.
    timers: Arena<(Tick, V)>,
    /// Heap entries whose timer was stopped.
    zombies: usize,
    /// At most the deadline of every timer whose entry's key is later than it.
    modified_earliest: Option<Tick>,
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

    /// Bytes allocated by the heap and the timer arena (capacity, zombies included).
    pub fn allocated_bytes(&self) -> usize {
        self.heap.capacity() * std::mem::size_of::<Entry>() + self.timers.allocated_bytes()
    }

    /// The arena slot of the timer `entry` stands for, if the entry is live.
    #[inline]
    fn live_slot(timers: &Arena<(Tick, V)>, entry: &Entry) -> Option<u32> {
        let Reverse((_, slot, tag)) = *entry;
        (timers.live_link(slot) == Some(tag)).then_some(slot)
    }

    /// Makes the root a live entry keyed by its timer's deadline (or empties the heap):
    /// zombies are popped, an entry moved later is pushed again with its deadline.
    #[inline]
    fn settle_root(&mut self) {
        while let Some(root) = self.heap.peek() {
            let Reverse((key, _, tag)) = *root;
            match Self::live_slot(&self.timers, root) {
                None => {
                    self.heap.pop();
                    self.zombies -= 1;
                }
                Some(slot) => {
                    let deadline = self.timers.get(slot).0;
                    if deadline == key {
                        break;
                    }
                    self.heap.pop();
                    self.heap.push(Reverse((deadline, slot, tag)));
                }
            }
            self.work += 1;
        }
    }

    /// Rebuilds the heap from its live entries, each keyed by its timer's deadline.
    fn rebuild(&mut self) {
        let heap = std::mem::replace(&mut self.heap, H::with_capacity(0));
        let mut entries = heap.into_vec();
        self.work += entries.len() as u64;
        let timers = &self.timers;
        entries.retain_mut(|entry| match Self::live_slot(timers, entry) {
            Some(slot) => {
                entry.0.0 = timers.get(slot).0;
                true
            }
            None => false,
        });
        self.heap = H::from_vec(entries);
        self.zombies = 0;
        self.modified_earliest = None;
    }

    /// Rebuilds first if a timer moved earlier than its key is due by `to`.
    #[inline]
    fn adjust_before(&mut self, to: Tick) {
        if self
            .modified_earliest
            .is_some_and(|earliest| earliest <= to)
        {
            self.rebuild();
        }
    }
}

impl<H: LibraryHeap, V> TimerQueue<V> for LazyHeap<H, V> {
    fn with_capacity(capacity: usize) -> Self {
        LazyHeap {
            heap: H::with_capacity(capacity),
            timers: Arena::with_capacity(capacity),
            zombies: 0,
            modified_earliest: None,
            now: 0,
            work: 0,
        }
    }

    #[inline]
    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.timers.insert(0, (deadline, value));
        self.timers.set_link(id.index(), id.generation());
        self.heap
            .push(Reverse((deadline, id.index(), id.generation())));
        id
    }

    #[inline]
    fn stop(&mut self, id: TimerId) -> Option<V> {
        let slot = self.timers.resolve(id)?;
        let (_, (_, value)) = self.timers.remove(slot);
        self.zombies += 1;
        if self.zombies > self.timers.len() / 4 + REBUILD_SLACK {
            self.rebuild();
        }
        Some(value)
    }

    /// Go's `modtimer` on a timer in the heap: the entry stays where it is (no new entry,
    /// no zombie); only the deadline in the arena changes, and the handle is reissued.
    /// A move earlier than the old deadline lowers `modified_earliest` (an over-estimate of
    /// which entries are stale costs at most an early rebuild, never a late firing).
    #[inline]
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(slot) = self.timers.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        let (id, (old_deadline, old_value)) = self.timers.reissue(slot, (deadline, value));
        if deadline < old_deadline {
            self.modified_earliest =
                Some(self.modified_earliest.map_or(deadline, |e| e.min(deadline)));
        }
        (id, Some(old_value))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        self.adjust_before(to);
        loop {
            self.settle_root();
            let Some(&Reverse((deadline, slot, _))) = self.heap.peek() else {
                break;
            };
            if deadline > to {
                break;
            }
            self.heap.pop();
            self.work += 1;
            let id = self.timers.id(slot);
            let (_, (_, value)) = self.timers.remove(slot);
            on_fire(id, value, deadline);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        if self.modified_earliest.is_some() {
            self.rebuild();
        }
        self.settle_root();
        self.heap.peek().map(|&Reverse((deadline, _, _))| deadline)
    }

    crate::contract::len_now_work!(timers.len());
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
