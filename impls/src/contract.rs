//! The timer-queue contract (`docs/timer-contract.md`) as a Rust trait.
//!
//! A queue owns a virtual clock `now`, a count of [`Tick`]s that starts at 0 and moves only
//! in [`TimerQueue::advance`]. Nothing here reads the wall clock.
//!
//! | operation | meaning |
//! | --- | --- |
//! | [`start`](TimerQueue::start) | add a pending timer; a deadline `<= now` fires on the next `advance`, never inside `start` |
//! | [`stop`](TimerQueue::stop) | remove a pending timer and return its value; `None` (and no change) for a fired, stopped, never-issued or stale handle |
//! | [`restart`](TimerQueue::restart) | `stop` then `start`, as one call: what a keepalive refresh does; a structure may move the timer in place |
//! | [`advance`](TimerQueue::advance) | fire every pending timer with `deadline <= to`, once each, in non-decreasing deadline order; then `now = to` |
//! | [`next_deadline`](TimerQueue::next_deadline) | `None` exactly when nothing is pending, else a lower bound of the earliest deadline |
//! | [`len`](TimerQueue::len) | number of pending timers |

use crate::declaration::{
    EmptyTime, NaturalPeriod, Parameter, Parameters, Precision, Range, Release, SuiteLimit, Window,
};
use std::fmt;

/// A point on the virtual clock, in abstract ticks.
pub type Tick = u64;

/// A handle to a started timer: the index of its arena slot and the generation the slot had
/// when the timer was started.
///
/// Eight bytes and `Copy`. A handle outlives its timer harmlessly: once the timer fired or
/// was stopped the slot's generation moves on, so the handle no longer names anything, even
/// when a new timer occupies the same slot. Generations are 32-bit and odd while a slot is
/// occupied, so a handle could only be confused with a later timer after 2^31 reuses of its
/// slot.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimerId {
    index: u32,
    generation: u32,
}

impl TimerId {
    /// Builds a handle from its parts. Queues only honour handles they issued; anything else
    /// (a forged or foreign handle) is simply not pending, so `stop` returns `None`.
    pub const fn from_parts(index: u32, generation: u32) -> Self {
        TimerId { index, generation }
    }

    /// The arena slot this handle points at.
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The slot generation this handle was issued with.
    pub const fn generation(self) -> u32 {
        self.generation
    }

    /// The handle packed in one `u64` (generation in the high half), for logs and maps.
    pub const fn to_bits(self) -> u64 {
        ((self.generation as u64) << 32) | self.index as u64
    }

    /// The inverse of [`TimerId::to_bits`].
    pub const fn from_bits(bits: u64) -> Self {
        TimerId {
            index: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

impl fmt::Debug for TimerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TimerId({}v{})", self.index, self.generation)
    }
}

/// A timer queue driven by a virtual clock. See the module documentation for the contract.
///
/// `V` is the value a timer carries; it is handed back by `stop` or to the `advance` callback.
pub trait TimerQueue<V> {
    /// An empty queue at `now == 0` with room for `capacity` pending timers before any
    /// allocation.
    fn with_capacity(capacity: usize) -> Self
    where
        Self: Sized;

    /// The parameters this structure takes, with their defaults (`timerbench list` shows
    /// them; `--impl NAME:key=value` sets them). None by default.
    const PARAMETERS: &'static [Parameter] = &[];

    /// An empty queue at `now == 0` built with `parameters` (values of
    /// [`PARAMETERS`](TimerQueue::PARAMETERS), already checked), with room for `capacity`
    /// pending timers. The default, for a structure without parameters, is
    /// [`with_capacity`](TimerQueue::with_capacity).
    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self
    where
        Self: Sized,
    {
        let _ = parameters;
        Self::with_capacity(capacity)
    }

    /// An empty queue at `now == 0`.
    fn new() -> Self
    where
        Self: Sized,
    {
        Self::with_capacity(0)
    }

    /// Adds a pending timer that fires at `deadline`. Any `deadline` is accepted; one at or
    /// before `now` fires on the next `advance`.
    fn start(&mut self, deadline: Tick, value: V) -> TimerId;

    /// Removes the timer `id` if it is pending and returns its value; its storage is free
    /// for reuse at once. Returns `None` and changes nothing otherwise.
    fn stop(&mut self, id: TimerId) -> Option<V>;

    /// Gives timer `id` a new `deadline` and `value`: observably `stop(id)` followed by
    /// `start(deadline, value)`, and returns what those two would have (the new handle, and
    /// the value `id` carried if it was pending). If `id` is not pending this is a plain
    /// `start`. Every earlier handle to the timer is stale afterwards, as after a `stop`.
    ///
    /// This is the refresh of an idle-connection timer, often the most frequent operation
    /// of a server. The default is the two calls; structures that can move an entry in place
    /// override it (a heap sifts it, a wheel relinks it), as Go's `modtimer` and
    /// tokio-util's `DelayQueue::reset` do.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let old = self.stop(id);
        (self.start(deadline, value), old)
    }

    /// Moves the clock to `to`, first calling `on_fire(id, value, deadline)` once for every
    /// pending timer with `deadline <= to`, in non-decreasing deadline order.
    ///
    /// # Panics
    ///
    /// If `to < now`: the clock never runs backwards, so that is a caller bug.
    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, on_fire: F);

    /// `None` exactly when nothing is pending; otherwise a tick no later than the earliest
    /// pending deadline. Exact structures return that deadline itself; a wheel may return
    /// the start of its next occupied slot, and then at most
    /// [`next_deadline_steps`](TimerQueue::next_deadline_steps) rounds of
    /// `advance(max(next_deadline, now))` fire the earliest timer.
    ///
    /// Takes `&mut self` so that a structure may drop stale bookkeeping (an emptied bucket)
    /// while it looks; it never moves the clock and never fires a timer.
    fn next_deadline(&mut self) -> Option<Tick>;

    /// The bound on rounds of `advance(max(next_deadline(), now))` that fire the earliest
    /// pending timer: 1 for exact structures.
    fn next_deadline_steps(&self) -> u32 {
        1
    }

    /// Whether this queue (with its parameters) is exact, or approximate within a bound
    /// that [`window`](TimerQueue::window) gives per timer. Exact by default.
    fn precision(&self) -> Precision {
        Precision::Exact
    }

    /// For an approximate queue: when a timer started now with `deadline` may fire
    /// ([`Window`]). Only consulted when [`precision`](TimerQueue::precision) is
    /// approximate; an exact queue's window is [`Window::EXACT`].
    fn window(&self, deadline: Tick) -> Window {
        let _ = deadline;
        Window::EXACT
    }

    /// The delays and ticks this queue can hold ([`Range`]); all of `u64` by default, as
    /// the contract asks. Only adapters of outside crates declare less.
    fn range(&self) -> Range {
        Range::ALL
    }

    /// What a clock move over empty time costs this queue ([`EmptyTime`]); skipped by
    /// default.
    fn empty_time(&self) -> EmptyTime {
        EmptyTime::Skipped
    }

    /// When a stopped timer's entry is freed ([`Release`]); at once by default.
    fn release(&self) -> Release {
        Release::AtOnce
    }

    /// The period its own clock runs at when driven by a fixed tick ([`NaturalPeriod`]);
    /// one tick by default.
    fn natural_period(&self) -> NaturalPeriod {
        NaturalPeriod::Ticks(1)
    }

    /// The largest size a suite runs this structure at ([`SuiteLimit`]); none by default.
    const SUITE_LIMIT: Option<SuiteLimit> = None;

    /// Number of pending timers.
    fn len(&self) -> usize;

    /// Whether no timer is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The virtual clock.
    fn now(&self) -> Tick;

    /// A count of the structural steps taken so far (slots, buckets or levels visited,
    /// entries moved, heap levels sifted). The tests use it to show that work follows the
    /// timers handled, not the ticks skipped; it is never a time.
    fn work(&self) -> u64;
}

/// The three accessors every queue writes alike, for its `impl TimerQueue`:
/// [`len`](TimerQueue::len) from the expression given (on `self`), [`now`](TimerQueue::now)
/// and [`work`](TimerQueue::work) from the queue's fields `now: Tick` and `work: u64`.
///
/// `crate::contract::len_now_work!(entries.len());` reads `self.entries.len()`. A queue
/// whose step count is not one field (hashed-wheel adds its bitmap's) writes its own.
macro_rules! len_now_work {
    ($($len:tt)+) => {
        fn len(&self) -> usize {
            self.$($len)+
        }

        fn now(&self) -> $crate::contract::Tick {
            self.now
        }

        fn work(&self) -> u64 {
            self.work
        }
    };
}
pub(crate) use len_now_work;

/// Panics with the contract's message when a caller tries to move the clock backwards.
#[inline]
#[track_caller]
pub fn check_advance(now: Tick, to: Tick) {
    if to < now {
        panic!("advance({to}) called with now = {now}: the virtual clock never runs backwards");
    }
}
