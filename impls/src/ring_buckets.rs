//! `ring-buckets`: the ring of buckets a chat server uses to kick idle connections, with a
//! clock hand that moves one bucket per `width` ticks. Approximate by design.
//!
//! # The idea
//!
//! The seed article of this project (a chat server holding 100,000 connections, each to be
//! closed after 30 s without a packet; the project's research notes call it seed 001's
//! ring) keeps a ring of about 30 one-second buckets. Each bucket is a set of connections,
//! and a map from connection to bucket finds a connection's bucket in O(1). A packet moves
//! its connection from its bucket to the newest one, the bucket the hand will reach last;
//! once per second the hand moves on one bucket and every connection in the bucket it
//! reaches has been idle for a whole turn: all of them are closed at once. The same design
//! for delayed messages (a ring of 3,600 one-second slots) lets a delay exceed one turn by
//! giving each task a cycle count, its "Cycle-Num": the hand decrements it on each pass and
//! runs the task when it reaches zero. Everything is O(1), nothing is sorted, and a timer
//! fires at the end of its bucket's second: late by less than one bucket.
//!
//! # As in the source, and what the contract changes
//!
//! As in the source: a ring of `slots` buckets (32 by default, the seed's 30 rounded to the
//! power of two a server would pick; any count is accepted); the hand reaching bucket
//! `k mod slots` at boundary `k` and expiring, in one pass, every entry of it whose cycle
//! count is zero and decrementing the others; a refresh (`restart`) that moves the entry to
//! its new bucket in O(1) without leaving its place in memory; a stop that takes the entry
//! out of its set at once.
//!
//! Deviations, forced by the contract:
//!
//! - **Buckets by deadline.** The seed puts a refreshed connection in the bucket behind the
//!   hand because every connection has the same timeout, equal to one turn. Here any
//!   deadline is allowed, so a timer goes to the bucket of the first boundary at or after
//!   its deadline: boundary `B = ceil(deadline / width)`, bucket `B mod slots`, cycle count
//!   the number of earlier passes of the hand over that bucket. A deadline at or before the
//!   boundary the hand has just passed goes to the next boundary. With the seed's numbers
//!   (one turn equal to the timeout) that is the bucket behind the hand.
//! - **The set** is a doubly linked list threaded through the arena (`u32` links), and
//!   **the map** is the entry's own bucket index: the handle finds the entry, the entry its
//!   bucket.
//! - **Cycle-Num in 16 bits.** A count that does not fit (a deadline more than 65,534 turns
//!   away: 2·10^9 ticks with the defaults) is stored saturated and recomputed from the
//!   deadline when the hand reaches it, so any `u64` deadline is held.
//! - **The clock.** Boundary `k` is at clock `k × width`; the hand reaches it on the clock
//!   move whose end reaches it. Boundary 0 is at clock 0, reached by the first `advance`.
//! - **`next_deadline`**, which a ring does not have: a dry run of the hand (see
//!   [`RingBuckets::next_deadline`]).
//!
//! # One timer entry
//!
//! | field | bytes (`u64` value) |
//! | --- | --- |
//! | deadline | 8 |
//! | value | 8 |
//! | `prev` link in the bucket's set | 4 |
//! | bucket index (the map) | 2 |
//! | cycle count (Cycle-Num) | 2 |
//! | arena generation and `next` link | 8 |
//! | **total** | **32** |
//!
//! Fixed: one 4-byte head per bucket (128 bytes with the defaults).
//!
//! # Costs (`n` pending timers, `S` slots, `W` = `width`)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): a division for the boundary, push on the bucket's set |
//! | `stop` | O(1): unlink from the set the entry names, free at once |
//! | `restart` | O(1): unlink and push on the new bucket, on the same entry |
//! | `advance`, per boundary reached (`W` ticks of clock) | one bucket walked whole: about `n / S` entries, each fired or decremented |
//! | `advance`, per tick of clock | `1 / W` bucket visits: nothing is skipped |
//! | `next_deadline` | a dry run of the hand up to the first firing: at most one turn (`S` buckets and the entries in them), no more than the `advance` it announces |
//!
//! # Empty time
//!
//! Walked, one bucket per boundary ([`EmptyTime::Walked`] with `step = width`): the hand
//! reaches every boundary the clock passes, whatever the ring holds.
//!
//! # Precision
//!
//! Approximate, never early. A timer fires on the clock move that reaches boundary
//! `max(ceil(deadline / W), next boundary)`: a deadline after `now` is late by
//! `ceil(deadline / W) × W − deadline`, at most `W − 1`; a deadline at or before `now` fires
//! at the next boundary, at most `W` ticks after `now` (exactly `W` when `now` is on a
//! boundary already passed). [`RingBuckets::window`] gives each timer that exact lateness.
//! With `width = 1` a deadline after `now` fires exactly on its tick. Within a clock move,
//! timers fire boundary by boundary, each bucket in its set's order.
//!
//! # Suite limit
//!
//! Counted first: the standard workloads at 1M timers replayed through the default
//! ring, reading [`work`](TimerQueue::work). Every family but one stays under 7 × 10^6
//! steps; the keepalive takes 2.8 × 10^6 (the hand moves 60 times over its 60,000 ticks,
//! each time over a 32nd of the pending timers, plus one step per start and refresh). Cron
//! is the exception, 1.1 × 10^9: each of its 44,316 sleeps wakes at the end of a bucket,
//! which fires whole, so the ring's clock runs about a bucket (1,000 ticks) per sleep
//! instead of a few ticks, and every boundary walks a bucket of the 1M timers it keeps
//! pending. It grows linearly with the size, and it is slow steps: at 1M one cell would
//! take minutes of the suite's budget (METHODOLOGY.md, *Notes on individual structures*).
//! The suite runs this ring up to 100k timers, the
//! scale of the server it comes from ([`SUITE_LIMIT`](TimerQueue::SUITE_LIMIT));
//! `--timers 1000000` still runs it there.

use crate::arena::{Arena, NIL};
use crate::arena_list;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{
    EmptyTime, NaturalPeriod, Parameter, Parameters, Precision, Range, SuiteLimit, Window,
};

/// The ring's buckets by default: the seed's 30, rounded to a power of two.
pub const DEFAULT_SLOTS: u64 = 32;
/// Ticks per bucket by default: one second of 1 ms ticks, as in the seed.
pub const DEFAULT_WIDTH: Tick = 1_000;
/// The most buckets: a bucket index is 16 bits.
pub const MAX_SLOTS: u64 = 1 << 16;
/// The widest bucket accepted, in ticks.
pub const MAX_WIDTH: Tick = 1 << 32;

/// A cycle count too large for 16 bits: at least this many; recomputed from the deadline
/// when the hand reaches it.
const MANY_CYCLES: u16 = u16::MAX;

/// One timer. The arena link is the `next` pointer of its bucket's set.
struct Entry<V> {
    deadline: Tick,
    value: V,
    prev: u32,
    /// The bucket whose set holds it: the seed's connection-to-bucket map.
    bucket: u16,
    /// Passes of the hand over its bucket before the one that fires it (Cycle-Num).
    cycles: u16,
}

crate::impl_linked!(Entry);

/// The ring of buckets. See the module documentation.
///
/// # Invariant
///
/// Between calls, every pending timer is in the set of bucket `fire mod S`, where
/// `fire = max(ceil(deadline / W), next_boundary)` is the boundary that fires it, and
/// its `bucket` field says so; its `cycles` is the number of passes of the hand over that
/// bucket, from `next_boundary` on, before `fire` (or `MANY_CYCLES`).
pub struct RingBuckets<V> {
    entries: Arena<Entry<V>>,
    heads: Vec<u32>,
    /// `S`.
    slots: u64,
    /// `W`: ticks per bucket.
    width: Tick,
    /// The next boundary the hand reaches, at clock `next_boundary × width`.
    next_boundary: u64,
    /// The last boundary (at clock `u64::MAX`) has been reached: the hand has stopped.
    worn_out: bool,
    now: Tick,
    work: u64,
}

impl<V> RingBuckets<V> {
    /// An empty ring of `slots` buckets of `width` ticks, with room for `capacity` timers.
    ///
    /// # Panics
    ///
    /// If `slots` is not in `1..=MAX_SLOTS` or `width` not in `1..=MAX_WIDTH`.
    pub fn with_slots_and_width(capacity: usize, slots: u64, width: Tick) -> Self {
        assert!(
            (1..=MAX_SLOTS).contains(&slots),
            "ring-buckets slots must be from 1 to 2^16, got {slots}"
        );
        assert!(
            (1..=MAX_WIDTH).contains(&width),
            "ring-buckets width must be from 1 to 2^32, got {width}"
        );
        RingBuckets {
            entries: Arena::with_capacity(capacity),
            heads: vec![NIL; slots as usize],
            slots,
            width,
            next_boundary: 0,
            worn_out: false,
            now: 0,
            work: 0,
        }
    }

    /// The boundary that fires `deadline` if it is filed now.
    #[inline]
    fn fire_boundary(&self, deadline: Tick) -> u64 {
        deadline.div_ceil(self.width).max(self.next_boundary)
    }

    /// The clock at which the hand reaches boundary `k`; the last one is at `u64::MAX`.
    #[inline]
    fn boundary_clock(&self, k: u64) -> Tick {
        k.saturating_mul(self.width)
    }

    fn last_boundary(&self) -> u64 {
        Tick::MAX.div_ceil(self.width)
    }

    /// Passes of the hand over the bucket of boundary `fire`, from boundary `from` on,
    /// before `fire` itself.
    #[inline]
    fn cycles_between(&self, fire: u64, from: u64) -> u16 {
        let passes = fire.saturating_sub(from) / self.slots;
        // `MANY_CYCLES` is `u16::MAX`: what does not fit saturates to it.
        u16::try_from(passes).unwrap_or(MANY_CYCLES)
    }

    /// Puts the live entry `index`, whose payload has its new deadline, in the set of the
    /// bucket that fires it.
    fn file(&mut self, index: u32) {
        let fire = self.fire_boundary(self.entries.get(index).deadline);
        // `slots <= 2^16`, so the bucket index fits 16 bits.
        let bucket = (fire % self.slots) as u16;
        let cycles = self.cycles_between(fire, self.next_boundary);
        let entry = self.entries.get_mut(index);
        entry.bucket = bucket;
        entry.cycles = cycles;
        arena_list::push_front(&mut self.entries, &mut self.heads[bucket as usize], index);
    }

    /// The hand reaches boundary `k`: every entry of its bucket is visited, fired if its
    /// cycle count is zero, else decremented.
    fn reach<F: FnMut(TimerId, V, Tick)>(&mut self, k: u64, on_fire: &mut F) {
        self.work += 1;
        let bucket = (k % self.slots) as usize;
        let mut cursor = self.heads[bucket];
        while cursor != NIL {
            self.work += 1;
            let next = self.entries.link(cursor);
            let entry = self.entries.get(cursor);
            let cycles = if entry.cycles == MANY_CYCLES {
                // A deadline that far was after `now` when filed: it fires at its ceiling.
                self.cycles_between(entry.deadline.div_ceil(self.width), k)
            } else {
                entry.cycles
            };
            if cycles == 0 {
                let id = self.entries.id(cursor);
                let (next, entry) = self.entries.remove(cursor);
                arena_list::close_gap(&mut self.entries, &mut self.heads[bucket], entry.prev, next);
                on_fire(id, entry.value, entry.deadline);
            } else if cycles != MANY_CYCLES {
                self.entries.get_mut(cursor).cycles = cycles - 1;
            }
            cursor = next;
        }
    }

    /// Panics with a message if the invariant of [`RingBuckets`] is broken. It walks the
    /// whole ring (O(n + S)): for tests, between operations.
    pub fn check_invariants(&self) {
        let mut seen = 0;
        for bucket in 0..self.heads.len() {
            let (mut cursor, mut prev) = (self.heads[bucket], NIL);
            while cursor != NIL {
                let entry = self.entries.get(cursor);
                assert_eq!(entry.prev, prev, "prev link of {cursor}");
                assert_eq!(usize::from(entry.bucket), bucket, "the map of {cursor}");
                let fire = self.fire_boundary(entry.deadline);
                assert_eq!((fire % self.slots) as usize, bucket, "bucket of {cursor}");
                let first_pass = self.next_boundary
                    + (bucket as u64 + self.slots - self.next_boundary % self.slots) % self.slots;
                let passes = (fire - first_pass) / self.slots;
                if entry.cycles != MANY_CYCLES {
                    assert_eq!(u64::from(entry.cycles), passes, "cycles of {cursor}");
                }
                seen += 1;
                prev = cursor;
                cursor = self.entries.link(cursor);
            }
        }
        assert_eq!(seen, self.entries.len(), "every entry in one set");
    }
}

impl<V> TimerQueue<V> for RingBuckets<V> {
    /// `slots` (buckets in the ring) and `width` (ticks per bucket).
    const PARAMETERS: &'static [Parameter] = &[
        Parameter {
            name: "slots",
            default: DEFAULT_SLOTS,
            about: "buckets in the ring; a turn is slots x width ticks, longer delays carry a cycle count",
            accepts: "from 1 to 65536",
            valid: |slots| (1..=MAX_SLOTS).contains(&slots),
        },
        Parameter {
            name: "width",
            default: DEFAULT_WIDTH,
            about: "ticks per bucket: the hand's step and the lateness bound",
            accepts: "from 1 to 2^32",
            valid: |width| (1..=MAX_WIDTH).contains(&width),
        },
    ];

    /// Counted on the standard workloads (module documentation, "Suite limit").
    const SUITE_LIMIT: Option<SuiteLimit> = Some(SuiteLimit {
        max_timers: 100_000,
        why: "each sleep of cron wakes a whole bucket later and every boundary walks a \
              bucket: cron takes 1.1e8 steps at 100k and 1.1e9 at 1M",
    });

    fn with_capacity(capacity: usize) -> Self {
        Self::with_slots_and_width(capacity, DEFAULT_SLOTS, DEFAULT_WIDTH)
    }

    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self {
        Self::with_slots_and_width(capacity, parameters.get("slots"), parameters.get("width"))
    }

    fn precision(&self) -> Precision {
        Precision::Approximate(
            "fires at the first bucket boundary (a multiple of width) at or after its \
             deadline: late by at most width - 1 ticks; a deadline at or before now fires \
             at the next boundary, at most width ticks after now; bucket order within a move",
        )
    }

    /// Exact: the boundary that fires it, minus `max(deadline, now)`.
    fn window(&self, deadline: Tick) -> Window {
        let fires = self.boundary_clock(self.fire_boundary(deadline));
        Window {
            late: fires.saturating_sub(deadline.max(self.now)),
            early: false,
        }
    }

    fn empty_time(&self) -> EmptyTime {
        EmptyTime::Walked { step: self.width }
    }

    /// The bucket width (`width`, in ticks): the hand's step.
    fn natural_period(&self) -> NaturalPeriod {
        NaturalPeriod::Ticks(self.width)
    }

    /// Every deadline; clocks up to 2^28 bucket widths, the walk a replay can afford.
    fn range(&self) -> Range {
        Range::walked(self.width, "a bucket visit per width: 2^28 of them at most")
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.work += 1;
        let entry = Entry {
            deadline,
            value,
            prev: NIL,
            bucket: 0,
            cycles: 0,
        };
        let id = self.entries.insert(NIL, entry);
        self.file(id.index());
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        self.work += 1;
        let (next, entry) = self.entries.remove(index);
        let head = &mut self.heads[usize::from(entry.bucket)];
        arena_list::close_gap(&mut self.entries, head, entry.prev, next);
        Some(entry.value)
    }

    /// The refresh: the entry leaves its set for the one of its new deadline, in place.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.entries.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        self.work += 1;
        let bucket = usize::from(self.entries.get(index).bucket);
        arena_list::unlink(&mut self.entries, &mut self.heads[bucket], index);
        let entry = Entry {
            deadline,
            value,
            prev: NIL,
            bucket: 0,
            cycles: 0,
        };
        let (id, old) = self.entries.reissue(index, entry);
        self.file(index);
        (id, Some(old.value))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        while !self.worn_out && self.boundary_clock(self.next_boundary) <= to {
            let k = self.next_boundary;
            self.reach(k, &mut on_fire);
            if k == self.last_boundary() {
                self.worn_out = true;
            } else {
                self.next_boundary = k + 1;
            }
        }
        self.now = to;
    }

    /// The clock of the next boundary that fires something, by a dry run of the hand: the
    /// buckets in the order the hand reaches them, for at most one turn, each entry giving
    /// the boundary that fires it, until the hand's next boundary is no earlier than the
    /// best found (an entry's firing boundary is never before its bucket's next pass). One
    /// `advance` to it fires; the dry run walks no more than that `advance` will.
    fn next_deadline(&mut self) -> Option<Tick> {
        if self.entries.is_empty() {
            return None;
        }
        if self.worn_out {
            // The end of time: the hand has stopped, nothing will fire.
            return Some(Tick::MAX);
        }
        let (mut best, last) = (u64::MAX, self.last_boundary());
        for offset in 0..self.slots {
            let k = self.next_boundary.saturating_add(offset);
            if k >= best || k > last {
                break;
            }
            self.work += 1;
            let mut cursor = self.heads[(k % self.slots) as usize];
            while cursor != NIL {
                self.work += 1;
                best = best.min(self.fire_boundary(self.entries.get(cursor).deadline));
                cursor = self.entries.link(cursor);
            }
        }
        Some(self.boundary_clock(best))
    }

    crate::contract::len_now_work!(entries.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fire(ring: &mut RingBuckets<u64>, to: Tick) -> Vec<u64> {
        let mut fired = Vec::new();
        ring.advance(to, |_, value, _| fired.push(value));
        ring.check_invariants();
        fired
    }

    #[test]
    fn an_entry_is_32_bytes() {
        assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 32);
    }

    #[test]
    fn a_bucket_fires_whole_at_its_boundary() {
        let mut ring = RingBuckets::with_slots_and_width(0, 30, 1_000);
        ring.start(1, 1u64);
        ring.start(999, 2);
        ring.start(1_000, 3);
        ring.start(1_001, 4);
        assert_eq!(ring.window(1).late, 999);
        assert_eq!(fire(&mut ring, 999), Vec::<u64>::new());
        let mut fired = fire(&mut ring, 1_000);
        fired.sort_unstable();
        assert_eq!(fired, [1, 2, 3]);
        assert_eq!(ring.next_deadline(), Some(2_000));
        assert_eq!(fire(&mut ring, 2_000), [4]);
        // On a boundary already passed, a due deadline waits a whole bucket.
        assert_eq!(ring.window(2_000).late, 1_000);
    }

    #[test]
    fn a_refresh_moves_the_entry_in_place_to_its_new_bucket() {
        let mut ring = RingBuckets::with_slots_and_width(0, 30, 1_000);
        let id = ring.start(30_000, 7u64);
        fire(&mut ring, 5_500);
        let (moved, old) = ring.restart(id, 35_500, 8);
        assert_eq!((old, moved.index()), (Some(7), id.index()));
        assert_eq!(ring.stop(id), None, "the old handle is stale");
        assert_eq!(ring.entries.get(moved.index()).bucket, 6);
        assert_eq!(fire(&mut ring, 35_999), Vec::<u64>::new());
        assert_eq!(fire(&mut ring, 36_000), [8]);
    }

    #[test]
    fn a_delay_beyond_the_ring_carries_a_cycle_count() {
        let mut ring = RingBuckets::with_slots_and_width(0, 4, 10);
        let id = ring.start(95, 1u64);
        // Boundary 10, bucket 2: passes at boundaries 2 and 6 first.
        assert_eq!(ring.entries.get(id.index()).cycles, 2);
        assert_eq!(fire(&mut ring, 60), Vec::<u64>::new());
        assert_eq!(ring.entries.get(id.index()).cycles, 0);
        assert_eq!(ring.next_deadline(), Some(100));
        assert_eq!(fire(&mut ring, 100), [1]);
    }

    #[test]
    fn a_saturated_cycle_count_is_recomputed_when_it_runs_out() {
        let mut ring = RingBuckets::with_slots_and_width(0, 1, 1);
        let far = u64::from(MANY_CYCLES) + 10;
        let id = ring.start(far, 1u64);
        assert_eq!(ring.entries.get(id.index()).cycles, MANY_CYCLES);
        assert_eq!(fire(&mut ring, far - 1), Vec::<u64>::new());
        assert_eq!(fire(&mut ring, far), [1]);
    }
}
