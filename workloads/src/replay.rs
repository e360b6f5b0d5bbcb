//! Replays a [`Program`] through any [`TimerQueue`] and verifies what it fired against the
//! reference model, before any time is reported.
//!
//! The replay records every firing in a preallocated log (clock, deadline, timer, step) and
//! counts starts, stops and misses; the time reported covers exactly that loop. Verification
//! comes after, outside the timed region: within each operation the implementation must have
//! fired in non-decreasing deadline order, and the log, sorted within each operation by
//! `(deadline, timer name)`, must equal the model's line for line; the summary (counts,
//! final clock, pending, digest) must equal the model's too.
//!
//! `n` is replayed as an event loop sleeps: `advance(max(next_deadline(), now))` until
//! something fires. A wheel whose `next_deadline` is a lower bound takes a few rounds; more
//! rounds than it declares ([`TimerQueue::next_deadline_steps`]) is a failure.

pub use crate::bounded::{BoundedReplay, replay_within_bound};
use crate::program::{Firing, Program, Step};
use crate::reference::{Expiry, Summary, Tally};
use std::time::{Duration, Instant};
use timerbench_impls::{QueueVisitor, TimerId, TimerQueue, Variant};

/// What a replay did, once verified.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The summary, equal to the model's.
    pub summary: Summary,
    /// Wall time of the replay loop.
    pub elapsed: Duration,
}

/// Why a replay is not to be trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// An `n` that did not fire within the declared number of rounds.
    #[error(
        "line {line} (`{op}`): no timer fired after {rounds} rounds of advance(next_deadline), {declared} declared"
    )]
    SleepDidNotFire {
        /// The file line.
        line: u64,
        /// The operation.
        op: String,
        /// Rounds taken.
        rounds: u32,
        /// Rounds the implementation declares.
        declared: u32,
    },
    /// `on_fire` reported a handle other than the one `start` returned.
    #[error(
        "line {line} (`{op}`): timer {key} fired with handle {got:?}, but start gave {expected:?}"
    )]
    WrongHandle {
        /// The file line.
        line: u64,
        /// The operation.
        op: String,
        /// The timer's name.
        key: u64,
        /// The handle from `start`.
        expected: TimerId,
        /// The handle from `on_fire`.
        got: TimerId,
    },
    /// Within one operation a later deadline fired before an earlier one.
    #[error("line {line} (`{op}`): fired deadline {later} before deadline {earlier}")]
    OutOfOrder {
        /// The file line.
        line: u64,
        /// The operation.
        op: String,
        /// The deadline fired first.
        later: u64,
        /// The smaller deadline fired after it.
        earlier: u64,
    },
    /// The firings differ from the model's.
    #[error("first differing firing at line {line} (`{op}`): expected {expected}, got {got}")]
    Differs {
        /// The file line of the operation where they part.
        line: u64,
        /// The operation.
        op: String,
        /// The model's firing, `NOW ID DEADLINE`, or "no firing".
        expected: String,
        /// The implementation's.
        got: String,
    },
    /// Same firings, different counts or clock.
    #[error("summary differs: expected {expected:?}, got {got:?}")]
    SummaryDiffers {
        /// The model's.
        expected: Box<Summary>,
        /// The implementation's.
        got: Box<Summary>,
    },
}

/// Counts kept during a replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Timers started (restarts included).
    pub started: u64,
    /// Pending timers stopped (by `x` or `r`).
    pub stopped: u64,
    /// `x` of a timer that was not pending.
    pub misses: u64,
    /// Timers fired.
    pub fired: u64,
    /// The most timers pending at once, seen after each start.
    pub peak_pending: u64,
}

impl Counts {
    #[inline]
    fn note_start(&mut self) {
        self.started += 1;
        let pending = self.started - self.stopped - self.fired;
        self.peak_pending = self.peak_pending.max(pending);
    }
}

/// The unit a replay times on its own: one operation line, except that `t N` is `N`
/// one-tick calls, each its own unit, because the per-tick cost is what a tick-driven
/// wheel is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `s`.
    Start,
    /// `x`.
    Stop,
    /// `r`.
    Restart,
    /// `a`.
    Advance,
    /// One call of a `t`.
    Tick,
    /// `n`, all its rounds.
    Next,
}

impl Kind {
    /// Every kind, in file-letter order.
    pub const ALL: [Kind; 6] = [
        Kind::Start,
        Kind::Stop,
        Kind::Restart,
        Kind::Advance,
        Kind::Tick,
        Kind::Next,
    ];

    /// Its name in results: `start`, `stop`, `restart`, `advance`, `tick`, `next`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Start => "start",
            Kind::Stop => "stop",
            Kind::Restart => "restart",
            Kind::Advance => "advance",
            Kind::Tick => "tick",
            Kind::Next => "next",
        }
    }
}

/// What a replay does around each unit of work and each firing. Every method defaults to
/// nothing, so a replay with [`Quiet`] compiles down to the queue's own operations.
pub trait Observer {
    /// Before a unit of `kind` in step `step`.
    #[inline]
    fn before(&mut self, _step: u32, _kind: Kind) {}
    /// After it.
    #[inline]
    fn after(&mut self, _step: u32, _kind: Kind) {}
    /// A timer fired: the firing as the log has it, the handle `on_fire` reported, and the
    /// handles `start` gave, by slot (the timer's is `handles[firing.slot]`). The table,
    /// not the one handle, is passed so that an observer that does not check handles
    /// costs the measured loop no lookup per firing.
    #[inline]
    fn fired(&mut self, _firing: Firing, _reported: TimerId, _handles: &[TimerId]) {}
}

/// The observer that observes nothing.
pub struct Quiet;

impl Observer for Quiet {}

/// Replays `program` through `queue`, calling `observer` around each unit and for each
/// firing. `handles` must hold one entry per slot; `counts` accumulates.
pub fn drive<Q: TimerQueue<u64>, O: Observer>(
    queue: &mut Q,
    program: &Program,
    handles: &mut [TimerId],
    counts: &mut Counts,
    observer: &mut O,
) -> Result<(), ReplayError> {
    for (index, &step) in program.steps.iter().enumerate() {
        let step_index = index as u32;
        match step {
            Step::Start { slot, delay } => {
                observer.before(step_index, Kind::Start);
                handles[slot as usize] = queue.start(queue.now() + delay, u64::from(slot));
                observer.after(step_index, Kind::Start);
                counts.note_start();
            }
            Step::Stop { slot } => {
                observer.before(step_index, Kind::Stop);
                let stopped = queue.stop(handles[slot as usize]);
                observer.after(step_index, Kind::Stop);
                match stopped {
                    Some(_) => counts.stopped += 1,
                    None => counts.misses += 1,
                }
            }
            Step::Restart { slot, delay } => {
                observer.before(step_index, Kind::Restart);
                let deadline = queue.now() + delay;
                let (handle, stopped) =
                    queue.restart(handles[slot as usize], deadline, u64::from(slot));
                handles[slot as usize] = handle;
                observer.after(step_index, Kind::Restart);
                counts.stopped += u64::from(stopped.is_some());
                counts.note_start();
            }
            Step::Advance { ticks } => {
                let to = queue.now() + ticks;
                observer.before(step_index, Kind::Advance);
                advance(queue, to, step_index, handles, counts, observer);
                observer.after(step_index, Kind::Advance);
            }
            Step::Tick { ticks } => {
                // Each tick is its own clock move, and a firing is logged at the tick that
                // fired it (the format's "Outcome"), so a timer fired late within the line
                // is caught.
                let end = queue.now() + ticks;
                for tick in queue.now() + 1..=end {
                    observer.before(step_index, Kind::Tick);
                    advance(queue, tick, step_index, handles, counts, observer);
                    observer.after(step_index, Kind::Tick);
                }
            }
            Step::Next => {
                observer.before(step_index, Kind::Next);
                let declared = queue.next_deadline_steps();
                let mut rounds = 0;
                while let Some(bound) = queue.next_deadline() {
                    let before = counts.fired;
                    let to = bound.max(queue.now());
                    advance(queue, to, step_index, handles, counts, observer);
                    rounds += 1;
                    if counts.fired > before {
                        break;
                    }
                    if rounds >= declared {
                        return Err(ReplayError::SleepDidNotFire {
                            line: program.lines[index],
                            op: describe(program, step_index),
                            rounds,
                            declared,
                        });
                    }
                }
                observer.after(step_index, Kind::Next);
            }
        }
    }
    Ok(())
}

/// One clock move, `queue.advance(to)`, reporting each firing with the clock `to`.
#[inline]
fn advance<Q: TimerQueue<u64>, O: Observer>(
    queue: &mut Q,
    to: u64,
    step: u32,
    handles: &[TimerId],
    counts: &mut Counts,
    observer: &mut O,
) {
    queue.advance(to, |id, slot, deadline| {
        counts.fired += 1;
        let slot = slot as u32;
        let firing = Firing {
            now: to,
            deadline,
            slot,
            step,
        };
        observer.fired(firing, id, handles);
    });
}

/// A handle table with no live handle in it.
pub fn empty_handles(program: &Program) -> Vec<TimerId> {
    vec![TimerId::from_parts(u32::MAX, 0); program.keys.len()]
}

/// Replays `program` through `queue` (a fresh one), then verifies it exactly. `log` is
/// scratch space, reused across calls; on success it holds the sorted log.
pub fn replay<Q: TimerQueue<u64>>(
    mut queue: Q,
    program: &Program,
    log: &mut Vec<Firing>,
) -> Result<Replay, ReplayError> {
    log.clear();
    log.reserve(program.expected.len());
    let mut handles = empty_handles(program);
    let mut recorder = Recorder {
        log,
        wrong_handle: None,
    };
    let mut counts = Counts::default();
    let started = Instant::now();
    let result = drive(
        &mut queue,
        program,
        &mut handles,
        &mut counts,
        &mut recorder,
    );
    let elapsed = started.elapsed();
    result?;
    if let Some((firing, got)) = recorder.wrong_handle {
        return Err(ReplayError::WrongHandle {
            line: program.lines[firing.step as usize],
            op: describe(program, firing.step),
            key: program.keys[firing.slot as usize],
            expected: handles[firing.slot as usize],
            got,
        });
    }
    let summary = verify(
        program,
        recorder.log,
        &counts,
        queue.len() as u64,
        queue.now(),
    )?;
    Ok(Replay { summary, elapsed })
}

/// Logs every firing and notes the first whose handle is not the one `start` gave.
pub struct Recorder<'a> {
    /// The firings, in the order the queue reported them.
    pub log: &'a mut Vec<Firing>,
    /// The first firing with a wrong handle, and that handle.
    pub wrong_handle: Option<(Firing, TimerId)>,
}

impl Observer for Recorder<'_> {
    #[inline]
    fn fired(&mut self, firing: Firing, reported: TimerId, handles: &[TimerId]) {
        if reported != handles[firing.slot as usize] && self.wrong_handle.is_none() {
            self.wrong_handle = Some((firing, reported));
        }
        self.log.push(firing);
    }
}

/// A replay verified the way its implementation's precision asks.
#[derive(Debug, Clone)]
pub enum Verified {
    /// Exact: the log equals the model's.
    Exact(Replay),
    /// Approximate: within its declared bound, in lockstep with the model.
    Bounded(BoundedReplay),
}

impl Verified {
    /// The implementation's summary (the model's, when exact).
    pub fn summary(&self) -> &Summary {
        match self {
            Verified::Exact(replay) => &replay.summary,
            Verified::Bounded(replay) => &replay.summary,
        }
    }
}

/// The visitor that replays `program` through a fresh queue of the visited variant, built
/// with room for the model's peak, and verifies it exactly ([`replay`]) or within its
/// declared bound ([`replay_within_bound`]), as the queue's
/// [`precision`](TimerQueue::precision) says. The error is the verification's message.
pub struct VerifyAsDeclared<'a> {
    /// The workload, loaded with the model.
    pub program: &'a Program,
    /// Scratch space for the log; on success it holds the sorted log.
    pub log: &'a mut Vec<Firing>,
}

impl QueueVisitor for VerifyAsDeclared<'_> {
    type Output = Result<Verified, String>;

    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output {
        let queue: Q = variant.build(self.program.peak_pending as usize);
        if queue.precision().is_exact() {
            replay(queue, self.program, self.log)
                .map(Verified::Exact)
                .map_err(|e| e.to_string())
        } else {
            replay_within_bound(queue, self.program, self.log)
                .map(Verified::Bounded)
                .map_err(|e| format!("beyond its declared bound: {e}"))
        }
    }
}

/// Replays `program` (loaded with the model) through a fresh queue of `variant`, verified
/// as its precision asks: [`VerifyAsDeclared`] on the registry's type for it.
pub fn verify_as_declared(
    variant: &Variant,
    program: &Program,
    log: &mut Vec<Firing>,
) -> Result<Verified, String> {
    timerbench_impls::registry::visit(variant, VerifyAsDeclared { program, log })
}

/// Checks order within each operation, sorts each operation's firings into log order, and
/// compares with the model.
fn verify(
    program: &Program,
    log: &mut [Firing],
    counts: &Counts,
    pending: u64,
    final_clock: u64,
) -> Result<Summary, ReplayError> {
    let summary = summarize(program, log, counts, pending, final_clock)?;
    first_difference(program, log)?;
    if summary != program.summary {
        return Err(ReplayError::SummaryDiffers {
            expected: Box::new(program.summary.clone()),
            got: Box::new(summary),
        });
    }
    Ok(summary)
}

/// The summary of a replay from its log: checks that each operation fired in
/// non-decreasing deadline order, sorts each operation's firings into log order (in
/// place), and digests the log.
pub fn summarize(
    program: &Program,
    log: &mut [Firing],
    counts: &Counts,
    pending: u64,
    final_clock: u64,
) -> Result<Summary, ReplayError> {
    digest(program, log, counts, pending, final_clock, true)
}

/// [`summarize`], checking the order within each operation only if `ordered` (an
/// approximate structure does not promise it).
pub(crate) fn digest(
    program: &Program,
    log: &mut [Firing],
    counts: &Counts,
    pending: u64,
    final_clock: u64,
    ordered: bool,
) -> Result<Summary, ReplayError> {
    for group in log.chunk_by_mut(|a, b| a.step == b.step) {
        if !ordered {
            group.sort_unstable_by_key(|f| (f.now, f.deadline, program.keys[f.slot as usize]));
            continue;
        }
        if let Some(pair) = group.windows(2).find(|p| p[1].deadline < p[0].deadline) {
            let step = pair[0].step;
            return Err(ReplayError::OutOfOrder {
                line: program.lines[step as usize],
                op: describe(program, step),
                later: pair[0].deadline,
                earlier: pair[1].deadline,
            });
        }
        group.sort_unstable_by_key(|f| (f.deadline, program.keys[f.slot as usize]));
    }
    let mut tally = Tally::default();
    for firing in log.iter() {
        tally.fired(expiry(program, firing));
    }
    tally.summary.operations = program.steps.len() as u64;
    tally.summary.started = counts.started;
    tally.summary.stopped = counts.stopped;
    tally.summary.misses = counts.misses;
    Ok(tally.finish(pending, final_clock))
}

/// The first line where a sorted log differs from the model's, as an error.
fn first_difference(program: &Program, log: &[Firing]) -> Result<(), ReplayError> {
    if let Some(index) =
        (0..log.len().max(program.expected.len())).find(|&i| log.get(i) != program.expected.get(i))
    {
        let (ours, theirs) = (program.expected.get(index), log.get(index));
        // Where they part: the earlier of the two operations that fired the two lines.
        let step = match (ours, theirs) {
            (Some(a), Some(b)) => a.step.min(b.step),
            (Some(only), None) | (None, Some(only)) => only.step,
            (None, None) => unreachable!("they differ at this index"),
        };
        let show = |f: Option<&Firing>| {
            f.map_or("no firing".to_string(), |f| {
                format!("`{}`", expiry(program, f))
            })
        };
        return Err(ReplayError::Differs {
            line: program.lines[step as usize],
            op: describe(program, step),
            expected: show(ours),
            got: show(theirs),
        });
    }
    Ok(())
}

/// A firing as a line of the expiry log.
pub fn expiry(program: &Program, firing: &Firing) -> Expiry {
    Expiry {
        now: firing.now,
        deadline: firing.deadline,
        id: program.keys[firing.slot as usize],
    }
}

/// Operation `step` as the file wrote it.
pub fn describe(program: &Program, step: u32) -> String {
    let key = |slot: u32| program.keys[slot as usize];
    match program.steps[step as usize] {
        Step::Start { slot, delay } => format!("s {} {delay}", key(slot)),
        Step::Stop { slot } => format!("x {}", key(slot)),
        Step::Restart { slot, delay } => format!("r {} {delay}", key(slot)),
        Step::Advance { ticks } => format!("a {ticks}"),
        Step::Tick { ticks } => format!("t {ticks}"),
        Step::Next => "n".to_string(),
    }
}
