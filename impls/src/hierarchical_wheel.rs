//! `hierarchical-wheel`: levels of 64 slots with 64-bit occupancy bitmaps; entries cascade
//! down a level as their slot comes due, and 11 levels cover all of `u64`.
//!
//! # The idea
//!
//! Varghese and Lauck's Scheme 7 (SOSP 1987, "hierarchical timing wheels"): split a deadline
//! into digits and keep a wheel per digit, like the hands of a clock. A far timer sits in a
//! coarse wheel; when the clock reaches its coarse slot it is re-filed (cascaded) into a
//! finer wheel, until it reaches the finest wheel, where a slot is one tick and everything
//! in it fires. The geometry is tokio's runtime timer (`tokio/src/runtime/time/wheel`): six
//! bits per level, so a level is 64 slots and its occupancy fits in one `u64`, the level of a
//! deadline comes from `now ^ deadline`, and a slot is taken out whole before its entries
//! are re-filed. Linux's timer wheel (`kernel/time/timer.c`) uses the same bitmap-per-level
//! search to find the next pending bucket without walking empty ticks. Unlike tokio (six
//! levels and a capped top level) this wheel has 11 levels, the last one holding the top
//! four bits, so every `u64` deadline has an exact home and no overflow list is needed.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | arena: generation | 4 |
//! | arena link: `next` in the entry's list | 4 |
//! | `deadline` | 8 |
//! | `value` | 8 |
//! | `prev` in the entry's list | 4 |
//! | `home`: the list the entry is on (`level * 64 + slot`, or the due list) | 4 |
//! | **total** | **32** |
//!
//! The fixed part: 11 × 64 `u32` slot heads (2816 bytes) and 11 occupancy words.
//!
//! # Costs (n pending timers, L = 11 levels)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): one `leading_zeros` picks the level, the entry goes into the arena with its list links written, set a bit |
//! | `stop` | O(1): unlink through `prev`/`next`, clear the bit if the slot emptied |
//! | `restart` | O(1): unlink and file again in place, no arena free and allocation |
//! | `advance`, per tick | nothing: ticks are never visited, only occupied slots |
//! | `advance`, per occupied slot | O(1): two `trailing_zeros` find it, the list is taken whole |
//! | `advance`, per fired timer | O(L) worst case: at most one re-filing per level it passes on the way down, then the firing |
//! | `advance`, timers started in the past | O(k log k) for k of them: a merge sort of their list, in place |
//! | `next_deadline` | O(1): the due minimum (exact; one rescan of the due list after its minimum was stopped), else the earliest slot's start by two `trailing_zeros` (exact at level 0, a lower bound above; at most 11 rounds of `advance(next_deadline)` fire the earliest timer) |
//!
//! # Empty time
//!
//! One bit per slot says whether it holds anything, and one bit per level says whether the
//! level holds anything. The earliest occupied slot is the lowest set bit of the lowest
//! occupied level (see [`HierarchicalWheel`] for why no wrap-around search is needed), so
//! `advance` jumps from occupied slot to occupied slot and a jump of 2^40 ticks over a few
//! timers costs a few dozen steps.
//!
//! # Code
//!
//! `start`, `stop`, `restart` and `next_deadline` are [`wheel_core`](crate::wheel_core)'s,
//! shared with `incremental-wheel`; this file files, unlinks, cascades and searches.
//!
//! # Timers started in the past
//!
//! A deadline `<= now` has no slot ahead of the clock, so it waits on the due list
//! ([`crate::due_list`]), which `advance` fires first, sorted by deadline.

use crate::arena::{Arena, NIL};
use crate::arena_list;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::due_list::DueList;
use crate::wheel_core::{self, BitmapWheel};

/// Bits of the deadline each level resolves.
pub(crate) const BITS_PER_LEVEL: u32 = 6;
/// Slots per level: one occupancy bit each in a `u64`.
pub(crate) const SLOTS: usize = 1 << BITS_PER_LEVEL;
/// Levels needed for 64-bit deadlines: 10 full levels of 6 bits and a last one of 4 bits.
pub const LEVELS: usize = 64_usize.div_ceil(BITS_PER_LEVEL as usize);
/// The `home` of an entry on the due list (slot homes are `0..LEVELS * SLOTS`).
const DUE: u32 = (LEVELS * SLOTS) as u32;

/// One pending timer, stored in the arena. The arena link is the `next` pointer of the list
/// named by `home`. `incremental-wheel` keeps the same entries.
pub(crate) struct Entry<V> {
    pub(crate) deadline: Tick,
    pub(crate) value: V,
    prev: u32,
    pub(crate) home: u32,
}

crate::impl_linked!(Entry);

impl<V> Entry<V> {
    /// A timer not yet on any list.
    #[inline]
    pub(crate) fn new(deadline: Tick, value: V) -> Self {
        Entry {
            deadline,
            value,
            prev: NIL,
            home: NIL,
        }
    }
}

/// Frees every entry of the detached list starting at `index` and reports each to
/// `on_fire`, in list order, counting one unit of `work` per entry. Shared with
/// `incremental-wheel`.
#[inline]
pub(crate) fn fire_list<V, F: FnMut(TimerId, V, Tick)>(
    entries: &mut Arena<Entry<V>>,
    mut index: u32,
    work: &mut u64,
    on_fire: &mut F,
) {
    while index != NIL {
        let id = entries.id(index);
        let (next, entry) = entries.remove(index);
        *work += 1;
        on_fire(id, entry.value, entry.deadline);
        index = next;
    }
}

/// The hierarchical timing wheel. See the module documentation.
///
/// # Invariant
///
/// Between operations, and during `advance` whenever the search for the next slot runs,
/// with `now` the internal clock:
///
/// - every entry of level `L` agrees with `now` on all bits from `6L + 6` up, and its level
///   `L` digit (`(deadline >> 6L) & 63`, its slot) is greater than `now`'s at `L > 0`, and
///   greater or equal at level 0 (where its deadline is then the slot's start exactly);
/// - every entry on the due list has `deadline <= now`, and every wheel entry has
///   `deadline >= now` (`> now` outside `advance`).
///
/// Consequences used by the search: at each level every occupied slot is at or after
/// `now`'s position, so the lowest set bit is the earliest slot and no wrap-around is ever
/// needed; and every slot of level `L` starts after every deadline of the levels below it
/// (those share `now`'s bits from `6L` up, while level-`L` entries have a larger digit
/// there), so the lowest occupied level holds the earliest slot.
///
/// It survives the clock jumps of `advance`. The clock only moves to a tick `t` no later
/// than the start of every occupied slot. An entry of level `L` starts its slot at
/// `s = deadline` with the low `6L` bits cleared, which shares `now`'s bits from `6L + 6`
/// up; a `t` with `now <= t < s` lies between two numbers with that prefix and so has it
/// too, and its level-`L` digit is at most the entry's and not equal (else `t >= s`). The
/// entries of the slot being processed are re-filed relative to `t` = their slot's start,
/// which has zeros below bit `6L`, so they land below `L` with a digit greater than `t`'s
/// (or, for `deadline == t`, at level 0 on `t`'s own position).
pub struct HierarchicalWheel<V> {
    entries: Arena<Entry<V>>,
    /// List heads, slot `s` of level `L` at `L * SLOTS + s`.
    heads: Box<[u32; LEVELS * SLOTS]>,
    /// Per level, bit `s` is set exactly when slot `s` is non-empty.
    occupied: [u64; LEVELS],
    /// Bit `L` is set exactly when `occupied[L] != 0`.
    occupied_levels: u16,
    /// Timers started with `deadline <= now`.
    due: DueList,
    now: Tick,
    work: u64,
}

/// The level a `deadline > now` (or `== now`) belongs to: where the highest bit that
/// differs from `now` lies. OR-ing 63 makes every difference within the low six bits (and
/// no difference at all) read as level 0.
#[inline]
pub(crate) fn level_for(now: Tick, deadline: Tick) -> usize {
    let highest_differing_bit = 63 - ((now ^ deadline) | 63).leading_zeros();
    (highest_differing_bit / BITS_PER_LEVEL) as usize
}

/// The slot of `deadline` at `level`: its digit there.
#[inline]
pub(crate) fn slot_for(deadline: Tick, level: usize) -> usize {
    ((deadline >> (level as u32 * BITS_PER_LEVEL)) as usize) & (SLOTS - 1)
}

/// The first tick of slot `slot` of `level`, seen from `now`: `now`'s bits above the level
/// with the level's digit set to `slot` and everything below zero. The level above the last
/// one starts at bit 66, beyond `u64`, so there nothing of `now` is kept.
#[inline]
pub(crate) fn slot_start(now: Tick, level: usize, slot: usize) -> Tick {
    let level_shift = level as u32 * BITS_PER_LEVEL;
    let above = now.checked_shr(level_shift + BITS_PER_LEVEL).unwrap_or(0);
    let above = above.checked_shl(level_shift + BITS_PER_LEVEL).unwrap_or(0);
    above | ((slot as Tick) << level_shift)
}

impl<V> HierarchicalWheel<V> {
    /// Puts the live entry `index` at the front of the list of slot `home`.
    #[inline]
    fn push_front(&mut self, home: u32, index: u32) {
        self.entries.get_mut(index).home = home;
        arena_list::push_front(&mut self.entries, &mut self.heads[home as usize], index);
    }

    /// Files the live entry `index` into the wheel relative to the current clock. Its
    /// deadline must be `>= now`.
    #[inline]
    fn file(&mut self, index: u32) {
        let deadline = self.entries.get(index).deadline;
        debug_assert!(
            deadline >= self.now,
            "only future deadlines go into the wheel"
        );
        let level = level_for(self.now, deadline);
        let slot = slot_for(deadline, level);
        self.push_front((level * SLOTS + slot) as u32, index);
        self.occupied[level] |= 1 << slot;
        self.occupied_levels |= 1 << level;
    }

    /// Marks slot `slot` of `level` empty.
    #[inline]
    fn clear_slot_bit(&mut self, level: usize, slot: usize) {
        self.occupied[level] &= !(1 << slot);
        if self.occupied[level] == 0 {
            self.occupied_levels &= !(1 << level);
        }
    }

    /// Takes the live entry `index` off its list, keeping the occupancy bits and the due
    /// minimum true. The entry stays in the arena.
    fn unlink(&mut self, index: u32) {
        let home = self.entries.get(index).home;
        if home == DUE {
            self.due.unlink(&mut self.entries, index);
        } else if arena_list::unlink(&mut self.entries, &mut self.heads[home as usize], index) {
            let home = home as usize;
            self.clear_slot_bit(home / SLOTS, home % SLOTS);
        }
    }

    /// The earliest occupied slot as `(level, slot)`: the lowest set bit of the lowest
    /// occupied level (see the invariant on [`HierarchicalWheel`]).
    #[inline]
    fn earliest_slot(&mut self) -> Option<(usize, usize)> {
        self.work += 1;
        if self.occupied_levels == 0 {
            return None;
        }
        let level = self.occupied_levels.trailing_zeros() as usize;
        let bits = self.occupied[level];
        debug_assert!(
            bits & ((1u64 << slot_for(self.now, level)) - 1) == 0,
            "an occupied slot of level {level} lies behind the clock {}",
            self.now
        );
        Some((level, bits.trailing_zeros() as usize))
    }

    /// Empties slot `slot` of `level` and returns the head of its former list.
    #[inline]
    fn take_slot(&mut self, level: usize, slot: usize) -> u32 {
        self.clear_slot_bit(level, slot);
        arena_list::take(&mut self.heads[level * SLOTS + slot])
    }

    /// Fires every entry of a detached list, in list order.
    #[inline]
    fn fire_list<F: FnMut(TimerId, V, Tick)>(&mut self, index: u32, on_fire: &mut F) {
        fire_list(&mut self.entries, index, &mut self.work, on_fire);
    }

    /// Re-files every entry of a detached list relative to the current clock.
    ///
    /// `file` for each entry, with the entry read and relinked through one arena access
    /// (its `next` is read before it is overwritten): a cascade is a walk of a list of
    /// entries scattered over the arena, so each access saved is a check on a cold line.
    fn cascade(&mut self, mut index: u32) {
        while index != NIL {
            let (link, entry) = self.entries.entry_mut(index);
            let next = *link;
            let level = level_for(self.now, entry.deadline);
            let slot = slot_for(entry.deadline, level);
            let home = level * SLOTS + slot;
            entry.home = home as u32;
            entry.prev = NIL;
            let old_head = std::mem::replace(&mut self.heads[home], index);
            *link = old_head;
            if old_head != NIL {
                self.entries.get_mut(old_head).prev = index;
            }
            self.occupied[level] |= 1 << slot;
            self.occupied_levels |= 1 << level;
            self.work += 1;
            index = next;
        }
    }

    /// Fires the due list sorted by deadline.
    fn fire_due<F: FnMut(TimerId, V, Tick)>(&mut self, on_fire: &mut F) {
        let sorted = self.due.take_sorted(&mut self.entries, &mut self.work);
        self.fire_list(sorted, on_fire);
    }
}

impl<V> BitmapWheel<V> for HierarchicalWheel<V> {
    const DUE: u32 = DUE;

    #[inline]
    fn parts(&mut self) -> (&mut Arena<Entry<V>>, &mut DueList, &mut u64) {
        (&mut self.entries, &mut self.due, &mut self.work)
    }

    #[inline]
    fn clock(&self) -> Tick {
        self.now
    }

    #[inline]
    fn unlink_entry(&mut self, index: u32) {
        self.unlink(index);
    }

    #[inline]
    fn file_entry(&mut self, index: u32) {
        self.file(index);
    }

    #[inline]
    fn earliest(&mut self) -> Option<(usize, usize)> {
        self.earliest_slot()
    }

    /// The entry goes into the arena with its `home` and its list link already written,
    /// so a `start` writes its entry once.
    #[inline]
    fn insert_filed(&mut self, mut entry: Entry<V>) -> TimerId {
        let level = level_for(self.now, entry.deadline);
        let slot = slot_for(entry.deadline, level);
        let home = level * SLOTS + slot;
        entry.home = home as u32;
        let id = arena_list::insert_front(&mut self.entries, &mut self.heads[home], entry);
        self.occupied[level] |= 1 << slot;
        self.occupied_levels |= 1 << level;
        id
    }
}

impl<V> TimerQueue<V> for HierarchicalWheel<V> {
    fn with_capacity(capacity: usize) -> Self {
        HierarchicalWheel {
            entries: Arena::with_capacity(capacity),
            heads: Box::new([NIL; LEVELS * SLOTS]),
            occupied: [0; LEVELS],
            occupied_levels: 0,
            due: DueList::new(),
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        wheel_core::start(self, deadline, value)
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        wheel_core::stop(self, id)
    }

    /// Relinks the entry in place: off its slot (or the due list), new deadline and
    /// value, filed again as `start` files, with no arena free and allocation between.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        wheel_core::restart(self, id, deadline, value)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.fire_due(&mut on_fire);
        while let Some((level, slot)) = self.earliest_slot() {
            let start = slot_start(self.now, level, slot);
            if start > to {
                break;
            }
            self.now = start;
            let list = self.take_slot(level, slot);
            self.work += 1;
            if level == 0 {
                // A level-0 slot is one tick: every entry in it has `deadline == start`.
                self.fire_list(list, &mut on_fire);
            } else {
                self.cascade(list);
            }
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        wheel_core::next_deadline(self)
    }

    /// Each round of `advance(next_deadline())` processes the slot of the earliest timer,
    /// which moves it at least one level down or fires it; it starts at most at level 10.
    fn next_deadline_steps(&self) -> u32 {
        LEVELS as u32
    }

    crate::contract::len_now_work!(entries.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    type Wheel = HierarchicalWheel<u64>;

    #[test]
    fn one_entry_is_32_bytes() {
        assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 32);
    }

    #[test]
    fn geometry() {
        assert_eq!(LEVELS, 11);
        assert_eq!(level_for(0, 0), 0);
        assert_eq!(level_for(0, 63), 0);
        assert_eq!(level_for(0, 64), 1);
        assert_eq!(level_for(0, 4095), 1);
        assert_eq!(level_for(0, 4096), 2);
        assert_eq!(level_for(0, (1 << 36) - 1), 5);
        assert_eq!(level_for(0, 1 << 36), 6);
        assert_eq!(level_for(0, 1 << 59), 9);
        assert_eq!(level_for(0, 1 << 60), 10);
        assert_eq!(level_for(0, u64::MAX), 10);
        assert_eq!(level_for(u64::MAX - 1, u64::MAX), 0);
        assert_eq!(level_for(63, 64), 1);
        assert_eq!(slot_for(u64::MAX, 10), 15);
        assert_eq!(slot_start(12345, 10, 15), 15 << 60);
        assert_eq!(slot_start(u64::MAX - 5, 0, 63), u64::MAX);
        assert_eq!(slot_start(u64::MAX - 5, 9, 63), (0xF << 60) | (63 << 54));
        assert_eq!(slot_start(0x1234_5678, 1, 2), 0x1234_5000 | 2 << 6);
    }

    #[test]
    fn stop_keeps_bitmaps_and_lists_true() {
        let mut wheel = Wheel::new();
        let ids: Vec<_> = (0..5).map(|v| wheel.start(5000, v)).collect();
        let other = wheel.start(70, 9);
        // Unlink from the middle, the head and the tail of one slot's list.
        assert_eq!(wheel.stop(ids[2]), Some(2));
        assert_eq!(wheel.stop(ids[4]), Some(4));
        assert_eq!(wheel.stop(ids[0]), Some(0));
        assert_eq!(wheel.stop(other), Some(9));
        assert_eq!(wheel.next_deadline(), Some(4096));
        assert_eq!(wheel.stop(ids[1]), Some(1));
        assert_eq!(wheel.stop(ids[3]), Some(3));
        assert_eq!(wheel.next_deadline(), None);
        assert_eq!(wheel.occupied, [0; LEVELS]);
        assert_eq!(wheel.occupied_levels, 0);
        assert!(wheel.heads.iter().all(|&h| h == NIL));
        wheel.advance(u64::MAX, |_, value, _| panic!("{value} was stopped"));
    }
}
