//! `environment.json`: the machine and the settings of a run (`FORMAT.md`).

use serde::{Deserialize, Serialize};

/// `environment.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// [`SCHEMA_VERSION`](crate::schema::SCHEMA_VERSION).
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
    /// Timed samples per process of a cell.
    pub repeat: u32,
    /// The time limit per cell, seconds.
    pub cell_timeout_seconds: u64,
    /// Processes that take each cell's samples (schema 2; 0 in older files: one).
    #[serde(default)]
    pub processes: u32,
    /// The least time of one sample, milliseconds (schema 2; 0 in older files).
    #[serde(default)]
    pub min_sample_ms: u64,
    /// The most processes a cell whose process medians disagree takes
    /// (`--max-processes`; schema 3, 0 in older files: `processes` was the most).
    #[serde(default)]
    pub max_processes: u32,
    /// The size from which groups are measured together, their rounds spread over the
    /// block (`--spread-from`; schema 3, later; 0: every group on its own, as in older
    /// files).
    #[serde(default)]
    pub spread_from: u64,
    /// Processes per cell in the groups of 1M timers or more (`--processes-at-1m`; 0 in
    /// older files: `processes` at every size).
    #[serde(default)]
    pub processes_at_1m: u32,
    /// The digest of the run's plan (`run --plan` prints it): its revision, suite, settings
    /// and every planned cell with its workload, so that the folders of one plan, one per
    /// shard or per host, are known to hold parts of the same measurement. Absent in older
    /// files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// Which shard of the plan the folder holds (`run --shard K/N`); absent for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shards::Shard>,
    /// The name the run gave its host (`run --host-label`), which readers use in place of
    /// `cpu` to tell hosts apart; absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_label: Option<String>,
}
