//! The `engine` section of a cell record (schema 4): what ran an engine cell, the
//! external program of another runtime (`docs/engines.md`), and its own samples.

use crate::stats::median;
use serde::{Deserialize, Serialize};

/// What ran an engine cell and how its figures were made from the engine's own samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineInfo {
    /// The engine's name (`go-runtime`, `jdk-delay-queue`, ...), also the cell's label.
    pub name: String,
    /// The runtime it ran on (`go`, the JVM's name, `sh`); empty when it never answered.
    pub runtime: String,
    /// The runtime's version (`go1.19.8`, `17.0.13+11-Debian-2`).
    pub runtime_version: String,
    /// The flags the runtime ran with, as its first process answered them: the JVM's
    /// input arguments (fixed heap, pre-touched, serial collector), Go's GOMAXPROCS and GOGC.
    #[serde(default)]
    pub runtime_flags: Vec<String>,
    /// The engine protocol's version.
    pub protocol: u32,
    /// `replay` (the workload replayed in virtual time, its log verified) or
    /// `micro start-stop` (the engine's own start+stop microbenchmark on the real clock).
    pub mode: String,
    /// What one of `samples_ns` is per: `replay`, `start-stop pair`.
    pub unit: String,
    /// The engine's own samples, nanoseconds per `unit`, every process's in order.
    pub samples_ns: Vec<f64>,
    /// Per sample, in `samples_ns`' order: the collections that ran during it; empty
    /// where the engine does not count them.
    #[serde(default)]
    pub samples_gc_count: Vec<u64>,
    /// Per sample: the time those collections took, ms (Go: their stop-the-world pauses).
    #[serde(default)]
    pub samples_gc_ms: Vec<f64>,
    /// Per sample: the JIT's compilation time during it, ms (the JVM engines).
    #[serde(default)]
    pub samples_jit_ms: Vec<f64>,
    /// What the engine does between samples, untimed, in words; empty when nothing.
    #[serde(default)]
    pub between_samples: String,
    /// How `throughput`'s figures come from `samples_ns`, in words.
    pub conversion: String,
    /// Warm-up iterations of each process, and whether each settled.
    pub warmup_iterations: Vec<u64>,
    /// See `warmup_iterations`.
    pub warmup_settled: Vec<bool>,
    /// The largest peak resident set of its processes, runtime included, bytes.
    pub peak_rss_bytes: Option<u64>,
    /// The largest live heap of its processes (in use after a full collection once the
    /// samples were taken), bytes; `None` where the engine does not say.
    #[serde(default)]
    pub heap_live_bytes: Option<u64>,
    /// Micro-only engines: resident timers that fell due during each process's run.
    pub resident_fired: Vec<u64>,
    /// The harness's wall seconds around each exchange (process and runtime start
    /// included): the protocol's cost, never a timing of the engine.
    pub exchange_seconds: Vec<f64>,
}

impl EngineInfo {
    /// The median of `exchange_seconds` (NaN when there is none).
    pub fn median_exchange_seconds(&self) -> f64 {
        median(&self.exchange_seconds)
    }
}
