//! `timerbench cell`: the measuring child of `timerbench run`.
//!
//! The parent writes a [`CellSpec`] as JSON to standard input; the child measures one
//! implementation on one workload and writes exactly one [`CellRecord`] as one JSON line to
//! standard output, then exits 0, also when the implementation did not verify (that is a
//! result). A spec that cannot be used (bad JSON, an unknown implementation, no repeats)
//! is one message on standard error and exit status 2. A crash, panic or time-out is the
//! parent's to record, from the exit status.
//!
//! The process first re-executes itself once with glibc's allocator told never to map or
//! unmap memory of its own accord ([`GLIBC_TUNABLES`]), so that a pass reuses the pages an
//! earlier pass faulted in rather than paying fresh page faults inside a timed replay.
//!
//! Everything happens in this one process, in this order, each pass with a queue of its
//! own (built with `with_capacity` of the workload's peak, and dropped before the next
//! pass) and a fresh handle table, so that no pass inherits another's state:
//!
//! 1. load the workload without the model ([`load_unchecked`]): the parent checked it and
//!    hands over the model's summary;
//! 2. warm-up and verification: one replay logging every firing; its summary must equal
//!    the reference in every field. If it does not, the workload is loaded again with the
//!    model and a full [`replay`] names the first differing firing, and the record is
//!    `unverified`, without figures: a wrong structure's speed is never reported;
//! 3. memory: one replay under the counting allocator ([`crate::alloc`]), untimed; it goes
//!    before the timed passes so that the first timed repeat does not pay the page faults
//!    of a queue's first use of fresh memory;
//! 4. throughput: `repeat` replays with the [`Quiet`] observer, `Instant` around `drive`
//!    only, each checked against the reference's counts;
//! 5. latency: one replay with a clock read before and after every unit (an operation
//!    line, or one tick of a `t`), every unit recorded in a histogram per kind (never
//!    sampled), and the slowest advance per window of the run.

use crate::alloc;
use crate::schema::{
    AdvanceSeries, CellRecord, CellSpec, Clock, Latency, Memory, Status, Throughput, spread,
};
use anyhow::Context;
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;
use timerbench_impls::registry;
use timerbench_impls::{Implementation, QueueVisitor, TimerQueue};
use timerbench_workloads::reference::Summary;
use timerbench_workloads::replay::{
    Counts, Kind, Observer, Quiet, Recorder, ReplayError, describe, drive, empty_handles, replay,
    summarize,
};
use timerbench_workloads::{Program, load, load_unchecked};

/// Measure one cell: reads a cell spec (JSON) on standard input, writes one result record
/// (one JSON line) on standard output. Run by `timerbench run`, one process per cell.
#[derive(clap::Args)]
pub struct Args {
    /// Also write on standard error what the record has no field for: the allocations and
    /// minor page faults inside each timed replay, the probe's cost, the allocator's
    /// settings and the time of each pass.
    #[arg(long)]
    diagnostics: bool,
    /// Read no spec: measure an empty latency probe with each clock (the TSC through
    /// quanta, and `std::time::Instant`), print the costs and exit.
    #[arg(long)]
    compare_clocks: bool,
}

/// The exit status of a spec that cannot be used.
const BAD_SPEC: u8 = 2;

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    tune_allocator();
    if args.compare_clocks {
        compare_clocks();
        return Ok(ExitCode::SUCCESS);
    }
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read the cell spec from standard input")?;
    let spec = match parse_spec(&input) {
        Ok(spec) => spec,
        Err(why) => {
            eprintln!("timerbench cell: bad cell spec on standard input: {why}");
            return Ok(ExitCode::from(BAD_SPEC));
        }
    };
    let (record, diagnostics) = measure(&spec, started)?;
    if args.diagnostics {
        diagnostics.print();
    }
    let mut line = serde_json::to_string(&record).context("cannot encode the record")?;
    line.push('\n');
    let mut out = std::io::stdout().lock();
    out.write_all(line.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write the record to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// The environment variable that marks a process already re-executed by
/// [`tune_allocator`].
const TUNED: &str = "TIMERBENCH_CELL_TUNED";

/// glibc's allocator settings for a measuring process: never `mmap` a block (so that a
/// large block freed by one pass is reused, already faulted in, by the next, instead of
/// being unmapped and faulted in afresh inside a timed replay), and never give the heap's
/// top back to the kernel. Measured on `hold`: without them every timed repeat at 3M
/// timers took 23,436 minor page faults inside `drive` (the queue's 92 MB, fresh each
/// time), and at 1M the first repeat 3,714; with them, none.
const GLIBC_TUNABLES: &str =
    "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=18446744073709551615";

/// Re-executes this very binary (`/proc/self/exe`, the same file even if it was replaced
/// on disk since), with the same arguments and standard streams, under
/// [`GLIBC_TUNABLES`], unless this process is that re-execution already. glibc reads its
/// tunables only at start-up. If the re-execution fails, the cell goes on untuned.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(TUNED).is_some() {
        return;
    }
    let tunables = match std::env::var("GLIBC_TUNABLES") {
        Ok(given) if !given.is_empty() => format!("{given}:{GLIBC_TUNABLES}"),
        _ => GLIBC_TUNABLES.to_string(),
    };
    let mut arguments = std::env::args_os();
    let name = arguments.next().unwrap_or_else(|| "timerbench".into());
    // `exec` returns only on failure.
    let error = std::process::Command::new("/proc/self/exe")
        .arg0(name)
        .args(arguments)
        .env("GLIBC_TUNABLES", tunables)
        .env(TUNED, "1")
        .exec();
    eprintln!("timerbench cell: note: running with the default allocator settings: {error}");
}

/// Elsewhere the allocator is left as it is.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

/// The spec in `input`, or why it cannot be used.
pub fn parse_spec(input: &str) -> Result<CellSpec, String> {
    let spec: CellSpec = serde_json::from_str(input).map_err(|e| format!("{e}"))?;
    if registry::find(&spec.key.implementation).is_none() {
        let known: Vec<&str> = registry::IMPLEMENTATIONS.iter().map(|i| i.name).collect();
        return Err(format!(
            "unknown implementation `{}` (known: {})",
            spec.key.implementation,
            known.join(", ")
        ));
    }
    if spec.repeat == 0 {
        return Err("`repeat` must be at least 1".to_string());
    }
    Ok(spec)
}

/// Measures the cell `spec` and returns its record; `started` is when the cell began, for
/// `elapsed_seconds`. An error is a cell that could not run (an unreadable workload, say),
/// not one that did not verify.
pub fn measure(spec: &CellSpec, started: Instant) -> anyhow::Result<(CellRecord, Diagnostics)> {
    let loading = Instant::now();
    let program = load_unchecked(&spec.workload_path)?;
    let loaded = loading.elapsed().as_secs_f64();
    let visitor = Measure {
        spec,
        program: &program,
    };
    let outcome = registry::visit(&spec.key.implementation, visitor)
        .with_context(|| format!("unknown implementation `{}`", spec.key.implementation))??;
    drop(program);
    let mut record = CellRecord::for_spec(spec, Status::Ok, None);
    let mut diagnostics = match outcome {
        Outcome::Measured(figures) => {
            let mut memory = figures.memory;
            memory.peak_rss_bytes = peak_rss_bytes().unwrap_or_else(|why| {
                eprintln!("timerbench cell: note: peak_rss_bytes is 0: {why}");
                0
            });
            record.digest = Some(figures.digest);
            record.throughput = Some(figures.throughput);
            record.latency = figures.latency;
            record.clock = Some(figures.clock);
            record.advance_series = Some(figures.advance_series);
            record.memory = Some(memory);
            figures.diagnostics
        }
        Outcome::Unverified { reason, digest } => {
            record.status = Status::Unverified;
            record.reason = Some(reason);
            record.digest = digest;
            Diagnostics::default()
        }
    };
    diagnostics.pass_seconds.insert(0, ("load", loaded));
    record.elapsed_seconds = started.elapsed().as_secs_f64();
    Ok((record, diagnostics))
}

/// What the record has no field for, written on standard error with `--diagnostics`.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    /// Allocations made inside `drive` in each timed repeat (0 for a structure that is
    /// fully sized by `with_capacity`).
    pub throughput_drive_allocations: Vec<u64>,
    /// Minor page faults taken inside `drive` in each timed repeat (0 where
    /// `/proc/self/stat` cannot be read).
    pub throughput_drive_page_faults: Vec<u64>,
    /// Allocations made by `with_capacity` in the memory pass.
    pub construction_allocations: u64,
    /// Allocations made inside `drive` in the memory pass.
    pub memory_drive_allocations: u64,
    /// The latency clock's probe cost: what an empty unit records, and what a before/after
    /// pair costs the loop, nanoseconds.
    pub probe: Option<ProbeCost>,
    /// Seconds per pass: load, warm-up, memory, throughput, latency.
    pub pass_seconds: Vec<(&'static str, f64)>,
}

impl Diagnostics {
    fn print(&self) {
        eprintln!(
            "timerbench cell: inside drive per timed repeat: allocations {:?}, minor page \
             faults {:?}; memory pass: {} allocations in with_capacity, {} inside drive",
            self.throughput_drive_allocations,
            self.throughput_drive_page_faults,
            self.construction_allocations,
            self.memory_drive_allocations
        );
        if let Some(probe) = &self.probe {
            eprintln!(
                "timerbench cell: probe: {:.1} ns recorded by an empty unit, {:.1} ns per \
                 before/after pair",
                probe.recorded_ns, probe.pair_ns
            );
        }
        match std::env::var(TUNED) {
            Ok(_) => eprintln!(
                "timerbench cell: allocator: GLIBC_TUNABLES={}",
                std::env::var("GLIBC_TUNABLES").unwrap_or_default()
            ),
            Err(_) => eprintln!("timerbench cell: allocator: default settings"),
        }
        let passes: Vec<String> = self
            .pass_seconds
            .iter()
            .map(|(name, seconds)| format!("{name} {seconds:.3} s"))
            .collect();
        eprintln!("timerbench cell: passes: {}", passes.join(", "));
    }
}

/// The figures of a verified cell.
struct Figures {
    digest: String,
    throughput: Throughput,
    latency: BTreeMap<String, Latency>,
    clock: Clock,
    advance_series: AdvanceSeries,
    /// `peak_rss_bytes` is filled in at the very end.
    memory: Memory,
    diagnostics: Diagnostics,
}

enum Outcome {
    Measured(Box<Figures>),
    Unverified {
        reason: String,
        digest: Option<String>,
    },
}

/// A disagreement with the reference, before it is explained.
struct Mismatch {
    message: String,
    /// The implementation's digest, when its replay got that far.
    digest: Option<String>,
}

struct Measure<'a> {
    spec: &'a CellSpec,
    program: &'a Program,
}

impl QueueVisitor for Measure<'_> {
    type Output = anyhow::Result<Outcome>;

    fn visit<Q: TimerQueue<u64>>(self, _: &'static Implementation) -> Self::Output {
        measure_queue::<Q, LatencyClock>(self.spec, self.program, LatencyClock::new())
    }
}

/// The clock of the latency pass. On this project's machine (2-core Xeon VM, invariant TSC,
/// Linux `tsc` clocksource), `timerbench cell --compare-clocks` gives: an empty unit
/// records 11.5 ns with the TSC and 17 ns with `Instant`, and a before/after pair costs the
/// replay 22 ns against 43 ns. So the TSC: half the disturbance, and a smaller floor under
/// every recorded latency.
type LatencyClock = Tsc;

/// Every pass, for the concrete queue type `Q`.
fn measure_queue<Q: TimerQueue<u64>, C: ProbeClock>(
    spec: &CellSpec,
    program: &Program,
    clock: C,
) -> anyhow::Result<Outcome> {
    let mut diagnostics = Diagnostics::default();
    let mut pass = Instant::now();
    let mut lap = |name: &'static str, diagnostics: &mut Diagnostics| {
        diagnostics
            .pass_seconds
            .push((name, pass.elapsed().as_secs_f64()));
        pass = Instant::now();
    };
    let reference = &spec.reference;

    // Warm-up and verification.
    let (summary, peak_pending) = match warm_up::<Q>(program, reference) {
        Ok(verified) => verified,
        Err(mismatch) => {
            return Ok(Outcome::Unverified {
                reason: explain::<Q>(&spec.workload_path, reference, mismatch.message)?,
                digest: mismatch.digest,
            });
        }
    };
    let capacity = usize::try_from(peak_pending).context("peak pending overflows usize")?;
    lap("warm-up", &mut diagnostics);
    let unverified = |message: String| {
        Ok(Outcome::Unverified {
            reason: format!("{message} (after a warm-up replay that verified)"),
            digest: Some(summary.digest.clone()),
        })
    };

    // Memory, before the timed passes: it is also the untimed replay that settles the
    // allocator. Without it the first timed repeat is the first to write a queue of full
    // capacity, and pays the page faults of memory fresh from the kernel (measured: 20-25%
    // slower than the other repeats at 100k timers, for every implementation).
    // Everything but the queue exists before the baseline.
    let memory = {
        let mut handles = empty_handles(program);
        let mut counts = Counts::default();
        let baseline = alloc::live_bytes();
        alloc::reset_peak();
        let before = alloc::allocations();
        let mut queue = Q::with_capacity(capacity);
        let built = alloc::allocations();
        let result = drive(&mut queue, program, &mut handles, &mut counts, &mut Quiet);
        let peak = alloc::peak_bytes();
        let after = alloc::allocations();
        if let Err(message) = check(result, &counts, &queue, reference) {
            return unverified(format!("memory pass: {message}"));
        }
        drop(queue);
        diagnostics.construction_allocations = built - before;
        diagnostics.memory_drive_allocations = after - built;
        let peak_live_bytes = peak.saturating_sub(baseline);
        let allocations = after - before;
        Memory {
            peak_live_bytes,
            peak_pending,
            bytes_per_pending_timer: if peak_pending == 0 {
                0.0
            } else {
                peak_live_bytes as f64 / peak_pending as f64
            },
            allocations,
            allocations_per_op: allocations as f64 / reference.operations.max(1) as f64,
            peak_rss_bytes: 0,
        }
    };
    lap("memory", &mut diagnostics);

    // Throughput.
    let mut per_op = Vec::with_capacity(spec.repeat as usize);
    let mut per_fired = Vec::with_capacity(spec.repeat as usize);
    for repeat in 1..=spec.repeat {
        let mut handles = empty_handles(program);
        let mut counts = Counts::default();
        let mut queue = Q::with_capacity(capacity);
        let faults = minor_page_faults();
        let allocations = alloc::allocations();
        let timer = Instant::now();
        let result = drive(&mut queue, program, &mut handles, &mut counts, &mut Quiet);
        let elapsed = timer.elapsed().as_nanos() as f64;
        diagnostics
            .throughput_drive_allocations
            .push(alloc::allocations() - allocations);
        diagnostics
            .throughput_drive_page_faults
            .push(minor_page_faults().saturating_sub(faults));
        if let Err(message) = check(result, &counts, &queue, reference) {
            return unverified(format!("timed repeat {repeat}: {message}"));
        }
        drop(queue);
        per_op.push(elapsed / reference.operations.max(1) as f64);
        per_fired.push(elapsed / reference.fired.max(1) as f64);
    }
    let throughput = Throughput {
        repeats: spec.repeat,
        ns_per_op: spread(per_op),
        ns_per_fired: (reference.fired > 0).then(|| spread(per_fired)),
    };
    lap("throughput", &mut diagnostics);

    if spec.inject_panic {
        panic!("injected panic: the cell spec asked for one (`inject_panic`)");
    }

    // Latency.
    let probe_cost = probe_cost(&clock);
    let window_ops = (program.steps.len() as u64 / 500).max(1);
    let mut probe = Probe::new(&clock, window_ops, program.steps.len() as u64)?;
    {
        let mut handles = empty_handles(program);
        let mut counts = Counts::default();
        let mut queue = Q::with_capacity(capacity);
        let result = drive(&mut queue, program, &mut handles, &mut counts, &mut probe);
        if let Err(message) = check(result, &counts, &queue, reference) {
            return unverified(format!("latency pass: {message}"));
        }
    }
    let mut latency = BTreeMap::new();
    for kind in Kind::ALL {
        let histogram = &probe.histograms[kind as usize];
        if !histogram.is_empty() {
            latency.insert(
                kind.name().to_string(),
                summarize_latency(histogram, probe_cost.recorded_ns)?,
            );
        }
    }
    let advance_series = AdvanceSeries {
        window_ops,
        max_ns: std::mem::take(&mut probe.series),
    };
    drop(probe);
    let clock_record = Clock {
        source: clock.source(),
        overhead_ns: probe_cost.recorded_ns,
    };
    diagnostics.probe = Some(probe_cost);
    lap("latency", &mut diagnostics);

    Ok(Outcome::Measured(Box::new(Figures {
        digest: summary.digest,
        throughput,
        latency,
        clock: clock_record,
        advance_series,
        memory,
        diagnostics,
    })))
}

/// The warm-up replay, logging every firing: its summary and peak pending when the summary
/// equals `reference` in every field, else what differs.
fn warm_up<Q: TimerQueue<u64>>(
    program: &Program,
    reference: &Summary,
) -> Result<(Summary, u64), Mismatch> {
    // The log's size is known; a spec claiming absurdly many firings must not abort here.
    let mut log = Vec::with_capacity(reference.fired.min(1 << 28) as usize);
    let mut handles = empty_handles(program);
    let mut counts = Counts::default();
    // The peak is not known yet (the file was loaded without the model).
    let mut queue = Q::new();
    let mut recorder = Recorder {
        log: &mut log,
        wrong_handle: None,
    };
    let result = drive(
        &mut queue,
        program,
        &mut handles,
        &mut counts,
        &mut recorder,
    );
    let wrong_handle = recorder.wrong_handle;
    result.map_err(|e| Mismatch {
        message: e.to_string(),
        digest: None,
    })?;
    let summary =
        summarize(program, &mut log, &counts, queue.len() as u64, queue.now()).map_err(|e| {
            Mismatch {
                message: e.to_string(),
                digest: None,
            }
        })?;
    if let Some((firing, got)) = wrong_handle {
        let error = ReplayError::WrongHandle {
            line: program.lines[firing.step as usize],
            op: describe(program, firing.step),
            key: program.keys[firing.slot as usize],
            expected: handles[firing.slot as usize],
            got,
        };
        return Err(Mismatch {
            message: error.to_string(),
            digest: Some(summary.digest),
        });
    }
    let differences = differences(reference, &summary);
    if !differences.is_empty() {
        return Err(Mismatch {
            message: format!(
                "the summary differs from the reference: {}",
                differences.join("; ")
            ),
            digest: Some(summary.digest),
        });
    }
    Ok((summary, counts.peak_pending))
}

/// Each field of `got` that differs from `expected`, as `field: expected X, got Y`.
fn differences(expected: &Summary, got: &Summary) -> Vec<String> {
    let mut differences = Vec::new();
    let mut compare =
        |field: &str, expected: &dyn std::fmt::Display, got: &dyn std::fmt::Display| {
            let (expected, got) = (expected.to_string(), got.to_string());
            if expected != got {
                differences.push(format!("{field}: expected {expected}, got {got}"));
            }
        };
    compare("operations", &expected.operations, &got.operations);
    compare("started", &expected.started, &got.started);
    compare("fired", &expected.fired, &got.fired);
    compare("stopped", &expected.stopped, &got.stopped);
    compare("misses", &expected.misses, &got.misses);
    compare("pending", &expected.pending, &got.pending);
    compare("final clock", &expected.final_clock, &got.final_clock);
    compare("digest", &expected.digest, &got.digest);
    differences
}

/// Why a warm-up disagreed with `reference`: the first differing firing from a full replay
/// against the workload loaded with the model, when that replay fails too.
fn explain<Q: TimerQueue<u64>>(
    path: &Path,
    reference: &Summary,
    warm_up: String,
) -> anyhow::Result<String> {
    let checked = load(path)?;
    let mut log = Vec::new();
    Ok(match replay::<Q>(&checked, &mut log) {
        Err(error) => error.to_string(),
        Ok(_) if checked.summary != *reference => format!(
            "{warm_up}; the implementation agrees with the reference model run on {}, whose \
             summary differs from the one in the cell spec: {}",
            path.display(),
            differences(reference, &checked.summary).join("; ")
        ),
        Ok(_) => format!(
            "{warm_up}; a second replay verified: the implementation does not replay \
             deterministically"
        ),
    })
}

/// A measured replay's result and counts against the verified reference.
fn check<Q: TimerQueue<u64>>(
    result: Result<(), ReplayError>,
    counts: &Counts,
    queue: &Q,
    reference: &Summary,
) -> Result<(), String> {
    result.map_err(|e| e.to_string())?;
    let got = [
        ("fired", counts.fired, reference.fired),
        ("started", counts.started, reference.started),
        ("stopped", counts.stopped, reference.stopped),
        ("misses", counts.misses, reference.misses),
        ("pending", queue.len() as u64, reference.pending),
        ("final clock", queue.now(), reference.final_clock),
    ];
    match got.iter().find(|(_, got, expected)| got != expected) {
        Some((what, got, expected)) => Err(format!("{what}: expected {expected}, got {got}")),
        None => Ok(()),
    }
}

/// The record's summary of one kind's histogram. `mean_ns` has the probe's own cost
/// (`overhead_ns`, what an empty unit records) subtracted, clamped at 0; the percentiles
/// and the maximum are the values as recorded (to the histogram's 3 significant digits),
/// probe cost included, since a distribution cannot be shifted by a mean; the histogram
/// too holds the raw values.
fn summarize_latency(histogram: &Histogram<u64>, overhead_ns: f64) -> anyhow::Result<Latency> {
    let mut percentiles = BTreeMap::new();
    for (name, quantile) in [
        ("p50", 0.5),
        ("p90", 0.9),
        ("p99", 0.99),
        ("p99.9", 0.999),
        ("p99.99", 0.9999),
    ] {
        percentiles.insert(name.to_string(), histogram.value_at_quantile(quantile));
    }
    percentiles.insert("max".to_string(), histogram.max());
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(histogram, &mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot serialize a latency histogram: {e:?}"))?;
    Ok(Latency {
        count: histogram.len(),
        mean_ns: (histogram.mean() - overhead_ns).max(0.0),
        percentiles,
        histogram_v2: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// The highest latency a histogram tracks, nanoseconds (an hour); longer is recorded as
/// that.
const HISTOGRAM_MAX_NS: u64 = 3_600_000_000_000;

/// A clock for timing one unit of a replay.
pub trait ProbeClock {
    /// A reading.
    type Stamp: Copy;
    /// Reads the clock.
    fn read(&self) -> Self::Stamp;
    /// Nanoseconds from `start` to `end` (0 if the clock went backwards).
    fn nanos(&self, start: Self::Stamp, end: Self::Stamp) -> u64;
    /// What it is, for the record.
    fn source(&self) -> String;
}

/// The time-stamp counter, read and scaled by quanta (plain `rdtsc`, no fence). Falls back
/// to the OS monotonic clock when the CPU has no invariant TSC; [`ProbeClock::source`]
/// says which.
pub struct Tsc {
    clock: quanta::Clock,
}

impl Tsc {
    /// Calibrates quanta's clock (once per process; up to 200 ms).
    pub fn new() -> Self {
        Tsc {
            clock: quanta::Clock::new(),
        }
    }
}

impl Default for Tsc {
    fn default() -> Self {
        Tsc::new()
    }
}

impl ProbeClock for Tsc {
    type Stamp = u64;

    #[inline(always)]
    fn read(&self) -> u64 {
        self.clock.raw()
    }

    #[inline(always)]
    fn nanos(&self, start: u64, end: u64) -> u64 {
        self.clock.delta_as_nanos(start, end)
    }

    fn source(&self) -> String {
        // quanta does not say which source it chose, except in its debug form.
        if format!("{:?}", self.clock).contains("Counter") {
            "tsc (quanta)".to_string()
        } else {
            "clock_gettime monotonic (quanta, no invariant TSC)".to_string()
        }
    }
}

/// `std::time::Instant`: `clock_gettime(CLOCK_MONOTONIC)` through the vDSO on Linux.
pub struct StdInstant;

impl ProbeClock for StdInstant {
    type Stamp = Instant;

    #[inline(always)]
    fn read(&self) -> Instant {
        Instant::now()
    }

    #[inline(always)]
    fn nanos(&self, start: Instant, end: Instant) -> u64 {
        end.saturating_duration_since(start).as_nanos() as u64
    }

    fn source(&self) -> String {
        "clock_gettime monotonic (std::time::Instant)".to_string()
    }
}

/// The latency pass's observer: a clock reading before each unit, and after it the
/// difference recorded in that kind's histogram and in the advance series.
struct Probe<'c, C: ProbeClock> {
    clock: &'c C,
    start: C::Stamp,
    /// One per [`Kind`], indexed by `kind as usize`.
    histograms: Vec<Histogram<u64>>,
    window_ops: u64,
    /// The slowest advance, tick or next unit of each window.
    series: Vec<u64>,
}

impl<'c, C: ProbeClock> Probe<'c, C> {
    fn new(clock: &'c C, window_ops: u64, operations: u64) -> anyhow::Result<Self> {
        let histograms = Kind::ALL
            .iter()
            .map(|_| Histogram::new_with_bounds(1, HISTOGRAM_MAX_NS, 3))
            .collect::<Result<_, _>>()
            .map_err(|e| anyhow::anyhow!("cannot create a histogram: {e:?}"))?;
        Ok(Probe {
            clock,
            start: clock.read(),
            histograms,
            window_ops,
            series: vec![0; operations.div_ceil(window_ops) as usize],
        })
    }
}

impl<C: ProbeClock> Observer for Probe<'_, C> {
    #[inline(always)]
    fn before(&mut self, _step: u32, _kind: Kind) {
        self.start = self.clock.read();
    }

    #[inline(always)]
    fn after(&mut self, step: u32, kind: Kind) {
        let end = self.clock.read();
        let nanos = self.clock.nanos(self.start, end);
        self.histograms[kind as usize].saturating_record(nanos);
        if matches!(kind, Kind::Advance | Kind::Tick | Kind::Next) {
            let window = &mut self.series[(u64::from(step) / self.window_ops) as usize];
            *window = (*window).max(nanos);
        }
    }
}

/// What an empty probe costs with one clock.
#[derive(Debug, Clone, Copy)]
pub struct ProbeCost {
    /// The mean value an empty unit records (the time between the two readings), the
    /// median over several runs: what every recorded latency includes.
    pub recorded_ns: f64,
    /// Wall time per empty before/after pair, recording included, the median over runs:
    /// what the probe adds to the replay.
    pub pair_ns: f64,
}

/// Measures an empty probe: runs of back-to-back before/after pairs through the same
/// observer the latency pass uses.
fn probe_cost<C: ProbeClock>(clock: &C) -> ProbeCost {
    const RUNS: usize = 9;
    const PAIRS: u32 = 100_000;
    let mut probe = Probe::new(clock, 1, 1).expect("the histogram bounds are valid");
    let mut recorded = Vec::with_capacity(RUNS);
    let mut pair = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let histogram = Kind::Start as usize;
        probe.histograms[histogram].reset();
        let timer = Instant::now();
        for _ in 0..PAIRS {
            probe.before(0, Kind::Start);
            probe.after(0, Kind::Start);
        }
        pair.push(timer.elapsed().as_nanos() as f64 / f64::from(PAIRS));
        recorded.push(probe.histograms[histogram].mean());
    }
    ProbeCost {
        recorded_ns: spread(recorded).median,
        pair_ns: spread(pair).median,
    }
}

/// `--compare-clocks`: the cost of an empty probe with each clock, on standard output.
fn compare_clocks() {
    let calibrating = Instant::now();
    let tsc = Tsc::new();
    let calibration = calibrating.elapsed();
    for (source, cost) in [
        (tsc.source(), probe_cost(&tsc)),
        (StdInstant.source(), probe_cost(&StdInstant)),
    ] {
        println!(
            "{source}: an empty unit records {:.1} ns; a before/after pair costs {:.1} ns",
            cost.recorded_ns, cost.pair_ns
        );
    }
    println!(
        "(quanta's calibration took {:.1} ms)",
        calibration.as_secs_f64() * 1e3
    );
}

/// Minor page faults of this process so far (`minflt`, the tenth field of
/// `/proc/self/stat`), or 0 where that cannot be read.
fn minor_page_faults() -> u64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // The command name, field 2, is in parentheses and may hold spaces.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(7))
        .and_then(|field| field.parse().ok())
        .unwrap_or(0)
}

/// The process's peak resident set, from `VmHWM` in `/proc/self/status`.
fn peak_rss_bytes() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .ok_or("no VmHWM in /proc/self/status")?;
    let kilobytes = line
        .trim()
        .strip_suffix("kB")
        .and_then(|n| n.trim().parse::<u64>().ok())
        .ok_or_else(|| format!("cannot read VmHWM `{}`", line.trim()))?;
    Ok(kilobytes * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerbench_impls::TimerId;
    use timerbench_impls::binary_heap::BinaryHeapTimers;
    use timerbench_workloads::families::{self, GenSpec};
    use timerbench_workloads::program::Step;
    use timerbench_workloads::writer;

    /// Writes a generated workload into `dir` and returns a spec for it, with the model's
    /// summary as the reference.
    fn spec_for(dir: &Path, family: &str, timers: u64, implementation: &str) -> CellSpec {
        let gen_spec = GenSpec {
            timers,
            ops: None,
            seed: 7,
            params: Vec::new(),
        };
        let workload = families::generate(family, &gen_spec).unwrap();
        let path = dir.join(format!("{family}-{timers}.tw"));
        writer::write_file(&path, &workload).unwrap();
        let reference = load(&path).unwrap().summary;
        CellSpec {
            key: crate::schema::CellKey {
                workload: family.to_string(),
                timers,
                implementation: implementation.to_string(),
            },
            family: family.to_string(),
            params: BTreeMap::new(),
            ops: None,
            seed: 7,
            generator: format!("timerbench gen {family} --timers {timers} --seed 7"),
            workload_path: path,
            reference,
            repeat: 3,
            inject_panic: false,
        }
    }

    fn assert_no_figures(record: &CellRecord) {
        assert!(record.throughput.is_none());
        assert!(record.latency.is_empty());
        assert!(record.clock.is_none());
        assert!(record.advance_series.is_none());
        assert!(record.memory.is_none());
    }

    /// A binary heap that starts every timer after the fifth one tick late.
    struct LateHeap {
        heap: BinaryHeapTimers<u64>,
        starts: u64,
    }

    impl TimerQueue<u64> for LateHeap {
        fn with_capacity(capacity: usize) -> Self {
            LateHeap {
                heap: BinaryHeapTimers::with_capacity(capacity),
                starts: 0,
            }
        }
        fn start(&mut self, deadline: u64, value: u64) -> TimerId {
            self.starts += 1;
            let late = u64::from(self.starts > 5);
            self.heap.start(deadline + late, value)
        }
        fn stop(&mut self, id: TimerId) -> Option<u64> {
            self.heap.stop(id)
        }
        fn advance<F: FnMut(TimerId, u64, u64)>(&mut self, to: u64, on_fire: F) {
            self.heap.advance(to, on_fire)
        }
        fn next_deadline(&mut self) -> Option<u64> {
            self.heap.next_deadline()
        }
        fn len(&self) -> usize {
            self.heap.len()
        }
        fn now(&self) -> u64 {
            self.heap.now()
        }
        fn work(&self) -> u64 {
            self.heap.work()
        }
    }

    #[test]
    fn a_wrong_structure_is_unverified_with_its_first_differing_firing_and_no_figures() {
        let dir = tempfile::tempdir().unwrap();
        // Up-down starts each timer once, so a late timer is not restarted while pending
        // (that would be caught as a wrong handle first).
        let spec = spec_for(dir.path(), "up-down", 200, "binary-heap");
        let program = load_unchecked(&spec.workload_path).unwrap();
        let Outcome::Unverified { reason, digest } =
            measure_queue::<LateHeap, StdInstant>(&spec, &program, StdInstant).unwrap()
        else {
            panic!("a late heap verified");
        };
        assert!(
            reason.starts_with("first differing firing at line "),
            "{reason}"
        );
        assert!(reason.contains("expected `"), "{reason}");
        // Its digest is its own, not the reference's.
        let digest = digest.expect("the warm-up got as far as a digest");
        assert_ne!(digest, spec.reference.digest);
    }

    #[test]
    fn a_wrong_reference_digest_is_unverified_without_figures() {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = spec_for(dir.path(), "retransmit", 100, "quad-heap");
        let right = std::mem::replace(&mut spec.reference.digest, "0".repeat(64));
        let (record, _) = measure(&spec, Instant::now()).unwrap();
        assert_eq!(record.status, Status::Unverified);
        let reason = record.reason.as_deref().unwrap();
        assert!(reason.contains("digest: expected 0000"), "{reason}");
        assert!(reason.contains("the cell spec"), "{reason}");
        assert_eq!(record.digest.as_deref(), Some(right.as_str()));
        assert_eq!(record.reference_digest, "0".repeat(64));
        assert_no_figures(&record);
    }

    #[test]
    fn a_verified_cell_has_every_figure() {
        // The memory figures are checked in the integration tests, where the cell has its
        // process to itself; here other tests allocate on other threads.
        let dir = tempfile::tempdir().unwrap();
        let spec = spec_for(dir.path(), "retransmit", 100, "hierarchical-wheel");
        let program = load(&spec.workload_path).unwrap();
        let (record, diagnostics) = measure(&spec, Instant::now()).unwrap();
        assert_eq!(record.status, Status::Ok, "{:?}", record.reason);
        assert_eq!(record.digest.as_ref(), Some(&spec.reference.digest));
        let throughput = record.throughput.as_ref().unwrap();
        assert_eq!(throughput.repeats, 3);
        assert_eq!(throughput.ns_per_op.samples.len(), 3);
        assert!(throughput.ns_per_op.median > 0.0);
        assert!(throughput.ns_per_fired.as_ref().unwrap().median > 0.0);
        let counts: BTreeMap<&str, u64> = record
            .latency
            .iter()
            .map(|(kind, latency)| (kind.as_str(), latency.count))
            .collect();
        assert_eq!(counts, units(&program));
        let series = record.advance_series.as_ref().unwrap();
        assert_eq!(
            series.max_ns.len() as u64,
            record.operations.div_ceil(series.window_ops)
        );
        assert!(series.max_ns.iter().any(|&n| n > 0));
        assert_eq!(diagnostics.throughput_drive_allocations.len(), 3);
        assert!(record.memory.as_ref().unwrap().peak_pending > 0);
        assert!(record.elapsed_seconds > 0.0);
    }

    #[test]
    fn specs_that_cannot_be_used_say_why() {
        assert!(parse_spec("{").unwrap_err().contains("EOF"));
        let dir = tempfile::tempdir().unwrap();
        let mut spec = spec_for(dir.path(), "hold", 10, "btree");
        spec.key.implementation = "linked-list".into();
        let text = serde_json::to_string(&spec).unwrap();
        assert!(
            parse_spec(&text)
                .unwrap_err()
                .contains("unknown implementation")
        );
        spec.key.implementation = "btree".into();
        spec.repeat = 0;
        let text = serde_json::to_string(&spec).unwrap();
        assert!(parse_spec(&text).unwrap_err().contains("repeat"));
        spec.repeat = 1;
        assert_eq!(parse_spec(&serde_json::to_string(&spec).unwrap()), Ok(spec));
    }

    #[test]
    fn an_empty_probe_costs_little_and_the_peak_rss_is_read() {
        for cost in [probe_cost(&Tsc::new()), probe_cost(&StdInstant)] {
            assert!(cost.recorded_ns >= 0.0 && cost.recorded_ns < 10_000.0);
            assert!(cost.pair_ns > 0.0);
        }
        assert!(peak_rss_bytes().unwrap() > 1 << 20);
    }

    /// The units of each kind a replay of `program` times: one per line, except one per
    /// tick of a `t`.
    fn units(program: &Program) -> BTreeMap<&'static str, u64> {
        let mut units = BTreeMap::new();
        for step in &program.steps {
            let (kind, n) = match *step {
                Step::Start { .. } => (Kind::Start, 1),
                Step::Stop { .. } => (Kind::Stop, 1),
                Step::Restart { .. } => (Kind::Restart, 1),
                Step::Advance { .. } => (Kind::Advance, 1),
                Step::Tick { ticks } => (Kind::Tick, ticks),
                Step::Next => (Kind::Next, 1),
            };
            if n > 0 {
                *units.entry(kind.name()).or_insert(0) += n;
            }
        }
        units
    }
}
