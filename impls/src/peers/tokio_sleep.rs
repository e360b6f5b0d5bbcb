//! `tokio-sleep`: tokio's own runtime timer, one `tokio::time::Sleep` per timer, on the
//! runtime's paused clock.
//!
//! # The idea
//!
//! What a tokio server uses for an idle timeout is not a queue crate but the runtime's
//! timer: a `Sleep` per connection, `reset` on every keepalive, dropped when the connection
//! closes. Read in tokio 1.54.1 (`src/runtime/time/`), the time driver is a hierarchical
//! timing wheel at 1 ms: six levels of 64 slots (slots of 1 ms, 64 ms, about 4 s, 4 min,
//! 4.6 h and 12 days), one 64-bit occupancy word per level, each slot an intrusive list of
//! the timers' own entries, so registering a timer allocates nothing beyond the `Sleep`.
//! Processing the wheel up to a time `now` repeatedly takes the earliest occupied slot
//! of any level, up to `now`: its entries due by the slot's start fire (all of a level-0
//! slot's), the others cascade to the level their deadline now selects. So timers fire in
//! millisecond order, exactly at their millisecond when the wheel is processed there; on
//! the real clock that is the first park that wakes at or after it, on a paused clock the
//! millisecond itself. The driver processes the wheel whenever the runtime parks: under
//! a paused clock, `tokio::time::advance` moves the clock and yields, and the park that
//! follows processes everything due; a runtime with nothing to run parks until its
//! wheel's next expiration and, the clock being paused, jumps the clock there (its
//! *auto-advance*). A fired timer's waker is called; its task then sees the `Sleep` ready.
//!
//! Three details of that driver shape this adapter:
//!
//! - A deadline is rounded up to the next millisecond (`deadline_to_tick`); one already
//!   reached when the `Sleep` registers (its first poll, or a `reset`) fires at once.
//! - `reset` to a later deadline of a registered `Sleep` only records the new deadline
//!   (one compare-and-swap, no lock): the entry stays in its slot and is re-filed when the
//!   wheel reaches it. An earlier deadline moves it under the driver's lock.
//! - Deadlines past the top level's 2^36 ms (about 2.2 years) are kept: the top level is a
//!   ring, a timer beyond it sits in the slot its deadline names and is re-filed there
//!   each time the wheel comes round, once every 2^36 ms, until it is within reach. So
//!   the runtime holds any deadline below its cap (2^64 − 4 ms), at one visit per turn.
//!
//! # The adapter
//!
//! - A current-thread runtime built with `start_paused(true)`. One tick is one
//!   millisecond, the driver's resolution; tick `t` is the `Instant` `origin + t ms`,
//!   `origin` being the paused clock at build, which is also the driver's tick 0, so a
//!   whole-millisecond deadline is not rounded and the wheel fires at exactly its tick.
//! - Each timer is a `Pin<Box<Sleep>>` in an arena slot, with its deadline and value. The
//!   box is the `Sleep` a tokio program holds in its task (pinned there by the task's own
//!   allocation); it is the one allocation per timer, as in such a program. `start`
//!   creates the `Sleep` (inside the runtime's context, which a task is always in) and
//!   polls it once, which registers it in the wheel with the slot's waker. `stop` drops
//!   it, which removes it from the wheel under the driver's lock. `restart` is
//!   `Sleep::reset`, the call a keepalive makes.
//! - Firings are observed through wakers: each arena slot has a waker (made once for the
//!   slot, reused by every timer in it) that pushes the slot's index into an inbox, where
//!   a tokio program's waker would schedule the task. What the inbox names is checked
//!   against `Sleep::is_elapsed` before it counts, so a wake of a timer since stopped
//!   does not fire its slot's next occupant.
//! - `advance(to)`: `tokio::time::advance` by what separates the runtime's clock from `to`,
//!   inside `block_on`; every timer due by `to` has then fired in the runtime. The adapter
//!   reports them, with the deadlines it recorded, in deadline order.
//! - `next_deadline`: the runtime's own answer to "when is my next timer", its
//!   auto-advance. With every pending timer registered, the adapter blocks on a future
//!   that is ready once a timer fires; the runtime, with nothing to do, jumps its clock to
//!   its wheel's next expiration, again until a timer fires, and the clock then reads the
//!   earliest deadline, exactly. That moves the runtime's clock, never the adapter's:
//!   the timers fired are held and reported by the `advance` that reaches them, and the
//!   next `advance` moves the runtime's clock only past where it already is.
//!
//! # Where the contract forces a deviation
//!
//! - **A past-due timer fires at registration.** The runtime fires a `Sleep` whose deadline
//!   is already reached as it registers, inside `start` (or `restart`); the contract fires
//!   it at the next `advance`. The adapter holds it until then, and likewise holds what
//!   `next_deadline`'s auto-advance fired.
//! - **Order within one advance.** The runtime fires in wheel order, which is
//!   non-decreasing in milliseconds (within one millisecond in slot order, which the
//!   contract leaves free); held timers come first and registration firings in operation
//!   order. The adapter sorts one advance's firings by deadline when they are not already
//!   sorted (a check, O(k), in the common case).
//! - **Milliseconds.** A workload's tick is taken as 1 ms, tokio's resolution; nothing
//!   finer exists in the runtime to map it to.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | the `Sleep`, boxed: its deadline, the runtime handle, and the wheel entry (links, registered deadline, state, waker) | [`SLEEP_BYTES`]: 96 (tokio 1.54.1, x86-64) |
//! | adapter arena: deadline (8), the box pointer (8), value (8), link and generation (8) | 32 |
//! | the slot's waker, made once per slot: a `Waker` (16) and its `Arc` (32) | 48 |
//! | total | 176 |
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): a box, entering the runtime's context, a poll that files the entry in its slot under the driver's lock |
//! | `stop` | O(1): the drop unlinks the entry under the driver's lock |
//! | `restart` | O(1): to a later deadline one compare-and-swap (the entry is re-filed when its old slot comes due); to an earlier one an unlink and a relink under the lock |
//! | `advance`, per fired timer | O(1) amortised: up to five cascades, a wake (the inbox's lock), the box freed (the driver's lock again) |
//! | `advance`, per call | a `block_on`, `tokio::time::advance` and a park that processes the wheel up to the new clock |
//! | `next_deadline` | a `block_on` whose park jumps from one occupied slot to the next until a timer fires: at most one round per level plus one per turn of the top level; O(held timers) while some are held |
//!
//! # Empty time
//!
//! The occupancy words let the wheel find the next occupied slot directly, so a jump costs
//! one cascade per level at most (and one visit per turn of the top level to a timer
//! beyond it), never one step per tick.
//!
//! # Precision and limits
//!
//! Exact at tick granularity (1 tick = 1 ms), and `next_deadline` is exact. The range
//! ([`TimerQueue::range`]) is a practical one, not the runtime's: a delay up to
//! [`MAX_DELAY`] = 2^44 ms, so that a timer is visited at most 2^8 times on the top
//! level's ring, and ticks up to [`MAX_TICK`] = 2^63, below tokio's cap of its
//! millisecond ticks (2^64 − 4). A workload asking for more is refused before it runs;
//! behind that, a panic that names the limit.

use crate::arena::Arena;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::Range;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use tokio::runtime::{Builder, Runtime};
use tokio::time::{Instant, Sleep};

/// The largest delay the adapter takes: 2^44 ms, 2^8 turns of the top level's ring.
pub const MAX_DELAY: Tick = 1 << 44;

/// The largest deadline and clock the adapter takes: 2^63 ms, below tokio's cap of its
/// millisecond ticks (`u64::MAX − 3`) with room for the rounding of a deadline.
pub const MAX_TICK: Tick = 1 << 63;

/// The bytes of one `Sleep`, which the adapter boxes per timer.
pub const SLEEP_BYTES: usize = std::mem::size_of::<Sleep>();

/// A pending timer as the adapter keeps it.
struct Timer<V> {
    deadline: Tick,
    sleep: Pin<Box<Sleep>>,
    value: V,
}

/// What the slots' wakers report: the slots woken since the adapter last looked, and the
/// waker of `next_deadline`'s future while it waits for the first of them.
#[derive(Default)]
struct Inbox {
    woken: Vec<u32>,
    sleeper: Option<Waker>,
}

/// A slot's waker: what a task's waker is to a tokio program.
struct SlotWaker {
    index: u32,
    inbox: Arc<Mutex<Inbox>>,
}

/// The inbox, locked. Nothing panics while holding it, but a poisoned lock would only mean
/// a caller's panic elsewhere: its contents are still whole.
fn lock(inbox: &Mutex<Inbox>) -> MutexGuard<'_, Inbox> {
    inbox.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Wake for SlotWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let sleeper = {
            let mut inbox = lock(&self.inbox);
            inbox.woken.push(self.index);
            inbox.sleeper.take()
        };
        if let Some(sleeper) = sleeper {
            sleeper.wake();
        }
    }
}

/// See the module documentation.
pub struct TokioSleep<V> {
    /// Declared before the runtime, so that the `Sleep`s drop first.
    timers: Arena<Timer<V>>,
    /// Slot `i`'s waker at index `i`, made when the slot is first used.
    wakers: Vec<Waker>,
    inbox: Arc<Mutex<Inbox>>,
    runtime: Runtime,
    /// Tick 0: the paused clock when the runtime was built, the driver's own tick 0.
    origin: Instant,
    /// The runtime's clock, in ticks: `now`, or ahead of it after `next_deadline`.
    clock: Tick,
    /// Timers the runtime fired that no `advance` has reported yet, with their deadlines
    /// and handles. A stopped or restarted timer's entry goes stale (its handle no longer
    /// resolves) and is dropped when met.
    held: Vec<(Tick, TimerId)>,
    now: Tick,
    work: u64,
}

impl<V> TokioSleep<V> {
    #[inline]
    fn instant(&self, tick: Tick) -> Instant {
        self.origin + Duration::from_millis(tick)
    }

    #[inline]
    fn tick_of(&self, instant: Instant) -> Tick {
        instant.duration_since(self.origin).as_millis() as Tick
    }

    /// Slot `index`'s waker, made on the slot's first use.
    fn waker(&mut self, index: u32) -> &Waker {
        while self.wakers.len() <= index as usize {
            let waker = SlotWaker {
                index: self.wakers.len() as u32,
                inbox: Arc::clone(&self.inbox),
            };
            self.wakers.push(Waker::from(Arc::new(waker)));
        }
        &self.wakers[index as usize]
    }

    /// Polls slot `index`'s `Sleep` with the slot's waker: registers it (on its first poll)
    /// and the waker. Outside `block_on` no cooperative budget applies, so the poll tells
    /// the truth: a `Sleep` that fired at registration is held at once.
    fn poll_sleep(&mut self, index: u32) {
        let waker = self.waker(index).clone();
        let timer = self.timers.get_mut(index);
        let ready = timer
            .sleep
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready();
        if ready {
            let deadline = timer.deadline;
            self.held.push((deadline, self.timers.id(index)));
        }
    }

    /// Moves what the wakers reported into `held`: each slot woken whose timer's `Sleep`
    /// has fired. A wake of a timer since stopped names a vacant slot or a newer timer
    /// that has not fired, and is dropped.
    fn collect(&mut self) {
        let mut inbox = lock(&self.inbox);
        for index in inbox.woken.drain(..) {
            if self.timers.live_link(index).is_none() {
                continue;
            }
            let timer = self.timers.get(index);
            if timer.sleep.is_elapsed() {
                self.held.push((timer.deadline, self.timers.id(index)));
            }
        }
    }

    /// Drops held entries whose timer was stopped or restarted, and returns the earliest
    /// deadline of those left.
    fn earliest_held(&mut self) -> Option<Tick> {
        let timers = &self.timers;
        self.held.retain(|&(_, id)| timers.resolve(id).is_some());
        self.held.iter().map(|&(deadline, _)| deadline).min()
    }

    /// Lets the runtime sleep to its next timer: `block_on` a future that is ready once a
    /// slot's waker reported; the runtime, with nothing to run, auto-advances its paused
    /// clock from one wheel expiration to the next until then. Returns the runtime's clock.
    fn sleep_to_next_timer(&mut self) -> Tick {
        let inbox = &self.inbox;
        let woke = poll_fn(|context| {
            let mut inbox = lock(inbox);
            if inbox.woken.is_empty() {
                inbox.sleeper = Some(context.waker().clone());
                Poll::Pending
            } else {
                inbox.sleeper = None;
                Poll::Ready(())
            }
        });
        let clock = self.runtime.block_on(async move {
            woke.await;
            Instant::now()
        });
        self.tick_of(clock)
    }

    /// Timers the runtime fired that no `advance` has reported yet.
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

impl<V> TimerQueue<V> for TokioSleep<V> {
    /// Delays up to [`MAX_DELAY`] and ticks up to [`MAX_TICK`] (see the module
    /// documentation).
    fn range(&self) -> Range {
        Range {
            max_delay: MAX_DELAY,
            max_tick: MAX_TICK,
            max_clock: Tick::MAX,
            why: "tokio's top wheel level is a ring of 2^36 ms, a timer past it revisited once \
                  a turn (at most 2^8 turns); ticks below tokio's millisecond cap",
        }
    }

    fn with_capacity(capacity: usize) -> Self {
        let runtime = Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread tokio runtime builds");
        let origin = runtime.block_on(async { Instant::now() });
        TokioSleep {
            timers: Arena::with_capacity(capacity),
            wakers: Vec::with_capacity(capacity),
            inbox: Arc::default(),
            runtime,
            origin,
            clock: 0,
            held: Vec::new(),
            now: 0,
            work: 0,
        }
    }

    /// # Panics
    ///
    /// If `deadline` is more than [`MAX_DELAY`] after `now`, or past [`MAX_TICK`].
    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        assert!(
            deadline <= MAX_TICK && deadline.saturating_sub(self.now) <= MAX_DELAY,
            "tokio-sleep: deadline {deadline} at now = {} is past the adapter's limits \
             (a delay of 2^44 ms, ticks up to 2^63)",
            self.now
        );
        let sleep = {
            let _context = self.runtime.enter();
            Box::pin(tokio::time::sleep_until(self.instant(deadline)))
        };
        let id = self.timers.insert(
            0,
            Timer {
                deadline,
                sleep,
                value,
            },
        );
        self.poll_sleep(id.index());
        id
    }

    /// Drops the `Sleep`, which takes it out of the wheel; a held entry goes stale.
    fn stop(&mut self, id: TimerId) -> Option<V> {
        let slot = self.timers.resolve(id)?;
        let (_, timer) = self.timers.remove(slot);
        Some(timer.value)
    }

    /// `Sleep::reset`: the keepalive's call. A `Sleep` that had already fired (held) lost
    /// its waker to the firing, so it is polled again once reset. The handle is reissued,
    /// so the old one is stale as after a `stop`.
    ///
    /// # Panics
    ///
    /// As `start`, past the adapter's limits; nothing has changed then.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(slot) = self.timers.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        assert!(
            deadline <= MAX_TICK && deadline.saturating_sub(self.now) <= MAX_DELAY,
            "tokio-sleep: deadline {deadline} at now = {} is past the adapter's limits \
             (a delay of 2^44 ms, ticks up to 2^63)",
            self.now
        );
        // Out of the slot and back into it (the arena reuses the slot just freed, last in
        // first out), which reissues the handle; the `Sleep` keeps its place in its box.
        let (_, old) = self.timers.remove(slot);
        let Timer {
            mut sleep,
            value: old,
            ..
        } = old;
        let had_fired = sleep.is_elapsed();
        sleep.as_mut().reset(self.instant(deadline));
        let timer = Timer {
            deadline,
            sleep,
            value,
        };
        let id = self.timers.insert(0, timer);
        assert_eq!(id.index(), slot, "the slot's waker is the one registered");
        if had_fired {
            self.poll_sleep(slot);
        }
        (id, Some(old))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        assert!(
            to <= MAX_TICK,
            "tokio-sleep: advance({to}) past the adapter's clock limit of 2^63 ms"
        );
        self.work += 1;
        if to > self.clock {
            let step = Duration::from_millis(to - self.clock);
            let clock = self.runtime.block_on(async move {
                tokio::time::advance(step).await;
                Instant::now()
            });
            assert!(
                clock == self.instant(to),
                "tokio-sleep: the paused tokio clock moved on its own"
            );
            self.clock = to;
        }
        self.collect();
        self.now = to;
        let mut held = std::mem::take(&mut self.held);
        if !held.is_sorted_by_key(|&(deadline, _)| deadline) {
            // Held and registration firings first, each in operation order.
            held.sort_by_key(|&(deadline, _)| deadline);
        }
        let due = held.partition_point(|&(deadline, _)| deadline <= to);
        for &(deadline, id) in &held[..due] {
            // A stale entry (stopped, restarted, or met twice) no longer resolves.
            if let Some(slot) = self.timers.resolve(id) {
                let (_, timer) = self.timers.remove(slot);
                self.work += 1;
                on_fire(id, timer.value, deadline);
            }
        }
        held.drain(..due);
        self.held = held;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        if self.timers.is_empty() {
            return None;
        }
        loop {
            self.collect();
            if let Some(earliest) = self.earliest_held() {
                return Some(earliest);
            }
            // Every pending timer is registered in the wheel, not fired: the runtime finds
            // the earliest.
            self.work += 1;
            self.clock = self.sleep_to_next_timer();
        }
    }

    crate::contract::len_now_work!(timers.len());
}
