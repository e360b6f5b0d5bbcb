//! What `hierarchical-wheel` and `incremental-wheel` share: the [`Entry`] both keep in an
//! arena, the geometry of 6-bit levels (tokio's: a level of 64 slots, its occupancy in one
//! `u64`), and `start`, `stop`, `restart` and `next_deadline`, written once here over the
//! [`BitmapWheel`] trait. Each wheel supplies only how it files, unlinks and finds a slot.
//!
//! # The geometry of 6-bit levels
//!
//! Level `L` resolves bits `6L..6L + 6` of a deadline (its *digit* there is its slot), and
//! a deadline `>= now` belongs to the level of the highest bit where it differs from `now`.
//! Eleven levels cover a `u64`, the last one holding the top four bits.

use crate::arena::{Arena, NIL};
use crate::contract::{Tick, TimerId};
use crate::due_list::DueList;

/// Bits of the deadline each level resolves.
pub(crate) const BITS_PER_LEVEL: u32 = 6;
/// Slots per level: one occupancy bit each in a `u64`.
pub(crate) const SLOTS: usize = 1 << BITS_PER_LEVEL;
/// Levels needed for 64-bit deadlines: 10 full levels of 6 bits and a last one of 4 bits.
pub(crate) const DIGIT_LEVELS: usize = 64_usize.div_ceil(BITS_PER_LEVEL as usize);

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

/// One pending timer, stored in the arena. The arena link is the `next` pointer of the list
/// named by `home`.
pub(crate) struct Entry<V> {
    pub(crate) deadline: Tick,
    pub(crate) value: V,
    prev: u32,
    /// The list the entry is on: a slot's number in the wheel's table of heads, or the
    /// wheel's `DUE`.
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

    /// A timer about to become the head of list `home` (its `next`, the old head, is the
    /// arena link the caller inserts it with).
    #[inline]
    pub(crate) fn head_of(home: u32, deadline: Tick, value: V) -> Self {
        Entry {
            deadline,
            value,
            prev: NIL,
            home,
        }
    }

    /// Makes the entry the head of list `home` (its `next`, the old head, is the caller's
    /// to write).
    #[inline]
    pub(crate) fn make_head(&mut self, home: u32) {
        self.home = home;
        self.prev = NIL;
    }
}

/// Frees every entry of the detached list starting at `index` and reports each to
/// `on_fire`, in list order, counting one unit of `work` per entry.
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

/// A wheel's earliest occupied slot: its level and slot, and the first tick it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotAt {
    pub(crate) level: usize,
    pub(crate) slot: usize,
    pub(crate) start: Tick,
}

/// What a bitmap wheel supplies to the shared operations.
pub(crate) trait BitmapWheel<V> {
    /// The `home` of an entry on the due list.
    const DUE: u32;

    /// The arena, the due list and the work counter, all mutably.
    fn parts(&mut self) -> (&mut Arena<Entry<V>>, &mut DueList, &mut u64);

    /// The internal clock.
    fn clock(&self) -> Tick;

    /// Takes the live entry `index` off its list (slot or due list), keeping the wheel's
    /// bookkeeping true; the entry stays in the arena.
    fn unlink(&mut self, index: u32);

    /// Takes the live entry `index` off its list and frees it, returning what it held. By
    /// default [`unlink`](BitmapWheel::unlink) then the arena's removal; a wheel that can
    /// free first and relink from the links the removal returns overrides this.
    fn unlink_and_free(&mut self, index: u32) -> Entry<V> {
        self.unlink(index);
        self.parts().0.remove(index).1
    }

    /// Files the live entry `index`, whose deadline is `>= clock()`, into the wheel.
    fn file(&mut self, index: u32);

    /// The earliest occupied slot, counting one unit of work; its `start` is exact where
    /// the slot is one tick, a lower bound of its deadlines above.
    fn earliest(&mut self) -> Option<SlotAt>;

    /// Inserts a timer whose deadline is `> clock()` and files it into the wheel. By
    /// default an insertion then [`file`](BitmapWheel::file); a wheel that can write the
    /// entry's list links as it inserts it overrides this.
    fn insert_filed(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.parts().0.insert(NIL, Entry::new(deadline, value));
        self.file(id.index());
        id
    }
}

/// Puts the live entry `index`, whose deadline is `<= clock()`, on the due list.
fn file_due<V, W: BitmapWheel<V>>(wheel: &mut W, index: u32) {
    let (entries, due, _) = wheel.parts();
    entries.get_mut(index).home = W::DUE;
    due.push(entries, index);
}

/// `start`: the due list for a deadline `<= now`, else the wheel.
///
/// # Inline into the caller, always
///
/// `start` and `stop` are forced inline, and with them every call on their common path
/// (`insert_filed`, `unlink_and_free`, `file`, `arena_list::insert_front`). Left to the
/// compiler's judgement each stayed a call, which saved and restored the registers that
/// only its rare paths (the arena's growth, the levels, the due list) need: on the ring's
/// short path that was a large share of the work
/// (docs/evidence/2026-11-26-fair-fight.md, *start and stop inline*, has the counts). The rare paths stay out of line (`start_due`, `insert_level`,
/// `Arena::grow`), so what is copied into every caller is the short path alone. Every
/// link of the chain must be forced: one left to the compiler stays a call, and forcing
/// the ones above it only moves the call down a level.
#[inline(always)]
pub(crate) fn start<V, W: BitmapWheel<V>>(wheel: &mut W, deadline: Tick, value: V) -> TimerId {
    *wheel.parts().2 += 1;
    if deadline <= wheel.clock() {
        return start_due(wheel, deadline, value);
    }
    wheel.insert_filed(deadline, value)
}

/// `start` of a deadline `<= now`: out of line, since a timer started already due is rare
/// and the due list's push would weigh on every `start`'s inline path.
#[inline(never)]
fn start_due<V, W: BitmapWheel<V>>(wheel: &mut W, deadline: Tick, value: V) -> TimerId {
    let id = wheel.parts().0.insert(NIL, Entry::new(deadline, value));
    file_due(wheel, id.index());
    id
}

/// `stop`: unlink and free the entry. Forced inline as `start` is.
#[inline(always)]
pub(crate) fn stop<V, W: BitmapWheel<V>>(wheel: &mut W, id: TimerId) -> Option<V> {
    let index = wheel.parts().0.resolve(id)?;
    *wheel.parts().2 += 1;
    Some(wheel.unlink_and_free(index).value)
}

/// `restart`, in place: off its list, new deadline and value, filed again as `start`
/// files, with no arena free and allocation between.
#[inline]
pub(crate) fn restart<V, W: BitmapWheel<V>>(
    wheel: &mut W,
    id: TimerId,
    deadline: Tick,
    value: V,
) -> (TimerId, Option<V>) {
    let Some(index) = wheel.parts().0.resolve(id) else {
        return (start(wheel, deadline, value), None);
    };
    wheel.unlink(index);
    let (entries, _, work) = wheel.parts();
    *work += 1;
    let (id, old) = entries.reissue(index, Entry::new(deadline, value));
    if deadline <= wheel.clock() {
        file_due(wheel, index);
    } else {
        wheel.file(index);
    }
    (id, Some(old.value))
}

/// `next_deadline`: the due minimum (exact), else the earliest slot's start (exact where a
/// slot is one tick, a lower bound above).
#[inline]
pub(crate) fn next_deadline<V, W: BitmapWheel<V>>(wheel: &mut W) -> Option<Tick> {
    let (entries, due, work) = wheel.parts();
    if let Some(min) = due.min(entries, work) {
        return Some(min);
    }
    wheel.earliest().map(|at| at.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_is_32_bytes() {
        assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 32);
    }

    #[test]
    fn geometry() {
        assert_eq!(DIGIT_LEVELS, 11);
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
}
