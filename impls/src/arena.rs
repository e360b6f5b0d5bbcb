//! The shared building block: a slab of timer entries addressed by `u32` indices, with a
//! generation per slot so that stale handles never touch a newer timer.
//!
//! Every implementation keeps its timers here instead of in a `Box` each. A slot holds
//! three things: a generation, one `u32` link that belongs to the owner while the slot is
//! occupied (a heap position, a list's next pointer) and threads the free list while it is
//! vacant, and the owner's payload.
//!
//! # Layout
//!
//! `Slot` is an enum whose occupied variant stores its generation as a `NonZeroU32`:
//! occupied generations are odd, so never zero, and the compiler uses the zero as the tag
//! of the vacant variant (niche filling). The vacant variant's two `u32`s fit beside that
//! niche. A slot therefore costs exactly `8 + size_of::<payload>()` bytes, rounded to the
//! payload's alignment, with no separate tag and no `unsafe`: 16 bytes for a `u64` payload,
//! 32 for a wheel entry of deadline, value and two `u32`s. `tests` below pins these sizes.
//!
//! The slots live in [`segmented::Storage`](crate::segmented::Storage): one contiguous `Vec`
//! by default, which copies every slot when it doubles (32 MB in one `insert` at a million
//! 32-byte slots); with the feature `segmented-storage`, segments of 4096 slots that are
//! never moved, so growing copies nothing, at a throughput cost (METHODOLOGY.md, *Storage
//! growth and segmented storage*, has both measured). The suite's cells build every queue
//! with the workload's peak as its capacity, so they never grow.
//!
//! # Costs
//!
//! | operation | cost |
//! | --- | --- |
//! | `insert` | O(1): pop the free list, or push; amortised on a `Vec` (a doubling copies every slot), worst case with `segmented-storage` (at worst one segment allocated, nothing copied) |
//! | `remove` | O(1): push the slot on the free list |
//! | `resolve` a handle | O(1): one bounds check and one generation compare |
//!
//! Freed slots are reused last-in first-out, which keeps the hot part of the slab small.

use crate::contract::TimerId;
use std::num::NonZeroU32;

/// Where the slots live: a `Vec`, or segments with `segmented-storage`.
type SlotStore<T> = crate::segmented::Storage<Slot<T>>;

/// The "no slot" value of every `u32` link.
pub const NIL: u32 = u32::MAX;

enum Slot<T> {
    Occupied {
        /// Odd, hence never zero: the zero is the niche that tags `Vacant`.
        generation: NonZeroU32,
        link: u32,
        payload: T,
    },
    Vacant {
        /// Even: the generation the slot's next occupant will take is one more.
        generation: u32,
        next_free: u32,
    },
}

/// A slab of `T` with generational `u32` handles. See the module documentation.
pub struct Arena<T> {
    slots: SlotStore<T>,
    free_head: u32,
    len: u32,
}

impl<T> Arena<T> {
    /// Bytes one slot takes, payload and bookkeeping included.
    pub const SLOT_BYTES: usize = std::mem::size_of::<Slot<T>>();

    /// An empty arena with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Self {
        Arena {
            slots: SlotStore::with_capacity(capacity),
            free_head: NIL,
            len: 0,
        }
    }

    /// Number of occupied slots.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no slot is occupied.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stores `payload` with its owner's `link` and returns the handle of the new entry.
    ///
    /// The entry always comes off the free list; when that is empty, [`Arena::grow`], out
    /// of line, first puts new vacant slots on it. So this path is inline, and the
    /// payload, never passed to a call, is written straight from registers into its slot
    /// (passed, it would be built on the stack and copied, the copy a wide load over narrow
    /// stores that the store buffer cannot forward).
    ///
    /// # Panics
    ///
    /// When `u32::MAX - 1` entries would be live at once: indices are `u32` and `NIL` is
    /// reserved.
    #[inline]
    pub fn insert(&mut self, link: u32, payload: T) -> TimerId {
        if self.free_head == NIL {
            self.grow();
        }
        let index = self.free_head;
        let slot = &mut self.slots[index as usize];
        let Slot::Vacant {
            generation,
            next_free,
        } = *slot
        else {
            unreachable!("the free list only threads vacant slots")
        };
        self.free_head = next_free;
        let generation = occupied_generation(generation);
        *slot = Slot::Occupied {
            generation,
            link,
            payload,
        };
        self.len += 1;
        TimerId::from_parts(index, generation.get())
    }

    /// Puts new vacant slots, at the end and in index order, on the empty free list: as
    /// many as the vector holds without reallocating, at most [`Arena::GROW_BATCH`], and
    /// one when it is full (its push then reallocates, as any push would). A batch keeps
    /// the call off most inserts of an arena that only grows (a structure that frees
    /// lazily grows through a whole run), and staying within the capacity keeps the
    /// memory the arena holds what it was.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        debug_assert_eq!(self.free_head, NIL, "grow only when no slot is free");
        let first = u32::try_from(self.slots.len())
            .ok()
            .filter(|&i| i != NIL)
            .expect("more than u32::MAX - 1 pending timers");
        let spare = self.slots.capacity() - self.slots.len();
        let room = (NIL - first) as usize;
        let last = first + spare.clamp(1, Self::GROW_BATCH).min(room) as u32 - 1;
        for index in first..last {
            self.slots.push(Slot::Vacant {
                generation: 0,
                next_free: index + 1,
            });
        }
        self.slots.push(Slot::Vacant {
            generation: 0,
            next_free: NIL,
        });
        self.free_head = first;
    }

    /// Vacant slots that one [`Arena::grow`] puts on the free list at most.
    const GROW_BATCH: usize = 64;

    /// The slot index of `id` if it names a live entry of this arena.
    #[inline]
    pub fn resolve(&self, id: TimerId) -> Option<u32> {
        match self.slots.get(id.index() as usize) {
            Some(Slot::Occupied { generation, .. }) if generation.get() == id.generation() => {
                Some(id.index())
            }
            _ => None,
        }
    }

    /// The handle of the live entry at `index`.
    #[inline]
    pub fn id(&self, index: u32) -> TimerId {
        match &self.slots[index as usize] {
            Slot::Occupied { generation, .. } => TimerId::from_parts(index, generation.get()),
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// The payload of the live entry at `index`.
    #[inline]
    pub fn get(&self, index: u32) -> &T {
        match &self.slots[index as usize] {
            Slot::Occupied { payload, .. } => payload,
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// The payload of the live entry at `index`, mutably.
    #[inline]
    pub fn get_mut(&mut self, index: u32) -> &mut T {
        match &mut self.slots[index as usize] {
            Slot::Occupied { payload, .. } => payload,
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// The owner's link of the live entry at `index`.
    #[inline]
    pub fn link(&self, index: u32) -> u32 {
        match &self.slots[index as usize] {
            Slot::Occupied { link, .. } => *link,
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// The owner's link of the entry at `index` if it is live, `None` if it is vacant or
    /// out of range: for owners whose own records name slots without a generation.
    #[inline]
    pub fn live_link(&self, index: u32) -> Option<u32> {
        match self.slots.get(index as usize) {
            Some(Slot::Occupied { link, .. }) => Some(*link),
            _ => None,
        }
    }

    /// Sets the owner's link of the live entry at `index`.
    #[inline]
    pub fn set_link(&mut self, index: u32, value: u32) {
        match &mut self.slots[index as usize] {
            Slot::Occupied { link, .. } => *link = value,
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// The link and the payload of the live entry at `index`, both mutably.
    #[inline]
    pub fn entry_mut(&mut self, index: u32) -> (&mut u32, &mut T) {
        match &mut self.slots[index as usize] {
            Slot::Occupied { link, payload, .. } => (link, payload),
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// Frees the live entry at `index` and returns its link and payload. The slot's
    /// generation moves on, so every handle to it goes stale.
    #[inline]
    pub fn remove(&mut self, index: u32) -> (u32, T) {
        let slot = &mut self.slots[index as usize];
        let generation = match slot {
            Slot::Occupied { generation, .. } => generation.get().wrapping_add(1),
            Slot::Vacant { .. } => vacant(index),
        };
        let freed = std::mem::replace(
            slot,
            Slot::Vacant {
                generation,
                next_free: self.free_head,
            },
        );
        self.free_head = index;
        self.len -= 1;
        match freed {
            Slot::Occupied { link, payload, .. } => (link, payload),
            Slot::Vacant { .. } => unreachable!("checked above"),
        }
    }

    /// Gives the live entry at `index` a new handle, as if it had been removed and inserted
    /// again, without moving it: every earlier handle to it goes stale. This is what makes
    /// an in-place `restart` observably the same as `stop` followed by `start`.
    #[inline]
    pub fn reissue(&mut self, index: u32, payload: T) -> (TimerId, T) {
        match &mut self.slots[index as usize] {
            Slot::Occupied {
                generation,
                payload: held,
                ..
            } => {
                // The vacant generation a remove would have written, then the next odd one.
                *generation = occupied_generation(generation.get().wrapping_add(1));
                let id = TimerId::from_parts(index, generation.get());
                (id, std::mem::replace(held, payload))
            }
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// Bytes of slot storage currently allocated (capacity, not length).
    pub fn allocated_bytes(&self) -> usize {
        self.slots.capacity() * Self::SLOT_BYTES
    }
}

/// The odd generation that follows the even generation of a vacant slot.
#[inline]
fn occupied_generation(vacant_generation: u32) -> NonZeroU32 {
    NonZeroU32::new(vacant_generation.wrapping_add(1) | 1).expect("odd numbers are non-zero")
}

#[cold]
#[track_caller]
fn vacant(index: u32) -> ! {
    panic!("timer arena slot {index} is vacant: the structure lost track of an entry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_sizes_have_no_tag_overhead() {
        assert_eq!(Arena::<u64>::SLOT_BYTES, 16);
        assert_eq!(Arena::<(u64, u64, u32, u32)>::SLOT_BYTES, 32);
        assert_eq!(Arena::<(u64, u64, u32)>::SLOT_BYTES, 32);
    }

    #[test]
    fn stale_handles_do_not_resolve_after_reuse() {
        let mut arena = Arena::with_capacity(0);
        let first = arena.insert(7, 10u64);
        assert_eq!(arena.resolve(first), Some(first.index()));
        assert_eq!(arena.remove(first.index()), (7, 10));
        assert_eq!(arena.resolve(first), None);
        let second = arena.insert(8, 20u64);
        assert_eq!(second.index(), first.index(), "the freed slot is reused");
        assert_ne!(second, first);
        assert_eq!(arena.resolve(first), None);
        assert_eq!(*arena.get(arena.resolve(second).unwrap()), 20);
        assert_eq!(arena.len(), 1);
    }

    #[test]
    fn a_reissued_entry_stays_in_place_under_a_new_handle() {
        let mut arena = Arena::with_capacity(0);
        let first = arena.insert(3, 10u64);
        let (second, old) = arena.reissue(first.index(), 11);
        assert_eq!(old, 10);
        assert_eq!(second.index(), first.index());
        assert_eq!(second.generation() % 2, 1, "occupied generations stay odd");
        assert_eq!(arena.resolve(first), None, "the old handle is stale");
        assert_eq!(arena.resolve(second), Some(first.index()));
        assert_eq!(
            (arena.link(first.index()), *arena.get(first.index())),
            (3, 11)
        );
        assert_eq!(arena.len(), 1);
    }

    #[test]
    fn growing_past_the_capacity_takes_new_slots_in_order_then_reuses_freed_ones() {
        let mut arena = Arena::with_capacity(1);
        let ids: Vec<_> = (0..3u64).map(|v| arena.insert(v as u32, v)).collect();
        let indices: Vec<_> = ids.iter().map(|id| id.index()).collect();
        assert_eq!(indices, [0, 1, 2]);
        assert!(ids.iter().all(|id| id.generation() == 1));
        arena.remove(1);
        let reused = arena.insert(9, 9);
        assert_eq!((reused.index(), reused.generation()), (1, 3));
        let grown = arena.insert(10, 10);
        assert_eq!((grown.index(), grown.generation()), (3, 1));
        assert_eq!((arena.len(), arena.link(3), *arena.get(3)), (4, 10, 10));
    }

    #[test]
    fn growing_in_batches_keeps_the_capacity_it_was_given() {
        let mut arena = Arena::with_capacity(100);
        let before = arena.allocated_bytes();
        let ids: Vec<_> = (0..100u64).map(|v| arena.insert(0, v)).collect();
        assert_eq!(
            arena.allocated_bytes(),
            before,
            "no reallocation within the capacity"
        );
        assert!(
            ids.iter()
                .enumerate()
                .all(|(i, id)| id.index() as usize == i)
        );
        let past = arena.insert(0, 100);
        assert_eq!((past.index(), arena.len()), (100, 101));
    }

    #[test]
    fn generations_stay_odd_when_they_wrap() {
        assert_eq!(occupied_generation(u32::MAX - 1).get(), u32::MAX);
        assert_eq!(occupied_generation(u32::MAX.wrapping_add(1)).get(), 1);
    }

    #[test]
    fn forged_handles_do_not_resolve() {
        let mut arena = Arena::with_capacity(0);
        let id = arena.insert(0, 1u64);
        assert_eq!(arena.resolve(TimerId::from_parts(5, 1)), None);
        assert_eq!(
            arena.resolve(TimerId::from_parts(id.index(), id.generation() + 2)),
            None
        );
        assert_eq!(arena.resolve(TimerId::from_parts(id.index(), 0)), None);
    }
}
