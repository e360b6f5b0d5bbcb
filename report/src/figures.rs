//! The figures the report reads off one record, and the arithmetic it does on them.
//!
//! Only cells that verified (`ok`) have figures: every accessor here answers `None` for
//! the others, so no page or chart can show a wrong structure's speed by mistake.

use anyhow::anyhow;
use timerbench_results::counts::Metric;
use timerbench_results::{CellKey, CellRecord, KINDS, Latency, Lateness, Status};

/// `workload at N timers, implementation`.
pub fn describe(key: &CellKey) -> String {
    format!(
        "{} at {} timers, {}",
        key.workload,
        thousands(key.timers),
        key.implementation
    )
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The median ns/op of a verified cell.
pub fn ns_per_op(record: &CellRecord) -> Option<f64> {
    if record.status != Status::Ok {
        return None;
    }
    let median = record.throughput.as_ref()?.ns_per_op.median;
    (median.is_finite() && median > 0.0).then_some(median)
}

/// A verified cell's figure in `metric`: its median ns/op ([`ns_per_op`]), or its count
/// per counted line (`None` for a cell without counts, never 0; a count of 0 is a figure).
pub fn figure(record: &CellRecord, metric: Metric) -> Option<f64> {
    if !metric.is_count() {
        return ns_per_op(record);
    }
    if record.status != Status::Ok {
        return None;
    }
    metric
        .per_line(record)
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// How a verified cell's samples spread between the processes that took them and within
/// one: on a virtual machine one process's figures can differ from another's by far more
/// than its own samples do, which only several processes show.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessSpread {
    /// The processes the samples came from (1 for a record older than the field).
    pub processes: u32,
    /// Each process's median ns/op, in the order run.
    pub medians: Vec<f64>,
    /// The MAD of the processes' medians over their median; `None` with one process,
    /// which has no spread between processes to show.
    pub between: Option<f64>,
    /// The median over processes of each one's MAD over its median (with one process,
    /// the MAD of all samples over their median).
    pub within: f64,
}

/// The spreads between and within the processes of a verified cell.
pub fn process_spread(record: &CellRecord) -> Option<ProcessSpread> {
    ns_per_op(record)?;
    let throughput = record.throughput.as_ref()?;
    let processes = throughput.processes.max(1);
    let within = throughput.within_process();
    Some(ProcessSpread {
        processes,
        medians: throughput.process_medians.clone(),
        between: (processes > 1).then(|| throughput.between_processes()),
        within: if within.is_finite() { within } else { 0.0 },
    })
}

/// Whether a verified cell was measured on a loaded machine: one of its processes saw a
/// load average above the machine's CPUs ([`CellRecord::under_load`]).
/// Only cells with figures are said to be, since only their figures can be inflated.
pub fn measured_under_load(record: &CellRecord) -> bool {
    ns_per_op(record).is_some() && record.under_load()
}

/// The latency of operation kind `kind` in a verified cell that has any.
pub fn latency<'r>(record: &'r CellRecord, kind: &str) -> Option<&'r Latency> {
    (record.status == Status::Ok)
        .then(|| record.latency.get(kind))
        .flatten()
        .filter(|l| l.count > 0)
}

/// The slowest single call of a verified cell: the largest `max` latency over its
/// operation kinds, with the kind (the first in [`KINDS`] order on a tie). For an event
/// loop this stall, not the median, is what a reader has to budget for.
pub fn slowest_call(record: &CellRecord) -> Option<(&'static str, u64)> {
    KINDS
        .iter()
        .filter_map(|&kind| Some((kind, *latency(record, kind)?.percentiles.get("max")?)))
        .fold(None, |slowest, (kind, ns)| match slowest {
            Some((_, most)) if most >= ns => slowest,
            _ => Some((kind, ns)),
        })
}

/// The bytes per pending timer of a verified cell.
pub fn bytes_per_timer(record: &CellRecord) -> Option<f64> {
    if record.status != Status::Ok {
        return None;
    }
    let bytes = record.memory.as_ref()?.bytes_per_pending_timer;
    bytes.is_finite().then_some(bytes)
}

/// The lateness of an approximate cell that verified within its bound.
pub fn lateness(record: &CellRecord) -> Option<&Lateness> {
    (record.status == Status::Ok)
        .then_some(record.lateness.as_ref())
        .flatten()
}

/// A histogram of a record (latency in nanoseconds, lateness in ticks) decoded from its
/// `histogram_v2`.
pub fn decode_histogram(encoded: &str) -> anyhow::Result<hdrhistogram::Histogram<u64>> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|e| anyhow!("not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow!("not an HdrHistogram V2 serialization: {e:?}"))
}

/// The HdrHistogram percentile curve of a latency: points (1 / (1 - p), latency ns), from
/// the median out to the largest value, 20 points per decade of `1 / (1 - p)`. Drawn on a
/// log axis, so a latency under 1 ns is drawn at 1.
pub fn percentile_curve(latency: &Latency) -> anyhow::Result<Vec<(f64, f64)>> {
    histogram_curve(&latency.histogram_v2, 1)
}

/// The percentile curve of a lateness: points (1 / (1 - p), ticks late), as
/// [`percentile_curve`], with 0 (on time) kept: it is drawn on a linear axis.
pub fn lateness_curve(lateness: &Lateness) -> anyhow::Result<Vec<(f64, f64)>> {
    histogram_curve(&lateness.histogram_v2, 0)
}

/// The percentile curve of the histogram `encoded`, each value at least `floor`.
fn histogram_curve(encoded: &str, floor: u64) -> anyhow::Result<Vec<(f64, f64)>> {
    let histogram = decode_histogram(encoded)?;
    let count = histogram.len();
    if count == 0 {
        return Ok(Vec::new());
    }
    const STEPS_PER_DECADE: u32 = 20;
    let decades = (count as f64).log10();
    let steps = (decades * f64::from(STEPS_PER_DECADE)).floor() as u32;
    let mut points = Vec::with_capacity(steps as usize + 2);
    for step in 0..=steps {
        let x = 10f64.powf(f64::from(step) / f64::from(STEPS_PER_DECADE));
        let quantile = 1.0 - 1.0 / x;
        points.push((x, histogram.value_at_quantile(quantile).max(floor) as f64));
    }
    // The largest value, at the last percentile the count resolves.
    let last = (count as f64).max(1.0);
    if points.last().is_some_and(|&(x, _)| x >= last) {
        points.pop();
    }
    points.push((last.max(1.0), histogram.max().max(floor) as f64));
    Ok(points)
}

/// The geometric mean of positive `values`, or `None` when there are none.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    let values: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if values.is_empty() {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_a_person_writes_them() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[0.0, -1.0]), None);
        let mean = geometric_mean(&[1.0, 4.0]).unwrap();
        assert!((mean - 2.0).abs() < 1e-12);
    }
}
