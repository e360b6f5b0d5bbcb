//! The baselines: loops with no structure, on the same thread with the same knobs right
//! after the structure's run, so that a structure's lateness reads as the machine's plus
//! its own.
//!
//! - [`run`], the bare baseline: a loop that only sleeps, to the same deadlines with the
//!   same wait strategy, as cyclictest does (`lateness = return − requested end`, absolute
//!   ends so the schedule never drifts).
//! - [`run_loaded`], the loaded baseline: the same sleeps while the feeder sends the same
//!   operations at the same times, read and dropped. A server's loop wakes for its input
//!   too, and on a virtual machine a loop woken ~1,500 times a second by another CPU's
//!   writes returns from its deadline waits later at p99 than a loop that only sleeps
//!   (METHODOLOGY.md, *Live: a structure's p99 against its baseline*). Against the loaded
//!   baseline the difference is what the structure and the loop's applying of the
//!   operations add, with the input's effect on the kernel's wake-ups on both sides.

use crate::event_loop::{Input, Received};
use crate::feeder::{self, Feed, FeederInput};
use crate::measure;
use crate::schedule::Schedule;
use crate::sys::{self, Epoll, Pwait2};
use crate::wait::{Strategy, Waiter};
use hdrhistogram::Histogram;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Sleeps to each of `targets` (offsets from a fresh origin, in nanoseconds, any order;
/// duplicates once) with `strategy`, or for `tick` every period for `span_ns`; the
/// lateness of each return.
pub fn run(
    strategy: Strategy,
    targets: &[u64],
    span_ns: u64,
    pwait2: Pwait2,
) -> Result<Histogram<u64>, String> {
    let epoll = Epoll::new().map_err(|e| format!("epoll_create1: {e}"))?;
    // A little ahead, so that the first target is not already past when the loop starts.
    let origin = sys::now_ns() + 1_000_000;
    let mut waiter = Waiter::new(strategy, &epoll, origin, pwait2)?;
    sleep_to(strategy, origin, targets, span_ns, |until| {
        let woken = waiter
            .wait(&epoll, until)
            .map_err(|e| format!("the baseline's wait failed: {e}"))?;
        // Nothing else is watched: every return is the wait's own.
        Ok((woken.returned_ns, true))
    })
}

/// The sleeps both baselines make, through `wait(until)` (the return time, and whether
/// the wait's own timer ended it rather than input): to each of `targets` (offsets from
/// `origin`, any order, duplicates once, those within `span_ns`), each return at or after
/// its end noted against it; or, for `tick`, every period's return against its boundary
/// until `span_ns`.
fn sleep_to(
    strategy: Strategy,
    origin: u64,
    targets: &[u64],
    span_ns: u64,
    mut wait: impl FnMut(Option<u64>) -> Result<(u64, bool), String>,
) -> Result<Histogram<u64>, String> {
    let mut lateness = measure::histogram();
    if let Strategy::Tick { period_ns } = strategy {
        while sys::now_ns() < origin + span_ns {
            let (returned, expired) = wait(None)?;
            if expired {
                let since = returned.saturating_sub(origin);
                measure::note(
                    &mut lateness,
                    returned - (origin + since / period_ns * period_ns),
                );
            }
        }
        return Ok(lateness);
    }
    let mut ends: Vec<u64> = targets.iter().copied().filter(|&t| t <= span_ns).collect();
    ends.sort_unstable();
    ends.dedup();
    for offset in ends {
        let end = origin + offset;
        let returned = loop {
            let (returned, _) = wait(Some(end))?;
            if returned >= end {
                break returned;
            }
        };
        measure::note(&mut lateness, returned - end);
    }
    Ok(lateness)
}

/// The operations the loaded baseline's feeder sends: those the structure's run was sent.
pub struct Load {
    /// The workload on the clock, as the run's feeder had it.
    pub schedule: Arc<Schedule>,
    /// How many of [`Schedule::arrivals`] (a run cut by its limit sent fewer).
    pub count: usize,
    /// Nanoseconds per tick.
    pub tick_ns: u64,
    /// The feeder's CPU.
    pub cpu: Option<usize>,
    /// How long before tick 0 the feeder starts, as in the structure's run.
    pub lead_ns: u64,
}

/// What the loaded baseline saw.
pub struct Loaded {
    /// Return minus requested end of each deadline (or period) wait.
    pub lateness: Histogram<u64>,
    /// Operations read from the feeder (and dropped).
    pub arrivals: u64,
}

/// [`run`] with the feeder sending `load` beside it, each operation at its tick from the
/// same origin as the targets, read and dropped.
pub fn run_loaded(
    strategy: Strategy,
    targets: &[u64],
    span_ns: u64,
    pwait2: Pwait2,
    load: Load,
) -> Result<Loaded, String> {
    let epoll = Epoll::new().map_err(|e| format!("epoll_create1: {e}"))?;
    let origin = sys::now_ns() + load.lead_ns;
    let (loop_end, feeder_end) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = feeder::spawn(
        Feed {
            schedule: load.schedule,
            count: load.count,
            origin_ns: origin,
            tick_ns: load.tick_ns,
            end_ns: origin + span_ns,
            cpu: load.cpu,
        },
        feeder_end,
        stop.clone(),
    );
    let mut input = FeederInput::new(loop_end);
    let measured = input
        .watch(&epoll)
        .map_err(|e| format!("the loaded baseline's socket: {e}"))
        .and_then(|()| {
            let waiter = Waiter::new(strategy, &epoll, origin, pwait2)?;
            LoadedLoop {
                epoll: &epoll,
                waiter,
                input: &mut input,
                watching: true,
                arrivals: 0,
            }
            .sleep(strategy, origin, targets, span_ns)
        });
    stop.store(true, Ordering::Relaxed);
    // Closing the loop's end lets a feeder blocked on a full socket return.
    drop(input);
    let _ = feeder.join();
    measured
}

struct LoadedLoop<'a> {
    epoll: &'a Epoll,
    waiter: Waiter,
    input: &'a mut FeederInput,
    /// False once the feeder's socket ended (its end record, or closed): not read again.
    watching: bool,
    arrivals: u64,
}

impl LoadedLoop<'_> {
    fn sleep(
        mut self,
        strategy: Strategy,
        origin: u64,
        targets: &[u64],
        span_ns: u64,
    ) -> Result<Loaded, String> {
        sys::sleep_until(origin);
        let lateness = sleep_to(strategy, origin, targets, span_ns, |until| self.wait(until))?;
        Ok(Loaded {
            lateness,
            arrivals: self.arrivals,
        })
    }

    /// One wait; reads and drops what arrived. The return time, and whether the wait's
    /// timer (not only input) ended it.
    fn wait(&mut self, until: Option<u64>) -> Result<(u64, bool), String> {
        let woken = self
            .waiter
            .wait(self.epoll, until)
            .map_err(|e| format!("the loaded baseline's wait failed: {e}"))?;
        if woken.io && self.watching {
            let mut received = Vec::new();
            self.input
                .read(self.epoll, &[], &mut received)
                .map_err(|e| format!("the loaded baseline's read failed: {e}"))?;
            for item in received {
                match item {
                    Received::Arrival(_) => self.arrivals += 1,
                    Received::End | Received::Cut(_) => {
                        // Level-triggered: an ended socket would wake every wait.
                        self.watching = false;
                        let _ = self.input.unwatch(self.epoll);
                    }
                }
            }
        }
        Ok((woken.returned_ns, woken.expirations > 0 || !woken.io))
    }
}
