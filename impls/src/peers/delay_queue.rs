//! `tokio-delay-queue`: tokio-util's `DelayQueue` on tokio's paused clock.
//!
//! # The idea
//!
//! `tokio_util::time::DelayQueue` is what a tokio program reaches for when it needs many
//! timeouts in one task. Inside, it is a hierarchical timing wheel at 1 ms: six levels of
//! 64 slots (one 64-bit occupancy word per level, as in tokio's own timer and Linux),
//! each slot a doubly linked stack threaded through a `slab`; entries cascade one level
//! down when their slot comes due. One `Sleep`, registered in the runtime's timer, is
//! armed at the start of the next occupied slot; `poll_expired` moves the wheel to that
//! `Sleep`'s deadline when it has elapsed and returns the due entries one by one.
//!
//! # The adapter
//!
//! - The adapter owns a current-thread tokio runtime built with `start_paused(true)`: its
//!   clock never moves unless told (tokio reads the system clock once, at build, to set the
//!   paused clock's base; nothing afterwards depends on it). One tick is one millisecond,
//!   the queue's resolution; tick `t` is the `Instant` `origin + t ms`.
//! - `advance(to)`, inside `block_on`: `tokio::time::advance` by `to − now`, then drain
//!   `poll_expired` with a no-op waker; when it returns `Pending` but the next entry is
//!   due, `yield_now().await` and poll again (METHODOLOGY.md, *Notes on individual structures*): a
//!   drain that stops at the first `Pending` silently under-delivers. The cause, read in
//!   tokio 1.54: every `poll_expired` polls the queue's `Sleep`, each poll spends one unit
//!   of the task's cooperative budget (128 per task poll), and once it is spent every
//!   tokio resource returns `Pending` until the task yields. The recipe detects that case
//!   by `peek()` being due; the adapter asks the budget directly
//!   (`tokio::task::coop::has_budget_remaining()`), because `peek()` scans a whole slot (a
//!   million entries in `start_stop/1M`'s resident slots) and a tokio
//!   program awaiting the queue never calls it. With budget left, `Pending` is genuine (a
//!   freshly armed `Sleep` already past fires as it registers); debug builds assert that
//!   `peek()` is then not due, i.e. that the recipe's test would not have yielded either.
//! - Order within one advance: the queue keeps timers started at or before its wheel's
//!   clock in a LIFO stack (`expired`) that `poll_expired` empties first, so past-due
//!   timers come out in reverse start order, not by deadline (and their `deadline()` is
//!   clamped to the wheel's clock). The adapter therefore collects one advance's
//!   expirations with the deadlines it recorded at `start`, and sorts them by deadline when
//!   they are not already sorted (a check, O(k), in the common case) before calling
//!   `on_fire`.
//! - Handles: `DelayQueue` keys are slab indices without a generation, so a stale key can
//!   name a newer entry (`try_remove` would remove it). The adapter's handles are its own
//!   generational arena slots, each holding the timer's deadline, its `DelayQueue` key and
//!   its value; the queue holds only the arena index. `stop` resolves the handle in the
//!   arena first, so a stale handle is refused before any key is used.
//! - `next_deadline`: the earliest overdue deadline if a timer was started at or before
//!   `now`, else `deadline(&peek())`. In tokio-util 0.7.20 `peek()` scans the next slot
//!   to expire for its earliest entry (`Stack::peek_earliest`), so this is exact, at a cost
//!   of O(entries in that slot).
//! - Runtime context: creating a `Sleep` needs one. The queue creates one only when it has
//!   none armed (empty, or only past-due entries); `start` enters the runtime's context
//!   in exactly those cases, so the common path pays nothing a tokio program would not.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | `DelayQueue` slab: `Data<u32>` (item 4, `when` 8, `expired` 1, `next`/`prev` `Option<Key>` 32) in a `slab::Entry` | 56 |
//! | adapter arena: deadline (8), `Option<Key>` (16), value (8), link and generation (8) | 40 |
//! | total | 96 |
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): slab insert, stack push, maybe a `Sleep` reset in the runtime's timer |
//! | `stop` | O(1): unlink, slab free (eager); the next slot is recomputed (six bitmap scans) |
//! | `restart` | O(1): `reset_at`, an unlink and a relink of the same slab entry, and the `Sleep` reset to the next deadline |
//! | `advance`, per fired timer | O(1) amortised: up to five cascades; a new `Box<Sleep>` per `poll_expired` (one allocation per expiry), and a `yield_now` every 128 polls |
//! | `advance`, per tick | nothing: the wheel jumps with its bitmaps; but each `advance` is a `block_on` and a `tokio::time::advance` |
//! | `next_deadline` | O(entries in the next slot to expire): `peek()` scans it; exact |
//!
//! # Empty time
//!
//! The occupancy bitmaps let the wheel find the next occupied slot directly, so a jump
//! costs one cascade per level at most, never one step per tick.
//!
//! # Precision and limits
//!
//! Exact at tick granularity: 1 tick = 1 ms, deadlines are whole milliseconds, so
//! `DelayQueue`'s rounding up to the millisecond changes nothing and the reference matches
//! exactly, and `next_deadline` is exact.
//! What it cannot do, declared as its range ([`TimerQueue::range`]: a delay up to half of
//! [`HORIZON`], ticks up to [`MAX_CLOCK`]), so that a workload asking for more is refused
//! before it runs; behind that, a panic that names the limit:
//!
//! - a deadline [`HORIZON`] = 2^36 − 2^30 ms or more after the wheel's clock.
//!   `DelayQueue::insert` panics (`invalid deadline`) past its `MAX_DURATION`, 2^36 − 1 ms;
//!   and between 2^36 − 2^30 and that, an entry can land in the wheel clock's own top-level
//!   slot one turn of the ring later, which the wheel finds first, so earlier timers fire
//!   late (found by the random test: a timer 67 × 10^9 ms late). The wheel's clock is the
//!   last slot start its `Sleep` reached, at or before `now`, and lags `now` by up to the
//!   distance to the earliest pending deadline (it does not move while nothing is due), so
//!   the usable delay shrinks by that lag: a caller's `insert(value, 2^36 − 2 ms)`, within
//!   the documented limit, can panic inside `DelayQueue` for the same reason. When the
//!   queue is empty the adapter replaces it by a fresh one whose clock is `now`;
//! - a clock past [`MAX_CLOCK`] = 2^52 ms: tokio's `Instant` arithmetic and the time
//!   driver's millisecond ticks are not meant for it.

use crate::arena::Arena;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::Range;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::runtime::{Builder, Runtime};
use tokio::time::Instant;
use tokio_util::time::DelayQueue;
use tokio_util::time::delay_queue::Key;

/// `DelayQueue`'s `MAX_DURATION`, 2^36 − 1 ms: its six levels of 64 slots.
pub const MAX_DURATION: Tick = (1 << 36) - 1;

/// The farthest a deadline may be from the queue's wheel clock in this adapter:
/// 2^36 − 2^30 ms. `DelayQueue` accepts up to [`MAX_DURATION`], but its top level is a
/// ring of 64 slots of 2^30 ms: an entry 2^36 − 2^30 ms or more ahead can land in the
/// wheel clock's own top slot one turn later, which the wheel then finds before the
/// slots after it, so earlier timers fire late (the random test found one 67 × 10^9 ms
/// late).
pub const HORIZON: Tick = (1 << 36) - (1 << 30);

/// The clock's limit, 2^52 ticks.
pub const MAX_CLOCK: Tick = 1 << 52;

/// The queue's item for the probe that reads the wheel clock (no arena slot has it): a
/// probe inserted at time 0 is clamped to the clock, which `deadline(&probe)` then tells.
const PROBE: u32 = u32::MAX;

/// A pending timer as the adapter keeps it.
struct Timer<V> {
    deadline: Tick,
    /// Set right after the insert into the queue.
    key: Option<Key>,
    value: V,
}

/// See the module documentation.
pub struct TokioDelayQueue<V> {
    /// Declared before the runtime so that it (and its `Sleep`) drops first.
    queue: DelayQueue<u32>,
    runtime: Runtime,
    /// The queue's time 0: tick `t` is `origin + (t − base) ms`.
    origin: Instant,
    base: Tick,
    timers: Arena<Timer<V>>,
    /// Pending timers started with `deadline <= now`, and a min-heap of their deadlines and
    /// handles, from which a stopped or restarted one is dropped lazily when it reaches the
    /// top (its handle no longer resolves), so that `next_deadline` stays exact (found by
    /// the fuzz target: a single remembered minimum outlived the timer that set it).
    overdue: usize,
    overdue_min: BinaryHeap<Reverse<(Tick, TimerId)>>,
    /// A lower bound of the wheel's clock (in ticks): the clock as last read, or the tick
    /// the queue was created at. (Not the latest deadline fired: the wheel's clock moves
    /// only when its `Sleep` fires, and may stay behind the entries it returned.)
    wheel_floor: Tick,
    /// One advance's expirations as the queue gave them (arena indices), then with their
    /// deadlines, in firing order.
    drained: Vec<u32>,
    fired: Vec<(Tick, u32)>,
    capacity: usize,
    now: Tick,
    work: u64,
}

impl<V> TokioDelayQueue<V> {
    /// The runtime the adapter drives the queue on.
    fn new_runtime() -> Runtime {
        Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread tokio runtime builds")
    }

    /// A fresh queue whose time 0 is tick `base`, the tokio clock being at `base`.
    fn fresh_queue(runtime: &Runtime, capacity: usize) -> (DelayQueue<u32>, Instant) {
        let _context = runtime.enter();
        (DelayQueue::with_capacity(capacity), Instant::now())
    }

    #[inline]
    fn instant(&self, tick: Tick) -> Instant {
        self.origin + Duration::from_millis(tick.saturating_sub(self.base))
    }

    #[inline]
    fn tick_of(&self, instant: Instant) -> Tick {
        self.base + instant.duration_since(self.origin).as_millis() as Tick
    }

    /// The wheel's clock, exactly: a probe inserted at time 0 is clamped to it.
    fn wheel_clock(&mut self) -> Tick {
        let probe = {
            let _context = self.queue.is_empty().then(|| self.runtime.enter());
            self.queue.insert_at(PROBE, self.origin)
        };
        let clock = self.tick_of(self.queue.deadline(&probe));
        self.queue.remove(&probe);
        self.wheel_floor = clock;
        clock
    }

    /// Whether a deadline is within the wheel's horizon, reading the clock only when the
    /// cheap bound is not enough; an empty queue is replaced by one whose clock is `now`.
    fn check_horizon(&mut self, deadline: Tick) {
        // An empty queue whose clock fell far behind `now` (a long empty stretch) is
        // replaced now, before a past-due entry pins it: otherwise the next start within
        // the range would lie past its horizon (found by the fuzz target).
        let far_behind = self.now.saturating_sub(self.wheel_floor) >= HORIZON / 4;
        if deadline < self.wheel_floor + HORIZON && !(far_behind && self.queue.is_empty()) {
            return;
        }
        if self.queue.is_empty() {
            let (queue, origin) = Self::fresh_queue(&self.runtime, self.capacity);
            self.queue = queue;
            self.origin = origin;
            self.base = self.now;
            self.wheel_floor = self.now;
        } else {
            self.wheel_clock();
        }
        assert!(
            deadline < self.wheel_floor + HORIZON,
            "tokio-delay-queue: deadline {deadline} is 2^36 - 2^30 ms or more past DelayQueue's \
             wheel clock ({}; now = {}): DelayQueue panics past 2^36 - 1 ms and misorders \
             entries past 2^36 - 2^30 (its top level is a ring)",
            self.wheel_floor,
            self.now
        );
    }

    /// Pending timers with a deadline at or before `now` (started so).
    pub fn overdue(&self) -> usize {
        self.overdue
    }
}

/// Drains every expired entry of `queue` into `fired`; returns the yields it took.
///
/// `Pending` with the task's cooperative budget spent is the under-delivery case: yield
/// (the budget is renewed) and poll again. `Pending` with budget left is genuine.
async fn drain(queue: &mut DelayQueue<u32>, fired: &mut Vec<u32>) -> u64 {
    let mut context = Context::from_waker(Waker::noop());
    let mut yields = 0;
    loop {
        match queue.poll_expired(&mut context) {
            Poll::Ready(Some(expired)) => fired.push(expired.into_inner()),
            Poll::Ready(None) => break,
            Poll::Pending if !tokio::task::coop::has_budget_remaining() => {
                yields += 1;
                tokio::task::yield_now().await;
            }
            Poll::Pending => {
                debug_assert!(
                    queue
                        .peek()
                        .is_none_or(|key| queue.deadline(&key) > Instant::now()),
                    "DelayQueue said Pending with budget left while an entry was due"
                );
                break;
            }
        }
    }
    yields
}

impl<V> TimerQueue<V> for TokioDelayQueue<V> {
    /// Delays up to half of [`HORIZON`], so that the wheel clock's lag behind `now` (at
    /// most about the longest pending delay) leaves every deadline inside the horizon;
    /// the assertion in `check_horizon` stays behind it. Ticks up to [`MAX_CLOCK`].
    fn range(&self) -> Range {
        Range {
            max_delay: HORIZON / 2,
            max_tick: MAX_CLOCK,
            max_clock: Tick::MAX,
            why: "DelayQueue's six 64-slot levels at 1 ms (2^36 ms), less its clock's lag; \
                  tokio's Instant arithmetic up to 2^52 ms",
        }
    }

    fn with_capacity(capacity: usize) -> Self {
        let runtime = Self::new_runtime();
        let (queue, origin) = Self::fresh_queue(&runtime, capacity);
        TokioDelayQueue {
            queue,
            runtime,
            origin,
            base: 0,
            timers: Arena::with_capacity(capacity),
            overdue: 0,
            overdue_min: BinaryHeap::new(),
            wheel_floor: 0,
            drained: Vec::new(),
            fired: Vec::new(),
            capacity,
            now: 0,
            work: 0,
        }
    }

    /// # Panics
    ///
    /// If `deadline` is 2^36 − 1 ms or more past the wheel's clock (see the module
    /// documentation).
    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        // Past-due deadlines too: after a long empty stretch `now` itself may lie past
        // the horizon of a queue that was never replaced (found by the fuzz target:
        // `insert_at` panicked on a deadline equal to a `now` 2^40 ms on).
        self.check_horizon(deadline);
        let overdue = deadline <= self.now;
        let id = self.timers.insert(
            0,
            Timer {
                deadline,
                key: None,
                value,
            },
        );
        let when = self.instant(deadline);
        // The queue creates a `Sleep` (which needs the runtime's context) only when none is
        // armed: when it is empty or holds only past-due entries.
        let key = if self.queue.is_empty() || self.overdue > 0 {
            let _context = self.runtime.enter();
            self.queue.insert_at(id.index(), when)
        } else {
            self.queue.insert_at(id.index(), when)
        };
        self.timers.get_mut(id.index()).key = Some(key);
        if overdue {
            self.overdue += 1;
            self.overdue_min.push(Reverse((deadline, id)));
        }
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let slot = self.timers.resolve(id)?;
        let (_, timer) = self.timers.remove(slot);
        let key = timer.key.expect("set by start");
        self.queue.remove(&key);
        if timer.deadline <= self.now {
            self.overdue -= 1;
        }
        Some(timer.value)
    }

    /// `DelayQueue::reset_at`: the entry keeps its slab key and is relinked in the wheel,
    /// the refresh that tokio-util offers for exactly this use. The adapter's handle is
    /// reissued, so the old one is stale as after a `stop`.
    ///
    /// # Panics
    ///
    /// As `start`, if `deadline` is past the wheel's horizon; nothing has changed then.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(slot) = self.timers.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        // As in `start`, past-due deadlines included.
        self.check_horizon(deadline);
        let old_deadline = self.timers.get(slot).deadline;
        // As in `start`: the queue arms a new `Sleep` (which needs the runtime's context)
        // only when none is armed, which can happen only while past-due entries are held.
        let needs_context = self.overdue > 0 || deadline <= self.now;
        if old_deadline <= self.now {
            self.overdue -= 1;
        }
        let overdue = deadline <= self.now;
        if overdue {
            self.overdue += 1;
        }
        let key = self.timers.get(slot).key.expect("set by start");
        let when = self.instant(deadline);
        if needs_context {
            let _context = self.runtime.enter();
            self.queue.reset_at(&key, when);
        } else {
            self.queue.reset_at(&key, when);
        }
        let timer = Timer {
            deadline,
            key: Some(key),
            value,
        };
        let (id, old) = self.timers.reissue(slot, timer);
        if overdue {
            self.overdue_min.push(Reverse((deadline, id)));
        }
        (id, Some(old.value))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        assert!(
            to <= MAX_CLOCK,
            "tokio-delay-queue: advance({to}) past the adapter's clock limit of 2^52 ms"
        );
        self.work += 1;
        let step = Duration::from_millis(to - self.now);
        let (queue, drained, runtime) = (&mut self.queue, &mut self.drained, &self.runtime);
        let (yields, clock) = runtime.block_on(async move {
            tokio::time::advance(step).await;
            let yields = drain(queue, drained).await;
            (yields, Instant::now())
        });
        self.work += yields + self.drained.len() as u64;
        assert!(
            clock == self.instant(to),
            "tokio-delay-queue: the paused tokio clock moved on its own"
        );
        self.fired.clear();
        for &index in &self.drained {
            self.fired.push((self.timers.get(index).deadline, index));
        }
        self.drained.clear();
        if !self.fired.is_sorted_by_key(|&(deadline, _)| deadline) {
            // Past-due timers come out of the queue's LIFO `expired` stack first.
            self.fired.sort_by_key(|&(deadline, _)| deadline);
        }
        self.overdue = 0;
        self.overdue_min.clear();
        self.now = to;
        for &(deadline, index) in &self.fired {
            let id = self.timers.id(index);
            let (_, timer) = self.timers.remove(index);
            on_fire(id, timer.value, deadline);
        }
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        if self.timers.is_empty() {
            return None;
        }
        if self.overdue > 0 {
            // Drop the stopped and restarted ones from the top: their handles are stale.
            while let Some(&Reverse((deadline, id))) = self.overdue_min.peek() {
                if self.timers.resolve(id).is_some() {
                    return Some(deadline);
                }
                self.overdue_min.pop();
            }
        }
        let key = self.queue.peek().expect("pending timers are in the queue");
        Some(self.tick_of(self.queue.deadline(&key)))
    }

    crate::contract::len_now_work!(timers.len());
}
