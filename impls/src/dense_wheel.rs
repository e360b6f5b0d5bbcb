//! `dense-wheel`: hierarchical-wheel's ring and levels with each slot a dense array of
//! entry indices instead of a linked list, so that firing or cascading a slot reads a
//! stream and a `start` appends to a slot's tail; a `stop` swap-removes by the entry's
//! back-index. Every store grows by fixed blocks, so no operation copies what it holds.
//!
//! # The idea
//!
//! A wheel with intrusive lists (Linux's, tokio's, Kafka's, `hierarchical-wheel` here)
//! fires a slot by chasing `next` pointers: each entry's line must arrive before the next
//! entry's address is known, so a slot of a thousand entries scattered over a large arena
//! costs a thousand cache misses one after the other, and a `start` writes the `prev` of a
//! random slot's old head, another miss (docs/evidence/2026-11-26-fair-fight.md, *Item 2*,
//! counted where a million-timer hold misses the last level: mostly there). The way out
//! that study proposed, and issue 45 asked for, is this structure: each slot an array of
//! entry indices, with a back-index in every entry for O(1) removal (the back-index that
//! `binary-heap` keeps for its eager `stop`), over the ring and levels of
//! `hierarchical-wheel` (Varghese and Lauck's Scheme 7 over Linux's `tv1` and tokio's
//! 64-slot levels: read its header for the geometry), which it shares through
//! `hierarchical_wheel/slots.rs`. A slot's array is read in order, the indices a chunk
//! ahead are known, and their entries are prefetched (`prefetch.rs`) so that many
//! misses are in flight at once. A `start` touches its slot's tail, which a busy slot keeps
//! cached, and an entry the last firing freed.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | entry: generation | 4 |
//! | entry: `home`, the slot (a ring slot, a level's slot, or the due array) | 4 |
//! | entry: `at`, the address of its item in the slot's array | 4 |
//! | entry: `deadline` | 8 |
//! | entry: `value` | 8 |
//! | entry: padding | 4 |
//! | item in the slot's array: the entry's index | 4 |
//! | the chunk's link, one word per 15 items | 4 / 15 |
//! | **total** | **36.3** |
//!
//! The item holds no deadline: a ring slot holds one deadline, and a cascade must rewrite
//! each entry's back-index anyway, so it reads the deadline from the line it writes.
//!
//! Slack, beside the 36.3: each non-empty slot's newest chunk may be partly filled, at
//! most 14 unused items, 56 bytes (4,673 slots: at most 262 KB, 0.26 bytes a timer at a
//! million); free chunks that a firing returned wait in the pool for the next starts; the
//! last block of entries and of chunks may be partly used (8 KiB and 16 KiB), and the
//! vector of entry blocks holds a pointer per 256 timers (0.03 bytes a timer). So a
//! million pending timers take at most 36.3 + 0.26 + 0.06 = 36.6 bytes each, within 40;
//! the conformance suite measures it at 65,536 (`memory_budget`).
//!
//! The fixed part: 4,673 slot tails (`u32` chunk and `u32` fill, 37,384 bytes), the ring's
//! 64 occupancy words and summary word, 11 level occupancy words.
//!
//! # Costs (n pending timers, L = 10: the ring and 9 levels)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): the slot as in `hierarchical-wheel`, an entry from the free list, the index written at the slot's tail (a chunk from the pool when the tail is full) |
//! | `stop` | O(1): the slot's last item moves into the stopped one's place and its entry's back-index is rewritten; a tail chunk emptied returns to the pool; clear the bit if the slot emptied |
//! | `restart` | O(1): the removal of `stop`, a new handle in place, the append of `start` |
//! | `advance`, per tick | nothing: as `hierarchical-wheel`, occupied slots only; a move within one ring word before the levels' earliest slot is one word test |
//! | `advance`, per occupied slot | O(1) to find it (`hierarchical-wheel`'s bitmaps), then its array read chunk by chunk, each chunk's successor prefetched |
//! | `advance`, per fired timer | O(1) when it was started less than 4,096 ticks ahead; O(L) worst case, one re-filing per level it passes; each entry is prefetched a chunk (15 items) before it is read |
//! | `advance`, one move | within 512 ticks of a first-level slot's start, up to 512 of its items and a chunk are re-filed early (`dense_wheel/drain.rs`), so the cascade at its start moves only what the ring could not yet take: about 1% of a slot of up to 262,144 |
//! | `advance`, timers started in the past | O(k log k) for k of them: copied out with their deadlines and sorted |
//! | `next_deadline` | O(1): the due minimum (one rescan of the due array after its minimum was stopped), else the earlier of the ring's next slot and the levels' earliest slot start; at most 10 rounds of `advance(next_deadline)` fire the earliest timer |
//!
//! # Growth without stalls
//!
//! Nothing is ever moved to make room. The entries live in blocks of 256 slots and the
//! slot arrays in chunks from blocks of 256; a full block stays where it is and growth
//! allocates the next one (`dense_wheel/entries.rs`, `dense_wheel/chunks.rs`). So the
//! worst `start` allocates and threads one block of 256 entries (8 KiB written once),
//! or allocates one zeroed block of chunks (16 KiB), and pushes a pointer onto a vector of
//! blocks, whose doubling copies 8 bytes per 256 timers (31 KB at a million). No `start`
//! copies an entry or an item; a cascade moves the items of the one slot it processes,
//! which is its work, not growth. The test `growing_never_moves_a_block` checks it.

//! # Cascades spread ahead
//!
//! A cascade re-files its whole slot in one `advance`; at a million timers over a 30 s
//! idle timeout a first-level slot holds a hundred thousand of them. So the first level's
//! slots drain into the ring during the 512 ticks before their start, a bounded batch per
//! move, each timer placed by the ring's own rule (less than 4,096 ticks ahead); what
//! cannot go yet is held aside, tried again 48 ticks before the start, and what is left
//! then cascades at the start as before. `dense_wheel/drain.rs` states the rule,
//! its bound and what it costs; exactness is untouched.
//!
//! # Empty time
//!
//! `hierarchical-wheel`'s: one bit per slot, one per ring word and one per level, so
//! `advance` jumps from occupied slot to occupied slot and a jump of 2^40 ticks over a few
//! timers costs a few dozen steps.
//!
//! # Precision
//!
//! Exact, by `hierarchical-wheel`'s invariant (read on [`crate::hierarchical_wheel`]): a
//! ring slot holds one deadline, and a level's slot is re-filed at its first tick, before
//! any of its deadlines (a drained timer earlier, by the ring's placement rule, which keeps
//! one deadline per ring slot). The order within one ring slot is the array's, newest chunk first:
//! all its timers share one deadline.
//!
//! # Range
//!
//! Every `u64` deadline has a slot (the last level holds the top four bits), as in
//! `hierarchical-wheel`, so nothing is refused. The one limit is the count: about 2^32
//! pending timers (32-bit indices and item addresses), past which `start` panics saying so.
//!
//! # Timers started in the past
//!
//! A deadline `<= now` has no slot ahead of the clock, so it goes to the due array, a slot
//! of its own with its minimum kept beside it; `advance` copies it out with the deadlines,
//! sorts and fires it before anything else.
//!
//! # Code
//!
//! This file files, removes, fires and cascades; `drain.rs` spreads the first level's
//! cascades ahead; `chunks.rs` holds the slot arrays and their pool, `entries.rs` the
//! entries, and `hierarchical_wheel/slots.rs` the bitmaps and
//! their searches, shared with `hierarchical-wheel`.

mod chunks;
mod drain;
mod entries;
#[cfg(test)]
mod tests;

use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::hierarchical_wheel::slots::{SlotHead, Slots};
use crate::hierarchical_wheel::{LEVELS, LISTS};
use crate::wheel_core::SlotAt;
use chunks::{Batch, Pool, Tail};
use drain::NOT_DRAINING;
use entries::{Entries, Timer};

/// The `home` of a timer in the due array.
const DUE: u32 = LISTS as u32;

/// The `home` of a timer in the held array of the slot that drains (`drain.rs`).
const HELD: u32 = DUE + 1;

/// The dense hierarchical wheel. See the module documentation; the invariant is
/// [`crate::hierarchical_wheel::HierarchicalWheel`]'s, with "list" read as "array".
pub struct DenseWheel<V> {
    entries: Entries<V>,
    pool: Pool,
    slots: Slots<Tail>,
    /// Timers started with `deadline <= now`.
    due: Tail,
    /// A lower bound of the due deadlines while any is pending, exact unless `due_stale`
    /// (the timer holding it was stopped).
    due_min: Tick,
    due_stale: bool,
    /// The due timers being fired, kept for its allocation.
    scratch: Vec<(Tick, u32)>,
    /// The level slot draining ahead of its start (its index in `heads`), or
    /// `NOT_DRAINING`; and the items taken out of it not yet placeable (`drain.rs`).
    draining: u32,
    held: Tail,
    /// `draining`, or `DUE` when no slot drains: every home below it is a plain slot,
    /// whose bit a removal that empties it clears (`unfile`'s one test).
    clear_below: u32,
    /// What the drain of `draining` moves next.
    phase: drain::Phase,
    now: Tick,
    work: u64,
}

impl<V> DenseWheel<V> {
    /// Appends the timer at `index` with `deadline` to the due array or its slot and
    /// returns its back-index. Inline always: as a call, with its register saves, it was
    /// a tenth of a `start`'s instructions.
    #[inline(always)]
    fn file(&mut self, index: u32, deadline: Tick) -> (u32, u32) {
        if deadline <= self.now {
            return self.file_due(index, deadline);
        }
        let home = self.slots.claim(self.now, deadline);
        let at = self.pool.push(&mut self.slots.heads[home as usize], index);
        (home, at)
    }

    /// [`DenseWheel::file`] into the due array. Out of line: a timer started already due
    /// is rare.
    #[inline(never)]
    fn file_due(&mut self, index: u32, deadline: Tick) -> (u32, u32) {
        // A stale minimum is still a lower bound, so a deadline at or below it is exact.
        if self.due.is_empty() || deadline <= self.due_min {
            self.due_min = deadline;
            self.due_stale = false;
        }
        (DUE, self.pool.push(&mut self.due, index))
    }

    /// Takes the item at `at` out of the array `home`, rewriting the back-index of the item
    /// moved into its place and clearing the slot's bit if it emptied.
    #[inline]
    fn unfile(&mut self, home: u32, at: u32, deadline: Tick) {
        let tail = if home < DUE {
            &mut self.slots.heads[home as usize]
        } else if home == DUE {
            if deadline == self.due_min {
                self.due_stale = true;
            }
            &mut self.due
        } else {
            &mut self.held
        };
        if let Some(moved) = self.pool.remove(tail, at) {
            self.entries.get_mut(moved).at = at;
        }
        if tail.is_empty() {
            // One test on the common path: a slot below `clear_below` is a plain slot.
            if home < self.clear_below {
                self.slots.clear(home as usize);
            } else {
                self.emptied_past_draining(home);
            }
        }
    }

    /// Prefetches the entries of `batch`.
    #[inline(always)]
    fn prefetch(&self, batch: &Batch) {
        for &index in batch.items() {
            self.entries.prefetch(index);
        }
    }

    /// The earliest occupied slot that starts by `to`, counting one unit of work.
    #[inline]
    fn due_by(&mut self, to: Tick) -> Option<SlotAt> {
        self.work += 1;
        self.slots.due_by(self.now, to)
    }

    /// `advance` past its first answer: the due array, then each slot due by `to` from
    /// `first` (already found and counted) or a search.
    #[inline(never)]
    fn advance_slots<F: FnMut(TimerId, V, Tick)>(
        &mut self,
        to: Tick,
        first: Option<SlotAt>,
        on_fire: &mut F,
    ) {
        if !self.due.is_empty() {
            self.fire_due(on_fire);
        }
        let mut next = match first {
            Some(at) => {
                self.work += 1;
                Some(at)
            }
            None => self.due_by(to),
        };
        while let Some(at) = next {
            self.now = at.start;
            let tail = self.slots.take(at);
            self.work += 1;
            if at.level == 0 {
                self.fire(tail, on_fire);
            } else {
                self.cascade(tail);
                self.cascade_held(Slots::<Tail>::level_home(at));
            }
            next = self.due_by(to);
        }
        self.now = to;
        if self.drain_due(to) {
            self.drain_ahead();
        }
    }

    /// Fires every timer of a ring slot taken whole: a chunk at a time, the next chunk's
    /// entries prefetched while this one's fire.
    fn fire<F: FnMut(TimerId, V, Tick)>(&mut self, mut tail: Tail, on_fire: &mut F) {
        let mut batch = self.pool.take_batch(&mut tail);
        self.prefetch(&batch);
        while batch.len > 0 {
            let next = self.pool.take_batch(&mut tail);
            self.prefetch(&next);
            for &index in batch.items() {
                let (id, timer) = self.entries.remove(index);
                self.work += 1;
                on_fire(id, timer.value, timer.deadline);
            }
            batch = next;
        }
    }

    /// Re-files every timer of a level slot taken whole relative to the clock (its start):
    /// a batch move into lower slots, each entry read and its back-index written in one
    /// access, prefetched a chunk ahead.
    fn cascade(&mut self, mut tail: Tail) {
        let mut batch = self.pool.take_batch(&mut tail);
        self.prefetch(&batch);
        while batch.len > 0 {
            let next = self.pool.take_batch(&mut tail);
            self.prefetch(&next);
            for &index in batch.items() {
                let timer = self.entries.get_mut(index);
                let home = self.slots.claim(self.now, timer.deadline);
                let at = self.pool.push(&mut self.slots.heads[home as usize], index);
                (timer.home, timer.at) = (home, at);
                self.work += 1;
            }
            batch = next;
        }
    }

    /// Fires the due array, sorted by deadline.
    #[inline(never)]
    fn fire_due<F: FnMut(TimerId, V, Tick)>(&mut self, on_fire: &mut F) {
        let mut tail = std::mem::replace(&mut self.due, Tail::EMPTY);
        let mut due = std::mem::take(&mut self.scratch);
        loop {
            let batch = self.pool.take_batch(&mut tail);
            if batch.len == 0 {
                break;
            }
            due.extend(
                batch
                    .items()
                    .iter()
                    .map(|&index| (self.entries.get(index).deadline, index)),
            );
        }
        due.sort_unstable();
        for (_, index) in due.drain(..) {
            let (id, timer) = self.entries.remove(index);
            self.work += 1;
            on_fire(id, timer.value, timer.deadline);
        }
        self.scratch = due;
    }
}

impl<V> TimerQueue<V> for DenseWheel<V> {
    fn with_capacity(capacity: usize) -> Self {
        DenseWheel {
            entries: Entries::with_capacity(capacity),
            pool: Pool::with_capacity(capacity),
            slots: Slots::new(),
            due: Tail::EMPTY,
            due_min: 0,
            due_stale: false,
            scratch: Vec::new(),
            draining: NOT_DRAINING,
            held: Tail::EMPTY,
            clear_below: DUE,
            phase: drain::Phase::Done,
            now: 0,
            work: 0,
        }
    }

    #[inline(always)]
    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.work += 1;
        let index = self.entries.vacant();
        let (home, at) = self.file(index, deadline);
        let timer = Timer {
            deadline,
            value,
            home,
            at,
        };
        self.entries.occupy(index, timer)
    }

    #[inline(always)]
    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        self.work += 1;
        let (_, timer) = self.entries.remove(index);
        self.unfile(timer.home, timer.at, timer.deadline);
        Some(timer.value)
    }

    /// Moves the timer in place: out of its array, a new handle, deadline and value, into
    /// the array of its new deadline, with no entry freed and taken between.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.entries.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        self.work += 1;
        let timer = self.entries.get(index);
        self.unfile(timer.home, timer.at, timer.deadline);
        let (id, old) = self.entries.reissue(index, deadline, value);
        let (home, at) = self.file(index, deadline);
        let timer = self.entries.get_mut(index);
        (timer.home, timer.at) = (home, at);
        (id, Some(old))
    }

    /// A move with nothing due is answered here from one ring word, as in
    /// `hierarchical-wheel`; the rest is [`DenseWheel::advance_slots`], out of line.
    #[inline(always)]
    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        let near = if self.due.is_empty() {
            self.slots.near(self.now, to)
        } else {
            None
        };
        if near == Some(None) {
            self.work += 1;
            self.now = to;
            return;
        }
        self.advance_slots(to, near.flatten(), &mut on_fire);
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        if !self.due.is_empty() {
            if self.due_stale {
                let (entries, work) = (&self.entries, &mut self.work);
                let mut min = Tick::MAX;
                self.pool.for_each(self.due, |_, index| {
                    *work += 1;
                    min = min.min(entries.get(index).deadline);
                });
                (self.due_min, self.due_stale) = (min, false);
            }
            return Some(self.due_min);
        }
        self.work += 1;
        self.slots.earliest(self.now).map(|at| at.start)
    }

    /// As `hierarchical-wheel`'s: each round processes the earliest timer's slot, which
    /// moves it at least one level down or fires it.
    fn next_deadline_steps(&self) -> u32 {
        LEVELS as u32
    }

    crate::contract::len_now_work!(entries.len());
}
