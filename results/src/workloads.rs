//! `workloads.json`: the workload files of a run (`timerbench run --file PATH`), each with
//! its identity (the path as given, a content hash), its metadata, its counts and its
//! shape (pending timers over the trace, a histogram of its delays), computed once by the
//! run so that the report draws them from the folder alone.
//!
//! A suite workload needs none of this: its family and parameters say what it is. A file
//! is whatever its author made it, so the folder keeps what a reader needs to see what
//! kind of load it is. The cells of a file workload have `family` [`FILE_FAMILY`] and the
//! `params` `path` and `sha256` ([`FileWorkload::path`], [`FileWorkload::sha256`]).

use crate::schema::SCHEMA_VERSION;
use crate::version;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file beside `results.jsonl` that describes the run's workload files.
pub const WORKLOADS_FILE: &str = "workloads.json";

/// The `family` of a cell whose workload is a file given to `timerbench run --file`.
pub const FILE_FAMILY: &str = "file";

/// Points of [`PendingSeries`] at most: the trace's clock cut into this many windows.
pub const PENDING_WINDOWS: u64 = 500;

/// `workloads.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadFiles {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// One per workload file of the run, in the order given.
    pub files: Vec<FileWorkload>,
}

/// One workload file of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileWorkload {
    /// The workload's name in the records (`workload`): the file's `@name`, else its stem.
    pub name: String,
    /// The path as given on the command line.
    pub path: String,
    /// SHA-256 of the file's bytes, 64 lowercase hex digits.
    pub sha256: String,
    /// The file's size, bytes.
    pub bytes: u64,
    /// Its `@KEY VALUE` lines, in file order, as `[key, value]`.
    pub metadata: Vec<(String, String)>,
    /// Operation lines of each kind: `s`, `x`, `r`, `a`, `t`, `n`.
    pub lines: LineCounts,
    /// The reference model's outcome: timers started (a restart counts as a start),
    /// fired, stopped, misses, pending at the end.
    pub started: u64,
    pub fired: u64,
    pub stopped: u64,
    pub misses: u64,
    pub pending_at_end: u64,
    /// The clock at the end, ticks.
    pub final_clock: u64,
    /// The most timers pending at once (the cells' `timers`).
    pub peak_pending: u64,
    /// Pending timers over the trace.
    pub pending: PendingSeries,
    /// The delays of every start and restart.
    pub delays: DelayHistogram,
}

impl FileWorkload {
    /// The value of the last `@key` line, if any.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Operation lines of each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineCounts {
    pub start: u64,
    pub stop: u64,
    pub restart: u64,
    pub advance: u64,
    pub tick: u64,
    pub next: u64,
}

/// Pending timers over the trace: the clock from 0 to the final clock cut into windows of
/// `window_ticks` ticks (`final_clock / 500 + 1`, so at most 500 windows; window `i` holds
/// clocks `i × window_ticks` to `(i + 1) × window_ticks − 1`), and in each the most timers
/// pending at once: the count after each operation and each firing, at the clock it
/// happened, and the count carried into the window when it opened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingSeries {
    pub window_ticks: u64,
    pub max: Vec<u64>,
}

/// The delays (deadline minus the clock at the start, ticks) of every `s` and `r` line,
/// in powers of two: `counts[0]` the delays of 0, `counts[k]` for `k ≥ 1` those from
/// `2^(k−1)` to `2^k − 1`. Trailing empty buckets are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelayHistogram {
    pub counts: Vec<u64>,
}

impl DelayHistogram {
    /// The bucket of `delay`.
    pub fn bucket(delay: u64) -> usize {
        (u64::BITS - delay.leading_zeros()) as usize
    }

    /// The delays bucket `k` holds, `lo..=hi`.
    pub fn bounds(k: usize) -> (u64, u64) {
        match k {
            0 => (0, 0),
            64 => (1 << 63, u64::MAX),
            k => (1 << (k - 1), (1 << k) - 1),
        }
    }
}

/// The workload files of the run in `folder`: empty when it has no `workloads.json`.
pub fn read_workload_files(folder: &Path) -> anyhow::Result<Vec<FileWorkload>> {
    let path = folder.join(WORKLOADS_FILE);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let files: WorkloadFiles = version::decode(
        &text,
        &path.display().to_string(),
        "a workload files record",
    )?;
    Ok(files.files)
}

/// Writes `folder/workloads.json` with `files` (atomically).
pub fn write_workload_files(folder: &Path, files: &[FileWorkload]) -> anyhow::Result<()> {
    let record = WorkloadFiles {
        schema: SCHEMA_VERSION,
        files: files.to_vec(),
    };
    let text = serde_json::to_string_pretty(&record).context("cannot encode the workloads")?;
    crate::write_atomically(&folder.join(WORKLOADS_FILE), (text + "\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::DelayHistogram;

    #[test]
    fn delays_fall_in_powers_of_two() {
        let buckets: Vec<usize> = [0, 1, 2, 3, 4, 1023, 1024, u64::MAX]
            .into_iter()
            .map(DelayHistogram::bucket)
            .collect();
        assert_eq!(buckets, [0, 1, 2, 2, 3, 10, 11, 64]);
        assert_eq!(DelayHistogram::bounds(0), (0, 0));
        assert_eq!(DelayHistogram::bounds(1), (1, 1));
        assert_eq!(DelayHistogram::bounds(11), (1024, 2047));
        assert_eq!(DelayHistogram::bounds(64), (1 << 63, u64::MAX));
    }
}
