//! `skynet-wheel`: skynet's timer (`skynet-src/skynet_timer.c`, cloudwu/skynet), a
//! hierarchical wheel on a 32-bit tick counter that is walked once per tick and has no
//! cancel.
//!
//! # The idea
//!
//! skynet, a game-server framework, keeps every timeout in `struct timer`: `near[256]`, one
//! list per tick of the current block of 256 ticks, and `t[4][64]`, four levels of 64
//! lists, each slot covering 2^(8+6i) ticks. `add_node` picks the list by comparing the high
//! bits of the timer's `expire` with the counter `time`: `near[expire & 255]` when both lie
//! in the same block of 256 ticks (`TIME_NEAR_SHIFT`), else level `i`, the first whose
//! block of 2^(8+6(i+1)) ticks (`TIME_LEVEL_SHIFT`) they share, at slot
//! `(expire >> (8+6i)) & 63`. The timer thread calls `timer_update` once per elapsed tick
//! (10 ms) whether or not anything is due: `timer_execute` (the "timeout 0" case),
//! `timer_shift` (`++time`; when the low 8 bits wrap, `move_list` re-files the one slot of
//! the lowest level whose index is non-zero, which cascades its timers a level or more
//! down), then `timer_execute` of `near[time & 255]`. When the 32-bit counter wraps to 0,
//! `timer_shift` moves `t[3][0]`, where `add_node` filed the timers whose `expire` wrapped.
//!
//! As in skynet: the lists, their sizes and the level choice of `add_node`; FIFO lists with
//! a head and a tail (`link`), so that timers on one tick fire in start order; the
//! `timer_update` walk of one tick at a time, with its cascade of one slot whenever the
//! low bits wrap; a near slot holds the timers of one tick, fired whole.
//!
//! What the contract forces:
//!
//! - **The clock is a `u64`.** skynet's 32-bit `time` is the low 32 bits of `now`. A deadline
//!   sharing `now`'s high 32 bits (its *epoch*) is filed as `add_node` files `expire`. One
//!   in a later epoch, any delay of 2^32 ticks or more included, goes to an *overflow* list
//!   that takes the place of skynet's `t[3][0]`: when the counter wraps to 0 the list is
//!   re-examined, and the timers of the new epoch are filed in the wheel, the others kept.
//!   skynet's `t[3][0]` is otherwise unused here, since a deadline of the current epoch never
//!   has the index 0 at the level that holds it. Any `u64` deadline is accepted and no
//!   arithmetic can overflow: the wheel only shifts and compares.
//! - **Deadlines at or before `now`.** skynet's `timer_add` never sees them (a timeout of 0
//!   is sent at once, without the wheel); the contract fires them on the next `advance`.
//!   They go to the slot of the current tick, `near[now & 255]`, which the next `advance`
//!   executes first: skynet's leading `timer_execute` ("try to dispatch timeout 0"). That
//!   slot is then the only one that can hold several deadlines, so when a start put a
//!   deadline before `now` there, it is sorted before it fires.
//! - **`stop`.** skynet has no cancel (its Lua layer ignores the response to a forgotten
//!   session). Here `stop` takes the value out of the entry and hands it back at once, and
//!   the entry stays on its list, *dead*: it cannot fire, `len` does not count it, and a
//!   second `stop` finds no value. A dead entry is dropped, and its arena slot freed, the
//!   first time a walk of its list meets it: when its near slot executes, when its level
//!   slot cascades, when the overflow list is re-examined at a wrap, or when
//!   `next_deadline` looks through its list. Until then its 32 bytes stay counted
//!   ([`SkynetWheel::dead`]). Once the clock has passed a stopped timer's deadline, its
//!   entry is gone. `restart` is the contract's default, a stop and a start.
//! - **`advance(to)`** executes the current slot once, then runs `timer_shift` and
//!   `timer_execute` for each tick up to `to`: skynet's `timer_update` without its leading
//!   execute, which can only find work at the first tick of a move (nothing is started
//!   between two ticks of one `advance`).
//! - **`next_deadline`**, which skynet lacks, looks through the lists in time order: the
//!   current slot, the near slots after it, each level's slots after its current index,
//!   and the overflow list, and returns the earliest live deadline of the first list that
//!   has one: exact.
//!
//! # Invariants
//!
//! Between calls, every entry (live or dead) is on exactly one list, and for a deadline `d`
//! that list is: the current slot `near[now & 255]` when `d <= now`; else `near[d & 255]`
//! when `d >> 8 == now >> 8`; else level `i`'s slot `(d >> (8+6i)) & 63` for the least `i`
//! with `d >> (8+6(i+1)) == now >> (8+6(i+1))`; else the overflow list. Lists are linked
//! through the arena links (`next`), `NIL`-terminated, and a list's tail is its last entry.
//! `live` counts the entries holding a value, `dead` the others. When `current_unsorted`
//! is false, the current slot holds no deadline below `now`.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | arena: generation (4) + `next` link (4) | 8 |
//! | deadline | 8 |
//! | value, `None` once stopped (`Option<u64>`) | 16 |
//! | **total per entry, live or dead** | **32** |
//!
//! No `prev` link: nothing is ever unlinked from the middle of a list in O(1). skynet's node
//! is a `next` pointer, a 32-bit `expire` and the 8-byte event, in one `malloc` each.
//! Fixed: 513 lists (256 near, 4 × 64 level slots, the overflow) of a head and a tail,
//! 4,104 bytes.
//!
//! # Costs
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): at most five comparisons of high bits, an append |
//! | `stop` | O(1): the value is taken; the dead entry costs one more visit later |
//! | `restart` | O(1): a stop and a start |
//! | `advance(to)`, per call | one visit of the current slot, then `to - now` ticks: the move costs the ticks it covers |
//! | `advance`, per tick | O(1): one shift of the counter and one near-slot visit, due or not; every 256 ticks, one level slot cascaded |
//! | `advance`, per fired timer | O(1) to fire, plus at most one move per level it is cascaded through (four), plus one look per counter wrap it spends in the overflow list |
//! | `next_deadline` | O(256 + 4 × 63) list heads looked at, plus a walk of the first list that has a live entry (only to its first live entry for a near slot); dead entries met are dropped |
//!
//! # Empty time
//!
//! Walked, as in skynet: `advance(now + N)` runs N ticks, each one visiting a near slot
//! whether or not it holds anything (`EmptyTime::Walked { step: 1 }`): skynet's
//! `skynet_updatetime` runs `timer_update` `diff` times. `work()` counts one step per tick,
//! per list visited and per entry touched. No suite limit: the standard suite's workloads
//! move the clock by at most about 10^5 ticks at a million timers (their final clocks), and
//! by 10^8 in the largest sparse one (10,000 timers far apart).
//!
//! # Precision
//!
//! Exact at its tick: a timer fires in the first `advance` whose `to` reaches its deadline,
//! within one `advance` in non-decreasing deadline order (the current slot, sorted, first;
//! then one near slot per tick, each holding one tick's timers).

use crate::arena::{Arena, NIL};
use crate::arena_list::{self, Linked};
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{EmptyTime, NaturalPeriod, Range, Release};

/// `TIME_NEAR_SHIFT`: the near wheel holds one block of 256 ticks.
const NEAR_BITS: u32 = 8;
const NEAR_SLOTS: usize = 1 << NEAR_BITS;
const NEAR_MASK: u64 = NEAR_SLOTS as u64 - 1;
/// `TIME_LEVEL_SHIFT`: each level has 64 slots.
const LEVEL_BITS: u32 = 6;
const LEVEL_SLOTS: usize = 1 << LEVEL_BITS;
const LEVEL_MASK: u64 = LEVEL_SLOTS as u64 - 1;
/// `t[4]`: 8 + 4 × 6 = 32 bits, skynet's counter.
const LEVELS: usize = 4;
/// The list of the timers of later epochs (skynet's `t[3][0]`).
const OVERFLOW: usize = NEAR_SLOTS + LEVELS * LEVEL_SLOTS;
const LISTS: usize = OVERFLOW + 1;
/// Bits of skynet's `time` counter.
const COUNTER_BITS: u32 = NEAR_BITS + LEVELS as u32 * LEVEL_BITS;

/// The bits below level `level`'s slot index: 8, 14, 20, 26.
const fn level_shift(level: usize) -> u32 {
    NEAR_BITS + level as u32 * LEVEL_BITS
}

/// The index in `lists` of level `level`'s slot `slot`.
const fn level_list(level: usize, slot: usize) -> usize {
    NEAR_SLOTS + level * LEVEL_SLOTS + slot
}

/// One timer in the arena. The arena link is the `next` pointer of its list.
struct Entry<V> {
    deadline: Tick,
    /// `None` once stopped: the entry is dead and waits for a walk of its list.
    value: Option<V>,
}

/// Only for [`arena_list::sort_by_deadline`], which sorts the current slot through the
/// `next` links and never reads `prev`: the lists here are singly linked.
impl<V> Linked for Entry<V> {
    fn prev(&self) -> u32 {
        NIL
    }
    fn set_prev(&mut self, _: u32) {}
    fn deadline(&self) -> Tick {
        self.deadline
    }
}

/// A FIFO list of entries (skynet's `link_list`): a head and a tail, `NIL` when empty.
#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
}

const EMPTY: List = List {
    head: NIL,
    tail: NIL,
};

/// skynet's timer. See the module documentation, which states the invariants.
pub struct SkynetWheel<V> {
    entries: Arena<Entry<V>>,
    /// `near[256]`, then `t[4][64]` level by level, then the overflow list.
    lists: Box<[List]>,
    now: Tick,
    /// Entries holding a value: the pending timers.
    live: usize,
    /// Stopped entries still on a list.
    dead: usize,
    /// Whether the current slot may hold a deadline below `now` (then it is sorted before
    /// it fires).
    current_unsorted: bool,
    work: u64,
}

impl<V> SkynetWheel<V> {
    /// An empty wheel whose clock starts at `now`, with room for `capacity` timers.
    ///
    /// An empty wheel's state is its clock alone (every list empty), so this is the wheel
    /// a walk from 0 to `now` leaves behind once everything fired; it lets a test study the
    /// 32-bit wrap or the end of time without walking there first.
    pub fn starting_at(now: Tick, capacity: usize) -> Self {
        SkynetWheel {
            entries: Arena::with_capacity(capacity),
            lists: vec![EMPTY; LISTS].into_boxed_slice(),
            now,
            live: 0,
            dead: 0,
            current_unsorted: false,
            work: 0,
        }
    }

    /// Stopped timers whose entries are still held, waiting for a walk of their list.
    pub fn dead(&self) -> usize {
        self.dead
    }

    /// The current slot, `near[time & 255]`.
    fn current_list(&self) -> usize {
        (self.now & NEAR_MASK) as usize
    }

    /// The list a future `deadline` belongs to at the current clock: skynet's `add_node`,
    /// with the overflow list for later epochs.
    fn list_for(&self, deadline: Tick) -> usize {
        if deadline >> NEAR_BITS == self.now >> NEAR_BITS {
            return (deadline & NEAR_MASK) as usize;
        }
        for level in 0..LEVELS {
            let above = level_shift(level) + LEVEL_BITS;
            if deadline >> above == self.now >> above {
                let slot = (deadline >> level_shift(level)) & LEVEL_MASK;
                return level_list(level, slot as usize);
            }
        }
        OVERFLOW
    }

    /// Appends the entry `index` to the list its deadline belongs to.
    fn file(&mut self, index: u32) {
        let deadline = self.entries.get(index).deadline;
        let list = if deadline <= self.now {
            self.current_unsorted |= deadline < self.now;
            self.current_list()
        } else {
            self.list_for(deadline)
        };
        self.append(list, index);
    }

    /// skynet's `link`: the entry `index` becomes the tail of `list`.
    fn append(&mut self, list: usize, index: u32) {
        self.entries.set_link(index, NIL);
        let tail = self.lists[list].tail;
        if tail == NIL {
            self.lists[list].head = index;
        } else {
            self.entries.set_link(tail, index);
        }
        self.lists[list].tail = index;
    }

    /// skynet's `link_clear`: empties `list` and returns its former head.
    fn take(&mut self, list: usize) -> u32 {
        std::mem::replace(&mut self.lists[list], EMPTY).head
    }

    /// Frees the dead entry `index`, which is already off its list.
    fn drop_dead(&mut self, index: u32) {
        self.entries.remove(index);
        self.dead -= 1;
    }

    /// skynet's `move_list`: re-files every live entry of `list` from the current clock,
    /// and drops the dead ones.
    fn move_list(&mut self, list: usize) {
        self.work += 1;
        let mut cursor = self.take(list);
        while cursor != NIL {
            self.work += 1;
            let next = self.entries.link(cursor);
            if self.entries.get(cursor).value.is_some() {
                self.file(cursor);
            } else {
                self.drop_dead(cursor);
            }
            cursor = next;
        }
    }

    /// skynet's `timer_shift`: one tick on, and the cascade of one slot when the low bits
    /// wrap.
    fn shift(&mut self) {
        self.now += 1;
        let time = self.now & ((1 << COUNTER_BITS) - 1);
        if time == 0 {
            // The counter wrapped: a new epoch, whose timers wait in the overflow list.
            self.move_list(OVERFLOW);
            return;
        }
        // `time != 0`, so the loop stops at level 3 at the latest.
        let mut level = 0;
        while time & ((1 << level_shift(level)) - 1) == 0 {
            let slot = (time >> level_shift(level)) & LEVEL_MASK;
            if slot != 0 {
                self.move_list(level_list(level, slot as usize));
                return;
            }
            level += 1;
        }
    }

    /// skynet's `timer_execute`: fires the live timers of the current slot and drops its
    /// dead entries.
    fn execute<F: FnMut(TimerId, V, Tick)>(&mut self, on_fire: &mut F) {
        self.work += 1;
        let list = self.current_list();
        let mut cursor = self.take(list);
        if cursor == NIL {
            return;
        }
        if std::mem::take(&mut self.current_unsorted) {
            cursor = arena_list::sort_by_deadline(&mut self.entries, cursor, &mut self.work);
        }
        while cursor != NIL {
            self.work += 1;
            let next = self.entries.link(cursor);
            let id = self.entries.id(cursor);
            let (_, entry) = self.entries.remove(cursor);
            match entry.value {
                Some(value) => {
                    self.live -= 1;
                    on_fire(id, value, entry.deadline);
                }
                None => self.dead -= 1,
            }
            cursor = next;
        }
    }

    /// The earliest live deadline on `list`, dropping the dead entries met on the way.
    /// With `first_suffices` (a near slot other than the current one, whose entries share
    /// one deadline), the walk stops at the first live entry.
    fn earliest_live(&mut self, list: usize, first_suffices: bool) -> Option<Tick> {
        let mut earliest = None::<Tick>;
        let mut prev = NIL;
        let mut cursor = self.lists[list].head;
        while cursor != NIL {
            self.work += 1;
            let next = self.entries.link(cursor);
            let entry = self.entries.get(cursor);
            if entry.value.is_some() {
                let deadline = entry.deadline;
                earliest = Some(earliest.map_or(deadline, |e| e.min(deadline)));
                if first_suffices {
                    return earliest;
                }
                prev = cursor;
            } else {
                if prev == NIL {
                    self.lists[list].head = next;
                } else {
                    self.entries.set_link(prev, next);
                }
                if next == NIL {
                    self.lists[list].tail = prev;
                }
                self.drop_dead(cursor);
            }
            cursor = next;
        }
        earliest
    }

    /// Panics with a message if an invariant of the module documentation is broken. Walks
    /// every list (O(n + 513)): for tests, between operations.
    pub fn check_invariants(&self) {
        let (mut live, mut dead) = (0, 0);
        for list in 0..LISTS {
            let List { head, tail } = self.lists[list];
            let mut last = NIL;
            let mut cursor = head;
            while cursor != NIL {
                let entry = self.entries.get(cursor);
                let expected = if entry.deadline <= self.now {
                    self.current_list()
                } else {
                    self.list_for(entry.deadline)
                };
                assert_eq!(
                    list, expected,
                    "deadline {} on list {list} at now {}",
                    entry.deadline, self.now
                );
                if entry.deadline < self.now {
                    assert!(self.current_unsorted, "a past deadline, not flagged");
                }
                match entry.value {
                    Some(_) => live += 1,
                    None => dead += 1,
                }
                last = cursor;
                cursor = self.entries.link(cursor);
            }
            assert_eq!(tail, last, "tail of list {list}");
        }
        assert_eq!((live, dead), (self.live, self.dead), "live and dead counts");
        assert_eq!(live + dead, self.entries.len(), "every entry on a list");
    }
}

impl<V> TimerQueue<V> for SkynetWheel<V> {
    fn with_capacity(capacity: usize) -> Self {
        Self::starting_at(0, capacity)
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.work += 1;
        let entry = Entry {
            deadline,
            value: Some(value),
        };
        let id = self.entries.insert(NIL, entry);
        self.file(id.index());
        self.live += 1;
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        let value = self.entries.get_mut(index).value.take()?;
        self.work += 1;
        self.live -= 1;
        self.dead += 1;
        Some(value)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        // skynet's "timeout 0": what was started at or before `now` since the last tick.
        self.execute(&mut on_fire);
        while self.now < to {
            self.shift();
            self.execute(&mut on_fire);
        }
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        if self.live == 0 {
            return None;
        }
        self.work += 1;
        let current = self.current_list();
        if let Some(deadline) = self.earliest_live(current, false) {
            return Some(deadline);
        }
        for slot in current + 1..NEAR_SLOTS {
            self.work += 1;
            if let Some(deadline) = self.earliest_live(slot, true) {
                return Some(deadline);
            }
        }
        for level in 0..LEVELS {
            let at = ((self.now >> level_shift(level)) & LEVEL_MASK) as usize;
            for slot in at + 1..LEVEL_SLOTS {
                self.work += 1;
                if let Some(deadline) = self.earliest_live(level_list(level, slot), false) {
                    return Some(deadline);
                }
            }
        }
        let deadline = self.earliest_live(OVERFLOW, false);
        debug_assert!(deadline.is_some(), "a live timer on no list");
        deadline
    }

    fn empty_time(&self) -> EmptyTime {
        EmptyTime::Walked { step: 1 }
    }

    /// skynet's timer thread updates every 10 ms (its centisecond tick).
    fn natural_period(&self) -> NaturalPeriod {
        NaturalPeriod::Nanos(10_000_000)
    }

    /// Every deadline; clocks up to 2^28 ticks, the walk a replay can afford.
    fn range(&self) -> Range {
        Range::walked(1, "a near-slot visit per tick: 2^28 of them at most")
    }

    fn release(&self) -> Release {
        Release::Later("when its slot comes due, or a next_deadline walks its slot")
    }

    crate::contract::len_now_work!(live);
}

#[cfg(test)]
mod tests;
