//! The results schema: one definition for what `timerbench run` writes and what the report
//! reads.
//!
//! A run folder `results/<date>-<host>-<git rev>/` holds:
//!
//! - `results.jsonl`: one [`CellRecord`] per line, appended as each cell finishes;
//! - `environment.json`: the [`Environment`] of the run;
//! - `summary.csv`: one row per cell ([`SummaryRow`]), for spreadsheets.
//!
//! A cell is one (workload, size, implementation). Figures are absent (`null`) when the
//! cell did not verify: a wrong structure's speed is never reported.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of this schema, written in every record.
pub const SCHEMA_VERSION: u32 = 1;

/// Which cell: enough to regenerate its workload and rerun it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CellKey {
    /// The suite workload, e.g. `hold-exponential`.
    pub workload: String,
    /// The number of timers (`--timers`).
    pub timers: u64,
    /// The implementation's registry name.
    pub implementation: String,
}

/// How a cell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Verified against the reference model, and measured.
    Ok,
    /// The implementation's firings or summary differ from the reference model's.
    Unverified,
    /// The cell's process panicked, aborted, was killed, or could not run.
    Failed,
    /// The cell's process ran past the time limit and was killed.
    Timeout,
}

/// A median and the median absolute deviation of repeated samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The median.
    pub median: f64,
    /// The median absolute deviation from the median.
    pub mad: f64,
    /// Every sample, in the order measured.
    pub samples: Vec<f64>,
}

/// Throughput: the whole replay timed, without a per-operation clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Timed repeats (the warm-up replay, which also verifies, is not among them).
    pub repeats: u32,
    /// Nanoseconds per operation line.
    pub ns_per_op: Spread,
    /// Nanoseconds per fired timer (the same replays divided by the firings), when any fired.
    pub ns_per_fired: Option<Spread>,
}

/// Latency of one operation kind, from the per-operation pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Operations of this kind.
    pub count: u64,
    /// Mean, nanoseconds, with the clock's own cost subtracted.
    pub mean_ns: f64,
    /// Percentiles, nanoseconds: keys `p50`, `p90`, `p99`, `p99.9`, `p99.99`, `max`.
    pub percentiles: BTreeMap<String, u64>,
    /// The whole histogram, hdrhistogram's V2 serialization, base64.
    pub histogram_v2: String,
}

/// The clock used for the per-operation pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// What it is, e.g. `tsc (quanta)`.
    pub source: String,
    /// The median cost of one empty timed probe (two reads), nanoseconds.
    pub overhead_ns: f64,
}

/// Memory, from the counting allocator and the kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Most live heap bytes the queue held at once (above what existed before it).
    pub peak_live_bytes: u64,
    /// Pending timers at the workload's peak.
    pub peak_pending: u64,
    /// `peak_live_bytes / peak_pending`.
    pub bytes_per_pending_timer: f64,
    /// Heap allocations made during one replay.
    pub allocations: u64,
    /// `allocations` per operation line.
    pub allocations_per_op: f64,
    /// The cell process's peak resident set, bytes (workload and log included).
    pub peak_rss_bytes: u64,
}

/// `advance` latency over the course of the run, for spotting cascades: the run cut into
/// consecutive windows of operations, and the slowest `advance` or `tick` in each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdvanceSeries {
    /// Operation lines per window.
    pub window_ops: u64,
    /// Per window, the slowest advance, nanoseconds (0 when the window had none).
    pub max_ns: Vec<u64>,
}

/// What the run hands a cell's child process (`timerbench cell`), as JSON on its standard
/// input. The child answers with one [`CellRecord`] as JSON on its standard output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSpec {
    /// Which cell.
    pub key: CellKey,
    /// The family that generated the workload.
    pub family: String,
    /// The family parameters.
    pub params: BTreeMap<String, String>,
    /// `--ops`, when the suite set it.
    pub ops: Option<u64>,
    /// The generator's seed.
    pub seed: u64,
    /// The command that regenerates the workload.
    pub generator: String,
    /// The workload file (v1 format), already generated and checked by the parent.
    pub workload_path: std::path::PathBuf,
    /// The reference model's summary of that workload, computed once by the parent.
    pub reference: timerbench_workloads::reference::Summary,
    /// Timed repeats.
    pub repeat: u32,
    /// For the harness's own tests: panic in the middle of the measurement.
    #[serde(default)]
    pub inject_panic: bool,
}

/// One line of `results.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// Which cell.
    #[serde(flatten)]
    pub key: CellKey,
    /// The family that generated the workload.
    pub family: String,
    /// The family parameters.
    pub params: BTreeMap<String, String>,
    /// `--ops`, when the suite set it.
    pub ops: Option<u64>,
    /// The generator's seed.
    pub seed: u64,
    /// The command that regenerates the workload.
    pub generator: String,
    /// Whether the implementation is an outside crate behind an adapter.
    pub peer: bool,
    /// How the cell ended.
    pub status: Status,
    /// Why, when not `ok`: the first differing firing, the panic message, the signal.
    pub reason: Option<String>,
    /// Operation lines in the workload.
    pub operations: u64,
    /// Timers the workload fires.
    pub fired: u64,
    /// The reference model's digest of the expiry log.
    pub reference_digest: String,
    /// The implementation's digest, when it got that far.
    pub digest: Option<String>,
    /// Throughput, when verified.
    pub throughput: Option<Throughput>,
    /// Per operation kind (`start`, `stop`, `restart`, `advance`, `tick`, `next`), when
    /// verified.
    pub latency: BTreeMap<String, Latency>,
    /// The clock of the latency pass.
    pub clock: Option<Clock>,
    /// `advance` latency over the run.
    pub advance_series: Option<AdvanceSeries>,
    /// Memory, when verified.
    pub memory: Option<Memory>,
    /// Wall seconds the cell took, everything included.
    pub elapsed_seconds: f64,
}

impl CellRecord {
    /// The record of `spec`'s cell with its identity filled in, the given status and
    /// reason, and no figures yet.
    pub fn for_spec(spec: &CellSpec, status: Status, reason: Option<String>) -> Self {
        CellRecord {
            schema: SCHEMA_VERSION,
            key: spec.key.clone(),
            family: spec.family.clone(),
            params: spec.params.clone(),
            ops: spec.ops,
            seed: spec.seed,
            generator: spec.generator.clone(),
            peer: timerbench_impls::registry::is_peer(&spec.key.implementation),
            status,
            reason,
            operations: spec.reference.operations,
            fired: spec.reference.fired,
            reference_digest: spec.reference.digest.clone(),
            digest: None,
            throughput: None,
            latency: BTreeMap::new(),
            clock: None,
            advance_series: None,
            memory: None,
            elapsed_seconds: 0.0,
        }
    }
}

/// `environment.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// The CPU model, from `/proc/cpuinfo`.
    pub cpu: String,
    /// Logical cores.
    pub cores: usize,
    /// Total memory, bytes.
    pub memory_bytes: u64,
    /// The operating system and kernel.
    pub os: String,
    /// `rustc --version` of the compiler that built timerbench.
    pub rustc: String,
    /// The git revision (with `-dirty` when the tree had changes).
    pub git_revision: String,
    /// The host name.
    pub host: String,
    /// The command line of the run.
    pub command: String,
    /// When the run started, RFC 3339, UTC.
    pub started: String,
    /// The suite level.
    pub suite: String,
    /// Timed repeats per cell.
    pub repeat: u32,
    /// The time limit per cell, seconds.
    pub cell_timeout_seconds: u64,
}

/// One row of `summary.csv`: the figures a spreadsheet wants, flat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// The suite workload.
    pub workload: String,
    /// `--timers`.
    pub timers: u64,
    /// The implementation.
    pub implementation: String,
    /// `ok`, `unverified`, `failed` or `timeout`.
    pub status: String,
    /// Median nanoseconds per operation.
    pub ns_per_op_median: Option<f64>,
    /// Its median absolute deviation.
    pub ns_per_op_mad: Option<f64>,
    /// 99th percentile of `advance` (or `next`, or `tick`) latency, nanoseconds.
    pub advance_p99_ns: Option<u64>,
    /// Largest `advance` latency, nanoseconds.
    pub advance_max_ns: Option<u64>,
    /// Bytes per pending timer at the peak.
    pub bytes_per_pending_timer: Option<f64>,
    /// Peak resident set of the cell process, bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Why, when not `ok`.
    pub reason: String,
}

/// A median and median absolute deviation of `samples`.
pub fn spread(samples: Vec<f64>) -> Spread {
    let median = median(&samples);
    let deviations: Vec<f64> = samples.iter().map(|s| (s - median).abs()).collect();
    Spread {
        median,
        mad: median_of(deviations),
        samples,
    }
}

fn median(samples: &[f64]) -> f64 {
    median_of(samples.to_vec())
}

fn median_of(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_mad_of_odd_and_even_samples() {
        let s = spread(vec![5.0, 1.0, 3.0]);
        assert_eq!((s.median, s.mad), (3.0, 2.0));
        let s = spread(vec![1.0, 2.0, 3.0, 10.0]);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.mad, 1.0);
        assert_eq!(s.samples, [1.0, 2.0, 3.0, 10.0]);
    }
}
