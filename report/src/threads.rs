//! The records of `timerbench threads` the report shows (`threads.jsonl`,
//! `results/FORMAT.md`): one file's records, each with its per-operation latency over all
//! its producer threads, and grouped by workload.

use crate::extras::{first_appearance, record_lines};
use crate::figures::decode_histogram;
use anyhow::Context;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use timerbench_results::threads::{ThreadsRecord, read_threads_records};

/// The schemes in the order the section shows them: one lock, an owner with a queue,
/// per-thread shards, locked shards.
pub const SCHEMES: [&str; 4] = ["global-lock", "owner", "per-thread", "locked-shards"];

/// The calls whose latency a record keeps, per producer.
pub const CALLS: [&str; 3] = ["start", "stop", "restart"];

/// One call's latency over every producer of a run, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallLatency {
    pub count: u64,
    pub p50: u64,
    pub p99: u64,
    pub p9999: u64,
}

/// One record with what the report reads off it.
pub struct ThreadsRun {
    pub record: ThreadsRecord,
    /// Per call ([`CALLS`]), over all producers; absent when no producer made that call.
    pub calls: BTreeMap<String, CallLatency>,
}

/// One `threads.jsonl`.
pub struct ThreadsSource {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its records, in file order.
    pub runs: Vec<ThreadsRun>,
}

/// Reads `path`: the reader refuses a malformed line or another version with its line,
/// and a histogram that does not decode is as malformed, named by its line too.
pub fn load(path: &Path) -> anyhow::Result<ThreadsSource> {
    let records = read_threads_records(path)?;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let lines = record_lines(&text);
    let runs = records
        .into_iter()
        .zip(lines)
        .map(|(record, line)| {
            let at = format!(
                "{}:{line}: {} around {} at {} threads",
                path.display(),
                record.scheme,
                record.implementation,
                record.threads
            );
            decode_histogram(&record.cross_stop.histogram_v2)
                .with_context(|| format!("{at}: the cross-thread stop histogram"))?;
            let calls = merged_calls(&record).with_context(|| at.clone())?;
            Ok(ThreadsRun { record, calls })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(ThreadsSource {
        path: path.to_path_buf(),
        runs,
    })
}

/// Each call's latency over every producer: their histograms added, then read.
fn merged_calls(record: &ThreadsRecord) -> anyhow::Result<BTreeMap<String, CallLatency>> {
    let mut calls = BTreeMap::new();
    for call in CALLS {
        // Auto-resizing, so that producers' histograms of any range add up.
        let mut all = Histogram::<u64>::new(3).context("an empty histogram")?;
        for (producer, latencies) in record.latency.iter().enumerate() {
            if let Some(latency) = latencies.get(call) {
                let histogram = decode_histogram(&latency.histogram_v2).with_context(|| {
                    format!("the `{call}` histogram of producer {}", producer + 1)
                })?;
                all.add(&histogram)
                    .map_err(|e| anyhow::anyhow!("cannot add up the `{call}` histograms: {e:?}"))?;
            }
        }
        if !all.is_empty() {
            calls.insert(
                call.to_string(),
                CallLatency {
                    count: all.len(),
                    p50: all.value_at_quantile(0.5),
                    p99: all.value_at_quantile(0.99),
                    p9999: all.value_at_quantile(0.9999),
                },
            );
        }
    }
    Ok(calls)
}

impl ThreadsSource {
    /// The workloads of its records, in the order of their first record.
    pub fn workloads(&self) -> Vec<&str> {
        first_appearance(self.runs.iter().map(|r| r.record.workload.as_str()))
    }

    /// The structures run on `workload`, in the order of their first record.
    pub fn structures(&self, workload: &str) -> Vec<&str> {
        first_appearance(
            self.runs
                .iter()
                .filter(|r| r.record.workload == workload)
                .map(|r| r.record.implementation.as_str()),
        )
    }

    /// The schemes run on `workload`: [`SCHEMES`] first, then others by first record.
    pub fn schemes(&self, workload: &str) -> Vec<&str> {
        let mut schemes = first_appearance(
            self.runs
                .iter()
                .filter(|r| r.record.workload == workload)
                .map(|r| r.record.scheme.as_str()),
        );
        schemes.sort_by_key(|s| scheme_index(s));
        schemes
    }

    /// The runs of `workload`: by structure, then producer threads, then scheme, then in
    /// file order.
    pub fn of_workload(&self, workload: &str) -> Vec<&ThreadsRun> {
        let structures = self.structures(workload);
        let mut runs: Vec<&ThreadsRun> = self
            .runs
            .iter()
            .filter(|r| r.record.workload == workload)
            .collect();
        runs.sort_by_key(|r| {
            let structure = structures
                .iter()
                .position(|s| *s == r.record.implementation);
            (structure, r.record.threads, scheme_index(&r.record.scheme))
        });
        runs
    }

    /// The latest run (the last in the file) of each producer count of `scheme` around
    /// `structure` on `workload`: (threads, producer operations per second), ascending.
    pub fn throughput(&self, workload: &str, structure: &str, scheme: &str) -> Vec<(f64, f64)> {
        let mut latest: BTreeMap<usize, f64> = BTreeMap::new();
        for run in &self.runs {
            let r = &run.record;
            if r.workload == workload && r.implementation == structure && r.scheme == scheme {
                latest.insert(r.threads, r.ops_per_second);
            }
        }
        latest
            .into_iter()
            .map(|(threads, ops)| (threads as f64, ops))
            .collect()
    }
}

/// The place of a scheme in [`SCHEMES`] (unknown ones after them).
pub fn scheme_index(scheme: &str) -> usize {
    SCHEMES
        .iter()
        .position(|s| *s == scheme)
        .unwrap_or(SCHEMES.len())
}
