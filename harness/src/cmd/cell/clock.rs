//! The probe clock: what the latency pass reads before and after every unit of a replay.
//!
//! Two clocks sit behind one trait, [`ProbeClock`], so that the choice is one type alias
//! ([`LatencyClock`]) and the latency pass is generic over it: the time-stamp counter
//! through quanta ([`Tsc`]) and `std::time::Instant` ([`StdInstant`]). A probe is not free,
//! and every recorded latency includes its cost, so this module also measures what an
//! empty probe costs ([`probe_cost`], recorded with each cell) and compares the two clocks
//! (`timerbench cell --compare-clocks`), the measurement behind the choice.

use super::passes::latency::Probe;
use crate::schema::spread;
use std::time::Instant;
use timerbench_workloads::replay::{Kind, Observer};

/// The clock of the latency pass: the TSC, which on a machine with an invariant TSC
/// disturbs the replay about half as much as `Instant` and puts a smaller floor under
/// every recorded latency (`timerbench cell --compare-clocks` measures both;
/// METHODOLOGY.md, *How a cell is measured*).
pub type LatencyClock = Tsc;

/// A clock for timing one unit of a replay.
pub trait ProbeClock {
    /// A reading.
    type Stamp: Copy;
    /// Reads the clock.
    fn read(&self) -> Self::Stamp;
    /// Nanoseconds from `start` to `end` (0 if the clock went backwards).
    fn nanos(&self, start: Self::Stamp, end: Self::Stamp) -> u64;
    /// What it is, for the record.
    fn source(&self) -> String;
}

/// The time-stamp counter, read and scaled by quanta (plain `rdtsc`, no fence). Falls back
/// to the OS monotonic clock when the CPU has no invariant TSC; [`ProbeClock::source`]
/// says which.
pub struct Tsc {
    clock: quanta::Clock,
}

impl Tsc {
    /// Calibrates quanta's clock (once per process; up to 200 ms).
    pub fn new() -> Self {
        Tsc {
            clock: quanta::Clock::new(),
        }
    }
}

impl Default for Tsc {
    fn default() -> Self {
        Tsc::new()
    }
}

impl ProbeClock for Tsc {
    type Stamp = u64;

    #[inline(always)]
    fn read(&self) -> u64 {
        self.clock.raw()
    }

    #[inline(always)]
    fn nanos(&self, start: u64, end: u64) -> u64 {
        self.clock.delta_as_nanos(start, end)
    }

    fn source(&self) -> String {
        // quanta does not say which source it chose, except in its debug form.
        if format!("{:?}", self.clock).contains("Counter") {
            "tsc (quanta)".to_string()
        } else {
            "clock_gettime monotonic (quanta, no invariant TSC)".to_string()
        }
    }
}

/// `std::time::Instant`: `clock_gettime(CLOCK_MONOTONIC)` through the vDSO on Linux.
pub struct StdInstant;

impl ProbeClock for StdInstant {
    type Stamp = Instant;

    #[inline(always)]
    fn read(&self) -> Instant {
        Instant::now()
    }

    #[inline(always)]
    fn nanos(&self, start: Instant, end: Instant) -> u64 {
        end.saturating_duration_since(start).as_nanos() as u64
    }

    fn source(&self) -> String {
        "clock_gettime monotonic (std::time::Instant)".to_string()
    }
}

/// What an empty probe costs with one clock.
#[derive(Debug, Clone, Copy)]
pub struct ProbeCost {
    /// The mean value an empty unit records (the time between the two readings), the
    /// median over several runs: what every recorded latency includes.
    pub recorded_ns: f64,
    /// Wall time per empty before/after pair, recording included, the median over runs:
    /// what the probe adds to the replay.
    pub pair_ns: f64,
}

/// Measures an empty probe: runs of back-to-back before/after pairs through the same
/// observer the latency pass uses, so that the cost measured is the cost paid.
pub fn probe_cost<C: ProbeClock>(clock: &C) -> ProbeCost {
    const RUNS: usize = 9;
    const PAIRS: u32 = 100_000;
    let mut probe = Probe::new(clock, 1, 1).expect("the histogram bounds are valid");
    let mut recorded = Vec::with_capacity(RUNS);
    let mut pair = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        probe.histogram_mut(Kind::Start).reset();
        let timer = Instant::now();
        for _ in 0..PAIRS {
            probe.before(0, Kind::Start);
            probe.after(0, Kind::Start);
        }
        pair.push(timer.elapsed().as_nanos() as f64 / f64::from(PAIRS));
        recorded.push(probe.histogram_mut(Kind::Start).mean());
    }
    ProbeCost {
        recorded_ns: spread(recorded).median,
        pair_ns: spread(pair).median,
    }
}

/// `--compare-clocks`: the cost of an empty probe with each clock, on standard output.
pub(super) fn compare_clocks() {
    let calibrating = Instant::now();
    let tsc = Tsc::new();
    let calibration = calibrating.elapsed();
    for (source, cost) in [
        (tsc.source(), probe_cost(&tsc)),
        (StdInstant.source(), probe_cost(&StdInstant)),
    ] {
        println!(
            "{source}: an empty unit records {:.1} ns; a before/after pair costs {:.1} ns",
            cost.recorded_ns, cost.pair_ns
        );
    }
    println!(
        "(quanta's calibration took {:.1} ms)",
        calibration.as_secs_f64() * 1e3
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_probe_costs_little() {
        for cost in [probe_cost(&Tsc::new()), probe_cost(&StdInstant)] {
            assert!(cost.recorded_ns >= 0.0 && cost.recorded_ns < 10_000.0);
            assert!(cost.pair_ns > 0.0);
        }
    }
}
