//! `summary.csv`: the figures a spreadsheet wants, one flat row per cell, derived from the
//! records (which stay the source of truth; the file is rewritten whole at the end of a
//! run).

use crate::folder::{SUMMARY_FILE, latest_by_cell, write_atomically};
use crate::schema::CellRecord;
use anyhow::{Context, anyhow};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One row of `summary.csv`. Empty fields are figures the cell does not have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// The suite workload.
    pub workload: String,
    /// `--timers`.
    pub timers: u64,
    /// The implementation.
    pub implementation: String,
    /// `ok`, `unverified`, `failed`, `timeout` or `unsupported`.
    pub status: String,
    /// Median nanoseconds per operation.
    pub ns_per_op_median: Option<f64>,
    /// Its median absolute deviation.
    pub ns_per_op_mad: Option<f64>,
    /// 99th percentile of `advance` (or `next`, or `tick`) latency, nanoseconds.
    pub advance_p99_ns: Option<u64>,
    /// Largest `advance` (or `next`, or `tick`) latency, nanoseconds.
    pub advance_max_ns: Option<u64>,
    /// Bytes per pending timer at the peak.
    pub bytes_per_pending_timer: Option<f64>,
    /// Peak resident set of the cell process, bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Why, when not `ok`.
    pub reason: String,
    /// The implementation's registry name without parameters (after the first columns,
    /// like every column since schema 2, so that a reader of the older file finds its
    /// columns where they were).
    pub implementation_base: String,
    /// Every parameter, defaults included, as `key=value` joined by `;`; empty when none.
    pub parameters: String,
    /// `exact` or `approximate`; empty when the record does not say (schema 1).
    pub precision: String,
    /// 99th percentile of lateness, ticks, for an approximate cell that verified.
    pub lateness_p99_ticks: Option<u64>,
    /// The largest lateness, ticks, for the same.
    pub lateness_max_ticks: Option<u64>,
    /// The processes the samples came from (1 for a record older than the field).
    pub processes: Option<u32>,
    /// The spread between them ([`crate::Throughput::between_processes`]), a fraction;
    /// empty with one process, which has no spread between processes to give (a 0 would
    /// read as processes that agreed).
    pub between_processes: Option<f64>,
    /// The spread within one ([`crate::Throughput::within_process`]), a fraction.
    pub within_process: Option<f64>,
    /// Whether any process of the cell saw a load above the CPUs it left free
    /// ([`CellRecord::under_load`]); `false` for a record without conditions.
    pub under_load: bool,
}

impl SummaryRow {
    /// The row of one record.
    pub fn of(record: &CellRecord) -> SummaryRow {
        let clock = record.clock_latency();
        let lateness = record.lateness.as_ref();
        let throughput = record.throughput.as_ref();
        let processes = throughput.map(|t| t.processes.max(1));
        SummaryRow {
            workload: record.key.workload.clone(),
            timers: record.key.timers,
            implementation: record.key.implementation.clone(),
            status: record.status.as_str().to_string(),
            ns_per_op_median: record.throughput.as_ref().map(|t| t.ns_per_op.median),
            ns_per_op_mad: record.throughput.as_ref().map(|t| t.ns_per_op.mad),
            advance_p99_ns: clock.and_then(|l| l.percentiles.get("p99").copied()),
            advance_max_ns: clock.and_then(|l| l.percentiles.get("max").copied()),
            bytes_per_pending_timer: record.memory.as_ref().map(|m| m.bytes_per_pending_timer),
            peak_rss_bytes: record.memory.as_ref().map(|m| m.peak_rss_bytes),
            reason: record.reason.clone().unwrap_or_default(),
            implementation_base: record.base_implementation().to_string(),
            parameters: record
                .implementation_parameters
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect::<Vec<_>>()
                .join(";"),
            precision: match &record.precision {
                None => String::new(),
                Some(_) if record.is_approximate() => "approximate".to_string(),
                Some(_) => "exact".to_string(),
            },
            lateness_p99_ticks: lateness.and_then(|l| l.percentiles.get("p99").copied()),
            lateness_max_ticks: lateness.and_then(|l| l.percentiles.get("max").copied()),
            processes,
            between_processes: throughput
                .filter(|t| t.processes > 1)
                .map(|t| t.between_processes()),
            within_process: throughput
                .map(|t| t.within_process())
                .filter(|w| w.is_finite()),
            under_load: record.under_load(),
        }
    }
}

/// Writes `folder/summary.csv`: one row per cell, the latest record of each, in cell order
/// (workload, timers, implementation).
pub fn write_summary(folder: &Path, records: &[CellRecord]) -> anyhow::Result<()> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    for record in latest_by_cell(records.iter().cloned()).values() {
        csv.serialize(SummaryRow::of(record))
            .context("cannot encode a summary row")?;
    }
    let bytes = csv.into_inner().map_err(|e| anyhow!("csv: {e}"))?;
    write_atomically(&folder.join(SUMMARY_FILE), &bytes)
}
