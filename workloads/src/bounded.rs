//! Verifying an approximate implementation: a replay in lockstep with the reference model.
//!
//! An exact implementation is verified by comparing its whole expiry log with the model's
//! ([`crate::replay`]). An approximate one
//! ([`Precision::Approximate`](timerbench_impls::Precision)) fires at other ticks by design,
//! so its log cannot equal the model's; instead [`Lockstep`] drives it and the model side
//! by side through the same operations and the same clock moves, and checks every timer
//! against the window its structure declared when it was started
//! ([`TimerQueue::window`]):
//!
//! - **the same timers fire**: none that was stopped, none twice, none that the model does
//!   not fire, except within its window;
//! - **never early**: a timer fires on or after the move on which the model fires it, unless
//!   its window allows early firing (a deadline clamped to the structure's range, as Linux
//!   does past its cut-off): those are counted apart ([`Lateness::early`]);
//! - **never past the bound**: once a clock move reaches `max(deadline, clock at start) +
//!   late`, the timer is no longer pending;
//! - timers the model fired but the structure still holds when the workload ends are
//!   counted ([`Lateness::pending_late`]), not failures; a stop that finds one is counted
//!   too ([`Lateness::stopped_late`]).
//!
//! The lateness of a firing is its clock minus the clock at which the model fires the same
//! timer, in ticks (the workload format's "Outcome"): for `a` and `t`, the end of the move
//! (the tick, for `t`) that reaches its deadline. Both sides get the same clock moves, and
//! the structure's own `next_deadline` decides where an `n` moves, as an event loop built
//! on it would sleep; for a timer the model fires within such a move, the model's clock is
//! where an exact event loop would have woken for it, `max(deadline, clock before the
//! move)`. So on workloads with `n` the clock may run later than in the model's own replay
//! of the file, and the lateness of a wheel that wakes at the end of a bucket shows.
//!
//! A workload names a timer again once the model has fired it, while the structure (or,
//! after its clock ran late, the lockstep model too) may still hold it: so the lockstep
//! follows *instances* (one per start), keys the model by instance, and hands the
//! structure its own instance numbers as values, translating back to the workload's timer
//! for the replay's observer.

use crate::program::{Firing, Program, Slot, Step};
use crate::reference::ReferenceModel;
use crate::reference::Summary;
use crate::replay::{Counts, Kind, Observer, digest, drive, empty_handles};
use hdrhistogram::Histogram;
use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};
use timerbench_impls::{Tick, TimerId, TimerQueue, Window};

/// What the lockstep saw of the structure's precision.
#[derive(Debug, Clone)]
pub struct Lateness {
    /// Lateness of every firing that was not early, in ticks (0 for an exact one).
    pub histogram: Histogram<u64>,
    /// Firings later than the model's.
    pub late: u64,
    /// Firings before the model's, allowed by their window (a clamped deadline).
    pub early: u64,
    /// The most ticks an early firing came before its deadline.
    pub most_early: Tick,
    /// Stops that found pending a timer the model had already fired.
    pub stopped_late: u64,
    /// Timers the model fired that were still pending when the workload ended.
    pub pending_late: u64,
    /// The largest lateness as a fraction of the timer's delay (deadline minus the clock
    /// at its start), over the firings with a delay.
    pub largest_fraction: f64,
    /// The largest `(lateness - 1 tick, floored at 0) / delay`, over the firings with a
    /// delay: the slack beyond the one tick a wheel that rounds every expiry up (Linux's
    /// `calc_index`) adds to every timer so that none fires early. At delay 1 or 2 that one
    /// tick alone is 100% or 50% of the delay, which says nothing of the wheel's levels.
    pub largest_fraction_beyond_one_tick: f64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            // Three significant digits over any tick count: auto-resizing.
            histogram: Histogram::new(3).expect("3 significant digits are valid"),
            late: 0,
            early: 0,
            most_early: 0,
            stopped_late: 0,
            pending_late: 0,
            largest_fraction: 0.0,
            largest_fraction_beyond_one_tick: 0.0,
        }
    }
}

impl Lateness {
    /// Firings measured (early ones apart).
    pub fn firings(&self) -> u64 {
        self.histogram.len()
    }

    /// The lateness at quantile `q` (0 to 1), in ticks.
    pub fn quantile(&self, q: f64) -> u64 {
        self.histogram.value_at_quantile(q)
    }

    /// The largest lateness, in ticks.
    pub fn max(&self) -> u64 {
        self.histogram.max()
    }

    /// One line: `p50 0, p99 7, max 512 ticks; largest 0.125 of its delay; ...`.
    pub fn describe(&self) -> String {
        format!(
            "{} of {} firings late: p50 {}, p99 {}, max {} ticks; the largest {:.3} of its \
             delay ({:.3} beyond one tick); {} early (clamped, up to {} ticks); {} stopped \
             late; {} pending late at the end",
            self.late,
            self.firings() + self.early,
            self.quantile(0.5),
            self.quantile(0.99),
            self.max(),
            self.largest_fraction,
            self.largest_fraction_beyond_one_tick,
            self.early,
            self.most_early,
            self.stopped_late,
            self.pending_late,
        )
    }
}

/// One start of a timer, as the lockstep follows it.
struct Instance {
    /// The workload's timer.
    slot: Slot,
    /// The handle the structure gave.
    handle: TimerId,
    deadline: Tick,
    /// The clock at its start.
    started: Tick,
    /// The clock by which it must have fired: `max(deadline, started) + window.late`.
    latest: Tick,
    early_allowed: bool,
    /// The clock of the model's firing, once it fired there.
    model_fired: Option<Tick>,
    /// Pending in the structure.
    pending: bool,
}

/// A [`TimerQueue`] that drives `subject` and the reference model in lockstep and checks
/// the subject's firings against its declared windows (module documentation). Replay it
/// with [`crate::replay::drive`] like any queue; then [`Lockstep::finish`].
pub struct Lockstep<'a, Q> {
    subject: Q,
    model: ReferenceModel,
    program: &'a Program,
    /// The step being replayed, kept by the replay's observer, for messages.
    step: &'a Cell<u32>,
    instances: Vec<Instance>,
    /// The newest instance of each workload timer, whose handle the replay holds.
    current: Vec<u32>,
    /// The structure's handles, to their instance.
    handles: HashMap<TimerId, u32>,
    /// Instances the model fired and the structure still holds, by `(latest, instance)`.
    overdue: BTreeSet<(Tick, u32)>,
    lateness: Lateness,
    error: Option<String>,
}

const NONE: u32 = u32::MAX;

impl<'a, Q: TimerQueue<u64>> Lockstep<'a, Q> {
    /// A lockstep of `subject` (a fresh queue) with a fresh model, for `program`; `step`
    /// is the step being replayed, which the caller's observer keeps.
    pub fn new(subject: Q, program: &'a Program, step: &'a Cell<u32>) -> Self {
        Lockstep {
            subject,
            model: ReferenceModel::new(),
            program,
            step,
            instances: Vec::new(),
            current: vec![NONE; program.keys.len()],
            handles: HashMap::new(),
            overdue: BTreeSet::new(),
            lateness: Lateness::default(),
            error: None,
        }
    }

    /// The lateness seen and the structure, or the first violation of its declared
    /// precision, as `line N (`op`): what`.
    pub fn finish(mut self) -> Result<(Lateness, Q), String> {
        if let Some(error) = self.error {
            return Err(error);
        }
        self.lateness.pending_late = self.overdue.len() as u64;
        Ok((self.lateness, self.subject))
    }

    fn fail(error: &mut Option<String>, program: &Program, step: u32, what: String) {
        if error.is_none() {
            let line = program.lines.get(step as usize).copied().unwrap_or(0);
            let op = crate::replay::describe(program, step);
            *error = Some(format!("line {line} (`{op}`): {what}"));
        }
    }

    fn violation(&mut self, what: String) {
        Self::fail(&mut self.error, self.program, self.step.get(), what);
    }

    /// Records a new instance of `slot` (already started in the subject) and starts it in
    /// the model.
    fn begin(&mut self, slot: Slot, handle: TimerId, deadline: Tick, window: Window) {
        let now = self.subject.now();
        let instance = self.instances.len() as u32;
        self.instances.push(Instance {
            slot,
            handle,
            deadline,
            started: now,
            latest: deadline.max(now).saturating_add(window.late),
            early_allowed: window.early,
            model_fired: None,
            pending: true,
        });
        let previous = std::mem::replace(&mut self.current[slot as usize], instance);
        if previous != NONE {
            self.handles
                .remove(&self.instances[previous as usize].handle);
        }
        self.handles.insert(handle, instance);
        self.model.start_at(u64::from(instance), deadline);
    }

    /// The subject's answer to a stop of `instance` (`found`: it returned the timer), and
    /// the model's stop of the instance's timer.
    fn end(&mut self, instance: u32, found: bool) {
        let slot = self.instances[instance as usize].slot;
        let entry = &mut self.instances[instance as usize];
        if found {
            if !entry.pending {
                let what = format!(
                    "stop returned timer {} although it had fired",
                    self.program.keys[slot as usize]
                );
                return self.violation(what);
            }
            entry.pending = false;
            if entry.model_fired.is_some() {
                self.overdue.remove(&(entry.latest, instance));
                self.lateness.stopped_late += 1;
            }
        } else if entry.pending {
            let what = format!(
                "stop did not find timer {}, which is pending",
                self.program.keys[slot as usize]
            );
            return self.violation(what);
        }
        self.model.stop_now(u64::from(instance));
    }
}

impl<Q: TimerQueue<u64>> TimerQueue<u64> for Lockstep<'_, Q> {
    fn with_capacity(_: usize) -> Self {
        unreachable!("a lockstep is built with Lockstep::new")
    }

    fn start(&mut self, deadline: Tick, slot: u64) -> TimerId {
        let window = self.subject.window(deadline);
        let instance = self.instances.len() as u64;
        let handle = self.subject.start(deadline, instance);
        self.begin(slot as Slot, handle, deadline, window);
        handle
    }

    fn stop(&mut self, id: TimerId) -> Option<u64> {
        let found = self.subject.stop(id);
        let Some(&instance) = self.handles.get(&id) else {
            if found.is_some() {
                self.violation(format!(
                    "stop of a handle it never issued returned {found:?}"
                ));
            }
            return None;
        };
        self.end(instance, found.is_some());
        found.map(|_| u64::from(self.instances[instance as usize].slot))
    }

    fn restart(&mut self, id: TimerId, deadline: Tick, slot: u64) -> (TimerId, Option<u64>) {
        let window = self.subject.window(deadline);
        let instance = self.instances.len() as u64;
        let (handle, found) = self.subject.restart(id, deadline, instance);
        let old = self.handles.get(&id).copied();
        match old {
            Some(old) => self.end(old, found.is_some()),
            None if found.is_some() => self.violation(format!(
                "restart of a handle it never issued found {found:?}"
            )),
            None => {}
        }
        self.begin(slot as Slot, handle, deadline, window);
        (handle, found.map(|_| slot))
    }

    fn advance<F: FnMut(TimerId, u64, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        let Lockstep {
            subject,
            model,
            program,
            step,
            instances,
            overdue,
            lateness,
            error,
            ..
        } = self;
        let step = step.get();
        // Within an `n`, an exact event loop would have woken at each deadline.
        let sleeping = matches!(program.steps.get(step as usize), Some(Step::Next));
        let before = model.now();
        model.move_to(to, |expiry| {
            let instance = expiry.id as u32;
            let entry = &mut instances[instance as usize];
            entry.model_fired = Some(if sleeping {
                expiry.deadline.max(before)
            } else {
                to
            });
            if entry.pending {
                overdue.insert((entry.latest, instance));
            }
        });
        subject.advance(to, |id, instance, deadline| {
            let Some(entry) = instances.get_mut(instance as usize) else {
                let what = format!("fired a value it was never given ({instance})");
                return Self::fail(error, program, step, what);
            };
            let key = program.keys[entry.slot as usize];
            if id != entry.handle || deadline != entry.deadline {
                let what = format!(
                    "timer {key} fired with handle {id:?} and deadline {deadline}, but start \
                     gave {:?} and {}",
                    entry.handle, entry.deadline
                );
                return Self::fail(error, program, step, what);
            }
            if !entry.pending {
                let what =
                    format!("timer {key} fired at {to} but was not pending (stopped or fired)");
                return Self::fail(error, program, step, what);
            }
            entry.pending = false;
            match entry.model_fired {
                Some(at) => {
                    overdue.remove(&(entry.latest, instance as u32));
                    let late = to - at;
                    lateness.late += u64::from(late > 0);
                    lateness.histogram.saturating_record(late);
                    let delay = entry.deadline.saturating_sub(entry.started);
                    if delay > 0 {
                        let fraction = late as f64 / delay as f64;
                        lateness.largest_fraction = lateness.largest_fraction.max(fraction);
                        let beyond = late.saturating_sub(1) as f64 / delay as f64;
                        lateness.largest_fraction_beyond_one_tick =
                            lateness.largest_fraction_beyond_one_tick.max(beyond);
                    }
                }
                None if entry.early_allowed => {
                    lateness.early += 1;
                    lateness.most_early = lateness.most_early.max(deadline.saturating_sub(to));
                }
                None => {
                    let what = format!(
                        "timer {key} (deadline {deadline}) fired early, at {to}, before the \
                         reference model fires it"
                    );
                    return Self::fail(error, program, step, what);
                }
            }
            on_fire(id, u64::from(entry.slot), deadline);
        });
        if let Some(&(latest, instance)) = overdue.first()
            && latest <= to
        {
            let entry = &instances[instance as usize];
            let what = format!(
                "timer {} (deadline {}, started at {}) is still pending at {to}, past its \
                 declared bound ({latest})",
                program.keys[entry.slot as usize], entry.deadline, entry.started
            );
            Self::fail(error, program, step, what);
        }
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        self.subject.next_deadline()
    }

    fn next_deadline_steps(&self) -> u32 {
        self.subject.next_deadline_steps()
    }

    fn len(&self) -> usize {
        self.subject.len()
    }

    fn now(&self) -> Tick {
        self.subject.now()
    }

    fn work(&self) -> u64 {
        self.subject.work()
    }
}

/// What the replay of an approximate implementation did, verified within its declared
/// precision ([`crate::bounded`]).
#[derive(Debug, Clone)]
pub struct BoundedReplay {
    /// The implementation's own summary: its firings, counts and clock, which differ from
    /// the model's by design.
    pub summary: Summary,
    /// How late (or early) it fired, against the model in lockstep.
    pub lateness: Lateness,
    /// The most timers pending at once.
    pub peak_pending: u64,
    /// Wall time of the replay loop, the lockstep model's work included.
    pub elapsed: Duration,
}

/// Replays `program` through `queue` (a fresh, approximate one) in lockstep with the
/// reference model, and verifies every firing against the window the queue declared for
/// it ([`crate::bounded`]). `log` is scratch space; on success it holds the queue's log,
/// sorted as an expiry log is. The error is the first violation, with its line.
pub fn replay_within_bound<Q: TimerQueue<u64>>(
    queue: Q,
    program: &Program,
    log: &mut Vec<Firing>,
) -> Result<BoundedReplay, String> {
    log.clear();
    let step = Cell::new(0);
    let mut lockstep = Lockstep::new(queue, program, &step);
    let mut handles = empty_handles(program);
    let mut counts = Counts::default();
    let mut observer = StepLog { step: &step, log };
    let started = Instant::now();
    let result = drive(
        &mut lockstep,
        program,
        &mut handles,
        &mut counts,
        &mut observer,
    );
    let elapsed = started.elapsed();
    result.map_err(|e| e.to_string())?;
    let (lateness, queue) = lockstep.finish()?;
    let summary = digest(
        program,
        log,
        &counts,
        queue.len() as u64,
        queue.now(),
        false,
    )
    .map_err(|e| e.to_string())?;
    Ok(BoundedReplay {
        summary,
        lateness,
        peak_pending: counts.peak_pending,
        elapsed,
    })
}

/// Logs every firing and keeps the step being replayed for the lockstep's messages. The
/// lockstep checks handles itself: a timer named again while the structure still holds
/// its late instance fires with the older handle, legitimately.
struct StepLog<'a> {
    step: &'a Cell<u32>,
    log: &'a mut Vec<Firing>,
}

impl Observer for StepLog<'_> {
    fn before(&mut self, step: u32, _: Kind) {
        self.step.set(step);
    }

    fn fired(&mut self, firing: Firing, _: TimerId, _: &[TimerId]) {
        self.log.push(firing);
    }
}
