//! `hhwt`: the `hierarchical_hash_wheel_timer` crate (Lars Kroll, the timer of the Kompact
//! actor framework), driven by its manual API on the virtual clock.
//!
//! # The idea
//!
//! Four wheels of 256 slots each, addressed by the four bytes of a 32-bit time: an entry
//! goes in the wheel of the highest byte in which its expiry differs from the current
//! time, carrying the lower bytes as its "rest"; when a wheel's pointer reaches its slot the
//! entry moves down by its rest bytes (cascading), so it fires at its exact tick. Delays of
//! 2^32 − 1 ticks or more wait in an overflow `Vec` that is rescanned once per 2^32-tick
//! cycle (not used here: see *Precision and limits*). Each slot is an `Option<Vec<_>>`; `tick()` returns the entries of the slot it
//! reaches as a fresh `Vec`. There is no occupancy bitmap: `can_skip()` only reports that
//! whole lower wheels are empty, and `skip(n)` then moves the pointers without visiting
//! slots. The adapter uses the crate's `wheels::cancellable::QuadWheelWithOverflow`,
//! whose `cancel` removes the entry's `Rc` from an `FxHashMap` and leaves a `Weak` in the
//! wheel, dropped when its slot is reached (lazy deallocation).
//!
//! # The adapter
//!
//! - One tick is one of the crate's milliseconds. The crate's wheel has its own position;
//!   the adapter keeps the absolute time the wheel has reached (`wheel_now`, equal to `now`
//!   after every `advance`) and inserts each timer with `delay = deadline − now`.
//! - Values live in the adapter's generational arena; the wheel entry is the handle's bits
//!   (an `IdOnlyTimerEntry<u64>`), which is also the crate's cancellation key, so a stale
//!   handle never cancels a newer timer.
//! - The crate refuses a zero delay (`TimerError::Expired`): a timer started at or before
//!   `now` waits in the adapter's `overdue` list and fires first in the next `advance`,
//!   the list sorted by deadline (these deadlines are all `<= now`, before anything in
//!   the wheel).
//! - `advance(to)` is the crate's own simulation loop (`SimulationTimer::next`): while the
//!   wheel is behind `to`, `can_skip()`; skip what it allows (never past `to`), otherwise
//!   `tick()` and fire what it returns. An empty wheel (`Skip::Empty`) jumps straight to
//!   `to`.
//! - `next_deadline` is a lower bound: the crate has no "next expiry" query, only
//!   `can_skip`. It returns the earliest overdue deadline, or the first tick the wheel
//!   cannot skip. Each round of `advance(next_deadline)` then either fires, cascades one
//!   slot of some wheel, or moves past a whole empty block; [`STEPS`] bounds the rounds.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | adapter arena: value (8), deadline (8), link (4, unused), generation (4) | 24 |
//! | `Rc<IdOnlyTimerEntry<u64>>` allocation: counts (16), id (8), delay (16) | 40 |
//! | `FxHashMap<u64, Rc<_>>` entry: key (8), pointer (8), control byte, load factor ≤ 7/8 | ~19 |
//! | wheel slot `Vec` element: `Weak` (8) + rest bytes, padded | 8–16 |
//! | total | about 95 |
//!
//! A cancelled timer's `Weak` stays in its slot, and so does its 40-byte `Rc` allocation
//! (a `Weak` keeps the allocation alive), until the wheel reaches that slot.
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): an `Rc` allocation, a hash-map insert, a slot push (allocating the slot's `Vec` when it was empty) |
//! | `stop` | O(1): a hash-map remove; the wheel entry stays until its slot comes round |
//! | `advance`, per fired timer | O(1) amortised: up to three cascades, a `Weak` upgrade and a hash-map remove |
//! | `advance`, per tick | O(1) while the lowest wheel is occupied: `tick()` visits every tick of a block whose primary wheel holds an entry (live or cancelled) |
//! | `next_deadline` | O(1); a lower bound (see above) |
//!
//! # Empty time
//!
//! `can_skip` lets the wheel jump to the end of a 256-, 65,536- or 2^24-tick block once the
//! wheels below are empty, so a jump over empty time costs one step per occupied block
//! boundary, not one per tick; but a primary wheel holding one far entry (or one cancelled
//! entry) is walked tick by tick up to it.
//!
//! # Precision and limits
//!
//! Exact at tick granularity (the crate cascades with the rest bytes, so a timer fires at
//! its exact millisecond); the reference matches exactly. `next_deadline` is a lower bound
//! reached in at most [`STEPS`] rounds.
//!
//! Two delays the crate gets wrong, found by the random test, and what the adapter does:
//!
//! - A delay `d` with `2^32 − 2^24 < d < 2^32 − 1` whose expiry wraps the 32-bit cycle:
//!   the crate files it by the highest byte in which the *wrapped* expiry differs from the
//!   current time, which is then a lower wheel than it should be, so it fires up to a
//!   whole cycle **early** (a delay of 2^32 − 3,830,871 fired after a few hundred ticks).
//! - A delay of exactly 2^32 − 1 at the start of a cycle (clock 0, for one): the crate's
//!   overflow remainder `delay − 2^32` underflows a `Duration` and panics.
//!
//! - A delay of 2^32 or more goes to the crate's overflow list, whose rescan files the
//!   remainder with the same arithmetic: a remainder in either case above fails the same
//!   way (found by the fuzz target: 2^36 − 1 from clock 0 panicked in the rescan).
//!
//! For all of these, every delay above 2^32 − 2^24, the adapter files a *carrier*
//! instead: the same entry with a delay of 2^31; when the carrier comes due before its
//! timer's deadline, the adapter files it again with the remaining delay (a carrier again
//! while that is above 2^32 − 2^24). A timer started so costs one extra insert and an extra
//! `Rc` per 2^31 ticks; no timer fires early or late. The crate's overflow list is
//! therefore never used: a deviation from the crate as shipped, forced by its bug.
//!
//! What it cannot do: deadlines more than [`MAX_DELAY`] = 2^40 ticks after `now`, its
//! declared range ([`TimerQueue::range`]): a workload with such a delay is refused before
//! it runs, and the adapter panics naming the limit if one reaches it anyway. A far
//! deadline is reached through up to 2^40 / 2^31 = 512 carrier hops, which bounds the
//! rounds of `next_deadline` ([`STEPS`] for each pending timer, since every pending
//! timer's hops and cascades stop a round).

use crate::arena::Arena;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::Range;
use hierarchical_hash_wheel_timer::wheels::Skip;
use hierarchical_hash_wheel_timer::wheels::cancellable::QuadWheelWithOverflow;
use hierarchical_hash_wheel_timer::{IdOnlyTimerEntry, TimerError};
use std::time::Duration;

/// The farthest deadline after `now` the adapter accepts: 2^40 ticks (about 35 years of
/// milliseconds).
pub const MAX_DELAY: Tick = 1 << 40;

/// Delays above this (and below 2^32 − 1) go into the wheel as a carrier of
/// [`CARRIER_DELAY`]; see the module documentation.
const SAFE_DELAY: Tick = (1 << 32) - (1 << 24);

/// The delay of a carrier.
const CARRIER_DELAY: Tick = 1 << 31;

/// Rounds of `advance(next_deadline)` that fire the earliest timer: per carrier hop of
/// `CARRIER_DELAY` (at most `MAX_DELAY / CARRIER_DELAY` of them, and the last stretch),
/// one per wheel level for cascades and empty-block skips below 256 slots each
/// (4 × 256); and one for overdue timers.
pub const STEPS: u32 = ((MAX_DELAY / CARRIER_DELAY) as u32 + 1) * 4 * 256 + 1;

/// See the module documentation.
pub struct Hhwt<V> {
    wheel: QuadWheelWithOverflow<IdOnlyTimerEntry<u64>>,
    /// Values and deadlines of pending timers.
    timers: Arena<(Tick, V)>,
    /// Timers started with `deadline <= now`, fired first by the next `advance`; may hold
    /// handles of timers stopped since.
    overdue: Vec<(Tick, TimerId)>,
    /// The wheel's position in its 2^32-tick cycle, mirrored (moved by `skip` and `tick`).
    position: u32,
    now: Tick,
    work: u64,
}

impl<V> Hhwt<V> {
    /// Puts timer `id` in the wheel, due `delay > 0` ticks after the wheel's position, or a
    /// carrier for it when the crate would misfile that delay.
    fn file(&mut self, id: TimerId, delay: Tick) {
        // Every delay above SAFE_DELAY, not only those below 2^32 − 1: the crate's
        // overflow list files its remainders again with the same arithmetic, and a
        // remainder in the bad range panics there (found by the fuzz target: a delay of
        // 2^36 − 1 from clock 0).
        let misfiled = delay > SAFE_DELAY;
        let entry = IdOnlyTimerEntry {
            id: id.to_bits(),
            delay: Duration::from_millis(if misfiled { CARRIER_DELAY } else { delay }),
        };
        match self.wheel.insert(entry) {
            Ok(()) => {}
            Err(TimerError::Expired(_)) | Err(TimerError::NotFound) => {
                unreachable!("a positive delay is never expired")
            }
        }
    }

    /// Fires the timers the wheel returned for the tick that reached `wheel_now`, and
    /// files again the carriers among them.
    fn fire_wheel<F: FnMut(TimerId, V, Tick)>(
        &mut self,
        fired: Vec<std::rc::Rc<IdOnlyTimerEntry<u64>>>,
        wheel_now: Tick,
        on_fire: &mut F,
    ) {
        for entry in fired {
            let id = TimerId::from_bits(entry.id);
            let slot = self
                .timers
                .resolve(id)
                .expect("the wheel fires only timers that were not cancelled");
            let deadline = self.timers.get(slot).0;
            debug_assert!(deadline >= wheel_now, "hhwt fired a timer late");
            if deadline > wheel_now {
                self.file(id, deadline - wheel_now);
                continue;
            }
            let (_, (deadline, value)) = self.timers.remove(slot);
            on_fire(id, value, deadline);
        }
    }
}

impl<V> TimerQueue<V> for Hhwt<V> {
    fn range(&self) -> Range {
        Range {
            max_delay: MAX_DELAY,
            max_tick: Tick::MAX,
            max_clock: Tick::MAX,
            why: "a far timer is carried in 2^31-tick hops past the crate's overflow bug: at \
                  most 512 hops",
        }
    }

    fn with_capacity(capacity: usize) -> Self {
        Hhwt {
            wheel: QuadWheelWithOverflow::new(),
            timers: Arena::with_capacity(capacity),
            overdue: Vec::new(),
            position: 0,
            now: 0,
            work: 0,
        }
    }

    /// # Panics
    ///
    /// If `deadline` is more than [`MAX_DELAY`] ticks after `now`.
    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.timers.insert(0, (deadline, value));
        if deadline <= self.now {
            self.overdue.push((deadline, id));
            return id;
        }
        let delay = deadline - self.now;
        assert!(
            delay <= MAX_DELAY,
            "hhwt: deadline {deadline} is {delay} ticks after now = {}, more than the adapter's \
             limit of 2^40 ticks (hierarchical_hash_wheel_timer rescans its overflow list once \
             per 2^32-tick cycle)",
            self.now
        );
        self.file(id, delay);
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let slot = self.timers.resolve(id)?;
        let (_, (deadline, value)) = self.timers.remove(slot);
        if deadline > self.now {
            // In the wheel (overdue timers are only in `overdue`, skipped when stale).
            let _ = self.wheel.cancel(&id.to_bits());
        }
        Some(value)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        if !self.overdue.is_empty() {
            let mut overdue = std::mem::take(&mut self.overdue);
            overdue.sort_by_key(|&(deadline, _)| deadline);
            for &(deadline, id) in &overdue {
                if let Some(slot) = self.timers.resolve(id) {
                    let (_, (_, value)) = self.timers.remove(slot);
                    on_fire(id, value, deadline);
                }
            }
            overdue.clear();
            self.overdue = overdue;
        }
        // The wheel's position, as an absolute tick.
        let mut wheel_now = self.now;
        while wheel_now < to {
            self.work += 1;
            match self.wheel.can_skip() {
                Skip::Empty => break,
                Skip::Millis(skippable) => {
                    let jump = u64::from(skippable).min(to - wheel_now);
                    self.wheel.skip(jump as u32);
                    self.position = self.position.wrapping_add(jump as u32);
                    wheel_now += jump;
                    if wheel_now == to {
                        break;
                    }
                }
                Skip::None => {}
            }
            let fired = self.wheel.tick();
            self.position = self.position.wrapping_add(1);
            wheel_now += 1;
            self.fire_wheel(fired, wheel_now, &mut on_fire);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        if self.timers.is_empty() {
            return None;
        }
        if let Some(earliest) = self
            .overdue
            .iter()
            .filter(|&&(_, id)| self.timers.resolve(id).is_some())
            .map(|&(deadline, _)| deadline)
            .min()
        {
            return Some(earliest);
        }
        match self.wheel.can_skip() {
            Skip::Empty => unreachable!("pending timers are in the wheel or overdue"),
            Skip::Millis(skippable) => Some(self.now + u64::from(skippable) + 1),
            Skip::None => Some(self.now + 1),
        }
    }

    /// [`STEPS`] per pending timer: the rounds stop at every carrier hop and cascade of
    /// every pending entry, not only the earliest one's (found by the fuzz target: two
    /// timers riding carriers to 2^40 took 595,461 rounds, one timer's [`STEPS`] being
    /// 525,313; `impls/tests/peers.rs` replays it).
    fn next_deadline_steps(&self) -> u32 {
        let pending = u32::try_from(self.timers.len()).unwrap_or(u32::MAX);
        STEPS.saturating_mul(pending.max(1))
    }

    crate::contract::len_now_work!(timers.len());
}
