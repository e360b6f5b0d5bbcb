//! Draining a level slot into the ring ahead of its cascade, a bounded batch per `advance`,
//! so that no single clock move re-files a whole slot.
//!
//! # Why
//!
//! A wheel re-files a level slot in one go at its first tick. Where a million timers are
//! spread over a 30 s idle timeout (`keepalive` at 1M), a first-level slot (4,096 ticks)
//! holds about 136,000 of them, and the `advance` that reaches its start moves them all: a
//! move twenty times as slow as a heap's slowest (the measurements, before and after the
//! drain, are in docs/evidence/2026-11-29-memory-bound-targets.md). Linux's wheel avoids
//! cascades by giving up exactness at its upper levels; this structure keeps exactness and
//! moves the work earlier. `incremental-wheel` does that for every level, staging each next
//! slot's share at every move over its whole window into banks that become the lower
//! levels; the drain here is the smaller step that a ring of the first level's span allows:
//! no stage, no swap, one extra array.
//!
//! # The rule
//!
//! Only the first level's slots (bits 12 to 17 of the deadline, 4,096 ticks each, the
//! ring's own span) are drained, one at a time, in two turns of at most `DRAIN_BUDGET`
//! (512) items a move, newest chunk first. Each item taken is re-filed by its deadline:
//! into the ring when the deadline is less than 4,096 ticks ahead (the ring's own
//! placement rule, so a ring slot still holds one deadline), else kept aside.
//!
//! 1. *The slot's turn*, from `DRAIN_AHEAD` (512) ticks before its start: its items go to
//!    the ring or to the *held* array, the part taken out but not yet placeable.
//! 2. *The held items' turn*, from `HELD_AHEAD` (48) ticks before the start: the held
//!    items go to the ring or back into the slot's array.
//!
//! At the slot's start the cascade re-files what is left in the slot's array and in the
//! held array, as before. An item taken out at `S - k` (`S` the start) is kept only if its
//! deadline is at least `S + 4,096 - k`; with deadlines spread evenly over the slot, the
//! slot's turn keeps about `k / 4,096` of what it takes at `k`, and the held items' turn,
//! at `k <= 48`, leaves about 1% of the slot for the cascade. A slot of up to 262,144
//! items (512 moves of 512) is drained in its turn; what a larger one has left goes to
//! the held items' turn and the cascade, which cost what they did.
//!
//! Each drained item costs what its cascade would have cost (its entry read, its
//! back-index written, one item appended), once, or twice when kept aside. A timer stopped
//! or restarted after it was drained had its move done for nothing, as a cascade at the
//! slot's start would have done for a timer stopped after it.
//!
//! The levels above are not drained: a slot of the next (bits 18 to 23) spans 262,144
//! ticks, and almost none of its items could go to the ring before its start. At 1 ms
//! ticks such a cascade comes once in 262 s (and holds the timers started within a
//! timeout of it).
//!
//! # Invariants
//!
//! - At most one slot drains at a time, `draining` (its index in the table of heads); the
//!   held array belongs to it, and a held entry's `home` is `HELD`.
//! - The draining slot's occupancy bit stays set while it or the held array holds items,
//!   so the search still finds its start and its cascade still comes.
//! - While a turn has items to move, the levels' bound is at or below the clock, so every
//!   move takes `advance`'s searching path and drains; between the turns the bound is the
//!   held turn's first tick, after them the slot's start, so the moves in between take the
//!   one-word path (a timer started into the slot lowers the bound, as any filing does).

use super::chunks::{Batch, Tail};
use super::{DUE, DenseWheel, HELD};
use crate::contract::Tick;
use crate::hierarchical_wheel::slots::{SlotHead, Slots};
use crate::hierarchical_wheel::{FIRST_LEVEL, RING_SLOTS};
use crate::wheel_core::{SLOTS, slot_start};

/// How many ticks before a first-level slot's start its drain begins.
pub(super) const DRAIN_AHEAD: Tick = 512;

/// How many ticks before the slot's start the held items are drained again.
pub(super) const HELD_AHEAD: Tick = 48;

/// The most items one `advance` drains (whole chunks, so up to a chunk more). A drained
/// item costs about what its cascade would: some 10 to 30 ns at a million timers.
pub(super) const DRAIN_BUDGET: usize = 512;

/// `draining` when no slot drains.
pub(super) const NOT_DRAINING: u32 = u32::MAX;

/// Where a drain stands (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Phase {
    /// Taking the slot's own items: into the ring, or held.
    Slot,
    /// Taking the held items: into the ring, or back into the slot's array.
    Held,
    /// Nothing more moves before the slot's start.
    Done,
}

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

    /// Picks the slot to drain if none is draining, then moves up to `DRAIN_BUDGET` items
    /// by its phase. Runs after a move, with no level slot starting at or before the clock.
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
            self.phase = Phase::Slot;
        }
        let home = self.draining as usize;
        let start = slot_start(self.now, FIRST_LEVEL, home % SLOTS);
        if self.phase == Phase::Slot {
            let tail = self.slots.heads[home];
            if !tail.is_empty() {
                // One budget a move: the held items wait for the next.
                self.slots.heads[home] = self.drain_batch(tail, HELD);
                if self.slots.heads[home].is_empty() && self.held.is_empty() {
                    self.slots.clear(home);
                    self.set_draining(NOT_DRAINING);
                }
                return;
            }
            if self.held.is_empty() {
                self.slots.clear(home);
                self.set_draining(NOT_DRAINING);
                return;
            }
            if self.now + HELD_AHEAD < start {
                // Wake at the held items' turn; the moves until then take the one-word path.
                self.slots.raise_level_bound(start - HELD_AHEAD);
                return;
            }
            self.phase = Phase::Held;
        }
        if self.phase == Phase::Held {
            let held = std::mem::replace(&mut self.held, Tail::EMPTY);
            self.held = self.drain_batch(held, home as u32);
            if !self.held.is_empty() {
                return;
            }
            if self.slots.heads[home].is_empty() {
                self.slots.clear(home);
                self.set_draining(NOT_DRAINING);
                return;
            }
            self.phase = Phase::Done;
        }
        // Only the slot's start moves what is left (or a timer started into the slot, in
        // its cascade).
        self.slots.raise_level_bound(start);
    }

    /// Takes up to `DRAIN_BUDGET` items (whole chunks) from the array `tail`, newest chunk
    /// first, and files each into the ring when its deadline is less than 4,096 ticks
    /// ahead, else into `keep` (the held array, or the draining slot's array); returns what
    /// is left of `tail`. `tail` is detached from its owner while this runs and `keep` is
    /// another array, so no item is taken twice.
    fn drain_batch(&mut self, mut tail: Tail, keep: u32) -> Tail {
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
                let home = if timer.deadline - self.now < RING_SLOTS as Tick {
                    self.slots.claim(self.now, timer.deadline)
                } else {
                    keep
                };
                let array = if home == HELD {
                    &mut self.held
                } else {
                    &mut self.slots.heads[home as usize]
                };
                (timer.home, timer.at) = (home, self.pool.push(array, index));
                self.work += 1;
            }
            batch = next;
        }
        tail
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
