//! `kafka-wheel`: Apache Kafka's purgatory timer, a hierarchy of small wheels whose clock is
//! driven by a priority queue of buckets.
//!
//! # The idea
//!
//! Kafka keeps delayed requests (produce with `acks=all`, fetch with `min.bytes`, ...) in a
//! `SystemTimer` (`server-common/.../server/util/timer/`, first written in Scala for
//! KAFKA-1989, "New purgatory design", 2015; described in Matsuda's Confluent blog post
//! "Apache Kafka, Purgatory, and Hierarchical Timing Wheels"). It is a hierarchical timing
//! wheel (Varghese & Lauck, scheme 7) with two twists:
//!
//! - Wheels are tiny (`wheelSize = 20`, `tickMs = 1`) and coarser *overflow* wheels are created
//!   only when a deadline needs them: level `k` has tick `20^k` and spans `20^(k+1)` ticks.
//! - Nobody ticks. Each bucket (one slot of one wheel: a list of entries plus the start time
//!   of the slot's current rotation, its *expiration*) is put in a `DelayQueue`, a binary heap
//!   ordered by expiration, the first time it is used in a rotation. The reaper sleeps until
//!   the earliest bucket expires, moves the wheel clock to that expiration, and *flushes* the
//!   bucket: every entry is re-added, which either runs it (it is now due) or files it into a
//!   finer wheel. The wheel clock therefore only ever takes bucket expirations as values.
//!
//! This file rebuilds that design single-threaded on the crate's virtual clock, with one
//! addition the contract needs: a *due list* for timers started at or before the wheel clock
//! (Kafka's caller runs those at once; the contract says they fire on the next `advance`).
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | arena generation | 4 |
//! | arena link: next entry in the bucket (or due) list | 4 |
//! | deadline | 8 |
//! | value | 8 |
//! | previous entry in the list, for O(1) unlink | 4 |
//! | home: the bucket id, or the due-list marker | 4 |
//! | **total per pending timer** | **32** |
//!
//! Besides the arena, fixed structure reserved at construction for the most levels the size
//! can need (15 for size 20): 24 bytes per bucket and 16 per delay-queue element, at most
//! one element per bucket (7.2 + 4.8 KB for size 20). The due list is sorted through its
//! own links ([`crate::arena_list::sort_by_deadline`]), so it needs no scratch memory.
//!
//! # Costs (n pending timers, L levels in use, B = L * size buckets)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(L) to find the level, + O(log B) heap offer when the bucket starts a rotation |
//! | `stop` | O(1): unlink from the bucket; the bucket stays in the heap (as in Kafka) |
//! | `restart` | a `stop` and a `start` on the same entry: unlinked and filed again in place |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `advance`, per bucket expiration reached | O(log B) heap pop + one re-add per entry in it |
//! | `advance`, per fired timer | at most L re-adds (one per level it cascades through) |
//! | `next_deadline` | O(1), plus O(log B) per empty bucket dropped from the heap top |
//!
//! # Empty time
//!
//! The heap holds only buckets that were used in their current rotation, so `advance` jumps
//! from one bucket expiration straight to the next; a jump of 2^40 ticks costs the few
//! buckets on the way, never the ticks. With L levels a timer is flushed at most L times.
//!
//! # Invariants
//!
//! Write `C` for the wheel clock (level 0's current time) and `cur_k` for level `k`'s.
//!
//! 1. `cur_k` is `C` rounded down to a multiple of `tick_k`, and `C <= now`. Levels are
//!    created with the truncated clock of the level below, and `advance_wheel_clock` moves
//!    a coarser level whenever the finer one moved by at least the coarser tick.
//! 2. An entry in a level-`k` bucket has `cur_k + tick_k <= deadline < cur_k + interval_k`
//!    (as it had when it was filed; `cur_k` has not moved past the bucket since, see 4), and
//!    the bucket's expiration is `deadline` rounded down to `tick_k`. Since
//!    `cur_k + tick_k > C`, every bucket entry has `deadline > C` and every bucket expiration
//!    is `> C`, except transiently for buckets tied with the one being flushed.
//! 3. A bucket's `expiration` is `Some(e)` exactly when `(e, bucket)` is in the heap, once.
//!    `set_expiration` offers the bucket only when its expiration changes (Kafka's dedupe);
//!    popping it in `advance` or dropping it in `next_deadline` resets it to `None`.
//! 4. A bucket's slot cannot be claimed by another rotation while it is in the heap: level
//!    `k`'s window `[cur_k + tick_k, cur_k + interval_k)` holds exactly one virtual id per
//!    slot, and the window only moves when the clock reaches a popped expiration, which the
//!    heap hands out in order.
//! 5. Due-list entries have `deadline <= C`, so they precede every bucket entry (2).
//!
//! # Why the lagging wheel clock is correct
//!
//! `now` may run far ahead of `C`: `advance(to)` leaves `C` at the last bucket expiration it
//! reached, not at `to`. Filing is still right because a bucket's expiration is computed
//! from the deadline's absolute virtual id (`deadline / tick_k * tick_k`), not from an
//! offset to `C`: it is `<= deadline`, so the bucket is popped no later than the first
//! `advance` whose `to >= deadline`. A flush at expiration `e` of a level-`k` bucket makes
//! `C = e` and re-files each entry (deadline in `[e, e + tick_k)`) strictly below level `k`,
//! again at an expiration `<= deadline`; at level 0 the expiration is the deadline itself.
//! So within that same `advance` the entry cascades down and fires, never later. It never
//! fires early: an entry fires only when `deadline <= C`, and `C` only takes popped
//! expirations `<= to`. A timer started with `C < deadline <= now` is filed into a bucket
//! whose expiration is `<= now`, which the next `advance` pops first thing.
//!
//! # Why one `advance` fires in deadline order
//!
//! Due-list timers fire first, sorted, and their deadlines are `<= C` (5), below every bucket
//! entry (2). Then buckets pop in expiration order. Flushing a bucket at `e` fires exactly its
//! entries with deadline `e` (the others satisfy `deadline > e = C` and are re-filed at
//! expirations `> e`, which the loop pops later). So the fired deadlines are a subsequence of
//! the popped expirations, which never decrease. A level-0 bucket (tick 1) holds one deadline.
//!
//! # `next_deadline`
//!
//! With a non-empty due list: the smallest deadline put on it since it was last emptied
//! (exact unless that timer was stopped; a lower bound either way). Otherwise the heap top,
//! after popping and dropping buckets that `stop` emptied (the poll of an empty bucket that
//! Kafka's reaper would do). The top is the expiration of a non-empty bucket: at most the
//! earliest deadline `d_min`, but possibly a coarse bucket's start, and possibly below `now`
//! (the wheel clock lags; `advance(max(t, now))` is then `advance(now)`, which cascades).
//!
//! Repeating `advance(max(next_deadline(), now))` (with no `start` in between) fires the
//! earliest timer within L rounds, L the levels in use. A non-empty level-`j` bucket with
//! expiration `<= d_min` holds deadlines in `[d_min, expiration + tick_j)`, so its expiration
//! is `d_min` rounded down to `tick_j`: there is at most one such bucket per level, and the
//! coarsest is the heap top. A round that does not fire `d_min` stops short of it, so every
//! non-empty bucket it pops is one of these; it pops the coarsest, and flushing moves entries
//! to strictly finer levels only. The coarsest level holding such a bucket thus drops by at
//! least one per round, and the round that pops the level-0 bucket (expiration `d_min`) fires.
//! A non-empty due list takes one round: it fires first in any `advance`.
//! [`next_deadline_steps`](TimerQueue::next_deadline_steps) returns the most levels a wheel
//! of this size can ever have: the smallest L with `size^L >= 2^64` (15 for size 20; at most
//! `ceil(64 / log2(size)) + 1` in general).

use crate::arena::{Arena, NIL};
use crate::arena_list;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{Parameter, Parameters};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Slots per wheel in Kafka's `SystemTimer`.
pub const DEFAULT_WHEEL_SIZE: u32 = 20;

/// The largest wheel size accepted. The bucket table for every level is reserved up front
/// (4 levels of 2^16 buckets at this size), and bucket ids stay far below the list markers.
pub const MAX_WHEEL_SIZE: u32 = 1 << 16;

/// The `home` of an entry on the due list rather than in a bucket.
const DUE_LIST: u32 = NIL - 1;

/// One pending timer. The arena link is the next entry of the same list.
struct Entry<V> {
    deadline: Tick,
    value: V,
    /// The previous entry of the same list, `NIL` at the head.
    prev: u32,
    /// The bucket id holding the entry, or [`DUE_LIST`].
    home: u32,
}

crate::impl_linked!(Entry);

/// The head of the list called `home`: a bucket's, or the due list's. A function of the
/// two fields rather than a method, so that the arena can be borrowed beside it.
#[inline]
fn head_of<'a>(buckets: &'a mut [Bucket], due_head: &'a mut u32, home: u32) -> &'a mut u32 {
    if home == DUE_LIST {
        due_head
    } else {
        &mut buckets[home as usize].head
    }
}

/// One wheel. Kafka's `TimingWheel` minus the buckets, which live in one shared vector.
struct Level {
    /// `size^k` for level `k`; always fits a `u64` (levels that would not are never built).
    tick: u64,
    /// `tick * size`: the span of the wheel. `u128` because the top level's span passes
    /// `u64::MAX` (for size 20, `20^15 > 2^64`).
    interval: u128,
    /// The level's clock: the wheel clock rounded down to a multiple of `tick`.
    current_time: Tick,
}

/// One slot of one wheel: Kafka's `TimerTaskList`.
#[derive(Clone, Copy)]
struct Bucket {
    /// First entry of the doubly linked list, `NIL` when empty.
    head: u32,
    /// Start of the rotation the bucket serves, `Some` exactly while it is in the heap.
    /// Not a sentinel value: a level-0 bucket may legitimately expire at `u64::MAX`.
    expiration: Option<Tick>,
}

const EMPTY_BUCKET: Bucket = Bucket {
    head: NIL,
    expiration: None,
};

/// See the module documentation.
pub struct KafkaWheel<V> {
    entries: Arena<Entry<V>>,
    /// Slots per wheel.
    size: u32,
    /// The most levels a wheel of this size can need to cover every `u64` deadline.
    max_levels: u32,
    /// Level 0 is the finest; coarser levels are appended on demand.
    levels: Vec<Level>,
    /// Bucket `level * size + slot`.
    buckets: Vec<Bucket>,
    /// Kafka's `DelayQueue`: buckets by expiration, each at most once (invariant 3).
    delay_queue: BinaryHeap<Reverse<(Tick, u32)>>,
    /// Timers started at or before the wheel clock, to fire first on the next `advance`.
    due_head: u32,
    /// The smallest deadline put on the due list since it was last empty.
    due_floor: Tick,
    now: Tick,
    work: u64,
}

impl<V> KafkaWheel<V> {
    /// An empty queue whose wheels have `size` slots each, instead of Kafka's 20.
    ///
    /// # Panics
    ///
    /// Unless `2 <= size <= MAX_WHEEL_SIZE`.
    pub fn with_wheel_size(size: u32) -> Self {
        Self::with_wheel_size_and_capacity(size, 0)
    }

    /// An empty queue with `size`-slot wheels and room for `capacity` pending timers.
    ///
    /// # Panics
    ///
    /// Unless `2 <= size <= MAX_WHEEL_SIZE`.
    pub fn with_wheel_size_and_capacity(size: u32, capacity: usize) -> Self {
        assert!(
            (2..=MAX_WHEEL_SIZE).contains(&size),
            "wheel size {size} is outside 2..={MAX_WHEEL_SIZE}"
        );
        let max_levels = levels_to_cover_u64(size);
        // Wheels are built lazily as in Kafka, but the room for all of them is reserved now:
        // the bucket table and the heap (at most one element per bucket) are fixed structure,
        // so memory never grows with how far away deadlines are.
        let bucket_capacity = max_levels as usize * size as usize;
        let mut buckets = Vec::with_capacity(bucket_capacity);
        buckets.resize(size as usize, EMPTY_BUCKET);
        let mut levels = Vec::with_capacity(max_levels as usize);
        levels.push(Level {
            tick: 1,
            interval: u128::from(size),
            current_time: 0,
        });
        KafkaWheel {
            entries: Arena::with_capacity(capacity),
            size,
            max_levels,
            levels,
            buckets,
            delay_queue: BinaryHeap::with_capacity(bucket_capacity),
            due_head: NIL,
            due_floor: 0,
            now: 0,
            work: 0,
        }
    }

    /// Slots per wheel.
    pub fn wheel_size(&self) -> u32 {
        self.size
    }

    /// Number of wheels built so far.
    pub fn levels_in_use(&self) -> usize {
        self.levels.len()
    }

    /// Ticks per bucket of wheel `level` (`size^level`), if that wheel was built.
    pub fn level_tick(&self, level: usize) -> Option<u64> {
        self.levels.get(level).map(|wheel| wheel.tick)
    }

    /// The finest wheel's clock: Kafka's `currentTime`, which may lag `now` (it moves only
    /// to bucket expirations).
    pub fn wheel_clock(&self) -> Tick {
        self.levels[0].current_time
    }

    /// Panics with a message if invariant 3 is broken (each bucket in the delay queue at
    /// most once, so the queue never outgrows the buckets) or if the storage reserved at
    /// construction for every level was outgrown. For tests, between operations.
    pub fn check_invariants(&self) {
        assert!(
            self.delay_queue.len() <= self.buckets.len(),
            "invariant 3: {} queued for {} buckets",
            self.delay_queue.len(),
            self.buckets.len()
        );
        let reserved = (self.max_levels * self.size) as usize;
        assert_eq!(self.buckets.capacity(), reserved, "bucket table grew");
        assert_eq!(self.delay_queue.capacity(), reserved, "delay queue grew");
    }

    /// Kafka's `TimingWheel.add`, tried from level 0 upwards. Returns `false` when the entry
    /// is already due (`deadline <= C`), leaving it unlinked for the caller to handle.
    ///
    /// The expired test is repeated at every level as in Kafka, though only level 0 can meet
    /// it: reaching level `k + 1` means `deadline >= cur_k + interval_k >= cur_(k+1) +
    /// tick_(k+1)`. Comparisons are in `u128` because `current_time + interval` passes
    /// `u64::MAX` near the top of the clock and at the top level.
    fn file(&mut self, index: u32) -> bool {
        let deadline = self.entries.get(index).deadline;
        let mut level = 0;
        loop {
            let wheel = &self.levels[level];
            let current = u128::from(wheel.current_time);
            if u128::from(deadline) < current + u128::from(wheel.tick) {
                return false;
            }
            if u128::from(deadline) < current + wheel.interval {
                // The absolute virtual id fixes both the slot and the rotation's start, which
                // is what keeps filing right while the wheel clock lags (module docs).
                let virtual_id = deadline / wheel.tick;
                let expiration = virtual_id * wheel.tick; // <= deadline: cannot overflow
                let slot = (virtual_id % u64::from(self.size)) as u32;
                let bucket = level as u32 * self.size + slot;
                self.push_front(bucket, index);
                self.set_expiration(bucket, expiration);
                return true;
            }
            level += 1;
            if level == self.levels.len() {
                self.add_overflow_wheel();
            }
        }
    }

    /// Builds the next coarser wheel, as Kafka's `addOverflowWheel`: its tick is the span of
    /// the current top wheel and its clock starts at the top wheel's clock.
    ///
    /// Only called for a deadline at or past `cur + interval` of the top wheel; a deadline is
    /// at most `u64::MAX`, so that interval, the new tick, fits a `u64`. Once a wheel's span
    /// reaches 2^64 no deadline overflows it and no coarser wheel is ever built.
    fn add_overflow_wheel(&mut self) {
        let top = self.levels.last().expect("level 0 always exists");
        let tick = u64::try_from(top.interval)
            .expect("a deadline past the top wheel implies its span fits a u64");
        let current_time = top.current_time - top.current_time % tick;
        self.levels.push(Level {
            tick,
            interval: u128::from(tick) * u128::from(self.size),
            current_time,
        });
        debug_assert!(self.levels.len() <= self.max_levels as usize);
        self.buckets
            .resize(self.buckets.len() + self.size as usize, EMPTY_BUCKET);
    }

    /// Kafka's `TimerTaskList.setExpiration` followed by the offer: the bucket enters the
    /// heap only when it starts a new rotation, so it is there at most once (invariant 3).
    fn set_expiration(&mut self, bucket: u32, expiration: Tick) {
        let slot = &mut self.buckets[bucket as usize];
        if slot.expiration != Some(expiration) {
            debug_assert!(
                slot.expiration.is_none(),
                "a queued bucket changed rotation"
            );
            slot.expiration = Some(expiration);
            self.delay_queue.push(Reverse((expiration, bucket)));
            self.work += 1;
        }
    }

    /// Kafka's `TimingWheel.advanceClock`, from level 0 up: a level moves only when the time
    /// passed it by a whole tick, and a coarser level is only consulted when the finer moved.
    fn advance_wheel_clock(&mut self, mut time: Tick) {
        for wheel in &mut self.levels {
            if u128::from(time) < u128::from(wheel.current_time) + u128::from(wheel.tick) {
                break;
            }
            wheel.current_time = time - time % wheel.tick;
            time = wheel.current_time;
        }
    }

    /// Links entry `index` at the front of list `home`.
    #[inline]
    fn push_front(&mut self, home: u32, index: u32) {
        self.entries.get_mut(index).home = home;
        let head = head_of(&mut self.buckets, &mut self.due_head, home);
        arena_list::push_front(&mut self.entries, head, index);
    }

    /// Unlinks entry `index` from whatever list holds it. An emptied bucket stays in the
    /// delay queue, as Kafka's does, until it reaches the top (see `drop_empty_buckets_at_top`).
    #[inline]
    fn unlink(&mut self, index: u32) {
        let home = self.entries.get(index).home;
        let head = head_of(&mut self.buckets, &mut self.due_head, home);
        arena_list::unlink(&mut self.entries, head, index);
    }

    /// Puts an entry that is already due on the due list.
    fn push_due(&mut self, index: u32) {
        let deadline = self.entries.get(index).deadline;
        self.due_floor = if self.due_head == NIL {
            deadline
        } else {
            self.due_floor.min(deadline)
        };
        self.push_front(DUE_LIST, index);
    }

    /// Frees unlinked entry `index` and reports it.
    fn fire<F: FnMut(TimerId, V, Tick)>(&mut self, index: u32, on_fire: &mut F) {
        let id = self.entries.id(index);
        let (_, entry) = self.entries.remove(index);
        on_fire(id, entry.value, entry.deadline);
    }

    /// Fires the due list in deadline order.
    fn fire_due_list<F: FnMut(TimerId, V, Tick)>(&mut self, on_fire: &mut F) {
        if self.due_head == NIL {
            return;
        }
        let list = arena_list::take(&mut self.due_head);
        let mut index = arena_list::sort_by_deadline(&mut self.entries, list, &mut self.work);
        while index != NIL {
            let next = self.entries.link(index);
            self.fire(index, on_fire);
            index = next;
        }
    }

    /// Kafka's `TimerTaskList.flush(addTimerTaskEntry)`: empties the bucket, ends its
    /// rotation, and re-adds every entry, which fires it or files it into a finer wheel.
    fn flush<F: FnMut(TimerId, V, Tick)>(&mut self, bucket: u32, on_fire: &mut F) {
        let slot = &mut self.buckets[bucket as usize];
        slot.expiration = None;
        let mut cursor = arena_list::take(&mut slot.head);
        while cursor != NIL {
            let next = self.entries.link(cursor);
            self.work += 1;
            if !self.file(cursor) {
                self.fire(cursor, on_fire);
            }
            cursor = next;
        }
    }

    /// Pops heap-top buckets that `stop` emptied, ending their rotation so that a later
    /// timer offers them again.
    fn drop_empty_buckets_at_top(&mut self) {
        while let Some(&Reverse((expiration, bucket))) = self.delay_queue.peek() {
            let slot = &mut self.buckets[bucket as usize];
            debug_assert_eq!(slot.expiration, Some(expiration), "invariant 3");
            if slot.head != NIL {
                break;
            }
            slot.expiration = None;
            self.delay_queue.pop();
            self.work += 1;
        }
    }
}

/// The smallest number of levels `L` with `size^L >= 2^64`: then the top level's span covers
/// every `u64` deadline from any clock.
pub fn levels_to_cover_u64(size: u32) -> u32 {
    let mut levels = 1;
    let mut span = u128::from(size);
    while span < 1u128 << 64 {
        span *= u128::from(size);
        levels += 1;
    }
    levels
}

impl<V> TimerQueue<V> for KafkaWheel<V> {
    /// `slots`: Kafka's `wheelSize`, the slots of every wheel (its tick stays 1).
    const PARAMETERS: &'static [Parameter] = &[Parameter {
        name: "slots",
        default: DEFAULT_WHEEL_SIZE as u64,
        about: "slots per wheel (Kafka's wheelSize); more slots, fewer overflow wheels",
        accepts: "from 2 to 65536",
        valid: |slots| (2..=MAX_WHEEL_SIZE as u64).contains(&slots),
    }];

    fn with_capacity(capacity: usize) -> Self {
        Self::with_wheel_size_and_capacity(DEFAULT_WHEEL_SIZE, capacity)
    }

    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self {
        // Checked against `valid` above: at most 2^16.
        Self::with_wheel_size_and_capacity(parameters.get("slots") as u32, capacity)
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.entries.insert(
            NIL,
            Entry {
                deadline,
                value,
                prev: NIL,
                home: NIL,
            },
        );
        self.work += 1;
        if !self.file(id.index()) {
            self.push_due(id.index());
        }
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        self.work += 1;
        self.unlink(index);
        Some(self.entries.remove(index).1.value)
    }

    /// Relinks the entry in place: off its bucket (or the due list), new deadline and
    /// value, filed again as `start` files, with no arena free and allocation between.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.entries.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        self.work += 1;
        self.unlink(index);
        let entry = Entry {
            deadline,
            value,
            prev: NIL,
            home: NIL,
        };
        let (id, old) = self.entries.reissue(index, entry);
        if !self.file(index) {
            self.push_due(index);
        }
        (id, Some(old.value))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        self.fire_due_list(&mut on_fire);
        while let Some(&Reverse((expiration, bucket))) = self.delay_queue.peek() {
            if expiration > to {
                break;
            }
            self.delay_queue.pop();
            self.work += 1;
            if self.buckets[bucket as usize].expiration != Some(expiration) {
                // Cannot happen (invariant 3); skipping a stale element is the safe reading.
                debug_assert!(false, "bucket {bucket} popped at a stale expiration");
                continue;
            }
            self.advance_wheel_clock(expiration);
            self.flush(bucket, &mut on_fire);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        if self.entries.is_empty() {
            return None;
        }
        if self.due_head != NIL {
            return Some(self.due_floor);
        }
        self.drop_empty_buckets_at_top();
        let top = self
            .delay_queue
            .peek()
            .map(|&Reverse((expiration, _))| expiration);
        debug_assert!(top.is_some(), "a pending timer sits in a queued bucket");
        top
    }

    fn next_deadline_steps(&self) -> u32 {
        self.max_levels
    }

    crate::contract::len_now_work!(entries.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_is_32_bytes() {
        assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 32);
    }
}
