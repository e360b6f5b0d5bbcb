//! `hierarchical-wheel`: a ring of 4,096 one-tick slots for the deadlines less than 4,096
//! ticks ahead, and above it levels of 64 slots with 64-bit occupancy bitmaps; a far entry
//! cascades down a level as its slot comes due, and 9 levels cover the rest of `u64`.
//!
//! # The idea
//!
//! Varghese and Lauck's Scheme 7 (SOSP 1987, "hierarchical timing wheels"): split a deadline
//! into digits and keep a wheel per digit, like the hands of a clock. A far timer sits in a
//! coarse wheel; when the clock reaches its coarse slot it is re-filed (cascaded) into a
//! finer wheel, until it reaches the finest wheel, where a slot is one tick and everything
//! in it fires.
//!
//! The finest wheel is Linux's `tv1` from before 4.8 (`kernel/time/timer.c`,
//! `internal_add_timer`): a ring indexed by the deadline's low bits that takes every
//! deadline less than its size ahead of the clock, aligned or not, so that a timer that
//! short is filed once and fired from where it was filed. Here the ring has 4,096 slots (12
//! bits: `hashed-wheel`'s default size), found by a 64-word bitmap and a summary word.
//! With slots of 64 ticks at the bottom instead (tokio's geometry), a hold workload of mean
//! delay 1,000 filed most timers one level up and walked each of them twice, once to
//! re-file it and once to fire it, over entries scattered through the arena.
//!
//! The levels above are tokio's runtime timer (`tokio/src/runtime/time/wheel`), aligned:
//! six bits per level, so a level is 64 slots and its occupancy fits in one `u64`, the
//! level of a deadline comes from `now ^ deadline`, and a slot is taken out whole before its
//! entries are re-filed. They are numbered by the 6-bit digit they resolve, 2 to 10 (the
//! ring covers the first two digits' span), the last one holding the top four bits, so
//! every `u64` deadline has an exact home and no overflow list is needed.
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
//! | `home`: the list the entry is on (a ring slot, a level's slot, or the due list) | 4 |
//! | **total** | **32** |
//!
//! The fixed part: 4,096 ring heads and 9 × 64 level heads (`u32`, 18,688 bytes), 64 ring
//! occupancy words and a summary word, 11 level occupancy words.
//!
//! # Costs (n pending timers, L = 10: the ring and 9 levels)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): a subtraction picks the ring (the deadline's low 12 bits are its slot), else one `leading_zeros` picks the level; the entry goes into the arena with its list links written, set a bit |
//! | `stop` | O(1): unlink through `prev`/`next`, clear the bit if the slot emptied |
//! | `restart` | O(1): unlink and file again in place, no arena free and allocation |
//! | `advance`, per tick | nothing: ticks are never visited, only occupied slots; a move of one tick (or a few within one ring word) before the levels' earliest slot is one word test, no search, also between the slots it fires |
//! | `advance`, per occupied slot | O(1): the ring's next slot by one or two `trailing_zeros` (the clock's word, else the summary word then a word; plus one round for each word emptied by a `stop` since the last search, which clears its summary bit), the levels' by two; the list is taken whole |
//! | `advance`, per fired timer | O(1) when it was started less than 4,096 ticks ahead; O(L) worst case: at most one re-filing per level it passes on the way down, then the firing |
//! | `advance`, timers started in the past | O(k log k) for k of them: a merge sort of their list, in place |
//! | `next_deadline` | O(1): the due minimum (exact; one rescan of the due list after its minimum was stopped), else the earlier of the ring's next slot (exact) and the levels' earliest slot start (a lower bound); at most 10 rounds of `advance(next_deadline)` fire the earliest timer |
//!
//! # Empty time
//!
//! One bit per slot says whether it holds anything, one bit per ring word whether that word
//! may have a bit set, and one bit per level whether the level holds anything. The ring's next
//! slot is the first set bit at or after the clock's position, going round once; the
//! levels' earliest slot is the lowest set bit of the lowest occupied level (see
//! [`HierarchicalWheel`] for why no wrap-around search is needed there). So `advance` jumps
//! from occupied slot to occupied slot and a jump of 2^40 ticks over a few timers costs a
//! few dozen steps.
//!
//! # Precision
//!
//! Exact: a ring slot holds one deadline, and a level's slot is re-filed at its first tick,
//! before any of its deadlines.
//!
//! # Code
//!
//! `start`, `stop`, `restart` and `next_deadline` are [`wheel_core`]'s, shared with
//! `incremental-wheel`; this file files, unlinks and cascades, and `slots.rs` beside it
//! holds the ring's and the levels' heads and bitmaps and searches them.
//!
//! # Timers started in the past
//!
//! A deadline `<= now` has no slot ahead of the clock, so it waits on the due list
//! ([`crate::due_list`]), which `advance` fires first, sorted by deadline.

use crate::arena::{Arena, NIL};
use crate::arena_list::{self, Linked};
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::due_list::DueList;
use crate::wheel_core::{self, BitmapWheel, DIGIT_LEVELS, Entry, SLOTS, SlotAt, fire_list};

/// Bits of the deadline the ring resolves.
pub(crate) const RING_BITS: u32 = 12;
/// One-tick slots in the ring: every deadline less than this many ticks ahead goes there.
pub(crate) const RING_SLOTS: usize = 1 << RING_BITS;
/// The 6-bit digit the lowest level above the ring resolves: the ring spans digits 0 and 1.
pub(crate) const FIRST_LEVEL: usize = RING_BITS as usize / 6;
/// The ring and the levels above it.
pub const LEVELS: usize = 1 + DIGIT_LEVELS - FIRST_LEVEL;
/// Where level `L`'s heads would start if levels `0..FIRST_LEVEL` had some: slot `s` of
/// level `L` is list `LEVEL_BASE + L * SLOTS + s`, right after the ring's lists.
pub(crate) const LEVEL_BASE: usize = RING_SLOTS - FIRST_LEVEL * SLOTS;
/// Lists in the table of heads: the ring's, then the levels'.
pub(crate) const LISTS: usize = LEVEL_BASE + DIGIT_LEVELS * SLOTS;
/// The `home` of an entry on the due list.
const DUE: u32 = LISTS as u32;

pub(crate) mod slots;

use slots::Slots;

/// The hierarchical timing wheel. See the module documentation.
///
/// # Invariant
///
/// Between operations, and during `advance` whenever the search for the next slot runs,
/// with `now` the internal clock:
///
/// - every entry of the ring has `now <= deadline < now + 4096` and is in slot
///   `deadline % 4096`, so a ring slot holds one deadline;
/// - every entry of level `L` (2 to 10) agrees with `now` on all bits from `6L + 6` up, and
///   its level `L` digit (`(deadline >> 6L) & 63`, its slot) is greater than `now`'s;
/// - every entry on the due list has `deadline <= now`, and every wheel entry has
///   `deadline >= now` (`> now` outside `advance`).
///
/// Consequences used by the search: at each level every occupied slot is after `now`'s
/// position, so the lowest set bit is the earliest slot and no wrap-around is ever needed;
/// and every slot of level `L` starts after every deadline of the levels below it (those
/// share `now`'s bits from `6L` up, while level-`L` entries have a larger digit there), so
/// the lowest occupied level holds the levels' earliest slot. The ring is not ordered
/// against the levels (a level entry filed long ago can be due before a ring entry), so
/// the two candidates are compared.
///
/// It survives the clock jumps of `advance`. The clock only moves to a tick `t` no later
/// than the start of every occupied slot: the ring's entries stay at or after it, and stay
/// less than 4,096 ahead. An entry of level `L` starts its slot at `s = deadline` with the
/// low `6L` bits cleared, which shares `now`'s bits from `6L + 6` up; a `t` with
/// `now <= t < s` lies between two numbers with that prefix and so has it too, and its
/// level-`L` digit is at most the entry's and not equal (else `t >= s`). The entries of the
/// slot being processed are re-filed relative to `t` = their slot's start, which has zeros
/// below bit `6L`: those less than 4,096 ahead go to the ring, the others land below `L`
/// with a digit greater than `t`'s.
pub struct HierarchicalWheel<V> {
    entries: Arena<Entry<V>>,
    slots: Slots,
    /// Timers started with `deadline <= now`.
    due: DueList,
    now: Tick,
    work: u64,
}

impl<V> HierarchicalWheel<V> {
    /// The earliest occupied slot that starts by `to`, counting one unit of work as
    /// [`BitmapWheel::earliest`] does.
    #[inline]
    fn due_by(&mut self, to: Tick) -> Option<SlotAt> {
        self.work += 1;
        self.slots.due_by(self.now, to)
    }

    /// `advance` past its first answer: the due list, then each slot due by `to` from
    /// `first` (already found and counted) or a search.
    #[inline(never)]
    fn advance_slots<F: FnMut(TimerId, V, Tick)>(
        &mut self,
        to: Tick,
        first: Option<SlotAt>,
        on_fire: &mut F,
    ) {
        if !self.due.is_empty() {
            let due = self.due.take_sorted(&mut self.entries, &mut self.work);
            fire_list(&mut self.entries, due, &mut self.work, on_fire);
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
            let list = self.slots.take(at);
            self.work += 1;
            if at.level == 0 {
                // A ring slot holds one deadline, `at.start`.
                fire_list(&mut self.entries, list, &mut self.work, on_fire);
            } else {
                self.cascade(list);
            }
            next = self.due_by(to);
        }
        self.now = to;
    }

    /// Re-files every entry of a detached list relative to the current clock.
    ///
    /// Each entry is read and relinked through one arena access (its `next` read before it
    /// is overwritten): a cascade walks entries scattered over the arena, so each access
    /// saved is a check on a cold line.
    fn cascade(&mut self, mut index: u32) {
        while index != NIL {
            let (link, entry) = self.entries.entry_mut(index);
            let next = *link;
            let home = self.slots.claim(self.now, entry.deadline);
            entry.make_head(home);
            let old_head = std::mem::replace(&mut self.slots.heads[home as usize], index);
            *link = old_head;
            if old_head != NIL {
                self.entries.get_mut(old_head).set_prev(index);
            }
            self.work += 1;
            index = next;
        }
    }
}

impl<V> HierarchicalWheel<V> {
    /// `insert_filed` of a deadline 4,096 or more ahead, into a level: out of line, and
    /// called last, so that the ring's inline path keeps nothing live across a call.
    #[inline(never)]
    fn insert_level(&mut self, deadline: Tick, value: V) -> TimerId {
        let home = self.slots.claim(self.now, deadline);
        arena_list::insert_front(
            &mut self.entries,
            &mut self.slots.heads[home as usize],
            Entry::head_of(home, deadline, value),
        )
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

    /// Takes the live entry `index` off its list, keeping the occupancy bits and the due
    /// minimum true. The entry stays in the arena.
    fn unlink(&mut self, index: u32) {
        let home = self.entries.get(index).home;
        if home == DUE {
            self.due.unlink(&mut self.entries, index);
        } else if arena_list::unlink(
            &mut self.entries,
            &mut self.slots.heads[home as usize],
            index,
        ) {
            self.slots.clear(home as usize);
        }
    }

    /// Frees the entry first, since the arena's removal hands back both of its links, then
    /// joins its former neighbours: after `resolve`, a `stop` checks the entry's slot once
    /// instead of four times. Inline always: see [`wheel_core::start`].
    #[inline(always)]
    fn unlink_and_free(&mut self, index: u32) -> Entry<V> {
        let (next, entry) = self.entries.remove(index);
        let (home, prev) = (entry.home, entry.prev());
        if home == DUE {
            self.due
                .close_gap(&mut self.entries, entry.deadline, prev, next);
        } else if arena_list::close_gap(
            &mut self.entries,
            &mut self.slots.heads[home as usize],
            prev,
            next,
        ) {
            self.slots.clear(home as usize);
        }
        entry
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
        let home = self.slots.claim(self.now, deadline);
        self.entries.get_mut(index).home = home;
        arena_list::push_front(
            &mut self.entries,
            &mut self.slots.heads[home as usize],
            index,
        );
    }

    #[inline]
    fn earliest(&mut self) -> Option<SlotAt> {
        self.work += 1;
        self.slots.earliest(self.now)
    }

    /// The entry goes into the arena with its `home` and its list link already written,
    /// so a `start` writes its entry once. Inline always: see [`wheel_core::start`].
    #[inline(always)]
    fn insert_filed(&mut self, deadline: Tick, value: V) -> TimerId {
        if !self.slots.in_ring(self.now, deadline) {
            return self.insert_level(deadline, value);
        }
        let home = self.slots.claim(self.now, deadline);
        arena_list::insert_front(
            &mut self.entries,
            &mut self.slots.heads[home as usize],
            Entry::head_of(home, deadline, value),
        )
    }
}

impl<V> TimerQueue<V> for HierarchicalWheel<V> {
    fn with_capacity(capacity: usize) -> Self {
        HierarchicalWheel {
            entries: Arena::with_capacity(capacity),
            slots: Slots::new(),
            due: DueList::new(),
            now: 0,
            work: 0,
        }
    }

    /// Inline always, with the calls below it: see [`wheel_core::start`].
    #[inline(always)]
    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        wheel_core::start(self, deadline, value)
    }

    #[inline(always)]
    fn stop(&mut self, id: TimerId) -> Option<V> {
        wheel_core::stop(self, id)
    }

    /// Relinks the entry in place: off its slot (or the due list), new deadline and
    /// value, filed again as `start` files, with no arena free and allocation between.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        wheel_core::restart(self, id, deadline, value)
    }

    /// A move with nothing due (the per-tick case) is answered here, from one ring word;
    /// the rest is [`HierarchicalWheel::advance_slots`], kept out of line so that this
    /// path saves no registers. Inline always, as `start` and `stop` are (see
    /// [`wheel_core::start`]): on a tick-driven workload this path is the one per tick.
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
        wheel_core::next_deadline(self)
    }

    /// Each round of `advance(next_deadline())` processes the slot of the earliest timer
    /// (or everything up to the ring slot it is in), which moves it at least one level down
    /// or fires it; it starts at most at level 10, nine levels above the ring.
    fn next_deadline_steps(&self) -> u32 {
        LEVELS as u32
    }

    crate::contract::len_now_work!(entries.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    type Wheel = HierarchicalWheel<u64>;

    /// The list entry `id` is on.
    fn home(wheel: &Wheel, id: TimerId) -> usize {
        wheel.entries.get(id.index()).home as usize
    }

    #[test]
    fn geometry() {
        assert_eq!((FIRST_LEVEL, LEVELS), (2, 10));
        assert_eq!(LEVEL_BASE + FIRST_LEVEL * SLOTS, RING_SLOTS);
        assert_eq!(DUE as usize, RING_SLOTS + 9 * SLOTS);
    }

    #[test]
    fn less_than_the_ring_ahead_goes_to_the_ring_unaligned() {
        let mut wheel = Wheel::new();
        wheel.advance(4000, |_, _, _| unreachable!());
        let last = wheel.start(4000 + 4095, 1);
        let first = wheel.start(4096, 2);
        let level = wheel.start(4000 + 4096, 3);
        assert_eq!(home(&wheel, last), (4000 + 4095) % RING_SLOTS);
        assert_eq!(home(&wheel, first), 0);
        assert_eq!(home(&wheel, level), LEVEL_BASE + 2 * SLOTS + 1);
        // (Its level slot starts at 4096, so it would be re-filed on the way.)
        wheel.stop(level);
        // Filed once, fired from there: one unit per search, slot and firing.
        let before = wheel.work();
        let mut fired = Vec::new();
        wheel.advance(4000 + 4095, |_, value, deadline| {
            fired.push((value, deadline))
        });
        assert_eq!(fired, [(2, 4096), (1, 4000 + 4095)]);
        assert_eq!(wheel.work() - before, 3 + 2 + 2);
    }

    #[test]
    fn the_ring_search_goes_round_once() {
        // Clock at ring position 4000 (word 62, bit 32); slots after it, before it in its
        // own word, and in earlier words.
        for deadlines in [
            &[4000 + 10, 4000 + 100, 4000 + 4000][..],
            &[4000 + 4086, 4000 + 4090],
            &[4000 + 96, 4000 + 2000],
        ] {
            let mut wheel = Wheel::new();
            wheel.advance(4000, |_, _, _| unreachable!());
            for (value, &deadline) in deadlines.iter().enumerate() {
                wheel.start(deadline, value as u64);
            }
            for &deadline in deadlines {
                assert_eq!(wheel.next_deadline(), Some(deadline));
                let mut fired = Vec::new();
                wheel.advance(deadline, |_, _, at| fired.push(at));
                assert_eq!(fired, [deadline]);
            }
            assert_eq!(wheel.next_deadline(), None);
        }
    }

    #[test]
    fn a_level_slot_due_before_a_ring_slot_is_refiled_first() {
        let mut wheel = Wheel::new();
        // Filed at level 2 from clock 0, slot 2 (8192 to 12287).
        wheel.start(12_000, 1);
        wheel.advance(8000, |_, _, _| unreachable!());
        // In the ring, after the level slot's start and before its entry.
        wheel.start(9000, 2);
        wheel.start(12_000, 3);
        assert_eq!(wheel.next_deadline(), Some(8192), "the level slot's start");
        let mut fired = Vec::new();
        wheel.advance(u64::MAX, |_, value, deadline| fired.push((deadline, value)));
        fired[1..].sort_unstable();
        assert_eq!(fired, [(9000, 2), (12_000, 1), (12_000, 3)]);
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
        assert_eq!(wheel.slots.occupied, [0; DIGIT_LEVELS]);
        assert_eq!(wheel.slots.occupied_levels, 0);
        assert_eq!((wheel.slots.ring, wheel.slots.ring_words), ([0; 64], 0));
        assert!(wheel.slots.heads.iter().all(|&h| h == NIL));
        wheel.advance(u64::MAX, |value, _, _| panic!("{value:?} was stopped"));
    }
}
