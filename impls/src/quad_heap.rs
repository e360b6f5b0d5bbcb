//! `quad-heap`: a 4-ary min-heap whose four siblings share one cache line.
//!
//! # The idea
//!
//! A d-ary heap trades a few more comparisons per level for fewer levels: with d = 4 a
//! heap of n timers is log4 n deep, half the binary heap's depth, and a sift-down reads
//! four children per level instead of two. That pays only if the four children cost one
//! memory access, so they are laid out side by side in one aligned 64-byte line. This is
//! the layout of libev's 4-heap (`EV_USE_4HEAP`, with its `HEAP0 = 3` offset) and of the
//! Go runtime's timer heap (`siftupTimer`/`siftdownTimer` in `runtime/time.go`).
//!
//! Positions start at `ROOT` = 3, and the children of position `k` are `4(k - 2)` to
//! `4(k - 2) + 3`: the root's children are 4..=7, position 4's are 8..=11, and in general
//! the children of `k` are exactly group `k - 2` of four slots. Storing the heap as a `Vec`
//! of 64-byte-aligned groups therefore puts every sibling set in one cache line; positions
//! 0..=2 are never used (48 bytes, once). The parent of `c` is `c / 4 + 2`.
//!
//! As in [`binary_heap`](crate::binary_heap), each slot caches its deadline and each arena
//! entry keeps its heap position, so `stop` removes eagerly in O(log n).
//!
//! A sift-down picks the earliest of four siblings by a branch-free tournament, so the next
//! level's address depends on this level's data and, past the cache, every level's miss
//! would wait for the one before (a binary heap's branchy sift lets the processor guess
//! ahead). So each level also reads the four groups the next level can be in, all at once:
//! on `hold` at 1M timers this made the quad heap about 15% faster, from 0.85× to parity
//! with the binary heap (see `touch_next_groups`).
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | heap slot: deadline (8), entry index (4), padding (4); four to a 64-byte line | 16 |
//! | arena slot: value (8), heap position (4, the arena link), generation (4) | 16 |
//! | total | 32 |
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(log4 n) sift-up, one comparison per level; plus a copy of the groups and the arena when they double (see *Storage*) |
//! | `stop` | O(log4 n): the last slot fills the hole and sifts up or down |
//! | `restart` | O(log4 n): change the deadline in place, sift the entry up or down |
//! | `advance`, per fired timer | O(log4 n) levels of up to four comparisons, one cache line each |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `next_deadline` | O(1): the root's cached deadline; exact |
//!
//! # Storage
//!
//! The groups and the arena are [`segmented::Storage`](crate::segmented::Storage): one
//! `Vec` each by default, segments that never copy with the feature `segmented-storage` (a
//! segment of groups is 256 KiB, 64-byte aligned, so a group never straddles two; 1.9 times
//! slower on `start_stop/1M`, measured in `segmented.rs`).
//!
//! # Empty time
//!
//! As for any heap: `advance` compares the root with `to` and stops.
//!
//! # Invariant
//!
//! For every position `c` past the root, `slot(c).deadline >= slot(c / 4 + 2).deadline`, and
//! for every pending timer, `arena.link(slot(p).entry) == p`.

use crate::arena::Arena;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};

/// Where the groups live: a `Vec`, or segments with `segmented-storage`.
type GroupStore = crate::segmented::Storage<Group>;

/// Position of the root: the first three positions pad the root's group so that every
/// sibling set starts a group.
const ROOT: usize = 3;

/// A heap element: the deadline, cached, and the arena index of its timer.
#[derive(Clone, Copy, Debug)]
struct HeapSlot {
    deadline: Tick,
    entry: u32,
}

const UNUSED: HeapSlot = HeapSlot {
    deadline: Tick::MAX,
    entry: u32::MAX,
};

/// Four sibling slots in one cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Group([HeapSlot; 4]);

/// The lane of the earliest of four siblings.
///
/// A tournament, two pairs and then their winners, instead of a running minimum: the two
/// first comparisons are independent and become flag arithmetic rather than branches, which
/// matters because on random deadlines every comparison is a coin toss for the branch
/// predictor. Lanes past the end of the heap hold [`UNUSED`] (deadline `u64::MAX`) and ties
/// go to the lower lane, so an unused lane never beats an occupied one.
#[inline]
fn earliest_lane(siblings: &[HeapSlot; 4]) -> usize {
    let low = (siblings[1].deadline < siblings[0].deadline) as usize;
    let high = 2 + (siblings[3].deadline < siblings[2].deadline) as usize;
    if siblings[high].deadline < siblings[low].deadline {
        high
    } else {
        low
    }
}

#[inline]
fn parent(position: usize) -> usize {
    position / 4 + 2
}

#[inline]
fn first_child(position: usize) -> usize {
    4 * (position - 2)
}

/// See the module documentation.
pub struct QuadHeapTimers<V> {
    groups: GroupStore,
    /// Pending timers; they occupy positions `ROOT..ROOT + len`.
    len: usize,
    /// Values, with each timer's heap position as the arena link.
    entries: Arena<V>,
    now: Tick,
    work: u64,
}

impl<V> QuadHeapTimers<V> {
    /// Bytes one pending timer costs: a quarter of a group and its arena slot.
    pub const BYTES_PER_TIMER: usize = std::mem::size_of::<Group>() / 4 + Arena::<V>::SLOT_BYTES;

    #[inline]
    fn slot(&self, position: usize) -> HeapSlot {
        self.groups[position / 4].0[position % 4]
    }

    /// Writes `slot` at `position` and records the position in its entry.
    #[inline]
    fn place(&mut self, position: usize, slot: HeapSlot) {
        self.groups[position / 4].0[position % 4] = slot;
        self.entries.set_link(slot.entry, position as u32);
    }

    /// One past the last occupied position.
    #[inline]
    fn end(&self) -> usize {
        ROOT + self.len
    }

    fn sift_up(&mut self, mut position: usize) {
        let moving = self.slot(position);
        while position > ROOT {
            let up = parent(position);
            let above = self.slot(up);
            if above.deadline <= moving.deadline {
                break;
            }
            self.place(position, above);
            position = up;
            self.work += 1;
        }
        self.place(position, moving);
    }

    fn sift_down(&mut self, mut position: usize) {
        let moving = self.slot(position);
        let end = self.end();
        loop {
            let first = first_child(position);
            if first >= end {
                break;
            }
            self.touch_next_groups(first);
            let siblings = &self.groups[first / 4].0;
            let earliest = earliest_lane(siblings);
            let child = siblings[earliest];
            if child.deadline >= moving.deadline {
                break;
            }
            self.place(position, child);
            position = first + earliest;
            self.work += 1;
        }
        self.place(position, moving);
    }

    /// Reads one deadline from each of the four groups a sift-down can move to after the
    /// sibling group at `first`, so that their cache misses overlap with this level's
    /// tournament instead of following it.
    ///
    /// The tournament's branch-free select makes the next address depend on this level's
    /// data, so the processor cannot run ahead down the heap as it does through a binary
    /// heap's branchy sift (where both candidate children's children share a cache line and
    /// a guessed branch fetches the right line either way): without this, every level's
    /// miss waits for the previous one. A plain load of safe code, not a prefetch
    /// instruction (those need `unsafe`); it costs four loads per level, which at the top
    /// of the heap hit the cache.
    #[inline]
    fn touch_next_groups(&self, first: usize) {
        let next = first - 2;
        if next + 4 <= self.groups.len() {
            // Four groups indexed one by one: they may span two segments.
            let groups = &self.groups;
            std::hint::black_box(
                groups[next].0[0].deadline
                    ^ groups[next + 1].0[0].deadline
                    ^ groups[next + 2].0[0].deadline
                    ^ groups[next + 3].0[0].deadline,
            );
        }
    }

    /// Takes the slot at `position` out of the heap, filling the hole with the last slot.
    fn remove_at(&mut self, position: usize) -> HeapSlot {
        let removed = self.slot(position);
        let last_position = self.end() - 1;
        let last = self.slot(last_position);
        self.groups[last_position / 4].0[last_position % 4] = UNUSED;
        self.len -= 1;
        if position < last_position {
            self.groups[position / 4].0[position % 4] = last;
            if position > ROOT && self.slot(parent(position)).deadline > last.deadline {
                self.sift_up(position);
            } else {
                self.sift_down(position);
            }
        }
        removed
    }
}

impl<V> TimerQueue<V> for QuadHeapTimers<V> {
    fn with_capacity(capacity: usize) -> Self {
        QuadHeapTimers {
            groups: GroupStore::with_capacity((ROOT + capacity).div_ceil(4)),
            len: 0,
            entries: Arena::with_capacity(capacity),
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let position = self.end();
        if position / 4 == self.groups.len() {
            self.groups.push(Group([UNUSED; 4]));
        }
        let id = self.entries.insert(position as u32, value);
        self.len += 1;
        self.place(
            position,
            HeapSlot {
                deadline,
                entry: id.index(),
            },
        );
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
    /// sifts up or down from where it is (Go's `modtimer` followed by its `siftupTimer` /
    /// `siftdownTimer`), one O(log n) sift instead of a removal and an insertion.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.entries.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        let position = self.entries.link(index) as usize;
        let (id, old) = self.entries.reissue(index, value);
        let slot = &mut self.groups[position / 4].0[position % 4];
        let earlier = deadline < slot.deadline;
        slot.deadline = deadline;
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
        while self.len > 0 {
            let root = self.slot(ROOT);
            if root.deadline > to {
                break;
            }
            self.remove_at(ROOT);
            let id = self.entries.id(root.entry);
            let (_, value) = self.entries.remove(root.entry);
            on_fire(id, value, root.deadline);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        (self.len > 0).then(|| self.slot(ROOT).deadline)
    }

    fn len(&self) -> usize {
        self.len
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
    fn a_pending_timer_costs_32_bytes_and_siblings_share_a_line() {
        assert_eq!(std::mem::size_of::<Group>(), 64);
        assert_eq!(std::mem::align_of::<Group>(), 64);
        assert_eq!(QuadHeapTimers::<u64>::BYTES_PER_TIMER, 32);
    }

    #[test]
    fn children_of_a_position_are_one_group() {
        assert_eq!(first_child(ROOT), 4);
        for position in ROOT..10_000 {
            let first = first_child(position);
            assert_eq!(first % 4, 0, "siblings start a group");
            for child in first..first + 4 {
                assert_eq!(parent(child), position);
            }
        }
    }

    #[test]
    fn back_indices_follow_every_move() {
        let mut queue = QuadHeapTimers::new();
        let ids: Vec<_> = (0..500u64)
            .map(|i| queue.start((i * 7919) % 211, i))
            .collect();
        for id in ids.iter().step_by(3) {
            queue.stop(*id);
        }
        for position in ROOT..queue.end() {
            let slot = queue.slot(position);
            assert_eq!(queue.entries.link(slot.entry) as usize, position);
            if position > ROOT {
                assert!(queue.slot(parent(position)).deadline <= slot.deadline);
            }
        }
    }
}
