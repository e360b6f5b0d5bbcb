//! Draining a level slot into the ring ahead of its cascade, a bounded batch per `advance`,
//! so that no single clock move re-files a whole slot.
//!
//! # Why
//!
//! A wheel re-files a level slot in one go at its first tick. Where a million timers are
//! spread over a 30 s idle timeout (`keepalive` at 1M), a first-level slot (4,096 ticks)
//! holds about 136,000 of them, and the `advance` that reaches its start moves them all:
//! 1.6 ms, against 73 µs for `binary-heap`'s slowest moves (p99.99,
//! docs/evidence/2026-11-29-memory-bound.md). Linux's wheel avoids cascades by giving up
//! exactness at its upper levels; this structure keeps exactness and moves the work earlier.
//! `incremental-wheel` does that for every level, staging each next slot's share at every
//! move over its whole window into banks that become the lower levels; the drain here is
//! the smaller step that a ring of the first level's span allows: no stage, no swap, one
//! extra array.
//!
//! # The rule
//!
//! Only the first level's slots (bits 12 to 17 of the deadline, 4,096 ticks each, the
//! ring's own span) are drained. From `DRAIN_AHEAD` ticks before such a slot's start, each
//! `advance` takes up to `DRAIN_BUDGET` of its items, newest chunk first, and re-files each
//! by its deadline: into the ring when the deadline is less than 4,096 ticks ahead (the
//! ring's own placement rule, so a ring slot still holds one deadline), else into the
//! *held* array, the part of the slot taken out but not yet placeable. At the slot's start
//! the cascade re-files what is left in the slot and everything held, as before.
//!
//! At a slot start `S`, an item taken out at `S - k` is held only if its deadline is at
//! least `S + 4,096 - k`: with deadlines spread evenly over the slot, a drain that runs
//! through the last `k` ticks holds about `k / 4,096` of the slot, and the cascade at `S`
//! moves that share instead of the whole. With a drain of 128 ticks and 2,048 items a
//! move, a slot of up to 262,144 items is drained before its start; a larger slot leaves
//! the rest to the cascade, which costs what it did.
//!
//! Each drained item costs what its cascade would have cost (its entry read, its
//! back-index written, one item appended), once, or twice when held. A timer stopped or
//! restarted after it was drained had its move done for nothing, as a cascade at the
//! slot's start would have done for a timer stopped after it.
//!
//! The levels above are not drained: a slot of the next (bits 18 to 23) spans 262,144
//! ticks, and almost none of its items could go to the ring 128 ticks before its start. At 1 ms ticks such a cascade
//! comes once in 262 s (and holds the timers started within a timeout of it).
//!
//! # Invariants
//!
//! - At most one slot drains at a time, `draining` (its index in the table of heads); the
//!   held array belongs to it, and a held entry's `home` is `HELD`.
//! - The draining slot's occupancy bit stays set while it or the held array holds items,
//!   so the search still finds its start and its cascade still comes.
//! - While the draining slot's array holds items, the levels' bound is at most its start
//!   less `DRAIN_AHEAD`, so every move takes `advance`'s searching path and drains; once
//!   only held items are left, the bound is the start itself.

use super::chunks::{Batch, Tail};
use super::{DUE, DenseWheel, HELD};
use crate::contract::Tick;
use crate::hierarchical_wheel::slots::{SlotHead, Slots};
use crate::hierarchical_wheel::{FIRST_LEVEL, RING_SLOTS};
use crate::wheel_core::{SLOTS, slot_start};

/// How many ticks before a first-level slot's start its drain begins.
pub(super) const DRAIN_AHEAD: Tick = 128;

/// The most items one `advance` drains (whole chunks, so up to a chunk more). At about
/// 10 ns an item at a million timers, 20 µs.
pub(super) const DRAIN_BUDGET: usize = 2_048;

/// `draining` when no slot drains.
pub(super) const NOT_DRAINING: u32 = u32::MAX;

impl<V> DenseWheel<V> {
    /// Whether a drain may have work after a move to `to`: a level slot may start within
    /// `DRAIN_AHEAD` of it. The levels' bound is kept `DRAIN_AHEAD` early for this
    /// wheel (`Tail`'s `SlotHead::AHEAD`), so a move that [`Slots::near`] answers from one
    /// word is never due a drain and its path has no test for it; and a bound left low
    /// by stops only costs one search, in [`DenseWheel::drain_ahead`], which raises it.
    #[inline(always)]
    pub(super) fn drain_due(&self, to: Tick) -> bool {
        self.slots.level_bound() <= to
    }

    /// Picks the slot to drain if none is draining, then drains up to `DRAIN_BUDGET` of its
    /// items. Runs after a move, with no level slot starting at or before the clock.
    #[inline(never)]
    pub(super) fn drain_ahead(&mut self) {
        if self.draining == NOT_DRAINING {
            let Some(at) = self.slots.earliest_level(self.now) else {
                return;
            };
            if at.level != FIRST_LEVEL || at.start > self.now.saturating_add(DRAIN_AHEAD) {
                return;
            }
            self.set_draining(Slots::<Tail>::level_home(at) as u32);
        }
        let home = self.draining as usize;
        let mut tail = self.slots.heads[home];
        if tail.is_empty() {
            self.rest_until_start();
            return;
        }
        let mut batch = self.pool.take_batch(&mut tail);
        self.prefetch(&batch);
        let mut left = DRAIN_BUDGET;
        while batch.len > 0 {
            left = left.saturating_sub(batch.len);
            let next = if left > 0 {
                self.pool.take_batch(&mut tail)
            } else {
                Batch::EMPTY
            };
            self.prefetch(&next);
            for &index in batch.items() {
                let timer = self.entries.get_mut(index);
                // Every deadline in the slot is past its start, so past the clock.
                let (home, at) = if timer.deadline - self.now < RING_SLOTS as Tick {
                    let home = self.slots.claim(self.now, timer.deadline);
                    (
                        home,
                        self.pool.push(&mut self.slots.heads[home as usize], index),
                    )
                } else {
                    (HELD, self.pool.push(&mut self.held, index))
                };
                (timer.home, timer.at) = (home, at);
                self.work += 1;
            }
            batch = next;
        }
        self.slots.heads[home] = tail;
        if tail.is_empty() {
            if self.held.is_empty() {
                self.slots.clear(home);
                self.set_draining(NOT_DRAINING);
            } else {
                self.rest_until_start();
            }
        }
    }

    /// The draining slot's array is empty and the held array is not: nothing can move
    /// before the slot's start (a timer started into the slot lowers the bound again), so
    /// the levels' bound goes back to that start and the moves until then take the
    /// one-word path.
    fn rest_until_start(&mut self) {
        let slot = self.draining as usize % SLOTS;
        let start = slot_start(self.now, FIRST_LEVEL, slot);
        self.slots.raise_level_bound(start);
    }

    /// Starts draining the slot `home`, or ends the drain (`NOT_DRAINING`).
    fn set_draining(&mut self, home: u32) {
        self.draining = home;
        self.clear_below = home.min(DUE);
    }

    /// A removal emptied the array `home`, at or past `clear_below`: the due array (no
    /// bit), a slot after the draining one (its bit cleared), or the draining slot's array
    /// or the held array, whose slot is empty only when both are: then its bit is cleared
    /// and the drain ends.
    #[inline(never)]
    pub(super) fn emptied_past_draining(&mut self, home: u32) {
        if home == DUE {
            return;
        }
        if home != HELD && home != self.draining {
            self.slots.clear(home as usize);
            return;
        }
        let slot = self.draining as usize;
        if self.held.is_empty() && self.slots.heads[slot].is_empty() {
            self.slots.clear(slot);
            self.set_draining(NOT_DRAINING);
        }
    }

    /// After the cascade of the level slot `home`: when it was draining, cascades the held
    /// array too and ends the drain.
    #[inline]
    pub(super) fn cascade_held(&mut self, home: usize) {
        if home as u32 == self.draining {
            let held = std::mem::replace(&mut self.held, Tail::EMPTY);
            self.set_draining(NOT_DRAINING);
            self.cascade(held);
        }
    }
}
