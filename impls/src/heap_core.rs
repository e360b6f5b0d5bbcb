//! The timer queue both heaps are: `binary-heap` and `quad-heap` differ only in the shape
//! of their array (arity, root position, layout, sift loops), so everything else (`start`,
//! `stop`, the in-place `restart`, `advance`, `next_deadline`) is written once here,
//! generic over a [`Shape`], and monomorphised for each.
//!
//! # What the core keeps
//!
//! Each heap slot caches its timer's deadline next to the timer's arena index (as libevent's
//! `min_heap`, Go's `runtime.timer` heap and libev's `ANHE` cache the "at"), so a sift
//! compares keys without leaving the array. Each arena entry keeps its timer's current heap
//! position as the arena link (a back-index, rewritten on every move), so `stop` finds its
//! slot in O(1) and removes it at once instead of leaving a tombstone.
//!
//! # Invariant
//!
//! Positions `S::ROOT..S::ROOT + len` are occupied; `slot(p).deadline >=
//! slot(S::parent(p)).deadline` for every occupied `p > S::ROOT`; and for every pending
//! timer `arena.link(slot(p).entry) == p`.

use crate::arena::Arena;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{Parameter, Parameters};

/// A heap element: the deadline, cached, and the arena index of its timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapSlot {
    pub(crate) deadline: Tick,
    pub(crate) entry: u32,
}

/// The array of one heap: where positions live and how a slot moves through them.
///
/// The sift loops take the moving slot by value and write it once, at its final position;
/// every slot written (moved out of the way, then the moving one) is reported to `placed`
/// with its new position, so the core can keep the back-indices. Each returns the number
/// of levels crossed, the core's `work()` count.
pub trait Shape {
    /// Position of the root: occupied positions start here.
    const ROOT: usize;
    /// Bytes one pending timer takes in this array.
    const SLOT_BYTES: usize;
    /// Whether `advance` keeps its firing loop out of line (`HeapTimers::fire_due`), so
    /// that an empty `advance` is only the root's test, inlined into its caller.
    ///
    /// The shape's choice, not the core's rule: both forms run the same steps, and which one
    /// a caller's tick loop runs faster depends on the code the optimiser makes around it
    /// (docs/evidence/2026-11-26-fair-fight.md, *The empty `advance`*).
    const FIRE_OUT_OF_LINE: bool;

    /// The parameters of this shape, which are the heap's (`--impl quad-heap:key=value`):
    /// none by default.
    const PARAMETERS: &'static [Parameter] = &[];

    /// An empty array with room for `capacity` slots.
    fn with_capacity(capacity: usize) -> Self;

    /// An empty array with room for `capacity` slots, shaped by `parameters` (values of
    /// [`PARAMETERS`](Shape::PARAMETERS), already checked). Without parameters, as
    /// [`with_capacity`](Shape::with_capacity).
    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self
    where
        Self: Sized,
    {
        let _ = parameters;
        Self::with_capacity(capacity)
    }

    /// The slot at the occupied `position`.
    fn slot(&self, position: usize) -> HeapSlot;

    /// The parent of `position > ROOT`.
    fn parent(position: usize) -> usize;

    /// Makes `end` (one past the last occupied position) writable.
    fn grow_to(&mut self, end: usize);

    /// Takes out and returns the slot at `last`, the last occupied position.
    fn take_last(&mut self, last: usize) -> HeapSlot;

    /// Puts `moving` in the hole at `position`, moving it towards the root past every
    /// parent that is later.
    fn sift_up(&mut self, position: usize, moving: HeapSlot, placed: impl FnMut(u32, usize))
    -> u64;

    /// Puts `moving` in the hole at `position`, moving it towards the leaves (below `end`)
    /// past every child that is earlier.
    fn sift_down(
        &mut self,
        position: usize,
        moving: HeapSlot,
        end: usize,
        placed: impl FnMut(u32, usize),
    ) -> u64;
}

/// A min-heap of deadlines with back-indices, in the array shape `S`.
pub struct HeapTimers<V, S> {
    heap: S,
    /// Pending timers; they occupy positions `S::ROOT..S::ROOT + len`.
    len: usize,
    /// Values, with each timer's heap position as the arena link.
    entries: Arena<V>,
    now: Tick,
    work: u64,
}

impl<V, S: Shape> HeapTimers<V, S> {
    /// Bytes one pending timer costs: its heap slot and its arena slot.
    pub const BYTES_PER_TIMER: usize = S::SLOT_BYTES + Arena::<V>::SLOT_BYTES;

    /// One past the last occupied position.
    #[inline]
    fn end(&self) -> usize {
        S::ROOT + self.len
    }

    #[inline]
    fn sift_up(&mut self, position: usize, moving: HeapSlot) {
        let entries = &mut self.entries;
        self.work += self.heap.sift_up(position, moving, |entry, at| {
            entries.set_link(entry, at as u32)
        });
    }

    #[inline]
    fn sift_down(&mut self, position: usize, moving: HeapSlot) {
        let end = self.end();
        let entries = &mut self.entries;
        self.work += self.heap.sift_down(position, moving, end, |entry, at| {
            entries.set_link(entry, at as u32)
        });
    }

    /// Takes the slot at `position` out of the heap, filling the hole with the last slot.
    #[inline]
    fn remove_at(&mut self, position: usize) -> HeapSlot {
        let removed = self.heap.slot(position);
        let last_position = self.end() - 1;
        let last = self.heap.take_last(last_position);
        self.len -= 1;
        if position < last_position {
            if position > S::ROOT && self.heap.slot(S::parent(position)).deadline > last.deadline {
                self.sift_up(position, last);
            } else {
                self.sift_down(position, last);
            }
        }
        removed
    }

    /// Whether a timer is pending with its deadline at or before `to`.
    #[inline]
    fn is_due(&self, to: Tick) -> bool {
        self.len > 0 && self.heap.slot(S::ROOT).deadline <= to
    }

    /// Fires, earliest first, every pending timer due by `to`; the root is due.
    ///
    /// Never inlined, so that an `advance` of a [`Shape::FIRE_OUT_OF_LINE`] shape stays the
    /// root's test.
    #[inline(never)]
    fn fire_due<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        loop {
            let root = self.remove_at(S::ROOT);
            let id = self.entries.id(root.entry);
            let (_, value) = self.entries.remove(root.entry);
            on_fire(id, value, root.deadline);
            if !self.is_due(to) {
                break;
            }
        }
    }

    /// Asserts the invariant, for the shapes' tests.
    #[cfg(test)]
    pub(crate) fn check_back_indices(&self) {
        for position in S::ROOT..self.end() {
            let slot = self.heap.slot(position);
            assert_eq!(self.entries.link(slot.entry) as usize, position);
            if position > S::ROOT {
                assert!(self.heap.slot(S::parent(position)).deadline <= slot.deadline);
            }
        }
    }
}

impl<V, S: Shape> HeapTimers<V, S> {
    fn with_heap(heap: S, capacity: usize) -> Self {
        HeapTimers {
            heap,
            len: 0,
            entries: Arena::with_capacity(capacity),
            now: 0,
            work: 0,
        }
    }
}

impl<V, S: Shape> TimerQueue<V> for HeapTimers<V, S> {
    const PARAMETERS: &'static [Parameter] = S::PARAMETERS;

    fn with_capacity(capacity: usize) -> Self {
        Self::with_heap(S::with_capacity(capacity), capacity)
    }

    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self {
        Self::with_heap(S::with_parameters(capacity, parameters), capacity)
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let position = self.end();
        self.heap.grow_to(position + 1);
        let id = self.entries.insert(position as u32, value);
        self.len += 1;
        let moving = HeapSlot {
            deadline,
            entry: id.index(),
        };
        self.sift_up(position, moving);
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        let position = self.entries.link(index) as usize;
        self.remove_at(position);
        Some(self.entries.remove(index).1)
    }

    /// In place: the entry keeps its heap slot and arena slot, takes the new deadline and
    /// sifts up or down from where it is (Go's `modtimer` then `siftupTimer` or
    /// `siftdownTimer`), one O(log n) sift instead of a removal and an insertion.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.entries.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        let position = self.entries.link(index) as usize;
        let (id, old) = self.entries.reissue(index, value);
        let moving = HeapSlot {
            deadline,
            entry: index,
        };
        if deadline < self.heap.slot(position).deadline {
            self.sift_up(position, moving);
        } else {
            self.sift_down(position, moving);
        }
        (id, Some(old))
    }

    /// With [`Shape::FIRE_OUT_OF_LINE`] the root's test, and [`HeapTimers::fire_due`] only
    /// when the root is due; otherwise the firing loop in place.
    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        if S::FIRE_OUT_OF_LINE {
            if self.is_due(to) {
                self.fire_due(to, on_fire);
            }
        } else {
            while self.len > 0 {
                let root = self.heap.slot(S::ROOT);
                if root.deadline > to {
                    break;
                }
                self.remove_at(S::ROOT);
                let id = self.entries.id(root.entry);
                let (_, value) = self.entries.remove(root.entry);
                on_fire(id, value, root.deadline);
            }
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        (self.len > 0).then(|| self.heap.slot(S::ROOT).deadline)
    }

    crate::contract::len_now_work!(len);
}
