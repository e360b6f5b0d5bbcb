//! The ring and the levels of [`super::HierarchicalWheel`]: their heads, occupancy bitmaps
//! and the bound that lets a small clock move skip the search. The invariant they rely on
//! is the wheel's.
//!
//! What a slot holds is the wheel's: a list head here, a dense array's tail in
//! [`crate::dense_wheel`], which keeps the same ring and levels. [`SlotHead`] is all the
//! bitmaps need to know of it: its empty value, put back when a slot is taken whole.

use super::{LEVEL_BASE, LISTS, RING_SLOTS};
use crate::arena::NIL;
use crate::contract::Tick;
use crate::wheel_core::{
    BITS_PER_LEVEL, DIGIT_LEVELS, SLOTS, SlotAt, level_for, slot_for, slot_start,
};

/// What a slot of the ring or a level holds, as the bitmaps see it: a value that is
/// copied out when the slot is taken whole, and the value of an empty slot.
pub(crate) trait SlotHead: Copy {
    /// The head of an empty slot.
    const EMPTY: Self;
    /// How many ticks before a level slot's start the wheel wants `advance` off its
    /// one-word path ([`Slots::near`]): 0, or `dense-wheel`'s drain window, so that its
    /// drain costs the common move nothing outside the window.
    const AHEAD: Tick = 0;
}

/// A list head: the first entry's arena index, `NIL` when the list is empty.
impl SlotHead for u32 {
    const EMPTY: Self = NIL;
}

/// The slots of the ring and the levels, with their occupancy bits.
pub(crate) struct Slots<H: SlotHead = u32> {
    /// Heads: ring slot `s` at `s`, level `L`'s slot `s` at `LEVEL_BASE + L * SLOTS + s`.
    pub(crate) heads: Box<[H; LISTS]>,
    /// Bit `s % 64` of word `s / 64` is set exactly when ring slot `s` is non-empty.
    pub(crate) ring: [u64; RING_SLOTS / 64],
    /// Bit `w` is set when `ring[w] != 0`, and may stay set after the word empties until a
    /// search passes it: a `stop` then clears one bit and tests nothing.
    pub(crate) ring_words: u64,
    /// Per level, bit `s` is set exactly when slot `s` is non-empty (levels below
    /// `FIRST_LEVEL` stay empty).
    pub(crate) occupied: [u64; DIGIT_LEVELS],
    /// Bit `L` is set exactly when `occupied[L] != 0`.
    pub(crate) occupied_levels: u16,
    /// No occupied level slot starts before this tick plus `H::AHEAD` (but the one that
    /// [`Slots::raise_level_bound`] named, which starts at it): the levels' earliest slot
    /// start, less `H::AHEAD`, when they were last searched, lowered by every level filing
    /// since (`Tick::MAX` when they were empty). Stops leave it low, which only costs a
    /// search.
    level_bound: Tick,
}

impl<H: SlotHead> Slots<H> {
    /// Every slot empty.
    pub(crate) fn new() -> Self {
        Slots {
            heads: Box::new([H::EMPTY; LISTS]),
            ring: [0; RING_SLOTS / 64],
            ring_words: 0,
            occupied: [0; DIGIT_LEVELS],
            occupied_levels: 0,
            level_bound: Tick::MAX,
        }
    }

    /// Whether a `deadline >= now` goes to the ring: less than the ring's size ahead.
    #[inline]
    pub(crate) fn in_ring(&self, now: Tick, deadline: Tick) -> bool {
        deadline - now < RING_SLOTS as Tick
    }

    /// The list a `deadline >= now` goes on, marked non-empty: the ring slot of its low 12
    /// bits if it is less than the ring's size ahead, else its level's slot.
    #[inline]
    pub(crate) fn claim(&mut self, now: Tick, deadline: Tick) -> u32 {
        if self.in_ring(now, deadline) {
            let slot = deadline as usize & (RING_SLOTS - 1);
            self.ring[slot / 64] |= 1 << (slot % 64);
            self.ring_words |= 1 << (slot / 64);
            slot as u32
        } else {
            self.claim_level(now, deadline)
        }
    }

    /// [`Slots::claim`] of a deadline at least 4,096 ahead. Out of line: it would add
    /// a `leading_zeros`, two shifts by the level and the bound's update to the ring's
    /// inline path, which most starts take.
    #[inline(never)]
    fn claim_level(&mut self, now: Tick, deadline: Tick) -> u32 {
        // At least 4,096 ahead: `now` and `deadline` differ at bit 12 or above.
        let level = level_for(now, deadline);
        let slot = slot_for(deadline, level);
        self.occupied[level] |= 1 << slot;
        self.occupied_levels |= 1 << level;
        // The slot's start: `deadline` shares `now`'s bits above the level's digit.
        let start = deadline & (Tick::MAX << (level as u32 * BITS_PER_LEVEL));
        self.level_bound = self.level_bound.min(start.saturating_sub(H::AHEAD));
        (LEVEL_BASE + level * SLOTS + slot) as u32
    }

    /// Marks list `home` (a ring or level slot) empty.
    #[inline]
    pub(crate) fn clear(&mut self, home: usize) {
        if home < RING_SLOTS {
            self.ring[home / 64] &= !(1 << (home % 64));
        } else {
            let (level, slot) = ((home - LEVEL_BASE) / SLOTS, home % SLOTS);
            self.occupied[level] &= !(1 << slot);
            if self.occupied[level] == 0 {
                self.occupied_levels &= !(1 << level);
            }
        }
    }

    /// The ring's next occupied slot from the clock's position `position`, going round:
    /// the first set bit at or after it, else the first one from slot 0. Clears the
    /// summary bits of the empty words it meets.
    #[inline]
    fn ring_next(&mut self, position: usize) -> Option<usize> {
        let word = position / 64;
        let here = self.ring[word] & (u64::MAX << (position % 64));
        if here != 0 {
            return Some(word * 64 + here.trailing_zeros() as usize);
        }
        while self.ring_words != 0 {
            // `!1 << word`: the words after the clock's (none after the last); else from
            // word 0, the clock's own word included for the slots behind it (a lap ahead).
            let later = self.ring_words & (!1 << word);
            let next = if later != 0 { later } else { self.ring_words }.trailing_zeros() as usize;
            let bits = self.ring[next];
            if bits != 0 {
                return Some(next * 64 + bits.trailing_zeros() as usize);
            }
            self.ring_words &= !(1 << next);
        }
        None
    }

    /// The earliest slot due by `to`, seen from `now` (`now <= to`), when it can be told
    /// without a search: `now..=to` lies within one ring word and before every level slot
    /// (the levels' bound), so the word's set bits in that range are all that is due. This
    /// is the common clock move of one tick or a few, where it costs one word test.
    /// `None` when the search is needed.
    ///
    /// The range includes `now`: between operations nothing is due there, but during
    /// `advance` a cascade at its slot's start re-files the entries due at that tick into
    /// the ring slot of `now` (and leaves the levels' bound at or below `now`, so the next
    /// answer comes from a search anyway).
    #[inline]
    pub(crate) fn near(&self, now: Tick, to: Tick) -> Option<Option<SlotAt>> {
        let last = to as usize & (RING_SLOTS - 1);
        let ahead = to - now;
        if to >= self.level_bound || ahead > (last % 64) as Tick {
            return None;
        }
        // Bits `last - ahead ..= last` of `last`'s word.
        let upto = u64::MAX >> (63 - last % 64);
        let from = u64::MAX << (last % 64 - ahead as usize);
        let due = self.ring[last / 64] & upto & from;
        Some((due != 0).then(|| {
            let slot = last / 64 * 64 + due.trailing_zeros() as usize;
            SlotAt {
                level: 0,
                slot,
                start: to - (last - slot) as Tick,
            }
        }))
    }

    /// The earliest occupied slot that starts by `to`, seen from `now`.
    #[inline]
    pub(crate) fn due_by(&mut self, now: Tick, to: Tick) -> Option<SlotAt> {
        match self.near(now, to) {
            Some(near) => near,
            None => self.earliest(now).filter(|at| at.start <= to),
        }
    }

    /// The earliest occupied slot seen from `now`: the earlier of the ring's next slot and
    /// the lowest set bit of the lowest occupied level (see the invariant on
    /// [`HierarchicalWheel`]); on a tie the level's, whose entries due at that tick then
    /// join the ring slot's and fire with them. Records the levels' earliest start as
    /// their bound.
    #[inline]
    pub(crate) fn earliest(&mut self, now: Tick) -> Option<SlotAt> {
        let position = now as usize & (RING_SLOTS - 1);
        let ring = self.ring_next(position).map(|slot| SlotAt {
            level: 0,
            slot,
            start: now + (slot.wrapping_sub(position) & (RING_SLOTS - 1)) as Tick,
        });
        let Some(level) = self.earliest_level(now) else {
            return ring;
        };
        match ring {
            Some(ring) if ring.start < level.start => Some(ring),
            _ => Some(level),
        }
    }

    /// The earliest occupied level slot seen from `now`: the lowest set bit of the lowest
    /// occupied level. Records its start as the levels' bound.
    #[inline]
    pub(crate) fn earliest_level(&mut self, now: Tick) -> Option<SlotAt> {
        if self.occupied_levels == 0 {
            self.level_bound = Tick::MAX;
            return None;
        }
        let level = self.occupied_levels.trailing_zeros() as usize;
        let bits = self.occupied[level];
        debug_assert!(
            bits & ((1u64 << slot_for(now, level)) - 1) == 0,
            "an occupied slot of level {level} lies behind the clock {now}"
        );
        let slot = bits.trailing_zeros() as usize;
        let start = slot_start(now, level, slot);
        self.level_bound = start.saturating_sub(H::AHEAD);
        Some(SlotAt { level, slot, start })
    }

    /// No occupied level slot starts before this tick plus `H::AHEAD` (see the field).
    #[inline]
    pub(crate) fn level_bound(&self) -> Tick {
        self.level_bound
    }

    /// Raises the levels' bound to `start`, the start of the earliest occupied level slot,
    /// when that slot needs no `AHEAD` (`dense-wheel`'s slot whose drain has nothing left
    /// to move). A later filing lowers it as usual.
    #[inline]
    pub(crate) fn raise_level_bound(&mut self, start: Tick) {
        self.level_bound = start;
    }

    /// The index in `heads` of the level slot `at`.
    #[inline]
    pub(crate) fn level_home(at: SlotAt) -> usize {
        LEVEL_BASE + at.level * SLOTS + at.slot
    }

    /// Empties the slot `at` and returns what it held.
    #[inline]
    pub(crate) fn take(&mut self, at: SlotAt) -> H {
        let home = if at.level == 0 {
            at.slot
        } else {
            Self::level_home(at)
        };
        self.clear(home);
        std::mem::replace(&mut self.heads[home], H::EMPTY)
    }
}
