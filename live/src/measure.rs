//! What a live run measures: the lateness of every firing and its three parts, and the
//! loop thread's wakeups, CPU time and context switches per phase.

use crate::sys;
use hdrhistogram::Histogram;
use timerbench_results::live::{Spread, Usage};

/// A histogram of nanoseconds, three significant digits, growing as needed.
pub fn histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits are valid")
}

/// Records `value` in `histogram`, which grows to hold it (a `saturating_record` would
/// clamp it to the histogram's current reach instead, and a new one reaches only 2).
#[inline]
pub fn note(histogram: &mut Histogram<u64>, value: u64) {
    // Growing fails only past what a u64 histogram can represent at all.
    let _ = histogram.record(value);
}

/// `p50`, `p99`, `p99.9` and `max` of `histogram`, in nanoseconds.
pub fn spread(histogram: &Histogram<u64>) -> Spread {
    Spread {
        count: histogram.len(),
        p50_ns: histogram.value_at_quantile(0.5),
        p99_ns: histogram.value_at_quantile(0.99),
        p999_ns: histogram.value_at_quantile(0.999),
        max_ns: histogram.max(),
    }
}

/// The lateness of each firing, split as `total = rounding + wake + dispatch`.
///
/// With `deadline` the timer's deadline on the wall clock, `planned` the end the wait was
/// asked for (or the return itself, when the loop did not wait or woke early for I/O),
/// `returned` when the wait returned and `fired` when the callback ran:
/// rounding = `planned - deadline` (what the structure and the strategy chose: 0 for an
/// exact structure woken at its deadline, up to a period for `tick`), wake = `returned -
/// max(planned, deadline)` (the kernel and the scheduler), dispatch = `fired - returned`
/// (the structure's own work and the timers ahead in the batch). Each part is floored at
/// 0, and their sum is the total.
pub struct Lateness {
    /// Callback time minus deadline, for every firing not early.
    pub total: Histogram<u64>,
    /// The structure's and strategy's part.
    pub rounding: Histogram<u64>,
    /// The wait's part.
    pub wake: Histogram<u64>,
    /// Return to callback.
    pub dispatch: Histogram<u64>,
    /// Firings before their deadline on the wall clock.
    pub early: u64,
    /// The most nanoseconds an early firing came before its deadline.
    pub most_early_ns: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            total: histogram(),
            rounding: histogram(),
            wake: histogram(),
            dispatch: histogram(),
            early: 0,
            most_early_ns: 0,
        }
    }
}

impl Lateness {
    /// Records one firing (all times absolute, CLOCK_MONOTONIC).
    #[inline]
    pub fn record(&mut self, deadline_ns: u64, planned_ns: u64, returned_ns: u64, fired_ns: u64) {
        if fired_ns < deadline_ns {
            self.early += 1;
            self.most_early_ns = self.most_early_ns.max(deadline_ns - fired_ns);
            return;
        }
        let planned_ns = planned_ns.min(returned_ns);
        note(&mut self.total, fired_ns - deadline_ns);
        note(&mut self.rounding, planned_ns.saturating_sub(deadline_ns));
        note(
            &mut self.wake,
            returned_ns.saturating_sub(planned_ns.max(deadline_ns)),
        );
        note(&mut self.dispatch, fired_ns.saturating_sub(returned_ns));
    }
}

/// The loop thread's clocks and counters at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Snapshot {
    wall_ns: u64,
    cpu_ns: u64,
    voluntary: u64,
    involuntary: u64,
    wakeups: u64,
    useless: u64,
}

/// Counts wakeups as the loop goes, and gives a phase's [`Usage`] from two snapshots.
#[derive(Debug, Clone, Copy, Default)]
pub struct Meter {
    /// Waits that returned.
    pub wakeups: u64,
    /// Waits that returned with nothing fired and no I/O.
    pub useless: u64,
}

impl Meter {
    /// The calling (loop) thread's state now.
    pub fn snapshot(&self) -> Snapshot {
        let (voluntary, involuntary) = sys::thread_context_switches();
        Snapshot {
            wall_ns: sys::now_ns(),
            cpu_ns: sys::thread_cpu_ns(),
            voluntary,
            involuntary,
            wakeups: self.wakeups,
            useless: self.useless,
        }
    }
}

/// What happened between `from` and `to`.
pub fn usage(from: Snapshot, to: Snapshot) -> Usage {
    let wall_ns = to.wall_ns.saturating_sub(from.wall_ns);
    let seconds = wall_ns as f64 / sys::NANOS_PER_SECOND as f64;
    let per_second = |count: u64| {
        if seconds > 0.0 {
            count as f64 / seconds
        } else {
            0.0
        }
    };
    let cpu_ns = to.cpu_ns.saturating_sub(from.cpu_ns);
    Usage {
        wall_ns,
        wakeups: to.wakeups - from.wakeups,
        useless_wakeups: to.useless - from.useless,
        wakeups_per_second: per_second(to.wakeups - from.wakeups),
        useless_per_second: per_second(to.useless - from.useless),
        cpu_ns,
        cpu_ms_per_second: per_second(cpu_ns) / 1e6,
        voluntary_switches: to.voluntary.saturating_sub(from.voluntary),
        involuntary_switches: to.involuntary.saturating_sub(from.involuntary),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parts_add_up_to_the_lateness() {
        let mut lateness = Lateness::default();
        // Deadline 1000, asked to wake at 1200 (a tick boundary), woke at 1500, fired at 1600.
        lateness.record(1000, 1200, 1500, 1600);
        assert_eq!(lateness.total.max(), 600);
        assert_eq!(lateness.rounding.max(), 200);
        assert_eq!(lateness.wake.max(), 300);
        assert_eq!(lateness.dispatch.max(), 100);
        // Woken early by I/O (planned later than the return): no wake error.
        let mut io = Lateness::default();
        io.record(1000, 5000, 1500, 1500);
        assert_eq!(
            (io.rounding.max(), io.wake.max(), io.dispatch.max()),
            (500, 0, 0)
        );
        // Fired before the deadline: counted apart, not in the histograms.
        io.record(1000, 900, 900, 950);
        assert_eq!((io.early, io.most_early_ns, io.total.len()), (1, 50, 1));
    }
}
