//! The records of `timerbench live` the report shows (`live.jsonl`, `results/FORMAT.md`):
//! one file's records, grouped by workload, and the figures the Live section reads off one
//! record.

use crate::extras::first_appearance;
use crate::figures::{decode_histogram, thousands};
use anyhow::Context;
use hdrhistogram::Histogram;
use std::path::{Path, PathBuf};
use timerbench_results::live::{LiveRecord, Spread, read_live};

/// The wait strategies in the order the section shows them: deadline-driven with
/// nanoseconds, with milliseconds, through a timerfd, then tick-driven.
pub const WAITS: [&str; 4] = ["pwait2", "wait", "timerfd", "tick"];

/// One `live.jsonl`.
pub struct LiveSource {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its records, in file order.
    pub records: Vec<LiveRecord>,
}

/// Reads `path` (the reader refuses a malformed line or another version with its line).
pub fn load(path: &Path) -> anyhow::Result<LiveSource> {
    Ok(LiveSource {
        path: path.to_path_buf(),
        records: read_live(path)?,
    })
}

impl LiveSource {
    /// The workloads of its records, in the order of their first record.
    pub fn workloads(&self) -> Vec<&str> {
        first_appearance(self.records.iter().map(|r| r.workload.as_str()))
    }

    /// The records of `workload`: by structure (in the order of its first record), then by
    /// wait strategy ([`WAITS`]), then in file order.
    pub fn of_workload(&self, workload: &str) -> Vec<&LiveRecord> {
        let mut records: Vec<&LiveRecord> = self
            .records
            .iter()
            .filter(|r| r.workload == workload)
            .collect();
        let structures = self.structures(workload);
        let place = |r: &LiveRecord| {
            let structure = structures.iter().position(|s| *s == r.implementation);
            (structure, wait_index(&r.wait))
        };
        records.sort_by_key(|r| place(r));
        records
    }

    /// The structures of `workload`'s records, in the order of their first record.
    pub fn structures(&self, workload: &str) -> Vec<&str> {
        first_appearance(
            self.records
                .iter()
                .filter(|r| r.workload == workload)
                .map(|r| r.implementation.as_str()),
        )
    }

    /// The values of one setting over the records, each once: one when every run shared it.
    pub fn settings(&self, of: impl Fn(&LiveRecord) -> String) -> String {
        let values: Vec<String> = self.records.iter().map(of).collect();
        first_appearance(values.iter().map(String::as_str)).join(", ")
    }
}

/// The place of a wait strategy in [`WAITS`] (unknown ones after them).
pub fn wait_index(wait: &str) -> usize {
    WAITS.iter().position(|w| *w == wait).unwrap_or(WAITS.len())
}

/// A record's wait as the live command's table names it: `pwait2`, or `tick/10ms` with the
/// period.
pub fn wait_label(record: &LiveRecord) -> String {
    match record.period_ns {
        Some(period) if record.wait == "tick" => format!("tick/{}ms", period as f64 / 1e6),
        _ => record.wait.clone(),
    }
}

/// Nanoseconds in microseconds to about three digits: `88.9`, `1,021`.
pub fn micros(ns: u64) -> String {
    if ns < 100_000 {
        format!("{:.1}", ns as f64 / 1e3)
    } else {
        thousands((ns as f64 / 1e3).round() as u64)
    }
}

/// A rate per second: whole numbers from 10 on, one decimal below.
pub fn per_second(rate: f64) -> String {
    if rate >= 10.0 {
        thousands(rate.round() as u64)
    } else {
        format!("{rate:.1}")
    }
}

/// The lateness of a record against its percentile: from its histogram where the record
/// has one (schema 3), else through its spread's four points; `bare` picks the bare
/// loop's. A histogram that does not decode is an error naming what it was.
pub fn lateness_curve(record: &LiveRecord, bare: bool) -> anyhow::Result<Vec<(f64, f64)>> {
    let spread = if bare {
        &record.baseline
    } else {
        &record.lateness.total
    };
    let Some(histograms) = &record.histograms else {
        return Ok(spread_curve(spread));
    };
    let (encoded, what) = if bare {
        (&histograms.baseline_v2, "baseline_v2")
    } else {
        (&histograms.lateness_v2, "lateness_v2")
    };
    let histogram = decode_histogram(encoded).with_context(|| {
        format!(
            "{} with {}: the histogram `{what}` does not decode",
            record.implementation, record.wait
        )
    })?;
    Ok(histogram_curve(&histogram))
}

/// Quantiles of a whole histogram as the percentile charts draw them: (1 / (1 − p), ns)
/// for p = 1 − 1/2, 1 − 1/4, ... (two points per halving of the tail beyond the median)
/// while the count resolves p, then the largest at the count.
pub fn histogram_curve(histogram: &Histogram<u64>) -> Vec<(f64, f64)> {
    let count = histogram.len() as f64;
    if count == 0.0 {
        return Vec::new();
    }
    let mut points = Vec::new();
    let mut x = 2.0_f64;
    while x <= count {
        let ns = histogram.value_at_quantile(1.0 - 1.0 / x);
        points.push((x, ns.max(1) as f64));
        x *= std::f64::consts::SQRT_2;
    }
    points.push((count.max(2.0), histogram.max().max(1) as f64));
    points
}

/// The lateness of a spread against its percentile, as the report's percentile charts draw
/// it: points (1 / (1 − p), ns) at the median, at p99 and p99.9 when the count resolves
/// them, and the largest at the count. A record before schema 3 keeps these four figures,
/// not its histogram, so the curve runs through them. Drawn on a log axis, so 0 is drawn
/// at 1 ns.
pub fn spread_curve(spread: &Spread) -> Vec<(f64, f64)> {
    if spread.count == 0 {
        return Vec::new();
    }
    let count = spread.count as f64;
    let mut points = vec![(2.0, spread.p50_ns)];
    if count >= 100.0 {
        points.push((100.0, spread.p99_ns));
    }
    if count >= 1000.0 {
        points.push((1000.0, spread.p999_ns));
    }
    let last = points.last().map_or(2.0, |p| p.0);
    if count > last {
        points.push((count, spread.max_ns));
    }
    points
        .into_iter()
        .map(|(x, ns)| (x, ns.max(1) as f64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_rates_and_curves() {
        assert_eq!(micros(88_959), "89.0");
        assert_eq!(micros(1_020_927), "1,021");
        assert_eq!(micros(541), "0.5");
        assert_eq!(per_second(262.21), "262");
        assert_eq!(per_second(0.04), "0.0");
        let spread = Spread {
            count: 200,
            p50_ns: 10,
            p99_ns: 20,
            p999_ns: 30,
            max_ns: 40,
        };
        assert_eq!(
            spread_curve(&spread),
            vec![(2.0, 10.0), (100.0, 20.0), (200.0, 40.0)]
        );
        assert!(spread_curve(&Spread::default()).is_empty());
    }

    #[test]
    fn a_whole_histogram_is_drawn_through_its_tail_to_its_largest() {
        let mut histogram = Histogram::<u64>::new(3).unwrap();
        for ns in 1..=1000 {
            histogram.record(ns * 1000).unwrap();
        }
        let curve = histogram_curve(&histogram);
        assert_eq!(curve[0].0, 2.0);
        assert!((curve[0].1 / 500_000.0 - 1.0).abs() < 0.01, "{curve:?}");
        assert_eq!(curve.last().map(|p| p.0), Some(1000.0));
        assert!((curve.last().unwrap().1 - 1_000_000.0).abs() < 1000.0);
        assert!(curve.len() > 4, "more points than the four of a spread");
        assert!(
            curve
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
        );
        assert!(histogram_curve(&Histogram::<u64>::new(3).unwrap()).is_empty());
    }
}
