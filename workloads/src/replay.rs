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

use crate::program::{Firing, Program, Step};
use crate::reference::{Expiry, Summary, Tally};
use std::time::{Duration, Instant};
use timerbench_impls::{TimerId, TimerQueue};

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

/// Counts kept during the replay.
#[derive(Default)]
struct Counts {
    started: u64,
    stopped: u64,
    misses: u64,
}

/// Replays `program` through a new `Q`, then verifies it. `log` is scratch space, reused
/// across calls; on success it holds the sorted log.
pub fn replay<Q: TimerQueue<u64>>(
    program: &Program,
    log: &mut Vec<Firing>,
) -> Result<Replay, ReplayError> {
    log.clear();
    log.reserve(program.expected.len());
    let mut queue = Q::with_capacity(program.peak_pending as usize);
    let mut recorder = Recorder {
        handles: vec![TimerId::from_parts(u32::MAX, 0); program.keys.len()],
        log,
        wrong_handle: None,
    };
    let mut counts = Counts::default();
    let started = Instant::now();
    let result = run(&mut queue, program, &mut recorder, &mut counts);
    let elapsed = started.elapsed();
    result?;
    if let Some((step, slot, got)) = recorder.wrong_handle {
        return Err(ReplayError::WrongHandle {
            line: program.lines[step as usize],
            op: describe(program, step),
            key: program.keys[slot as usize],
            expected: recorder.handles[slot as usize],
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

/// The handles `start` gave, and the log of what fired.
struct Recorder<'a> {
    /// Per slot, the handle of its latest start.
    handles: Vec<TimerId>,
    log: &'a mut Vec<Firing>,
    /// The first firing whose handle was not the one `start` gave: step, slot, handle.
    wrong_handle: Option<(u32, u32, TimerId)>,
}

impl Recorder<'_> {
    /// `queue.advance(to)`, logging each firing with the clock `end` of its operation.
    #[inline]
    fn advance<Q: TimerQueue<u64>>(&mut self, queue: &mut Q, to: u64, end: u64, step: u32) {
        queue.advance(to, |id, slot, deadline| {
            let slot = slot as u32;
            if self.handles[slot as usize] != id && self.wrong_handle.is_none() {
                self.wrong_handle = Some((step, slot, id));
            }
            self.log.push(Firing {
                now: end,
                deadline,
                slot,
                step,
            });
        });
    }
}

/// The measured loop.
fn run<Q: TimerQueue<u64>>(
    queue: &mut Q,
    program: &Program,
    recorder: &mut Recorder<'_>,
    counts: &mut Counts,
) -> Result<(), ReplayError> {
    for (index, &step) in program.steps.iter().enumerate() {
        let step_index = index as u32;
        match step {
            Step::Start { slot, delay } => {
                recorder.handles[slot as usize] = queue.start(queue.now() + delay, u64::from(slot));
                counts.started += 1;
            }
            Step::Stop { slot } => match queue.stop(recorder.handles[slot as usize]) {
                Some(_) => counts.stopped += 1,
                None => counts.misses += 1,
            },
            Step::Restart { slot, delay } => {
                if queue.stop(recorder.handles[slot as usize]).is_some() {
                    counts.stopped += 1;
                }
                recorder.handles[slot as usize] = queue.start(queue.now() + delay, u64::from(slot));
                counts.started += 1;
            }
            Step::Advance { ticks } => {
                let to = queue.now() + ticks;
                recorder.advance(queue, to, to, step_index);
            }
            Step::Tick { ticks } => {
                // The log's clock is the one at the end of the operation.
                let end = queue.now() + ticks;
                for tick in queue.now() + 1..=end {
                    recorder.advance(queue, tick, end, step_index);
                }
            }
            Step::Next => {
                let declared = queue.next_deadline_steps();
                let mut rounds = 0;
                while let Some(bound) = queue.next_deadline() {
                    let before = recorder.log.len();
                    let to = bound.max(queue.now());
                    recorder.advance(queue, to, to, step_index);
                    rounds += 1;
                    if recorder.log.len() > before {
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
            }
        }
    }
    Ok(())
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
    for group in log.chunk_by_mut(|a, b| a.step == b.step) {
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
    let summary = tally.finish(pending, final_clock);
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
    if summary != program.summary {
        return Err(ReplayError::SummaryDiffers {
            expected: Box::new(program.summary.clone()),
            got: Box::new(summary),
        });
    }
    Ok(summary)
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
