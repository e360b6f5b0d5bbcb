//! `netty-wheel`: Netty 4's `HashedWheelTimer`, a single wheel walked by a worker once per
//! tick, rebuilt on the virtual clock. Approximate by design.
//!
//! # The idea
//!
//! Netty (`common/src/main/java/io/netty/util/HashedWheelTimer.java`, 4.x) runs Varghese and
//! Lauck's scheme 6 (SOSP 1987, section 5): `ticksPerWheel` buckets (512 by default, a power
//! of two so that `& mask` picks one), each a doubly linked list, and one worker that wakes
//! every `tickDuration` and walks one bucket. A timeout carries `remainingRounds`, the
//! passes of its bucket left before it is due, decremented on every pass. Callers never
//! touch the wheel: `newTimeout` and `cancel` push onto queues that the worker drains. One
//! worker tick, here as in Netty: (1) `processCancelledTasks` unlinks the cancelled; (2)
//! `transferTimeoutsToBuckets` moves at most 100,000 started timeouts into bucket
//! `max(calculated, tick) & mask` with `remainingRounds = (calculated - tick) / wheel.length`
//! (one cancelled while queued is dropped); (3) `expireTimeouts` walks bucket `tick & mask`
//! whole, expiring the timeouts at zero rounds and decrementing the others; (4) `tick++`.
//! Buckets are appended at the tail: a bucket expires in transfer order.
//!
//! # What the contract changes
//!
//! - **The clock.** Netty's worker tick `k` runs at `(k + 1) × tickDuration` and takes
//!   `calculated = floor(deadline / tickDuration)`, so a deadline on a boundary waits a whole
//!   tick. Here worker tick `k` runs when the clock reaches `k × tick` and `calculated` is
//!   the *ceiling*: Netty started one worker tick earlier. A timer fires less than one worker
//!   tick late, and with `tick = 1` on the clock move that reaches its deadline.
//! - **Stop.** `stop` hands the value back at once and gives the entry a fresh generation
//!   (the handle is stale, the timer can never fire); the dead entry keeps its place and its
//!   memory until the worker's next tick, or until the transfer reaches it if it was still
//!   queued: [`Release::Later`], as Netty's cancellation queue.
//! - **Rounds in 32 bits.** A count past `2^32 − 2` turns is saturated and recomputed from
//!   the deadline when it runs out, so any `u64` deadline is held.
//! - **`next_deadline`**, which Netty lacks: a dry run of the worker. One thread; no
//!   `pendingTimeouts` limit; no `stop()` of the timer itself.
//!
//! # One timer entry
//!
//! | field | bytes (`u64` value) |
//! | --- | --- |
//! | deadline | 8 |
//! | value, an `Option` so that `stop` can take it while the dead entry stays linked | 16 |
//! | `prev` link in the bucket | 4 |
//! | `remainingRounds` (or the queued marker) | 4 |
//! | arena generation and `next` link (bucket or start queue) | 8 |
//! | **total** | **40** |
//!
//! The bucket is not stored (it is `calculated & mask`). Fixed: a head and a tail per
//! bucket (4 KiB at 512) and a `Vec` of 4-byte indices for the cancellation queue.
//!
//! # Costs (`n` pending timers, `S` slots, `w` = `tick`)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): append to the start queue; the transfer (O(1)) comes at the next worker tick |
//! | `stop` | O(1): take the value, queue the index; the unlink (O(1)) comes at the next worker tick |
//! | `restart` | a `stop` and a `start`, as in Netty (which has no restart) |
//! | `advance`, per worker tick (`w` ticks of clock) | one bucket walked whole: about `n / S` entries, each fired or decremented, due or not |
//! | `advance`, per tick of clock | `1 / w` bucket visits: nothing is skipped |
//! | `next_deadline` | a dry run of the worker up to the first firing: at most one turn (`S` buckets) and the start queue, no more than the `advance` it announces |
//!
//! # Empty time
//!
//! Walked ([`EmptyTime::Walked`], `step = tick`): a move of `N` ticks runs `N / tick` worker ticks.
//!
//! # Precision
//!
//! Approximate, with a window fixed per timer at its start ([`NettyWheel::window`]): it
//! fires at worker tick `max(calculated, transfer tick)`, the transfer tick being the next
//! one plus one per 100,000 starts queued ahead. With `tick = 1` and fewer than 100,000
//! starts between moves, a future deadline has `late = 0`; one at or before `now` fires at
//! the next worker tick. Within one move, each bucket fires in list order, not deadline order.
//!
//! # Suite limit
//!
//! 100k timers ([`SUITE_LIMIT`](TimerQueue::SUITE_LIMIT)). At 1M a replay takes seconds to
//! minutes: each worker tick walks thousands of entries (Netty's cost) and each
//! `next_deadline`, the contract's query, scans the buckets ahead (METHODOLOGY.md, *Notes
//! on individual structures*).

use crate::arena::{Arena, NIL};
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{
    EmptyTime, NaturalPeriod, Parameter, Parameters, Precision, Range, Release, SuiteLimit, Window,
    power_of_two_in,
};

/// Netty's default `ticksPerWheel`.
pub const DEFAULT_SLOTS: u64 = 512;
/// The largest accepted wheel: 2^24 buckets, 128 MiB of heads and tails.
pub const MAX_SLOTS: u64 = 1 << 24;
/// The largest accepted worker tick, in ticks of the virtual clock.
pub const MAX_TICK: Tick = 1 << 32;
/// `transferTimeoutsToBuckets` moves at most this many started timers per worker tick.
pub const TRANSFERS_PER_TICK: u64 = 100_000;

/// `remainingRounds` of an entry still in the start queue, not yet in a bucket.
const QUEUED: u32 = u32::MAX;
/// `remainingRounds` too large for 32 bits, recomputed when the worker reaches it.
const MANY_ROUNDS: u32 = u32::MAX - 1;

/// One timer (`HashedWheelTimeout`). The arena link is its `next` pointer: in its bucket's
/// list, or in the start queue while it waits for the transfer.
struct Entry<V> {
    deadline: Tick,
    /// `None` once stopped: a dead entry waiting for the worker to drop it.
    value: Option<V>,
    /// The previous entry of its bucket, `NIL` at the head; unused in the start queue.
    prev: u32,
    /// `remainingRounds`, [`MANY_ROUNDS`] or [`QUEUED`].
    rounds: u32,
}

/// Netty's `HashedWheelTimer`. See the module documentation.
///
/// # Invariants
///
/// Between calls:
/// - every arena entry is either in the start queue (`rounds == QUEUED`, in start order)
///   or in the list of bucket `calculated(deadline) & mask`, with true `prev` links and the
///   bucket's tail at its end; an entry in a bucket has `calculated >= next_tick`, and its
///   `rounds` is the number of visits of its bucket before the one at worker tick
///   `calculated` (or `MANY_ROUNDS`);
/// - dead entries (value `None`) in buckets are exactly the indices in `cancelled`; dead
///   entries in the start queue may or may not be listed there too;
/// - `live` counts the entries with a value, `queued` the entries in the start queue.
pub struct NettyWheel<V> {
    entries: Arena<Entry<V>>,
    heads: Vec<u32>,
    tails: Vec<u32>,
    /// `wheel.length - 1`.
    mask: u64,
    /// Ticks of the virtual clock per worker tick (`tickDuration`).
    tick: Tick,
    /// The start queue (`timeouts`): oldest first, threaded through the arena links.
    queue_head: u32,
    queue_tail: u32,
    queued: u64,
    /// The cancellation queue (`cancelledTimeouts`).
    cancelled: Vec<u32>,
    /// The next worker tick to run (Netty's `tick`); it runs when the clock reaches
    /// `next_tick × tick`.
    next_tick: u64,
    /// The last worker tick (at clock `u64::MAX`) has run: no tick is left to run.
    worn_out: bool,
    live: usize,
    now: Tick,
    work: u64,
}

impl<V> NettyWheel<V> {
    /// An empty timer of `slots` buckets (a power of two) and `tick` clock ticks per worker
    /// tick, with room for `capacity` timers.
    ///
    /// # Panics
    ///
    /// If `slots` is not a power of two in `1..=MAX_SLOTS` or `tick` not in `1..=MAX_TICK`.
    pub fn with_slots_and_tick(capacity: usize, slots: u64, tick: Tick) -> Self {
        assert!(
            power_of_two_in(slots, 1, MAX_SLOTS),
            "netty-wheel slots must be a power of two from 1 to 2^24, got {slots}"
        );
        assert!(
            (1..=MAX_TICK).contains(&tick),
            "netty-wheel tick must be from 1 to 2^32, got {tick}"
        );
        NettyWheel {
            entries: Arena::with_capacity(capacity),
            heads: vec![NIL; slots as usize],
            tails: vec![NIL; slots as usize],
            mask: slots - 1,
            tick,
            queue_head: NIL,
            queue_tail: NIL,
            queued: 0,
            cancelled: Vec::new(),
            next_tick: 0,
            worn_out: false,
            live: 0,
            now: 0,
            work: 0,
        }
    }

    fn slots(&self) -> u64 {
        self.mask + 1
    }

    /// Netty's `calculated`, as a ceiling (module documentation, "The clock"): the worker
    /// tick that takes `deadline`.
    #[inline]
    fn calculated(&self, deadline: Tick) -> u64 {
        deadline.div_ceil(self.tick)
    }

    /// The clock at which worker tick `k` runs; the last one runs at `u64::MAX`.
    #[inline]
    fn tick_clock(&self, k: u64) -> Tick {
        k.saturating_mul(self.tick)
    }

    /// The worker tick that takes the deadline `u64::MAX`: the last one.
    fn last_tick(&self) -> u64 {
        self.calculated(Tick::MAX)
    }

    /// `remainingRounds` of an entry taken at worker tick `calculated` and visited now, at
    /// worker tick `tick`: whole turns between them (Netty's value is negative, hence
    /// "now", when `calculated < tick`).
    #[inline]
    fn rounds_between(&self, calculated: u64, tick: u64) -> u32 {
        let turns = calculated.saturating_sub(tick) / self.slots();
        u32::try_from(turns).map_or(MANY_ROUNDS, |turns| turns.min(MANY_ROUNDS))
    }

    /// Appends the live entry `index` at the tail of bucket `slot` (`addTimeout`).
    fn push_back(&mut self, slot: usize, index: u32) {
        let tail = self.tails[slot];
        let (next, entry) = self.entries.entry_mut(index);
        *next = NIL;
        entry.prev = tail;
        if tail == NIL {
            self.heads[slot] = index;
        } else {
            self.entries.set_link(tail, index);
        }
        self.tails[slot] = index;
    }

    /// Takes the entry `index` out of the list of bucket `slot` (`HashedWheelBucket.remove`);
    /// it stays in the arena.
    fn unlink(&mut self, slot: usize, index: u32) {
        let next = self.entries.link(index);
        let prev = self.entries.get(index).prev;
        if prev == NIL {
            self.heads[slot] = next;
        } else {
            self.entries.set_link(prev, next);
        }
        if next == NIL {
            self.tails[slot] = prev;
        } else {
            self.entries.get_mut(next).prev = prev;
        }
    }

    /// One run of Netty's worker loop, at worker tick `next_tick`.
    fn worker_tick<F: FnMut(TimerId, V, Tick)>(&mut self, on_fire: &mut F) {
        let tick = self.next_tick;
        self.process_cancelled();
        self.transfer_started(tick);
        self.expire_bucket(tick, on_fire);
        if tick == self.last_tick() {
            self.worn_out = true;
        } else {
            self.next_tick = tick + 1;
        }
    }

    /// `processCancelledTasks`: drops every dead entry that sits in a bucket. One still in
    /// the start queue is left to the transfer, as Netty's `remove` of an unbucketed
    /// timeout only decrements a counter.
    fn process_cancelled(&mut self) {
        let mut cancelled = std::mem::take(&mut self.cancelled);
        for &index in &cancelled {
            self.work += 1;
            let entry = self.entries.get(index);
            if entry.rounds != QUEUED {
                let slot = (self.calculated(entry.deadline) & self.mask) as usize;
                self.unlink(slot, index);
                self.entries.remove(index);
            }
        }
        // Cleared, not dropped: its capacity serves the next ticks' stops.
        cancelled.clear();
        self.cancelled = cancelled;
    }

    /// `transferTimeoutsToBuckets` at worker tick `tick`.
    fn transfer_started(&mut self, tick: u64) {
        for _ in 0..TRANSFERS_PER_TICK {
            let index = self.queue_head;
            if index == NIL {
                break;
            }
            self.work += 1;
            self.queue_head = self.entries.link(index);
            if self.queue_head == NIL {
                self.queue_tail = NIL;
            }
            self.queued -= 1;
            let entry = self.entries.get(index);
            if entry.value.is_none() {
                // Cancelled in the meantime: it counts towards the cap, as in Netty.
                self.entries.remove(index);
                continue;
            }
            let calculated = self.calculated(entry.deadline);
            let rounds = self.rounds_between(calculated, tick);
            self.entries.get_mut(index).rounds = rounds;
            // Never schedule for the past: a late transfer goes to the current bucket.
            let slot = (calculated.max(tick) & self.mask) as usize;
            self.push_back(slot, index);
        }
    }

    /// `expireTimeouts` of the bucket of worker tick `tick`: every entry is visited, and
    /// fired if its rounds are down to zero, else decremented.
    fn expire_bucket<F: FnMut(TimerId, V, Tick)>(&mut self, tick: u64, on_fire: &mut F) {
        self.work += 1;
        let slot = (tick & self.mask) as usize;
        let mut cursor = self.heads[slot];
        while cursor != NIL {
            self.work += 1;
            // Read before a possible unlink, which leaves this link's target alone.
            let next = self.entries.link(cursor);
            let entry = self.entries.get(cursor);
            let rounds = if entry.rounds == MANY_ROUNDS {
                self.rounds_between(self.calculated(entry.deadline), tick)
            } else {
                entry.rounds
            };
            if entry.value.is_none() {
                // Netty's `isCancelled` branch; cancellations are processed at the start of
                // every worker tick and no stop happens within one, so this is never taken.
                debug_assert!(false, "a dead entry outlived processCancelledTasks");
            } else if rounds == 0 {
                debug_assert!(
                    entry.deadline <= self.tick_clock(tick),
                    "the timeout was placed into a wrong slot"
                );
                let id = self.entries.id(cursor);
                self.unlink(slot, cursor);
                let (_, entry) = self.entries.remove(cursor);
                self.live -= 1;
                if let Some(value) = entry.value {
                    on_fire(id, value, entry.deadline);
                }
            } else if rounds != MANY_ROUNDS {
                self.entries.get_mut(cursor).rounds = rounds - 1;
            }
            // A saturated count stays saturated until the true count fits.
            cursor = next;
        }
    }

    /// Appends a new entry to the start queue and returns its handle.
    fn enqueue(&mut self, deadline: Tick, value: V) -> TimerId {
        let entry = Entry {
            deadline,
            value: Some(value),
            prev: NIL,
            rounds: QUEUED,
        };
        let id = self.entries.insert(NIL, entry);
        let index = id.index();
        if self.queue_tail == NIL {
            self.queue_head = index;
        } else {
            self.entries.set_link(self.queue_tail, index);
        }
        self.queue_tail = index;
        self.queued += 1;
        self.live += 1;
        id
    }

    /// Entries stopped but not yet dropped by the worker: the memory a stop keeps.
    pub fn dead_entries(&self) -> usize {
        self.entries.len() - self.live
    }

    /// Panics with a message if an invariant of [`NettyWheel`] is broken. It walks the
    /// whole structure (O(n + S)): for tests, between operations.
    pub fn check_invariants(&self) {
        let mut seen = 0;
        let mut live = 0;
        let mut cursor = self.queue_head;
        let mut last = NIL;
        while cursor != NIL {
            let entry = self.entries.get(cursor);
            assert_eq!(entry.rounds, QUEUED, "entry {cursor} in the start queue");
            live += usize::from(entry.value.is_some());
            seen += 1;
            last = cursor;
            cursor = self.entries.link(cursor);
        }
        assert_eq!(last, self.queue_tail, "start queue tail");
        assert_eq!(seen as u64, self.queued, "start queue length");
        let mut dead_in_buckets = Vec::new();
        for slot in 0..self.heads.len() {
            let (mut cursor, mut prev) = (self.heads[slot], NIL);
            while cursor != NIL {
                let entry = self.entries.get(cursor);
                assert_eq!(entry.prev, prev, "prev link of {cursor}");
                let calculated = self.calculated(entry.deadline);
                assert_eq!(
                    (calculated & self.mask) as usize,
                    slot,
                    "bucket of {cursor}"
                );
                assert!(
                    calculated >= self.next_tick || self.worn_out,
                    "{cursor} overdue"
                );
                // The first visit of this bucket from `next_tick` on, then one per turn.
                let first_visit =
                    self.next_tick + ((slot as u64).wrapping_sub(self.next_tick) & self.mask);
                let turns = calculated.saturating_sub(first_visit) / self.slots();
                assert!(
                    entry.rounds != QUEUED,
                    "queued marker on {cursor} in a bucket"
                );
                if entry.rounds != MANY_ROUNDS {
                    assert_eq!(u64::from(entry.rounds), turns, "rounds of {cursor}");
                }
                match entry.value {
                    Some(_) => live += 1,
                    None => dead_in_buckets.push(cursor),
                }
                seen += 1;
                prev = cursor;
                cursor = self.entries.link(cursor);
            }
            assert_eq!(prev, self.tails[slot], "tail of bucket {slot}");
        }
        for index in dead_in_buckets {
            assert!(self.cancelled.contains(&index), "dead {index} not queued");
        }
        assert_eq!(seen, self.entries.len(), "every entry in one place");
        assert_eq!(live, self.live, "live count");
    }
}

impl<V> TimerQueue<V> for NettyWheel<V> {
    /// `slots` (`ticksPerWheel`) and `tick` (`tickDuration` in clock ticks).
    const PARAMETERS: &'static [Parameter] = &[
        Parameter {
            name: "slots",
            default: DEFAULT_SLOTS,
            about: "buckets of the wheel (ticksPerWheel); each worker tick walks one whole bucket",
            accepts: "a power of two from 1 to 2^24",
            valid: |slots| power_of_two_in(slots, 1, MAX_SLOTS),
        },
        Parameter {
            name: "tick",
            default: 1,
            about: "clock ticks per worker tick (tickDuration): the bucket width and the lateness",
            accepts: "from 1 to 2^32",
            valid: |tick| (1..=MAX_TICK).contains(&tick),
        },
    ];

    /// Measured on the standard workloads (module documentation, "Suite limit").
    const SUITE_LIMIT: Option<SuiteLimit> = Some(SuiteLimit {
        max_timers: 100_000,
        why: "every worker tick walks a whole bucket, and next_deadline scans the buckets \
              ahead: at 1M a keepalive replay takes seconds and a cron process minutes",
    });

    fn with_capacity(capacity: usize) -> Self {
        Self::with_slots_and_tick(capacity, DEFAULT_SLOTS, 1)
    }

    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self {
        Self::with_slots_and_tick(capacity, parameters.get("slots"), parameters.get("tick"))
    }

    fn precision(&self) -> Precision {
        Precision::Approximate(
            "late by less than one worker tick (tick - 1 ticks; none at tick = 1), plus one \
             worker tick per 100,000 starts queued ahead of it (Netty's transfer cap); a \
             deadline at or before now fires at the next worker tick; bucket order, not \
             deadline order, within a clock move",
        )
    }

    /// Exact from the state: the timer will be the start queue's last, transferred at
    /// `next_tick + queued / 100,000`, and fire at worker tick `max(calculated, that)`.
    fn window(&self, deadline: Tick) -> Window {
        let transfer = self
            .next_tick
            .saturating_add(self.queued / TRANSFERS_PER_TICK);
        let fires = self.tick_clock(self.calculated(deadline).max(transfer));
        Window {
            late: fires.saturating_sub(deadline.max(self.now)),
            early: false,
        }
    }

    fn empty_time(&self) -> EmptyTime {
        EmptyTime::Walked { step: self.tick }
    }

    /// The worker tick (`tick`, in ticks).
    fn natural_period(&self) -> NaturalPeriod {
        NaturalPeriod::Ticks(self.tick)
    }

    /// Every deadline; clocks up to 2^28 worker ticks, the walk a replay can afford.
    fn range(&self) -> Range {
        Range::walked(
            self.tick,
            "a bucket visit per worker tick: 2^28 of them at most",
        )
    }

    fn release(&self) -> Release {
        Release::Later(
            "at the worker's next tick (processCancelledTasks), or when the transfer reaches \
             it if it was still in the start queue",
        )
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.work += 1;
        self.enqueue(deadline, value)
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        let entry = self.entries.get(index);
        // A forged handle may name a dead entry's fresh generation: it is not pending.
        entry.value.as_ref()?;
        self.work += 1;
        let dead = Entry {
            deadline: entry.deadline,
            value: None,
            prev: entry.prev,
            rounds: entry.rounds,
        };
        // A new generation makes `id` stale; the entry keeps its place for the worker.
        let (_, stopped) = self.entries.reissue(index, dead);
        self.cancelled.push(index);
        self.live -= 1;
        stopped.value
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        while !self.worn_out && self.tick_clock(self.next_tick) <= to {
            self.worker_tick(&mut on_fire);
        }
        self.now = to;
    }

    /// The clock of the next worker tick that fires something, found by a dry run of the
    /// worker: the start queue gives each waiting timer its firing tick
    /// (`max(calculated, transfer tick)`), then the buckets are looked at in the order the
    /// worker will visit them, for at most one turn, and the look stops at the first bucket
    /// whose visit comes at or after the best tick so far (an entry in a bucket has
    /// `calculated` no earlier than the bucket's next visit). One `advance` to it fires.
    /// It costs no more than that `advance`, which transfers the same queue and walks the
    /// same buckets.
    fn next_deadline(&mut self) -> Option<Tick> {
        if self.live == 0 {
            return None;
        }
        if self.worn_out {
            // The end of time: no worker tick is left, nothing will fire.
            return Some(Tick::MAX);
        }
        let mut best = u64::MAX;
        let (mut cursor, mut position) = (self.queue_head, 0u64);
        while cursor != NIL {
            self.work += 1;
            let entry = self.entries.get(cursor);
            if entry.value.is_some() {
                let transfer = self.next_tick.saturating_add(position / TRANSFERS_PER_TICK);
                best = best.min(self.calculated(entry.deadline).max(transfer));
            }
            position += 1;
            cursor = self.entries.link(cursor);
        }
        let last = self.last_tick();
        for offset in 0..self.slots() {
            let tick = self.next_tick.saturating_add(offset);
            if tick >= best || tick > last {
                break;
            }
            self.work += 1;
            let mut cursor = self.heads[(tick & self.mask) as usize];
            while cursor != NIL {
                self.work += 1;
                let entry = self.entries.get(cursor);
                if entry.value.is_some() {
                    best = best.min(self.calculated(entry.deadline));
                }
                cursor = self.entries.link(cursor);
            }
        }
        Some(self.tick_clock(best))
    }

    crate::contract::len_now_work!(live);
}

#[cfg(test)]
mod tests;
