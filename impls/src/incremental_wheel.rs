//! `incremental-wheel`: the hierarchical wheel with its cascades spread over time. A coarse
//! slot is re-filed a share at a time, at the clock moves before it comes due, instead of
//! all at once in the call that reaches it: exact, and no call re-files a crowded slot whole
//! while the clock moves in steps.
//!
//! # The idea
//!
//! A hierarchical wheel (Varghese and Lauck's scheme 7; here tokio's geometry, 11 levels of
//! 64 slots with occupancy bitmaps, see [`wheel_core`](crate::wheel_core)) re-files a coarse
//! slot's entries in the call whose clock reaches the slot, as
//! [`hierarchical-wheel`](crate::hierarchical_wheel) does above its ring. On keepalive at
//! 1M, one coarse slot holds tens of thousands of connections, all re-filed by one
//! `advance`: the cascade storm that made Linux stop cascading in 4.8 (2016), at the price
//! of firing up to 12.5% late, and that tokio and Kafka still have. This wheel keeps the
//! geometry and the exactness and moves the work earlier.
//!
//! The clock is always inside some slot of each level; call the slot after it that level's
//! *next slot*, and its first tick `S`. When the clock gets to `S`, every entry of the next
//! slot is re-filed relative to `S`: where each one goes is known before the clock is
//! there. So each level has a *stage*: the slots of the levels below it as they will be at
//! `S`. Every clock move moves a share of each next slot into its stage, in proportion to
//! the part of the slot's window the move passed; a timer started into a next slot goes
//! straight to the stage. When the clock reaches `S`, the stage *becomes* the wheel's lower
//! levels: the two swap bank numbers and no entry moves. Only what was still left in the
//! slot (nothing, if the clock moved in steps) is re-filed in that call.
//!
//! A *bank* is 64 list heads, 64 counts and an occupancy word. The main wheel owns one bank
//! per level, stage `L` (levels 1 to 10) one per level below `L`: 66 banks. An entry's
//! `home` names a bank and a slot, never an owner, so a swap relabels banks and touches no
//! entry.
//!
//! # One timer entry (`wheel_core`'s, shared with `hierarchical-wheel`)
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | arena: generation | 4 |
//! | arena link: `next` in the entry's list | 4 |
//! | `deadline` | 8 |
//! | `value` | 8 |
//! | `prev` in the entry's list | 4 |
//! | `home`: the list the entry is on (`bank * 64 + slot`, or the due list) | 4 |
//! | **total** | **32** |
//!
//! The fixed part: 66 banks of 64 `u32` heads and 64 `u32` counts (33,792 bytes), 66
//! occupancy words, and the owner tables (about 0.3 KB).
//!
//! # Costs (n pending timers, L = 11 levels)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): one `leading_zeros` picks the level; a deadline in a next slot takes a second one, for its level in the stage |
//! | `stop` | O(1): unlink through `prev`/`next`, fix the bank's bit and count |
//! | `restart` | O(1): unlink and file again in place |
//! | `advance`, per tick | nothing: ticks are never visited, only occupied slots |
//! | `advance`, per occupied slot | O(1) at level 0; O(level) at a stage's start: its banks swap |
//! | `advance`, per fired timer | O(L) over its life: one re-filing per level it passes, as in a whole-slot hierarchical wheel, done earlier |
//! | `advance`, staging | per level whose next slot holds r entries: `ceil(r * passed / left)` moves, `passed` the ticks of the slot's window this call moved the clock, `left` those there were to go |
//! | `next_deadline` | O(1): exact at level 0 and on the due list, a lower bound above (the earliest slot's start); at most 11 rounds of `advance(next_deadline)` fire the earliest timer |
//!
//! # Code
//!
//! `start`, `stop`, `restart` and `next_deadline` are [`wheel_core`](crate::wheel_core)'s,
//! shared with `hierarchical-wheel`.
//!
//! # The bound on one call
//!
//! Under a clock that moves one tick per call, a next slot of level `l` that held `n`
//! entries when its window began gives up at most `ceil(n / 64^l)` entries per call: the
//! ratio of entries left to ticks left never grows (each call takes the ceiling of that
//! ratio). With steps of `d` ticks, `d` times that. One call's work is then its firings,
//! plus that share summed over the levels, plus the levels of any stage it promotes. The
//! bound does not hold for a jump: a move straight to `S` from before the slot's window, or
//! across several windows, re-files what it finds whole, as the whole-slot wheel does (the
//! staging test below measures both; see also `work` in the records).
//!
//! # Empty time
//!
//! One bit per slot and one per level (a level's bit is also set while its stage holds
//! anything), so `advance` jumps from occupied slot to occupied slot. Staging looks only at
//! levels whose bit is set.
//!
//! # Timers started in the past
//!
//! On the due list ([`crate::due_list`]), fired first by `advance`, sorted by deadline.

use crate::arena::{Arena, NIL};
use crate::arena_list;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::due_list::DueList;
use crate::wheel_core::{
    self, BitmapWheel, DIGIT_LEVELS, Entry, SLOTS, SlotAt, fire_list, level_for, slot_for,
    slot_start,
};

/// Levels: one per 6-bit digit of a deadline.
const LEVELS: usize = DIGIT_LEVELS;

/// Banks of 64 slots: the main wheel's one per level, and stage `L`'s one per level below
/// `L`, for `L` in `1..LEVELS`.
const BANKS: usize = LEVELS + LEVELS * (LEVELS - 1) / 2;
/// The owner number of the main wheel; stage `L` is owner `L`.
const MAIN: usize = 0;
/// The `home` of an entry on the due list (slot homes are `0..BANKS * SLOTS`).
const DUE: u32 = (BANKS * SLOTS) as u32;
/// In `bank_of`: stage `L` has no bank at level `L` or above.
const NO_BANK: u8 = u8::MAX;

/// The hierarchical wheel with incremental cascading. See the module documentation.
///
/// # Invariant
///
/// Between operations, with `now` the clock, and `S_L` the start of level `L`'s next slot
/// (the slot after `now`'s digit, when the level has one):
///
/// - every entry of the main wheel's level `L` agrees with `now` on all bits from `6L + 6`
///   up, and its level `L` digit (its slot) is greater than `now`'s at `L > 0`, greater or
///   equal at level 0 (where its deadline is then the slot's start exactly): so at each
///   level the lowest set bit is the earliest slot, and the lowest occupied level holds the
///   earliest one (the argument of [`HierarchicalWheel`](crate::hierarchical_wheel)'s
///   levels);
/// - stage `L` holds only deadlines in `[S_L, S_L + 64^L)`, filed exactly as the main wheel
///   will file them when its clock is `S_L` (that invariant with `S_L` for `now`);
/// - `staged[L]` counts stage `L`'s entries, `counts` each slot's, and bit `L` of `levels`
///   is set exactly when the main bank of level `L` or stage `L` holds anything.
///
/// Why it stays exact: the search for the earliest slot counts a non-empty stage `L` as an
/// occupied next slot of level `L`, which is the earliest slot that level can have, so
/// `advance` never moves the clock past `S_L` while the stage holds anything: it stops at
/// `S_L` first. There, the main wheel's levels below `L` are empty (their deadlines are
/// below `S_L`, so they came first), and so are the stages below `L` (their windows end by
/// `S_L`), so the stage's banks can become the main wheel's: at clock `S_L` they are
/// exactly what re-filing the slot would have built. What is left in the slot is then
/// re-filed relative to `S_L` as usual. A clock move that changes `now`'s digit at level
/// `L` without stopping at `S_L` finds stage `L` empty, so the new next slot starts with an
/// empty stage.
pub struct IncrementalWheel<V> {
    entries: Arena<Entry<V>>,
    /// List heads, slot `s` of bank `b` at `b * SLOTS + s`.
    heads: Box<[u32; BANKS * SLOTS]>,
    /// Entries per slot, indexed as `heads`: the size of a next slot's remainder.
    counts: Box<[u32; BANKS * SLOTS]>,
    /// Per bank, bit `s` is set exactly when slot `s` is non-empty.
    bits: [u64; BANKS],
    /// `bank_of[owner][level]`: the bank an owner (the main wheel, or a stage) uses for a
    /// level. Promotions swap entries of this table; the banks of one level stay in one pool.
    bank_of: [[u8; LEVELS]; LEVELS],
    /// The owner of each bank, the inverse of `bank_of`.
    owner_of: [u8; BANKS],
    /// The level of each bank, fixed.
    level_of: [u8; BANKS],
    /// Entries in stage `L` at `staged[L]` (`staged[0]` stays 0).
    staged: [u32; LEVELS],
    /// Bit `L`: the main bank of level `L` or stage `L` holds anything.
    levels: u16,
    due: DueList,
    now: Tick,
    work: u64,
}

impl<V> IncrementalWheel<V> {
    #[inline]
    fn main_bank(&self, level: usize) -> usize {
        self.bank_of[MAIN][level] as usize
    }

    /// Slot `slot` of `level` with its start seen from the clock.
    #[inline]
    fn slot_at(&self, level: usize, slot: usize) -> SlotAt {
        let start = slot_start(self.now, level, slot);
        SlotAt { level, slot, start }
    }

    /// Sets bit `level` of `levels` from the main bank and the stage of that level.
    #[inline]
    fn refresh_level(&mut self, level: usize) {
        if self.bits[self.main_bank(level)] != 0 || self.staged[level] != 0 {
            self.levels |= 1 << level;
        } else {
            self.levels &= !(1 << level);
        }
    }

    /// Puts the live entry `index` at the front of slot `slot` of bank `bank`. The caller
    /// keeps `levels` and `staged` true.
    #[inline]
    fn push(&mut self, bank: usize, slot: usize, index: u32) {
        let home = bank * SLOTS + slot;
        self.entries.get_mut(index).home = home as u32;
        arena_list::push_front(&mut self.entries, &mut self.heads[home], index);
        self.counts[home] += 1;
        self.bits[bank] |= 1 << slot;
    }

    /// Files the live entry `index`, whose deadline lies in the window of level `stage`'s
    /// next slot, into that stage: where the main wheel will file it when its clock reaches
    /// the window's start.
    #[inline]
    fn file_staged(&mut self, stage: usize, index: u32) {
        let window_start = slot_start(self.now, stage, slot_for(self.now, stage) + 1);
        let deadline = self.entries.get(index).deadline;
        let level = level_for(window_start, deadline);
        debug_assert!(
            level < stage,
            "a next slot's deadline is staged below its level"
        );
        let bank = self.bank_of[stage][level] as usize;
        self.push(bank, slot_for(deadline, level), index);
        self.staged[stage] += 1;
        self.levels |= 1 << stage;
    }

    /// Empties slot `slot` of the main wheel's level `level` and returns its former list.
    #[inline]
    fn take_main_slot(&mut self, level: usize, slot: usize) -> u32 {
        let bank = self.main_bank(level);
        let home = bank * SLOTS + slot;
        self.counts[home] = 0;
        self.bits[bank] &= !(1 << slot);
        self.refresh_level(level);
        arena_list::take(&mut self.heads[home])
    }

    /// With the clock at the start of level `stage`'s next slot: the stage's banks become
    /// the main wheel's levels below `stage`, and the main wheel's, empty there, become the
    /// stage's (see the invariant on [`IncrementalWheel`]).
    fn promote(&mut self, stage: usize) {
        for level in 0..stage {
            let main = self.bank_of[MAIN][level];
            let staged = self.bank_of[stage][level];
            debug_assert_eq!(self.bits[main as usize], 0, "level {level} is empty here");
            self.bank_of[MAIN][level] = staged;
            self.bank_of[stage][level] = main;
            self.owner_of[staged as usize] = MAIN as u8;
            self.owner_of[main as usize] = stage as u8;
            self.refresh_level(level);
        }
        self.staged[stage] = 0;
        self.refresh_level(stage);
        self.work += stage as u64;
    }

    /// After a clock move from `from` to `now`: moves each level's share of its next slot
    /// into its stage, `ceil(left * passed / to_go)` entries for `left` in the slot, `passed`
    /// the ticks of the window (the current slot) this move covered and `to_go` the ticks
    /// the window still had before it.
    fn stage_ahead(&mut self, from: Tick) {
        let mut levels = self.levels & !1;
        while levels != 0 {
            let level = levels.trailing_zeros() as usize;
            levels &= levels - 1;
            let current = slot_for(self.now, level);
            let next = current + 1;
            let bank = self.main_bank(level);
            if next >= SLOTS || self.bits[bank] & (1 << next) == 0 {
                continue;
            }
            let home = bank * SLOTS + next;
            let window_from = from.max(slot_start(self.now, level, current));
            let passed = u128::from(self.now - window_from);
            let to_go = u128::from(slot_start(self.now, level, next) - window_from);
            let left = u128::from(self.counts[home]);
            // `passed < to_go`: the clock is still before the next slot, or it would have
            // been processed. So the share is at most `left`.
            let share = (left * passed).div_ceil(to_go) as u64;
            if share == 0 {
                continue;
            }
            // The first `share` entries are cut off the slot's list in one step rather than
            // unlinked one by one (which would write each successor's `prev`).
            let mut index = self.heads[home];
            for _ in 0..share {
                let next = self.entries.link(index);
                self.file_staged(level, index);
                self.work += 1;
                index = next;
            }
            self.heads[home] = index;
            self.counts[home] -= share as u32;
            if index == NIL {
                self.bits[bank] &= !(1 << next);
                self.refresh_level(level);
            } else {
                arena_list::Linked::set_prev(self.entries.get_mut(index), NIL);
            }
        }
    }

    /// Fires every entry of a detached list, in list order.
    #[inline]
    fn fire_list<F: FnMut(TimerId, V, Tick)>(&mut self, index: u32, on_fire: &mut F) {
        fire_list(&mut self.entries, index, &mut self.work, on_fire);
    }

    /// Re-files every entry of a detached list relative to the current clock.
    fn cascade(&mut self, mut index: u32) {
        while index != NIL {
            let next = self.entries.link(index);
            self.file(index);
            self.work += 1;
            index = next;
        }
    }
}

impl<V> BitmapWheel<V> for IncrementalWheel<V> {
    const DUE: u32 = DUE;

    #[inline]
    fn parts(&mut self) -> (&mut Arena<Entry<V>>, &mut DueList, &mut u64) {
        (&mut self.entries, &mut self.due, &mut self.work)
    }

    #[inline]
    fn clock(&self) -> Tick {
        self.now
    }

    /// Takes the live entry `index` off its list, keeping bits, counts and `levels` true.
    /// The entry stays in the arena.
    fn unlink(&mut self, index: u32) {
        let home = self.entries.get(index).home;
        if home == DUE {
            self.due.unlink(&mut self.entries, index);
            return;
        }
        let home = home as usize;
        let (bank, slot) = (home / SLOTS, home % SLOTS);
        self.counts[home] -= 1;
        let emptied = arena_list::unlink(&mut self.entries, &mut self.heads[home], index);
        if emptied {
            self.bits[bank] &= !(1 << slot);
        }
        let owner = self.owner_of[bank] as usize;
        if owner == MAIN {
            if emptied {
                self.refresh_level(self.level_of[bank] as usize);
            }
        } else {
            self.staged[owner] -= 1;
            if self.staged[owner] == 0 {
                self.refresh_level(owner);
            }
        }
    }

    /// Files the live entry `index`, whose deadline is `>= now`, relative to the clock: into
    /// the main wheel, or into a stage if the deadline lies in a level's next slot. Inline
    /// always, as the path of every `start`: see [`wheel_core::start`].
    #[inline(always)]
    fn file(&mut self, index: u32) {
        let deadline = self.entries.get(index).deadline;
        debug_assert!(
            deadline >= self.now,
            "only future deadlines go into the wheel"
        );
        let level = level_for(self.now, deadline);
        let slot = slot_for(deadline, level);
        if level > 0 && slot == slot_for(self.now, level) + 1 {
            self.file_staged(level, index);
        } else {
            self.push(self.main_bank(level), slot, index);
            self.levels |= 1 << level;
        }
    }

    /// The earliest occupied slot: the lowest occupied level's next slot if its stage holds
    /// anything (no slot of that level can be earlier), else its lowest set bit.
    #[inline]
    fn earliest(&mut self) -> Option<SlotAt> {
        self.work += 1;
        if self.levels == 0 {
            return None;
        }
        let level = self.levels.trailing_zeros() as usize;
        if self.staged[level] != 0 {
            let slot = slot_for(self.now, level) + 1;
            return Some(self.slot_at(level, slot));
        }
        let bits = self.bits[self.main_bank(level)];
        debug_assert!(
            bits & ((1u64 << slot_for(self.now, level)) - 1) == 0,
            "an occupied slot of level {level} lies behind the clock {}",
            self.now
        );
        Some(self.slot_at(level, bits.trailing_zeros() as usize))
    }
}

impl<V> TimerQueue<V> for IncrementalWheel<V> {
    fn with_capacity(capacity: usize) -> Self {
        let mut bank_of = [[NO_BANK; LEVELS]; LEVELS];
        let mut owner_of = [0; BANKS];
        let mut level_of = [0; BANKS];
        let mut next_bank = 0;
        for (owner, banks) in bank_of.iter_mut().enumerate() {
            // The main wheel has every level, stage `L` the levels below `L`.
            let owned = if owner == MAIN { LEVELS } else { owner };
            for (level, bank) in banks.iter_mut().enumerate().take(owned) {
                *bank = next_bank as u8;
                owner_of[next_bank] = owner as u8;
                level_of[next_bank] = level as u8;
                next_bank += 1;
            }
        }
        debug_assert_eq!(next_bank, BANKS);
        IncrementalWheel {
            entries: Arena::with_capacity(capacity),
            heads: Box::new([NIL; BANKS * SLOTS]),
            counts: Box::new([0; BANKS * SLOTS]),
            bits: [0; BANKS],
            bank_of,
            owner_of,
            level_of,
            staged: [0; LEVELS],
            levels: 0,
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

    /// Relinks the entry in place: off its list, new deadline and value, filed again as
    /// `start` files, with no arena free and allocation between.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        wheel_core::restart(self, id, deadline, value)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        let from = self.now;
        let due = self.due.take_sorted(&mut self.entries, &mut self.work);
        self.fire_list(due, &mut on_fire);
        while let Some(SlotAt { level, slot, start }) = self.earliest() {
            if start > to {
                break;
            }
            self.now = start;
            self.work += 1;
            if level == 0 {
                // A level-0 slot is one tick: every entry in it has `deadline == start`.
                let list = self.take_main_slot(0, slot);
                self.fire_list(list, &mut on_fire);
                continue;
            }
            // A stage only exists for the next slot, so this is its start.
            if self.staged[level] != 0 {
                self.promote(level);
            }
            if self.bits[self.main_bank(level)] & (1 << slot) != 0 {
                let rest = self.take_main_slot(level, slot);
                self.cascade(rest);
            }
        }
        self.now = to;
        self.stage_ahead(from);
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        wheel_core::next_deadline(self)
    }

    /// Each round of `advance(next_deadline())` processes the slot of the earliest timer
    /// (promoting a stage, or re-filing a slot), which moves it at least one level down or
    /// fires it; it starts at most at level 10.
    fn next_deadline_steps(&self) -> u32 {
        LEVELS as u32
    }

    crate::contract::len_now_work!(entries.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hierarchical_wheel::HierarchicalWheel;

    #[test]
    fn sixty_six_banks() {
        // The entry's 32 bytes are pinned by `wheel_core`'s test: the type is shared.
        assert_eq!(BANKS, 66);
    }

    /// 20,000 timers in one level-2 slot (ticks 8192 to 12287), driven one tick at a time:
    /// returns the largest `work` of one `advance` call, checking every firing is on time.
    fn largest_call<Q: TimerQueue<u64>>(mut queue: Q) -> u64 {
        let mut seed = 12345u64;
        for value in 0..20_000u64 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            queue.start(8192 + (seed >> 33) % 4096, value);
        }
        let mut largest = 0;
        let mut fired = 0;
        for tick in 1..=12_288 {
            let before = queue.work();
            queue.advance(tick, |_, _, deadline| {
                assert_eq!(deadline, tick);
                fired += 1;
            });
            largest = largest.max(queue.work() - before);
        }
        assert_eq!(fired, 20_000);
        largest
    }

    #[test]
    fn a_crowded_slot_is_refiled_a_share_per_tick() {
        // About 5 firings, 5 level-2 and up to 32 level-1 moves per tick (ceilings added),
        // against all 20,000 in the call that enters the slot.
        let incremental = largest_call(IncrementalWheel::new());
        let whole = largest_call(HierarchicalWheel::new());
        assert!(incremental < 100, "incremental: {incremental} in one call");
        assert!(whole > 20_000, "whole: {whole} in one call");
    }

    #[test]
    fn a_move_stages_its_share_and_the_slot_start_refiles_the_rest() {
        let mut wheel = IncrementalWheel::new();
        // Level 2, slot 2 (ticks 8192 to 12287): not yet the next slot at clock 0.
        let ids: Vec<_> = (0..300u64)
            .map(|value| wheel.start(8192 + value * 7, value))
            .collect();
        assert_eq!(wheel.staged[2], 0);
        // To the middle of slot 1, the window before slot 2, in one move: half is staged.
        wheel.advance(6144, |_, _, _| panic!("nothing is due"));
        assert_eq!(wheel.staged[2], 150);
        assert_eq!(wheel.stop(ids[0]), Some(0), "a waiting entry stops");
        assert_eq!(wheel.stop(ids[299]), Some(299), "a staged entry stops");
        // One move past the slot's start: the rest is re-filed there, the stage promoted.
        let mut fired = Vec::new();
        wheel.advance(20_000, |_, value, deadline| fired.push((deadline, value)));
        let expected: Vec<_> = (1..299u64).map(|v| (8192 + v * 7, v)).collect();
        assert_eq!(fired, expected);
        assert_eq!((wheel.levels, wheel.staged), (0, [0; LEVELS]));
        assert!(wheel.counts.iter().all(|&count| count == 0));
        assert!(wheel.bits.iter().all(|&bits| bits == 0));
    }
}
