//! The record schema, as this timerbench writes it ([`SCHEMA_VERSION`]): one definition
//! for what `timerbench run` writes and what `timerbench report` reads.
//!
//! A cell is one (workload, size, implementation). Figures are absent (`null`) when the
//! cell did not verify: a wrong structure's speed is never reported. `FORMAT.md` beside
//! this crate documents every field, with its unit, for readers that are not Rust.

use crate::stats::median;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::engine::EngineInfo;
pub use crate::environment::Environment;

/// The version of the schema this timerbench writes, in every record and in
/// `environment.json`. Bump it when the written form changes, and teach
/// [`crate::version`] to read the previous one.
pub const SCHEMA_VERSION: u32 = 5;

/// The name of the floor (`timerbench run --floor`): not a queue, the bookkeeping any
/// queue that fires does (an arena slot per start, freed on stop and on firing, what fires
/// read from a list recorded before), so never verified. Its records are the yardstick the others are divided by, never ranked.
pub const FLOOR: &str = "floor";

/// The floor's `precision` in its records.
pub const FLOOR_PRECISION: &str = "floor: not a queue, never verified";

/// Whether the record labelled `implementation` is the floor's.
pub fn is_floor(implementation: &str) -> bool {
    implementation == FLOOR
}

/// The operation kinds of the latency pass, in the order the file letters come
/// (`s`, `x`, `r`, `a`, `t`, `n`): the keys of [`CellRecord::latency`].
pub const KINDS: &[&str] = &["start", "stop", "restart", "advance", "tick", "next"];

/// The kinds that move the clock, where cascades and expiry work show, in the order a
/// summary prefers them: a workload's "advance-like" kind is the first of these it has.
pub const CLOCK_KINDS: &[&str] = &["advance", "next", "tick"];

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
    /// The workload reaches beyond the implementation's declared range (a delay or a
    /// tick it cannot hold); not run.
    Unsupported,
    /// The suite chose a size above the implementation's declared suite limit (a
    /// structure that walks every tick or scans every timer, whose cell would take
    /// minutes); not run. An explicit `--timers` runs it.
    Skipped,
}

impl Status {
    /// The word the results use: `ok`, `unverified`, `failed`, `timeout`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unverified => "unverified",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
            Status::Unsupported => "unsupported",
            Status::Skipped => "skipped",
        }
    }

    /// Whether the cell was left out on purpose, before it ran (`unsupported`,
    /// `skipped`): not a failure, and without figures.
    pub fn left_out(self) -> bool {
        matches!(self, Status::Unsupported | Status::Skipped)
    }
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
    /// Timed samples (the warm-up replay, which also verifies, is not among them).
    pub repeats: u32,
    /// Nanoseconds per operation line, the fill included.
    pub ns_per_op: Spread,
    /// Nanoseconds per fired timer (the same replays divided by the firings), when any fired.
    pub ns_per_fired: Option<Spread>,
    /// Nanoseconds per unit (a `t N` is N units), the fill included (schema 2).
    #[serde(default)]
    pub ns_per_unit: Option<Spread>,
    /// Nanoseconds per operation line after the fill (schema 2).
    #[serde(default)]
    pub ns_per_op_after_fill: Option<Spread>,
    /// Nanoseconds per unit after the fill: what `cargo bench` reports (schema 2).
    #[serde(default)]
    pub ns_per_unit_after_fill: Option<Spread>,
    /// Operation lines of the fill, the workload's leading starts (schema 2).
    #[serde(default)]
    pub fill_operations: u64,
    /// Replays in each sample, in the order measured (schema 2; empty in older records,
    /// whose samples were one replay each).
    #[serde(default)]
    pub iterations: Vec<u64>,
    /// The least time a sample ran, nanoseconds (schema 2; 0 in older records).
    #[serde(default)]
    pub min_sample_ns: u64,
    /// The processes the samples came from, each a child of its own, interleaved with
    /// the other implementations' (schema 2; 0 in older records: one process).
    #[serde(default)]
    pub processes: u32,
    /// The median ns/op (`ns_per_op`) of each process's samples, in the order run: their
    /// spread is the variance between processes (schema 2).
    #[serde(default)]
    pub process_medians: Vec<f64>,
    /// The page faults of the timed replays after the fill, every process's summed
    /// (schema 5, later; `null` in older records and in engine cells).
    #[serde(default)]
    pub page_faults: Option<PageFaults>,
}

/// The page faults a cell's timed replays took (`getrusage` of the measuring process read
/// around each replay of the lines after the fill, the deltas summed over every replay of
/// every process). A queue that reuses its pages takes none; a figure whose replays take a
/// fresh page per few lines measures the host's cost of pages as much as the structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PageFaults {
    /// Faults served without reading a disk (a fresh or reclaimed page).
    pub minor: u64,
    /// Faults that waited for a disk read.
    pub major: u64,
    /// The replays they were taken over.
    pub replays: u64,
}

impl PageFaults {
    /// Both counts and the replays of `other` added in.
    pub fn add(&mut self, other: &PageFaults) {
        self.minor += other.minor;
        self.major += other.major;
        self.replays += other.replays;
    }

    /// Minor and major faults per timed line: `lines` is the lines after the fill of one
    /// replay.
    pub fn per_line(&self, lines: u64) -> f64 {
        (self.minor + self.major) as f64 / (self.replays.max(1) * lines.max(1)) as f64
    }
}

impl Throughput {
    /// The spread between processes: the median absolute deviation of the processes'
    /// medians, relative to their median (0 with one process).
    pub fn between_processes(&self) -> f64 {
        relative_mad(&self.process_medians)
    }

    /// The spread within one process: the MAD of all samples relative to their median,
    /// when there is one process; else the median over processes of each one's relative
    /// MAD, which the record does not keep apart, so it is estimated from the samples
    /// grouped by process in order (`samples.len() / processes` each).
    pub fn within_process(&self) -> f64 {
        let samples = &self.ns_per_op.samples;
        let processes = (self.processes as usize).max(1);
        let per = samples.len() / processes;
        if per == 0 || processes == 1 {
            return relative_mad(samples);
        }
        let mut each: Vec<f64> = samples.chunks(per).map(relative_mad).collect();
        each.truncate(processes);
        median(&each)
    }
}

/// The MAD of `values` over their median (0 when empty or the median is 0).
fn relative_mad(values: &[f64]) -> f64 {
    let spread = spread(values.to_vec());
    if values.is_empty() || spread.median == 0.0 {
        0.0
    } else {
        spread.mad / spread.median
    }
}

/// Under what conditions one process of a cell ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// What the process did: `full` (verification, memory, samples, latency) or `samples`.
    pub role: String,
    /// The CPU it was pinned to, when pinning worked.
    pub cpu: Option<u32>,
    /// The one-minute load average when it started and when it ended (`/proc/loadavg`;
    /// `null` where unreadable).
    pub load_before: Option<f64>,
    /// See `load_before`.
    pub load_after: Option<f64>,
    /// The CPU frequency governor of its CPU, where Linux exposes one.
    pub governor: Option<String>,
    /// Logical CPUs of the machine.
    pub cpus: u32,
    /// The machine's speed as this process found it: nanoseconds of a fixed, purely
    /// CPU-bound kernel (a dependent chain of integer operations in registers, no memory),
    /// the median of a few runs right after pinning (schema 3; `null` in older records).
    /// The same on the same machine at the same clock: a difference between two runs says
    /// the machine ran at another speed, not that a structure changed.
    #[serde(default)]
    pub calibration_ns: Option<f64>,
    /// How fast the machine's shared cache and memory answered just before the process
    /// started and just after it ended: nanoseconds per load of a random pointer chase
    /// over 32 MiB (about a million-timer queue's working set), read by the parent
    /// (schema 3; `null` in older records and where the parent did not read it): the
    /// latency of a load that misses the caches, higher when something else on the
    /// machine uses memory. It does not measure how much of a shared last-level cache the
    /// guest keeps (METHODOLOGY.md, *The memory probe*).
    #[serde(default)]
    pub memory_probe_before_ns: Option<f64>,
    /// See `memory_probe_before_ns`.
    #[serde(default)]
    pub memory_probe_after_ns: Option<f64>,
    /// When the parent started the process, milliseconds since the Unix epoch (schema 3,
    /// later; `null` in older records): where the cell's processes fell in the run.
    #[serde(default)]
    pub started_unix_ms: Option<u64>,
}

impl Conditions {
    /// The load average above which the process measured under load: its CPUs. The
    /// measuring process is one of the load (about 1 on a quiet machine); anything above
    /// the CPUs means other work wanted more than the CPUs the measurement left free, so
    /// some of it ran on (or shared the caches and memory bandwidth of) the measuring CPU.
    pub fn load_threshold(&self) -> f64 {
        f64::from(self.cpus.max(1))
    }

    /// Whether the load average before or after was above [`Conditions::load_threshold`].
    pub fn under_load(&self) -> bool {
        let threshold = self.load_threshold();
        [self.load_before, self.load_after]
            .into_iter()
            .flatten()
            .any(|load| load > threshold)
    }
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

/// How late an approximate implementation fired, against the reference model in lockstep
/// (lateness: the clock of its firing minus the model's, in ticks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lateness {
    /// Firings measured (the early ones apart).
    pub firings: u64,
    /// Of them, later than the model's.
    pub late: u64,
    /// Firings before the model's, which the implementation documents (a deadline
    /// clamped to its range).
    pub early: u64,
    /// The most ticks an early firing came before its deadline.
    pub most_early_ticks: u64,
    /// Stops that found pending a timer the model had already fired.
    pub stopped_late: u64,
    /// Timers the model fired and the implementation still held at the end.
    pub pending_late: u64,
    /// The largest lateness as a fraction of its timer's delay.
    pub largest_fraction_of_delay: f64,
    /// The largest `(lateness - 1 tick, floored at 0) / delay`: the slack beyond the one
    /// tick a wheel that rounds every expiry up adds to every timer (`None` in records
    /// written before the field, which a reader must not take for 0).
    #[serde(default)]
    pub largest_fraction_beyond_one_tick: Option<f64>,
    /// Ticks at `p50`, `p90`, `p99`, `p99.9`, `p99.99` and `max`.
    pub percentiles: BTreeMap<String, u64>,
    /// The whole histogram in ticks: HdrHistogram V2, base64.
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

/// What a record says about its cell before any figure: which cell, the workload that
/// was replayed and the reference model's outcome of it. The harness makes one from its
/// cell spec (the parent's instructions to the measuring child), which lives in the
/// harness because it also carries the workload crate's types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellIdentity {
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
    /// Whether the implementation is an outside crate behind an adapter.
    pub peer: bool,
    /// The implementation's registry name, without parameters.
    pub implementation_base: String,
    /// Every parameter of the implementation with its value.
    pub implementation_parameters: BTreeMap<String, u64>,
    /// `exact`, or `approximate: ` and the bound.
    pub precision: String,
    /// Operation lines in the workload.
    pub operations: u64,
    /// Timers the workload fires.
    pub fired: u64,
    /// The reference model's digest of the expiry log.
    pub reference_digest: String,
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
    /// The implementation's registry name, without parameters (schema 2; derived from
    /// `implementation` in older records).
    #[serde(default)]
    pub implementation_base: String,
    /// Every parameter of the implementation with its value, defaults included (schema 2).
    #[serde(default)]
    pub implementation_parameters: BTreeMap<String, u64>,
    /// `exact`, or `approximate: ` and the declared bound (schema 2; `null` in older
    /// records, whose implementations were all exact).
    #[serde(default)]
    pub precision: Option<String>,
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
    /// Per operation kind ([`KINDS`]), when verified.
    pub latency: BTreeMap<String, Latency>,
    /// The clock of the latency pass.
    pub clock: Option<Clock>,
    /// `advance` latency over the run.
    pub advance_series: Option<AdvanceSeries>,
    /// Memory, when verified.
    pub memory: Option<Memory>,
    /// Lateness, for an approximate implementation that verified within its bound.
    #[serde(default)]
    pub lateness: Option<Lateness>,
    /// The conditions of each process that measured the cell, in the order run (schema 2;
    /// empty in older records).
    #[serde(default)]
    pub conditions: Vec<Conditions>,
    /// What the implementation costs with no work to do, measured apart from the workload
    /// (schema 3; `null` in older records and in cells without figures).
    #[serde(default)]
    pub fixed_costs: Option<FixedCosts>,
    /// The engine that ran the cell, for a cell of another runtime's timers run through
    /// the engine protocol (docs/engines.md); `null` for a Rust structure (schema 4).
    #[serde(default)]
    pub engine: Option<EngineInfo>,
    /// The counts of the cell's timed part under Valgrind (`timerbench run --counts`):
    /// instructions, simulated cache and branch misses per counted line, and the simulated
    /// machine they are of (schema 5; `null` in older records and in timed cells).
    #[serde(default)]
    pub counts: Option<crate::counts::Counts>,
    /// The other processes' CPU over the group of cells this cell was measured with
    /// (`crate::load`): whether another process competed for the cores while it ran
    /// (schema 5, later; `null` in older records and where `/proc` could not be read).
    #[serde(default)]
    pub others_load: Option<crate::load::OthersLoad>,
    /// Wall seconds the cell took, everything included: its `full` process and every
    /// `samples` process.
    pub elapsed_seconds: f64,
}

/// What a structure (or a peer with its adapter) costs with nothing to do: the two figures
/// that tell a peer's own work from the price of driving it through the contract (a
/// paused runtime moved per clock move, a handle map per start and stop). Measured on a
/// queue holding one timer far away, so that no advance finds it empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixedCosts {
    /// Nanoseconds per one-tick `advance` with nothing due: the median over rounds.
    pub idle_advance_ns: f64,
    /// Nanoseconds per `start` then `stop` of one timer, 1,000 ticks out: the median over
    /// rounds.
    pub start_stop_ns: f64,
    /// Calls timed per round, and rounds.
    pub calls: u64,
    /// Rounds timed; each figure is the median over them.
    pub rounds: u32,
}

impl CellRecord {
    /// The record of a cell (the harness passes its cell spec) with its identity filled
    /// in, the given status and reason, and no figures yet.
    pub fn for_spec(cell: impl Into<CellIdentity>, status: Status, reason: Option<String>) -> Self {
        let cell = cell.into();
        CellRecord {
            schema: SCHEMA_VERSION,
            key: cell.key,
            family: cell.family,
            params: cell.params,
            ops: cell.ops,
            seed: cell.seed,
            generator: cell.generator,
            peer: cell.peer,
            implementation_base: cell.implementation_base,
            implementation_parameters: cell.implementation_parameters,
            precision: Some(cell.precision),
            status,
            reason,
            operations: cell.operations,
            fired: cell.fired,
            reference_digest: cell.reference_digest,
            digest: None,
            throughput: None,
            latency: BTreeMap::new(),
            clock: None,
            advance_series: None,
            memory: None,
            lateness: None,
            conditions: Vec::new(),
            fixed_costs: None,
            engine: None,
            counts: None,
            others_load: None,
            elapsed_seconds: 0.0,
        }
    }

    /// Whether the cell is an engine's: another runtime's timers, not a Rust structure.
    pub fn is_engine(&self) -> bool {
        self.engine.is_some()
    }

    /// The implementation's registry name without parameters, also for a record older than
    /// the field.
    pub fn base_implementation(&self) -> &str {
        if self.implementation_base.is_empty() {
            self.key
                .implementation
                .split(':')
                .next()
                .unwrap_or(&self.key.implementation)
        } else {
            &self.implementation_base
        }
    }

    /// Whether the implementation declared itself approximate.
    pub fn is_approximate(&self) -> bool {
        self.precision
            .as_deref()
            .is_some_and(|p| p.starts_with("approximate"))
    }

    /// Whether any process of the cell ran on a loaded machine ([`Conditions::under_load`]).
    pub fn under_load(&self) -> bool {
        self.conditions.iter().any(Conditions::under_load)
    }

    /// The latency of the first of [`CLOCK_KINDS`] the cell recorded.
    pub fn clock_latency(&self) -> Option<&Latency> {
        CLOCK_KINDS.iter().find_map(|kind| self.latency.get(*kind))
    }
}

/// A median and median absolute deviation of `samples`.
pub fn spread(samples: Vec<f64>) -> Spread {
    let centre = median(&samples);
    let deviations: Vec<f64> = samples.iter().map(|s| (s - centre).abs()).collect();
    Spread {
        median: centre,
        mad: median(&deviations),
        samples,
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
        assert!(spread(Vec::new()).median.is_nan());
    }

    #[test]
    fn status_words_are_the_serialized_ones() {
        for status in [
            Status::Ok,
            Status::Unverified,
            Status::Failed,
            Status::Timeout,
            Status::Unsupported,
        ] {
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
        }
    }
}
