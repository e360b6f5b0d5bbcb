//! The loop: one timer structure in an epoll event loop on CLOCK_MONOTONIC.
//!
//! Each pass reads the clock, moves the structure's clock to the current tick (firing
//! what is due, each firing timed), applies the operations that arrived (from the feeder's
//! socket, or on TCP connections) at the tick of their arrival, then asks the structure for
//! its next deadline and sleeps with the wait strategy. Tick `k` is `origin + k × tick` on
//! the wall clock.
//!
//! Under `tick` the structure's clock moves only on the period's wakeups, as a tick-driven
//! server's does: an arrival between two of them is applied without moving it, stamped
//! with the real tick of its arrival ([`ClockRule`]).
//!
//! A run has two phases. The workload phase lasts until the feeder's end record, or until
//! its limit (then it is cut, and the reason recorded). The loop then stops every timer
//! still pending, stops watching its input, and idles for the idle phase: no timer
//! pending, nothing arriving, where a deadline-driven loop should not wake at all and a
//! tick-driven one wakes every period.

use crate::measure::{self, Lateness, Meter, Snapshot};
use crate::schedule::{Arrival, Schedule};
use crate::sys::{self, Epoll};
use crate::verify::{Applied, AppliedLog, LiveFiring};
use crate::wait::{Strategy, Waiter};
use hdrhistogram::Histogram;
use std::io;
use timerbench_impls::{TimerId, TimerQueue};
use timerbench_results::live::Usage;

/// What an [`Input`] read: an operation of the schedule, the end of the workload, or why
/// the workload phase must stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// The operation at this index of [`Schedule::arrivals`] arrived.
    Arrival(usize),
    /// The workload's end record.
    End,
    /// The input failed (its peer died, a protocol error): the reason.
    Cut(String),
}

/// Where the operations come from: the feeder's socket ([`crate::feeder::FeederInput`]) or
/// the TCP connections of the client process ([`crate::tcp::server::TcpServer`]).
pub trait Input {
    /// Starts watching its descriptors on `epoll` (input only, level-triggered).
    fn watch(&mut self, epoll: &Epoll) -> io::Result<()>;
    /// Reads what the descriptors of `ready` (their epoll tokens) hold, within a server's
    /// read budget, so that a flood of arrivals cannot keep due timers waiting for long.
    fn read(&mut self, epoll: &Epoll, ready: &[u64], into: &mut Vec<Received>) -> io::Result<()>;
    /// Timer `slot` fired (its deadline `deadline_ns` on the wall clock): a server closes
    /// the connection here. What arrived on it meanwhile goes to `into`, re-arming it.
    fn fired(&mut self, slot: u32, deadline_ns: u64, into: &mut Vec<Received>) {
        let _ = (slot, deadline_ns, into);
    }
    /// The workload phase is over: stop watching, close what is open.
    fn unwatch(&mut self, epoll: &Epoll) -> io::Result<()>;
}

/// What the loop needs besides the structure.
pub struct Setup<'a> {
    /// The workload on the clock.
    pub schedule: &'a Schedule,
    /// Tick 0 on CLOCK_MONOTONIC.
    pub origin_ns: u64,
    /// Nanoseconds per tick.
    pub tick_ns: u64,
    /// When the workload phase ends at the latest (absolute): the feeder's end record is
    /// due before it.
    pub workload_limit_ns: u64,
    /// How long the idle phase lasts.
    pub idle_ns: u64,
    /// How far behind its schedule an operation may be applied before the run is cut.
    pub max_behind_ns: u64,
}

/// What the loop saw.
pub struct Outcome {
    /// Every firing's lateness and its parts.
    pub lateness: Lateness,
    /// Every applied operation's delay after its schedule.
    pub behind: Histogram<u64>,
    /// What was applied and fired, for verification.
    pub log: AppliedLog,
    /// The workload phase.
    pub workload: Usage,
    /// The idle phase.
    pub idle: Usage,
    /// Operations applied (after the fill).
    pub applied: u64,
    /// Starts of a pending timer, applied as restarts.
    pub starts_as_restarts: u64,
    /// Why the workload phase ended before the feeder's end record, if it did.
    pub cut: Option<String>,
    /// The tick at which the workload phase ended.
    pub end_tick: u64,
    /// The wall deadlines the loop slept to (offsets from the origin), for the baseline.
    pub wake_targets: Vec<u64>,
    /// Periods of `tick` missed.
    pub missed_ticks: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Workload,
    Idle { until_ns: u64 },
}

/// When the structure's clock moves, and from which tick an arrival's deadline counts.
///
/// Deadline-driven, the clock follows the wall clock at every pass and at every arrival
/// (firing what became due first), so an arrival's deadline is the clock plus its delay.
/// Tick-driven, the clock moves only when the period fires, as a server's walking worker,
/// its ring's hand or its scan does; an arrival in between is stamped with the real tick
/// it arrived at (a server reads the time, or its last-read time, when a packet comes),
/// and its deadline is that tick plus its delay: up to a period and the wake-up error past
/// the structure's lagging clock. The contract lets `start` take any deadline, and every
/// structure holds one that far (a ring files it by boundary with a cycle count, a wheel
/// by level, a scan in its table; the only bounded ranges, two peers', reach 2^35 ticks
/// and more): none needs its own rule. Counting from the lagging clock instead would arm
/// a timeout up to a period short of what the packet asked, and close a connection that
/// had spoken within its timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClockRule {
    /// The clock follows every wakeup and arrival.
    FollowsWakeups,
    /// The clock moves only on the period's wakeups.
    PeriodOnly,
}

impl ClockRule {
    fn of(strategy: Strategy) -> ClockRule {
        match strategy {
            Strategy::Tick { .. } => ClockRule::PeriodOnly,
            _ => ClockRule::FollowsWakeups,
        }
    }
}

/// The loop's state around the structure.
struct Live<'a, Q, I> {
    queue: Q,
    clock: ClockRule,
    input: I,
    /// The input's ready tokens of the last wait.
    tokens: Vec<u64>,
    setup: &'a Setup<'a>,
    handles: Vec<TimerId>,
    pending: Vec<bool>,
    log: AppliedLog,
    lateness: Lateness,
    behind: Histogram<u64>,
    meter: Meter,
    applied: u64,
    starts_as_restarts: u64,
    /// Operations applied since the last clock move (a start at the current tick is due).
    dirty: bool,
    ended: bool,
    cut: Option<String>,
    /// The wall deadlines slept to in the workload phase ([`Outcome::wake_targets`]).
    wake_targets: Vec<u64>,
    /// Periods of `tick` missed ([`Outcome::missed_ticks`]).
    missed_ticks: u64,
}

/// What the last wait tells the pass after it.
#[derive(Clone, Copy)]
struct LastWait {
    /// The wall time the loop meant to wake at (`None`: it did not sleep).
    planned: Option<u64>,
    /// When the wait returned (or the pass began, without one).
    returned: u64,
    /// Whether the input was readable.
    io_ready: bool,
    /// Whether the wait was a counted wakeup.
    counted: bool,
    /// Whether the clock may move on this pass: always deadline-driven; under `tick` on
    /// the period's wakeups (and at tick 0, the period's first).
    on_period: bool,
}

impl LastWait {
    /// Before the first pass, at tick 0: no wait behind it, the period's first wakeup.
    fn first() -> LastWait {
        LastWait {
            planned: None,
            returned: sys::now_ns(),
            io_ready: false,
            counted: false,
            on_period: true,
        }
    }
}

/// Runs the loop over `queue` (with the fill already in the schedule, not yet applied)
/// until the idle phase ends; the operations come from `input`.
pub fn run<Q: TimerQueue<u64>, I: Input>(
    queue: Q,
    setup: &Setup,
    input: I,
    epoll: &Epoll,
    waiter: &mut Waiter,
) -> io::Result<(Outcome, I)> {
    let mut live = Live::new(queue, setup, input, waiter.strategy());
    live.apply_fill();
    live.input.watch(epoll)?;
    sys::sleep_until(setup.origin_ns);
    let mut phase = Phase::Workload;
    let workload_start = live.meter.snapshot();
    let mut workload_end: Option<Snapshot> = None;
    let mut end_tick = 0;
    let mut last = LastWait::first();
    loop {
        live.serve(&last, phase, waiter, epoll)?;
        let now = sys::now_ns();
        if phase == Phase::Workload && live.workload_over(now) {
            end_tick = live.end_workload(now, epoll)?;
            workload_end = Some(live.meter.snapshot());
            phase = Phase::Idle {
                until_ns: now + setup.idle_ns,
            };
        }
        if let Phase::Idle { until_ns } = phase
            && now >= until_ns
        {
            break;
        }
        last = live.wait_next(last, phase, now, waiter, epoll)?;
    }
    let idle_end = live.meter.snapshot();
    let workload_end = workload_end.expect("the idle phase follows the workload phase");
    Ok(live.outcome(
        end_tick,
        measure::usage(workload_start, workload_end),
        measure::usage(workload_end, idle_end),
    ))
}

/// The loop's steps, in the order [`run`] takes them.
impl<'a, Q: TimerQueue<u64>, I: Input> Live<'a, Q, I> {
    /// The state before the fill: nothing pending, nothing counted.
    fn new(queue: Q, setup: &'a Setup<'a>, input: I, strategy: Strategy) -> Self {
        let slots = setup.schedule.slots;
        Live {
            queue,
            clock: ClockRule::of(strategy),
            input,
            tokens: Vec::new(),
            setup,
            handles: vec![TimerId::from_parts(u32::MAX, 0); slots],
            pending: vec![false; slots],
            log: AppliedLog::default(),
            lateness: Lateness::default(),
            behind: measure::histogram(),
            meter: Meter::default(),
            applied: 0,
            starts_as_restarts: 0,
            dirty: false,
            ended: false,
            cut: None,
            wake_targets: Vec::new(),
            missed_ticks: 0,
        }
    }

    /// Starts the schedule's fill, before tick 0, uncounted.
    fn apply_fill(&mut self) {
        for &(slot, delay) in &self.setup.schedule.fill {
            let at = self.arrival_tick(sys::now_ns());
            self.start(slot, delay, at, false);
        }
    }

    /// One pass's work after `last`: the clock moved where the clock rule lets it (firing
    /// what is due), the arrivals read in the workload phase, and a counted wakeup that
    /// did neither counted as useless.
    fn serve(
        &mut self,
        last: &LastWait,
        phase: Phase,
        waiter: &Waiter,
        epoll: &Epoll,
    ) -> io::Result<()> {
        let fired_before = self.log.firings.len();
        if last.on_period || self.clock == ClockRule::FollowsWakeups {
            self.fire_due(last.planned, last.returned);
        }
        if last.io_ready && phase == Phase::Workload {
            self.tokens.clear();
            self.tokens.extend(waiter.ready_tokens());
            self.read_arrivals(epoll)?;
        }
        if last.counted && self.log.firings.len() == fired_before && !last.io_ready {
            self.meter.useless += 1;
        }
        Ok(())
    }

    /// Whether the workload phase is over at `now`: the end record read, the input cut,
    /// or its limit reached.
    fn workload_over(&self, now: u64) -> bool {
        self.ended || self.cut.is_some() || now >= self.setup.workload_limit_ns
    }

    /// Ends the workload phase at `now`: the reason when it was cut at its limit, the
    /// input unwatched, every timer still pending stopped. The tick it ended at.
    fn end_workload(&mut self, now: u64, epoll: &Epoll) -> io::Result<u64> {
        if !self.ended && self.cut.is_none() {
            self.cut = Some(format!(
                "the feeder's end record had not been read {:.0} ms after the workload \
                 phase's limit (a backlog of operations), at tick {}",
                self.setup.max_behind_ns as f64 / 1e6,
                self.tick_at(now)
            ));
        }
        let end_tick = self.tick_at(now);
        self.input.unwatch(epoll)?;
        self.stop_all();
        Ok(end_tick)
    }

    /// Sleeps to the next deadline (or period), no later than the phase's end, and says
    /// what woke the loop; without sleeping when a deadline-driven loop has one due
    /// already. Counts the wakeup unless it is the phase's own end.
    fn wait_next(
        &mut self,
        last: LastWait,
        phase: Phase,
        now: u64,
        waiter: &mut Waiter,
        epoll: &Epoll,
    ) -> io::Result<LastWait> {
        let target = self.wake_target(waiter.strategy(), now);
        let cap = match phase {
            Phase::Workload => self.setup.workload_limit_ns,
            Phase::Idle { until_ns } => until_ns,
        };
        if let Some(due) = target
            && due <= now
            && waiter.strategy().is_deadline_driven()
        {
            // Due already (a start at the current tick): another pass, no sleep.
            return Ok(LastWait {
                planned: None,
                returned: now,
                io_ready: false,
                counted: false,
                ..last
            });
        }
        let until = match waiter.strategy() {
            Strategy::Tick { .. } => None,
            _ => Some(target.map_or(cap, |t| t.min(cap))),
        };
        if let Some(t) = target
            && phase == Phase::Workload
            && waiter.strategy().is_deadline_driven()
        {
            self.wake_targets.push(t - self.setup.origin_ns);
        }
        let woken = waiter.wait(epoll, until)?;
        // A wait that ended at the phase's limit, with nothing due before it, is the
        // measurement's own wakeup, not the loop's: not counted.
        let at_limit = until == Some(cap) && target.is_none_or(|t| t > cap);
        let counted = !at_limit || woken.io;
        self.meter.wakeups += u64::from(counted);
        self.missed_ticks += woken.expirations.saturating_sub(1);
        Ok(LastWait {
            planned: Some(target.unwrap_or(woken.returned_ns)),
            returned: woken.returned_ns,
            io_ready: woken.io,
            counted,
            on_period: woken.expirations > 0,
        })
    }

    /// What the loop saw, given the tick the workload phase ended at and the two phases'
    /// usage; and the input, back to the caller.
    fn outcome(self, end_tick: u64, workload: Usage, idle: Usage) -> (Outcome, I) {
        let outcome = Outcome {
            end_tick,
            lateness: self.lateness,
            behind: self.behind,
            workload,
            idle,
            applied: self.applied,
            starts_as_restarts: self.starts_as_restarts,
            cut: self.cut,
            log: self.log,
            wake_targets: self.wake_targets,
            missed_ticks: self.missed_ticks,
        };
        (outcome, self.input)
    }
}

impl<Q: TimerQueue<u64>, I: Input> Live<'_, Q, I> {
    fn tick_at(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.setup.origin_ns) / self.setup.tick_ns
    }

    fn wall_of(&self, tick: u64) -> u64 {
        self.setup
            .origin_ns
            .saturating_add(tick.saturating_mul(self.setup.tick_ns))
    }

    /// Moves the structure's clock to the tick of `returned` and fires what is due there;
    /// also at the same tick when something was started at it since the last move.
    fn fire_due(&mut self, planned: Option<u64>, returned: u64) {
        let to = self.tick_at(returned).max(self.queue.now());
        let due_now = self.dirty && self.queue.next_deadline().is_some_and(|d| d <= to);
        if to == self.queue.now() && !due_now {
            return;
        }
        self.dirty = false;
        let step = self.log.push(Applied::Move { to });
        let fired_before = self.log.firings.len();
        let planned = planned.unwrap_or(returned);
        let (origin, tick_ns) = (self.setup.origin_ns, self.setup.tick_ns);
        let (lateness, firings, pending) =
            (&mut self.lateness, &mut self.log.firings, &mut self.pending);
        self.queue.advance(to, |_, slot, deadline| {
            let fired = sys::now_ns();
            let deadline_ns = origin.saturating_add(deadline.saturating_mul(tick_ns));
            lateness.record(deadline_ns, planned, returned, fired);
            firings.push(LiveFiring {
                step,
                slot: slot as u32,
                deadline,
            });
            pending[slot as usize] = false;
        });
        self.tell_input(fired_before);
    }

    /// Tells the input of the firings from `from` on (a server closes those connections)
    /// and applies what had arrived on them meanwhile.
    fn tell_input(&mut self, from: usize) {
        let mut rearmed = Vec::new();
        for index in from..self.log.firings.len() {
            let firing = self.log.firings[index];
            let deadline_ns = self.wall_of(firing.deadline);
            self.input.fired(firing.slot, deadline_ns, &mut rearmed);
        }
        self.apply(rearmed);
    }

    /// Applies what the input read, in order, up to the end record or a cut.
    fn apply(&mut self, received: Vec<Received>) {
        for item in received {
            if self.ended || self.cut.is_some() {
                break;
            }
            match item {
                Received::Arrival(index) => self.arrive(index),
                Received::End => self.ended = true,
                Received::Cut(reason) => self.cut = Some(reason),
            }
        }
    }

    /// When to wake for the next deadline, absolute; `None` if nothing is pending.
    fn wake_target(&mut self, strategy: Strategy, now: u64) -> Option<u64> {
        if let Strategy::Tick { period_ns } = strategy {
            let since = now.saturating_sub(self.setup.origin_ns);
            return Some(self.setup.origin_ns + (since / period_ns + 1) * period_ns);
        }
        let next = self.queue.next_deadline()?;
        if next > self.queue.now() || self.dirty {
            return Some(self.wall_of(next));
        }
        // A lower bound at or before the clock that the last move did not fire (a wheel's
        // emptied slot): look again at the next tick instead of spinning.
        Some(self.wall_of(self.queue.now() + 1))
    }

    /// Reads what arrived on the ready descriptors and applies each operation at the tick
    /// of its arrival.
    fn read_arrivals(&mut self, epoll: &Epoll) -> io::Result<()> {
        let mut received = Vec::new();
        self.input.read(epoll, &self.tokens, &mut received)?;
        self.apply(received);
        Ok(())
    }

    /// The tick an arrival at `now_ns` counts its deadline from ([`ClockRule`]): the
    /// structure's clock when it follows the wakeups (moved to `now_ns` already), else the
    /// real tick of the arrival.
    fn arrival_tick(&self, now_ns: u64) -> u64 {
        match self.clock {
            ClockRule::FollowsWakeups => self.queue.now(),
            ClockRule::PeriodOnly => self.tick_at(now_ns).max(self.queue.now()),
        }
    }

    /// Applies arrival `index` at the current tick; deadline-driven, moving the clock there
    /// first ([`ClockRule`]).
    fn arrive(&mut self, index: usize) {
        let timed = self.setup.schedule.arrivals[index];
        let now = sys::now_ns();
        if self.clock == ClockRule::FollowsWakeups && self.tick_at(now) > self.queue.now() {
            // Due while the loop read its input: the delay since the tick that made them
            // due is the loop's own, so it counts as dispatch.
            let due_at = self.wall_of(self.tick_at(now));
            self.fire_due(Some(due_at), due_at);
        }
        let behind = now.saturating_sub(self.wall_of(timed.tick));
        measure::note(&mut self.behind, behind);
        self.applied += 1;
        let at = self.arrival_tick(now);
        match timed.arrival {
            Arrival::Start { slot, delay } => self.start(slot, delay, at, true),
            Arrival::Restart { slot, delay } => self.restart(slot, delay, at),
            Arrival::Stop { slot } => self.stop(slot),
        }
        if behind > self.setup.max_behind_ns {
            self.cut = Some(format!(
                "too dense for real time: an operation scheduled at tick {} was applied {:.1} ms \
                 late, more than --max-behind; the run stopped there",
                timed.tick,
                behind as f64 / 1e6
            ));
        }
    }

    /// Starts `slot` with deadline `at + delay`; a start of a timer the structure still
    /// holds (applied late, or an approximate structure's late firing) is applied as the
    /// restart it amounts to.
    fn start(&mut self, slot: u32, delay: u64, at: u64, counted: bool) {
        if self.pending[slot as usize] {
            self.starts_as_restarts += u64::from(counted);
            return self.restart(slot, delay, at);
        }
        let deadline = at.saturating_add(delay);
        self.handles[slot as usize] = self.queue.start(deadline, u64::from(slot));
        self.pending[slot as usize] = true;
        self.log.push(Applied::Start { slot, deadline });
        self.dirty = true;
    }

    fn restart(&mut self, slot: u32, delay: u64, at: u64) {
        let deadline = at.saturating_add(delay);
        let (handle, _) =
            self.queue
                .restart(self.handles[slot as usize], deadline, u64::from(slot));
        self.handles[slot as usize] = handle;
        self.pending[slot as usize] = true;
        self.log.push(Applied::Restart { slot, deadline });
        self.dirty = true;
    }

    fn stop(&mut self, slot: u32) {
        self.queue.stop(self.handles[slot as usize]);
        self.pending[slot as usize] = false;
        self.log.push(Applied::Stop { slot });
    }

    /// Stops every pending timer: the end of the workload, as a server closing its
    /// connections, so that the idle phase has none.
    fn stop_all(&mut self) {
        for slot in 0..self.pending.len() {
            if self.pending[slot] {
                self.stop(slot as u32);
            }
        }
    }
}
