//! The bare baseline: a loop that only sleeps, to the same deadlines with the same wait
//! strategy, as cyclictest does (`lateness = return − requested end`, absolute ends so the
//! schedule never drifts). Run on the same thread with the same knobs right after the
//! structure's run, so that a structure's lateness reads as the machine's plus its own.

use crate::measure;
use crate::sys::{self, Epoll, Pwait2};
use crate::wait::{Strategy, Waiter};
use hdrhistogram::Histogram;

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
    let mut lateness = measure::histogram();
    let failed = |e: std::io::Error| format!("the baseline's wait failed: {e}");
    if let Strategy::Tick { period_ns } = strategy {
        while sys::now_ns() < origin + span_ns {
            let woken = waiter.wait(&epoll, None).map_err(failed)?;
            let since = woken.returned_ns.saturating_sub(origin);
            let boundary = origin + since / period_ns * period_ns;
            measure::note(&mut lateness, woken.returned_ns - boundary);
        }
        return Ok(lateness);
    }
    let mut ends: Vec<u64> = targets.iter().copied().filter(|&t| t <= span_ns).collect();
    ends.sort_unstable();
    ends.dedup();
    for offset in ends {
        let end = origin + offset;
        let returned = loop {
            let woken = waiter.wait(&epoll, Some(end)).map_err(failed)?;
            if woken.returned_ns >= end {
                break woken.returned_ns;
            }
        };
        measure::note(&mut lateness, returned - end);
    }
    Ok(lateness)
}
