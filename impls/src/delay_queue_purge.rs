//! `delay-queue-purge`: Kafka 0.8's request purgatory, a binary heap of deadlines whose
//! completed requests stay in the heap until a purge pass or until they reach the root.
//!
//! # The idea
//!
//! Before the 2015 timing wheel (KAFKA-1989), Kafka's broker parked every delayed produce
//! and fetch request in `RequestPurgatory` (`core/src/main/scala/kafka/server/
//! RequestPurgatory.scala`): each request went into a `java.util.concurrent.DelayQueue`,
//! a binary-heap `PriorityQueue` ordered by expiry, watched by an `ExpiredRequestReaper`
//! thread. A request satisfied before its timeout was *not* taken out of the heap (the
//! queue's `remove(Object)` is a linear search): its `satisfied` flag was set, and the
//! reaper dropped it when it reached the head (`pollExpired` loops past satisfied ones).
//! So that these completed requests did not pile up, the reaper ran `purgeSatisfied`, a
//! pass over the whole queue removing every satisfied request, once a counter passed the
//! purge interval (`fetch.purgatory.purge.interval.requests`,
//! `producer.purgatory.purge.interval.requests`, 1,000 by default). The 2015 redesign
//! (KAFKA-1989) replaced it with the hierarchical timing wheel of `kafka-wheel`, from which
//! a completed request leaves at once.
//!
//! # As in the source, and what the contract changes
//!
//! - **As in Kafka:** one binary min-heap of every request not yet expired, completed or
//!   not; `stop` (a completed request) marks instead of removing; expiry pops the root and
//!   drops the completed entries it meets; a purge pass removes every completed entry at
//!   once when their count reaches `purge_interval`.
//! - **The mark is the handle's generation.** A stopped timer's value is handed back at
//!   once and its arena slot freed at once (the contract wants both); the heap element
//!   stays, holding the arena index and the generation the timer had. An element is
//!   completed exactly when that pair no longer resolves in the arena, so a dead element
//!   can never fire, nor be mistaken for the slot's next occupant.
//! - **What triggers the purge.** The three versions of `RequestPurgatory.scala` read
//!   differ: the oldest, without a purge interval, purged (from `enqueue`) when more than
//!   100 requests were unsatisfied and they were fewer than half of the queue; the two with
//!   `purgeInterval` compared a count with it in the reaper's loop, one the requests watched
//!   since the last purge, the other the queue's whole size (which, with more than
//!   `purgeInterval` requests pending, purges on every pass of the loop).
//!   There is no reaper thread here and the clock may not move for a long time, so the
//!   purge runs inside the `stop` that makes the count of completed entries still in the
//!   heap reach `purge_interval`: the count the purge exists to bound. The garbage is thus
//!   below `purge_interval` heap elements between operations, always.
//! - **The purge is one linear rebuild.** `purgeSatisfied` walks `DelayQueue.iterator()`,
//!   a snapshot copy of the array whose `remove` searches the live queue for the element
//!   by identity: O(n) per request removed, so a purge was O(n x purged). Here a purge keeps
//!   the live elements in place (`retain`) and rebuilds the heap bottom-up (Floyd): O(n).
//! - **`next_deadline` drops completed roots.** Kafka's reaper would wake at a completed
//!   root's deadline and find nothing to do; an exact `next_deadline` pops such roots first.
//! - **No restart in place.** A `DelayQueue` cannot move an element; `restart` is `stop`
//!   then `start`, and leaves a completed element behind like any stop.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | heap element: deadline (8), arena index (4), generation (4) | 16 |
//! | arena slot: value (8), unused link (4), generation (4) | 16 |
//! | **total per pending timer** | **32** |
//! | a stopped timer until purged or popped: its heap element | 16 |
//!
//! # Costs (n heap elements, live and completed; P = `purge_interval`)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(log n) sift-up; O(1) on average for random deadlines; plus a copy of the heap and the arena when they double (`Vec`s by default, segments that never copy with the feature `segmented-storage`) |
//! | `stop` | O(1) to free the value; every P-th stop runs a purge, O(n): O(n / P) amortised |
//! | `restart` | `stop` then `start` |
//! | `advance`, per fired timer | O(log n): pop the root |
//! | `advance`, per completed element reaching the root | O(log n): pop and drop it |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `next_deadline` | O(1), plus O(log n) per completed root it drops; exact |
//!
//! # Empty time
//!
//! Skipped: `advance` compares the root's deadline with `to` and stops, so a jump of
//! 2^40 ticks costs one comparison per element it pops.
//!
//! # Precision
//!
//! Exact: the heap yields live timers in deadline order, and a completed element is never
//! fired.
//!
//! # Invariants
//!
//! - `heap[i].deadline >= heap[(i - 1) / 2].deadline` for every `i > 0`;
//! - every pending timer has exactly one heap element, the one whose `(entry, generation)`
//!   resolves in the arena; every other element is completed, and `completed` counts them;
//! - `completed < purge_interval` between operations.

use crate::arena::{Arena, NIL};
use crate::binary_sift;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{Parameter, Parameters, Release};

/// Where the heap lives: a `Vec`, or segments with `segmented-storage`.
type HeapStore = crate::segmented::Storage<Queued>;

/// Kafka's default purge interval (`*.purgatory.purge.interval.requests`).
pub const DEFAULT_PURGE_INTERVAL: u64 = 1_000;

/// The largest accepted purge interval: the heap may hold that many completed elements.
pub const MAX_PURGE_INTERVAL: u64 = 1 << 30;

/// A heap element: the deadline, cached, and the arena slot and generation of the timer it
/// was pushed for. Live while `(entry, generation)` resolves in the arena.
#[derive(Clone, Copy, Debug)]
struct Queued {
    deadline: Tick,
    entry: u32,
    generation: u32,
}

impl Queued {
    #[inline]
    fn id(self) -> TimerId {
        TimerId::from_parts(self.entry, self.generation)
    }
}

/// See the module documentation.
pub struct DelayQueuePurge<V> {
    heap: HeapStore,
    /// The values of the pending timers; the arena link is unused.
    values: Arena<V>,
    /// Completed elements still in the heap.
    completed: usize,
    purge_interval: usize,
    /// Purge passes run so far (for tests and reports).
    purges: u64,
    now: Tick,
    work: u64,
}

impl<V> DelayQueuePurge<V> {
    /// Bytes one pending timer costs: its heap element and its arena slot.
    pub const BYTES_PER_TIMER: usize = std::mem::size_of::<Queued>() + Arena::<V>::SLOT_BYTES;

    /// An empty queue that purges when `purge_interval` completed elements are in the heap,
    /// with room for `capacity` pending timers.
    ///
    /// # Panics
    ///
    /// If `purge_interval` is not in `1..=MAX_PURGE_INTERVAL`.
    pub fn with_purge_interval(purge_interval: u64, capacity: usize) -> Self {
        assert!(
            (1..=MAX_PURGE_INTERVAL).contains(&purge_interval),
            "purge_interval must be in 1..={MAX_PURGE_INTERVAL}, got {purge_interval}"
        );
        DelayQueuePurge {
            heap: HeapStore::with_capacity(capacity),
            values: Arena::with_capacity(capacity),
            completed: 0,
            // Checked above: at most 2^30.
            purge_interval: purge_interval as usize,
            purges: 0,
            now: 0,
            work: 0,
        }
    }

    /// Completed (stopped) elements still in the heap: the garbage.
    pub fn completed(&self) -> usize {
        self.completed
    }

    /// Purge passes run so far.
    pub fn purges(&self) -> u64 {
        self.purges
    }

    #[inline]
    fn is_live(&self, element: Queued) -> bool {
        self.values.resolve(element.id()).is_some()
    }

    /// `purgeSatisfied`: keeps the live elements and rebuilds the heap bottom-up.
    fn purge(&mut self) {
        self.purges += 1;
        self.work += self.heap.len() as u64;
        let values = &self.values;
        self.heap
            .retain(|element| values.resolve(element.id()).is_some());
        self.completed = 0;
        for position in (0..self.heap.len() / 2).rev() {
            self.sift_down(position);
        }
    }

    /// Moves the element at `position` towards the root until its parent is not later.
    fn sift_up(&mut self, position: usize) {
        // Nothing keeps a heap position (a stop leaves its element where it is), so there is
        // no back-index to update.
        self.work += binary_sift::sift_up(&mut self.heap, position, |e| e.deadline, |_, _| {});
    }

    /// Moves the element at `position` towards the leaves until no child is earlier.
    fn sift_down(&mut self, position: usize) {
        self.work += binary_sift::sift_down(&mut self.heap, position, |e| e.deadline, |_, _| {});
    }

    /// Removes the root, which must exist, and returns it.
    fn pop_root(&mut self) -> Queued {
        let last = self.heap.pop().expect("the heap is not empty");
        match self.heap.first_mut() {
            Some(root) => {
                let popped = std::mem::replace(root, last);
                self.sift_down(0);
                popped
            }
            None => last,
        }
    }

    /// Panics with a message if an invariant written in the module documentation is
    /// broken. O(n): for tests.
    pub fn check_invariants(&self) {
        for child in 1..self.heap.len() {
            assert!(self.heap[(child - 1) / 2].deadline <= self.heap[child].deadline);
        }
        let live = self.heap.iter().filter(|&&e| self.is_live(e)).count();
        assert_eq!(
            live,
            self.values.len(),
            "one live element per pending timer"
        );
        assert_eq!(self.heap.len() - live, self.completed, "completed count");
        assert!(
            self.completed < self.purge_interval,
            "garbage past the interval"
        );
    }
}

impl<V> TimerQueue<V> for DelayQueuePurge<V> {
    /// `purge_interval`: Kafka's `*.purgatory.purge.interval.requests`.
    const PARAMETERS: &'static [Parameter] = &[Parameter {
        name: "purge_interval",
        default: DEFAULT_PURGE_INTERVAL,
        about: "completed requests left in the heap before a purge pass rebuilds it (Kafka's purgatory.purge.interval.requests)",
        accepts: "from 1 to 2^30",
        valid: |interval| (1..=MAX_PURGE_INTERVAL).contains(&interval),
    }];

    fn with_capacity(capacity: usize) -> Self {
        Self::with_purge_interval(DEFAULT_PURGE_INTERVAL, capacity)
    }

    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self {
        Self::with_purge_interval(parameters.get("purge_interval"), capacity)
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.values.insert(NIL, value);
        self.heap.push(Queued {
            deadline,
            entry: id.index(),
            generation: id.generation(),
        });
        self.sift_up(self.heap.len() - 1);
        id
    }

    /// Frees the value at once and leaves the heap element behind, completed; the stop
    /// that brings the completed count to `purge_interval` purges.
    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.values.resolve(id)?;
        self.work += 1;
        let (_, value) = self.values.remove(index);
        self.completed += 1;
        if self.completed >= self.purge_interval {
            self.purge();
        }
        Some(value)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        while let Some(&root) = self.heap.first() {
            if root.deadline > to {
                break;
            }
            self.pop_root();
            self.work += 1;
            if self.is_live(root) {
                let (_, value) = self.values.remove(root.entry);
                on_fire(root.id(), value, root.deadline);
            } else {
                self.completed -= 1;
            }
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        while let Some(&root) = self.heap.first() {
            if self.is_live(root) {
                return Some(root.deadline);
            }
            self.pop_root();
            self.completed -= 1;
            self.work += 1;
        }
        None
    }

    fn release(&self) -> Release {
        Release::Later(
            "(its 16-byte heap element; the value and arena slot go at once) when it \
             reaches the root, or by the purge pass that purge_interval stopped timers set off",
        )
    }

    crate::contract::len_now_work!(values.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_timer_costs_32_bytes_and_a_stopped_one_16() {
        assert_eq!(std::mem::size_of::<Queued>(), 16);
        assert_eq!(DelayQueuePurge::<u64>::BYTES_PER_TIMER, 32);
    }

    #[test]
    fn stopped_elements_stay_until_the_interval_then_go_at_once() {
        let mut queue = DelayQueuePurge::with_purge_interval(10, 0);
        let ids: Vec<_> = (0..100u64).map(|i| queue.start(1_000 + i, i)).collect();
        for (stopped, id) in ids.iter().take(9).enumerate() {
            assert_eq!(queue.stop(*id), Some(stopped as u64));
            queue.check_invariants();
        }
        assert_eq!(
            (queue.completed(), queue.heap.len(), queue.purges()),
            (9, 100, 0)
        );
        assert_eq!(queue.stop(ids[50]), Some(50));
        assert_eq!(
            (queue.completed(), queue.heap.len(), queue.purges()),
            (0, 90, 1)
        );
        queue.check_invariants();
    }

    #[test]
    fn completed_roots_are_dropped_by_expiry_and_by_next_deadline() {
        let mut queue = DelayQueuePurge::with_purge_interval(1_000, 0);
        let first = queue.start(10, 1);
        let second = queue.start(20, 2);
        queue.start(30, 3);
        queue.stop(first);
        queue.stop(second);
        assert_eq!(queue.completed(), 2);
        assert_eq!(queue.next_deadline(), Some(30));
        assert_eq!(queue.completed(), 0, "both completed roots dropped");
        let reused = queue.start(15, 4);
        assert_eq!(reused.index(), second.index(), "the freed slot is reused");
        queue.stop(reused);
        let mut fired = Vec::new();
        queue.advance(100, |_, value, deadline| fired.push((deadline, value)));
        assert_eq!(fired, [(30, 3)]);
        queue.check_invariants();
        assert_eq!(queue.completed(), 0);
    }

    #[test]
    fn a_purge_interval_of_one_is_eager() {
        let mut queue = DelayQueuePurge::with_purge_interval(1, 0);
        let ids: Vec<_> = (0..50u64).map(|i| queue.start((i * 37) % 50, i)).collect();
        for id in ids.iter().step_by(2) {
            queue.stop(*id);
            assert_eq!(queue.heap.len(), queue.len());
            queue.check_invariants();
        }
        assert_eq!(queue.purges(), 25);
    }
}
