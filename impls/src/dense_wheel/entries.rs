//! The entries of [`super::DenseWheel`]: a slab of timers addressed by `u32` indices with
//! a generation per slot, as [`crate::arena::Arena`] is, but in blocks that are never
//! moved, and with the entry's back-index (its slot and its item's address) in place of
//! the arena's list link.
//!
//! A slot is an enum whose occupied variant stores its generation as a `NonZeroU32`
//! (occupied generations are odd), so the zero tags the vacant variant and a slot of a
//! `u64` value costs 32 bytes: generation, slot, item address (4 each), deadline and value
//! (8 each), 4 of padding.
//!
//! # Growth
//!
//! Blocks of 256 slots (8 KiB of `u64`-valued slots), each allocated at its full size and
//! threaded onto the free list when the free list runs out, never reallocated: growing
//! allocates and writes one block and copies nothing. A block is a fixed-size array, so
//! reaching a slot costs one bounds check (of the block) and a mask. The block is small
//! because writing it is the work of the one `start` in 256 that grows: with blocks of
//! 1,024 (32 KiB, eight fresh pages) that `start` was the slowest of all, often enough to
//! set a growing queue's p99.99 (issue 45's target is 2 µs;
//! docs/evidence/2026-11-29-memory-bound-targets.md); 8 KiB is two pages. The vector of
//! blocks doubles (8 bytes per 256 timers: a copy of 31 KB at a million). Freed slots are
//! reused last in first out, so a `start` after a firing writes a line the firing just
//! touched.

use crate::arena::NIL;
use crate::contract::{Tick, TimerId};
use crate::prefetch::prefetch;
use std::num::NonZeroU32;

/// `log2` of the slots in a block.
const BLOCK_BITS: u32 = 8;
/// Slots in a block.
pub(crate) const BLOCK: usize = 1 << BLOCK_BITS;

/// A pending timer.
pub(crate) struct Timer<V> {
    pub(crate) deadline: Tick,
    pub(crate) value: V,
    /// Its slot in the wheel's table of heads, or the wheel's `DUE`.
    pub(crate) home: u32,
    /// The address of its item in the slot's array.
    pub(crate) at: u32,
}

enum Slot<V> {
    Occupied {
        /// Odd, hence never zero: the zero is the niche that tags `Vacant`.
        generation: NonZeroU32,
        timer: Timer<V>,
    },
    Vacant {
        /// Even: the next occupant's is one more.
        generation: u32,
        next_free: u32,
    },
}

/// One block of slots.
type Block<V> = Box<[Slot<V>; BLOCK]>;

/// The timers of a dense wheel. See the module documentation.
pub(crate) struct Entries<V> {
    blocks: Vec<Block<V>>,
    free: u32,
    len: u32,
}

impl<V> Entries<V> {
    /// Bytes one slot takes.
    #[cfg(test)]
    pub(crate) const SLOT_BYTES: usize = std::mem::size_of::<Slot<V>>();

    /// An empty slab with blocks for `capacity` timers.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut entries = Entries {
            blocks: Vec::new(),
            free: NIL,
            len: 0,
        };
        for _ in 0..capacity.div_ceil(BLOCK) {
            entries.add_block();
        }
        entries
    }

    /// Number of pending timers.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    #[inline(always)]
    fn slot(&self, index: u32) -> &Slot<V> {
        &self.blocks[(index >> BLOCK_BITS) as usize][index as usize & (BLOCK - 1)]
    }

    #[inline(always)]
    fn slot_mut(&mut self, index: u32) -> &mut Slot<V> {
        &mut self.blocks[(index >> BLOCK_BITS) as usize][index as usize & (BLOCK - 1)]
    }

    /// The index the next [`Entries::occupy`] fills.
    #[inline]
    pub(crate) fn vacant(&mut self) -> u32 {
        if self.free == NIL {
            self.add_block();
        }
        self.free
    }

    /// Allocates one more block and puts its slots, in index order, on the free list (which
    /// holds nothing else when the slab grows). Out of line: only a queue that grows comes
    /// here, once per 256 timers.
    #[cold]
    #[inline(never)]
    fn add_block(&mut self) {
        let first = self.blocks.len() * BLOCK;
        assert!(
            first + BLOCK <= NIL as usize,
            "dense-wheel: more than {} pending timers",
            NIL as usize / BLOCK * BLOCK
        );
        let free = self.free;
        let slots: Vec<Slot<V>> = (first..first + BLOCK)
            .map(|index| Slot::Vacant {
                generation: 0,
                next_free: if index + 1 < first + BLOCK {
                    index as u32 + 1
                } else {
                    free
                },
            })
            .collect();
        let Ok(block) = Block::<V>::try_from(slots.into_boxed_slice()) else {
            unreachable!("the block was built with BLOCK slots")
        };
        self.blocks.push(block);
        self.free = first as u32;
    }

    /// Stores `timer` in the slot [`Entries::vacant`] returned and returns its handle.
    #[inline]
    pub(crate) fn occupy(&mut self, index: u32, timer: Timer<V>) -> TimerId {
        debug_assert_eq!(index, self.free, "occupy the slot vacant() gave");
        let slot = self.slot_mut(index);
        let Slot::Vacant {
            generation,
            next_free,
        } = *slot
        else {
            unreachable!("the free list only threads vacant slots")
        };
        let generation = occupied_generation(generation);
        *slot = Slot::Occupied { generation, timer };
        self.free = next_free;
        self.len += 1;
        TimerId::from_parts(index, generation.get())
    }

    /// The index of `id` if it names a pending timer.
    #[inline]
    pub(crate) fn resolve(&self, id: TimerId) -> Option<u32> {
        let index = id.index();
        let block = self.blocks.get((index >> BLOCK_BITS) as usize)?;
        match &block[index as usize & (BLOCK - 1)] {
            Slot::Occupied { generation, .. } if generation.get() == id.generation() => Some(index),
            _ => None,
        }
    }

    /// The pending timer at `index`.
    #[inline]
    pub(crate) fn get(&self, index: u32) -> &Timer<V> {
        match self.slot(index) {
            Slot::Occupied { timer, .. } => timer,
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// The pending timer at `index`, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, index: u32) -> &mut Timer<V> {
        match self.slot_mut(index) {
            Slot::Occupied { timer, .. } => timer,
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// Starts loading the line of slot `index` (see `prefetch.rs`).
    #[inline(always)]
    pub(crate) fn prefetch(&self, index: u32) {
        prefetch(self.slot(index));
    }

    /// Frees the pending timer at `index` and returns its handle and what it held; every
    /// handle to it goes stale.
    #[inline]
    pub(crate) fn remove(&mut self, index: u32) -> (TimerId, Timer<V>) {
        let free = self.free;
        let slot = self.slot_mut(index);
        let generation = match slot {
            Slot::Occupied { generation, .. } => generation.get(),
            Slot::Vacant { .. } => vacant(index),
        };
        let freed = std::mem::replace(
            slot,
            Slot::Vacant {
                generation: generation.wrapping_add(1),
                next_free: free,
            },
        );
        self.free = index;
        self.len -= 1;
        match freed {
            Slot::Occupied { timer, .. } => (TimerId::from_parts(index, generation), timer),
            Slot::Vacant { .. } => unreachable!("checked above"),
        }
    }

    /// Gives the pending timer at `index` a new handle, deadline and value, as a removal
    /// and an insertion would, without moving it; returns the handle and the old value.
    #[inline]
    pub(crate) fn reissue(&mut self, index: u32, deadline: Tick, value: V) -> (TimerId, V) {
        match self.slot_mut(index) {
            Slot::Occupied { generation, timer } => {
                *generation = occupied_generation(generation.get().wrapping_add(1));
                timer.deadline = deadline;
                let id = TimerId::from_parts(index, generation.get());
                (id, std::mem::replace(&mut timer.value, value))
            }
            Slot::Vacant { .. } => vacant(index),
        }
    }

    /// Where each block's slots lie: a test checks that growth never moves them.
    #[cfg(test)]
    pub(crate) fn block_addresses(&self) -> Vec<usize> {
        self.blocks.iter().map(|b| b.as_ptr() as usize).collect()
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
    panic!("dense-wheel entry {index} is vacant: the wheel lost track of a timer")
}
