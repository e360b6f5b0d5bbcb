//! `threads.jsonl`: one record per (scheme, structure, threads) of `timerbench threads`,
//! the concurrent study of `docs/threads.md`. Its fields are in `FORMAT.md`, *`threads.jsonl`*.

use crate::histogram::{encode_v2, percentiles};
use anyhow::Context;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The file, in the results folder of one `timerbench threads`.
pub const THREADS_FILE: &str = "threads.jsonl";

/// The version of this record form.
pub const THREADS_SCHEMA: u32 = 1;

/// One run of a scheme around a structure at a number of producer threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadsRecord {
    /// [`THREADS_SCHEMA`].
    pub schema: u32,
    /// `global-lock`, `owner`, `per-thread` or `locked-shards`.
    pub scheme: String,
    /// Queues of the locked-shards scheme (1 for the global lock, the producers for
    /// per-thread shards, 1 for the owner).
    pub shards: usize,
    /// The structure's variant label.
    pub implementation: String,
    /// Producer threads.
    pub threads: usize,
    /// Threads besides the producers: the ticker, and the owner.
    pub helper_threads: usize,
    /// Logical cores of the machine.
    pub cores: usize,
    /// Whether producers plus helpers exceed the cores.
    pub oversubscribed: bool,
    /// The workload: its name (family, size, parameters), seed and the share of stops
    /// issued by another thread than the starter.
    pub workload: String,
    pub seed: u64,
    pub cross_share: f64,
    /// Producer operations measured, and stops that crossed threads.
    pub operations: u64,
    pub cross_stops: u64,
    /// From the first producer's start of its measured part until every shard has applied
    /// everything and reached the final clock, ns.
    pub wall_ns: u64,
    /// `operations` per second of `wall_ns`.
    pub ops_per_second: f64,
    /// Per producer thread, per call (`start`, `stop`, `restart`): the call's latency, ns.
    pub latency: Vec<BTreeMap<String, Latency>>,
    /// Cross-thread stops, from the call until the timer can no longer fire, ns.
    pub cross_stop: Latency,
    /// The most commands waiting in one queue at a drain, and their bytes.
    pub peak_queued: u64,
    pub peak_queued_bytes: u64,
    /// The owner thread's CPU time (CLOCK_THREAD_CPUTIME_ID) over `wall_ns`; `null`
    /// without an owner.
    pub owner_cpu_share: Option<f64>,
    /// Whether every shard's log replayed cleanly through the reference model.
    pub verified: bool,
    /// The first offending timer when not verified.
    pub offence: Option<String>,
}

/// A latency histogram as a record holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    /// `p50` to `p99.99`, and `max`, ns; empty when `count` is 0.
    pub percentiles: BTreeMap<String, u64>,
    /// HdrHistogram V2, base64.
    pub histogram_v2: String,
}

impl Latency {
    /// The summary of `histogram`.
    pub fn of(histogram: &Histogram<u64>) -> anyhow::Result<Latency> {
        let count = histogram.len();
        Ok(Latency {
            count,
            percentiles: if count == 0 {
                BTreeMap::new()
            } else {
                percentiles(histogram)
            },
            histogram_v2: encode_v2(histogram)?,
        })
    }

    /// Percentile `name`, if there were any calls.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.percentiles.get(name).copied()
    }
}

/// Appends `record` as one line of `folder/threads.jsonl`.
pub fn append_threads_record(folder: &Path, record: &ThreadsRecord) -> anyhow::Result<()> {
    let path = folder.join(THREADS_FILE);
    let mut line = serde_json::to_string(record)?;
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(line.as_bytes()))
        .with_context(|| format!("cannot append to {}", path.display()))
}

/// The records of a `threads.jsonl`, each line checked for its version.
pub fn read_threads_records(path: &Path) -> anyhow::Result<Vec<ThreadsRecord>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| {
            let at = || format!("{}:{}", path.display(), number + 1);
            let value: serde_json::Value =
                serde_json::from_str(line).with_context(|| format!("{}: not JSON", at()))?;
            let schema = value.get("schema").and_then(|s| s.as_u64());
            if schema != Some(u64::from(THREADS_SCHEMA)) {
                anyhow::bail!(
                    "{}: threads record version {schema:?}; this build reads {THREADS_SCHEMA}",
                    at()
                );
            }
            serde_json::from_value(value).with_context(|| format!("{}: not a threads record", at()))
        })
        .collect()
}
