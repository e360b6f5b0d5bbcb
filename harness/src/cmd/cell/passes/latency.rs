//! The latency pass: one replay with a clock read before and after every unit (an
//! operation line, or one tick of a `t`), every unit recorded in a histogram per kind
//! (never sampled), and the slowest advance per window of the run, the advance series.
//!
//! Every recorded latency includes the probe's own cost, so the cost of an empty probe
//! with the same clock ([`probe_cost`]) is measured first and recorded with the figures:
//! the mean has it subtracted, the percentiles cannot (see [`summarize_latency`]).

use super::timed::{Recipe, TimedWorkload};
use crate::cmd::cell::clock::{ProbeClock, ProbeCost, probe_cost};
use crate::schema::{AdvanceSeries, Clock, Latency};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use timerbench_impls::TimerQueue;
use timerbench_workloads::reference::Summary;
use timerbench_workloads::replay::{Kind, Observer};

/// The highest latency a histogram tracks, nanoseconds (an hour); longer is recorded as
/// that.
const HISTOGRAM_MAX_NS: u64 = 3_600_000_000_000;

/// The advance series has about this many windows, whatever the workload's length: enough
/// to draw, few enough to store in every record.
const SERIES_WINDOWS: u64 = 500;

/// What the latency pass gives the record, and the probe's cost for the diagnostics.
pub(in crate::cmd::cell) struct LatencyFigures {
    /// Per kind of unit that occurred, by its name.
    pub latency: BTreeMap<String, Latency>,
    /// The slowest advance, tick or next of each window.
    pub advance_series: AdvanceSeries,
    /// The clock and what an empty unit records with it.
    pub clock: Clock,
    /// The empty probe's cost, both figures.
    pub probe: ProbeCost,
}

/// Replays `workload` once through a fresh `Q` built by `recipe`, probed with `clock`:
/// the record's latency figures, or how the replay disagreed with the verified
/// `reference` (the inner error). The outer error is a histogram that cannot be made.
pub(in crate::cmd::cell) fn latency<Q: TimerQueue<u64>, C: ProbeClock>(
    workload: &TimedWorkload,
    recipe: Recipe<'_>,
    clock: &C,
    reference: &Summary,
) -> anyhow::Result<Result<LatencyFigures, String>> {
    let probe_cost = probe_cost(clock);
    let steps = workload.timed().steps.len() as u64;
    let window_ops = (steps / SERIES_WINDOWS).max(1);
    let mut probe = Probe::new(clock, window_ops, steps)?;
    {
        let disagreed = |message: String| format!("latency pass: {message}");
        let ready = match workload.fresh_queue::<Q>(recipe) {
            Ok(ready) => ready,
            Err(error) => return Ok(Err(disagreed(error.to_string()))),
        };
        if let Err(message) = ready.observe(&mut probe).check(reference) {
            return Ok(Err(disagreed(message)));
        }
    }
    let mut latency = BTreeMap::new();
    for kind in Kind::ALL {
        let histogram = &probe.histograms[kind as usize];
        if !histogram.is_empty() {
            latency.insert(
                kind.name().to_string(),
                summarize_latency(histogram, probe_cost.recorded_ns)?,
            );
        }
    }
    Ok(Ok(LatencyFigures {
        latency,
        advance_series: AdvanceSeries {
            window_ops,
            max_ns: probe.series,
        },
        clock: Clock {
            source: clock.source(),
            overhead_ns: probe_cost.recorded_ns,
        },
        probe: probe_cost,
    }))
}

/// The record's summary of one kind's histogram. `mean_ns` has the probe's own cost
/// (`overhead_ns`, what an empty unit records) subtracted, clamped at 0; the percentiles
/// and the maximum are the values as recorded (to the histogram's 3 significant digits),
/// probe cost included, since a distribution cannot be shifted by a mean; the histogram
/// too holds the raw values.
fn summarize_latency(histogram: &Histogram<u64>, overhead_ns: f64) -> anyhow::Result<Latency> {
    let (percentiles, histogram_v2) = percentiles_and_v2(histogram)?;
    Ok(Latency {
        count: histogram.len(),
        mean_ns: (histogram.mean() - overhead_ns).max(0.0),
        percentiles,
        histogram_v2,
    })
}

/// The record's percentiles (`p50` to `p99.99`, and `max`) of `histogram`, and the whole
/// histogram as HdrHistogram V2 in base64.
pub(in crate::cmd::cell) fn percentiles_and_v2(
    histogram: &Histogram<u64>,
) -> anyhow::Result<(BTreeMap<String, u64>, String)> {
    Ok((
        timerbench_results::histogram::percentiles(histogram),
        timerbench_results::histogram::encode_v2(histogram)?,
    ))
}

/// The latency pass's observer: a clock reading before each unit, and after it the
/// difference recorded in that kind's histogram and in the advance series.
pub(in crate::cmd::cell) struct Probe<'c, C: ProbeClock> {
    clock: &'c C,
    start: C::Stamp,
    /// One per [`Kind`], indexed by `kind as usize`.
    histograms: Vec<Histogram<u64>>,
    window_ops: u64,
    /// The slowest advance, tick or next unit of each window.
    series: Vec<u64>,
}

impl<'c, C: ProbeClock> Probe<'c, C> {
    /// A probe with empty histograms, and an advance series of `window_ops` steps per
    /// window over `steps` steps.
    pub(in crate::cmd::cell) fn new(
        clock: &'c C,
        window_ops: u64,
        steps: u64,
    ) -> anyhow::Result<Self> {
        let histograms = Kind::ALL
            .iter()
            .map(|_| Histogram::new_with_bounds(1, HISTOGRAM_MAX_NS, 3))
            .collect::<Result<_, _>>()
            .map_err(|e| anyhow::anyhow!("cannot create a histogram: {e:?}"))?;
        Ok(Probe {
            clock,
            start: clock.read(),
            histograms,
            window_ops,
            series: vec![0; steps.div_ceil(window_ops) as usize],
        })
    }

    /// The histogram of the units of `kind`.
    pub(in crate::cmd::cell) fn histogram_mut(&mut self, kind: Kind) -> &mut Histogram<u64> {
        &mut self.histograms[kind as usize]
    }
}

impl<C: ProbeClock> Observer for Probe<'_, C> {
    #[inline(always)]
    fn before(&mut self, _step: u32, _kind: Kind) {
        self.start = self.clock.read();
    }

    #[inline(always)]
    fn after(&mut self, step: u32, kind: Kind) {
        let end = self.clock.read();
        let nanos = self.clock.nanos(self.start, end);
        self.histograms[kind as usize].saturating_record(nanos);
        if matches!(kind, Kind::Advance | Kind::Tick | Kind::Next) {
            let window = &mut self.series[(u64::from(step) / self.window_ops) as usize];
            *window = (*window).max(nanos);
        }
    }
}
