//! An engine server's run ([`crate::engine_server`]) checked and made a `live.jsonl`
//! record, as a Rust server's is.
//!
//! The engine reports every keepalive it read and how and when each connection ended,
//! with its deadline then. Replaying them per connection gives the checks:
//!
//! - every record read is one of its connection's keepalives (else a protocol error);
//! - the engine's deadline at each close is the one its reads set: the fill's, or the last
//!   keepalive's read time plus its timeout (its bookkeeping is what it says it is);
//! - no close before that deadline (an early firing; Go's timers are exact);
//! - no timeout lost: a connection still open at the end, or closed by its client, whose
//!   deadline had passed more than `--max-behind` before the end;
//! - **closed wrongly**: a close before the tick of the connection's last keepalive's
//!   sending plus its timeout, on the client's clock, exactly as for the Rust server
//!   ([`crate::tcp::live_until_ns`]). Counted apart, as there; must be 0.
//!
//! A run is verified when the first four hold. The lateness of a close is its time after
//! the engine's deadline on CLOCK_MONOTONIC; the engine cannot split it into rounding, wake
//! and dispatch (its runtime does not say when its poller returned), so those stay empty.
//!
//! `replay.rs` holds the replay and its checks ([`check`]); this file makes the record.

use crate::engine_server::{EngineConfig, EngineRun};
use crate::measure::{self, spread};
use crate::record::{self, Machine};
use crate::schedule::Schedule;
use crate::sys;
use crate::wait::Strategy;
use hdrhistogram::Histogram;
use serde::Deserialize;
use timerbench_results::live::{
    Arrivals, LIVE_SCHEMA, LatenessParts, LiveEngine, LiveRecord, Usage,
};

mod replay;

pub use replay::check;

/// The record's `wait` for an engine's server: its runtime's own poller.
pub const ENGINE_WAIT: &str = "runtime";

/// How the Go server waits and times out (`engines/go/keepalive.go`).
const GO_SERVER: &str = "a goroutine per connection blocked in Read; the idle timeout a read \
    deadline (SetReadDeadline) moved to the read time plus the timeout on every keepalive, a \
    runtime timer that wakes the goroutine through the netpoller";
/// Whose CPU time the Go server's phases count.
const GO_CPU: &str = "the whole Go process, every thread (getrusage RUSAGE_SELF, user + \
    system), between the phase's ends as the process itself read them";
/// Why the Go server's wakeup counts are 0.
const GO_WAKEUPS: &str = "not counted: Go's runtime counts no waits of its netpoller or its \
    threads; the process's voluntary context switches (a thread blocking, then woken) are \
    in voluntary_switches";

/// The engine's `result` line.
#[derive(Debug, Clone, Deserialize)]
pub struct EngineResult {
    runtime: String,
    runtime_version: String,
    runtime_flags: Vec<String>,
    /// `[connection, arrival index, sent ns, read ns]`, each connection's in read order.
    reads: Vec<[u64; 4]>,
    /// `[connection, how, closed ns, deadline ns (-1: none)]`, one per connection.
    ends: Vec<[i64; 4]>,
    rearmed: u64,
    problems: Vec<String>,
    workload: Window,
    idle: Window,
    gc_cycles: u64,
    gc_pause_ns: u64,
    peak_rss_bytes: u64,
    /// How the server waits and times out, in words; Go's server leaves it out, and the
    /// record then states Go's ([`GO_SERVER`]). The same for the next two.
    #[serde(default)]
    server: Option<String>,
    #[serde(default)]
    cpu_of: Option<String>,
    #[serde(default)]
    wakeups_of: Option<String>,
}

/// The engine process's usage over a phase.
#[derive(Debug, Clone, Copy, Deserialize)]
struct Window {
    wall_ns: u64,
    cpu_ns: u64,
    voluntary_switches: u64,
    involuntary_switches: u64,
}

fn histogram_of(values: &[u64]) -> Histogram<u64> {
    let mut histogram = measure::histogram();
    for &value in values {
        measure::note(&mut histogram, value);
    }
    histogram
}

fn usage(window: &Window) -> Usage {
    let seconds = window.wall_ns as f64 / sys::NANOS_PER_SECOND as f64;
    Usage {
        wall_ns: window.wall_ns,
        cpu_ns: window.cpu_ns,
        cpu_ms_per_second: if seconds > 0.0 {
            window.cpu_ns as f64 / 1e6 / seconds
        } else {
            0.0
        },
        voluntary_switches: window.voluntary_switches,
        involuntary_switches: window.involuntary_switches,
        ..Usage::default()
    }
}

/// The record of an engine's run: its result parsed and checked, with a bare baseline
/// (`epoll_pwait2`, timerbench's own) slept to the deadlines of its closes.
pub fn record(
    machine: &Machine,
    config: &EngineConfig,
    schedule: &Schedule,
    run: &EngineRun,
) -> Result<LiveRecord, String> {
    let result: EngineResult = serde_json::from_str(&run.result)
        .map_err(|e| format!("the {} server's result is malformed: {e}", config.name))?;
    let checked = check(&result, schedule, config, run);
    let span_ns = result.workload.wall_ns.min(config.tcp.baseline_limit_ns);
    let baseline = crate::baseline::run(
        Strategy::Pwait2,
        &checked.deadlines,
        span_ns,
        sys::epoll_pwait2,
    )?;
    let lateness = histogram_of(&checked.tcp.close_lateness);
    let mut record = blank(machine, config, schedule, run.slack_ns);
    let verified = checked.problems.is_empty() && checked.early == 0;
    record.status = if verified { "verified" } else { "unverified" }.into();
    if !verified {
        let mut why = checked
            .problems
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if checked.early > 0 {
            why = format!("{} closes before their deadline; {why}", checked.early);
        }
        record.reasons.push(format!(
            "unverified ({} problems): {why}",
            checked.problems.len()
        ));
    }
    if let Some(tick) = run.cut_at_tick {
        record.reasons.push(format!(
            "cut by --duration at tick {tick} of {} (the rest of the workload was not sent)",
            schedule.end_tick
        ));
    }
    let allowance_ns = baseline.value_at_quantile(0.999);
    let tcp = record::figures_of(&checked.tcp, allowance_ns, result.peak_rss_bytes);
    if tcp.closed_wrongly > 0 {
        record.reasons.push(format!(
            "{} connections closed wrongly: they had sent a keepalive within the timeout",
            tcp.closed_wrongly
        ));
    }
    if let Some(exit) = &tcp.client_exit {
        record.reasons.push(exit.clone());
        record.cut_at_tick = Some(run.ended_ns.saturating_sub(run.origin_ns) / config.tick_ns);
    }
    record.cut_at_tick = run.cut_at_tick.or(record.cut_at_tick);
    record.arrivals = Arrivals {
        fill: schedule.fill.len() as u64,
        scheduled: schedule.arrivals.len() as u64,
        sent: run.sent,
        applied: checked.tcp.received,
        starts_as_restarts: 0,
        behind: spread(&histogram_of(&checked.behind)),
    };
    let behind = record.arrivals.behind;
    if behind.p99_ns > config.tick_ns {
        record.reasons.push(format!(
            "behind real time: 1% of the keepalives were read more than {:.3} ms after their \
             scheduled time (the most {:.3} ms), more than a tick: the server (or the client) \
             could not keep up",
            behind.p99_ns as f64 / 1e6,
            behind.max_ns as f64 / 1e6
        ));
    }
    record.firings = checked.tcp.closed + checked.tcp.rearmed;
    record.lateness = LatenessParts {
        total: spread(&lateness),
        early: checked.early,
        most_early_ns: checked.most_early_ns,
        ..LatenessParts::default()
    };
    record.baseline = spread(&baseline);
    record.workload_phase = usage(&result.workload);
    record.idle_phase = usage(&result.idle);
    record.histograms = record::histograms(&lateness, &baseline);
    record.tcp = Some(tcp);
    record.engine = Some(LiveEngine {
        name: config.name.clone(),
        runtime: result.runtime.clone(),
        runtime_version: result.runtime_version.clone(),
        runtime_flags: result.runtime_flags.clone(),
        server: result.server.clone().unwrap_or_else(|| GO_SERVER.into()),
        cpu_of: result.cpu_of.clone().unwrap_or_else(|| GO_CPU.into()),
        wakeups_of: result
            .wakeups_of
            .clone()
            .unwrap_or_else(|| GO_WAKEUPS.into()),
        gc_cycles: result.gc_cycles,
        gc_pause_ns: result.gc_pause_ns,
        ..LiveEngine::default()
    });
    Ok(record)
}

/// The record of an engine that did not run: `status` (`unsupported`, `failed`) and why.
pub fn not_run(
    machine: &Machine,
    config: &EngineConfig,
    schedule: &Schedule,
    status: &str,
    why: &str,
) -> LiveRecord {
    let mut record = blank(machine, config, schedule, sys::timer_slack());
    record.status = status.into();
    record.reasons.push(why.into());
    record.engine = Some(LiveEngine {
        name: config.name.clone(),
        ..LiveEngine::default()
    });
    record
}

/// A record of `config` with nothing measured yet.
fn blank(
    machine: &Machine,
    config: &EngineConfig,
    schedule: &Schedule,
    slack_ns: u64,
) -> LiveRecord {
    LiveRecord {
        schema: LIVE_SCHEMA,
        started: machine.started.clone(),
        git_revision: machine.git_revision.clone(),
        host: machine.host.clone(),
        kernel: record::kernel(),
        clock_source: record::clock_source(),
        implementation: config.name.clone(),
        precision: "exact".into(),
        workload: config.workload.clone(),
        peak_pending: config.peak_pending,
        tick_ns: config.tick_ns,
        wait: ENGINE_WAIT.into(),
        timer_slack_ns: slack_ns,
        policy: "other".into(),
        feeder_cpu: config.client_cpu,
        duration_limit_ns: config.duration_ns,
        end_tick: schedule.end_tick,
        ..LiveRecord::default()
    }
}
