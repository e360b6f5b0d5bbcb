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

use crate::engine_server::{EngineConfig, EngineRun};
use crate::measure::{self, spread};
use crate::record::{self, Machine};
use crate::schedule::{Arrival, Schedule};
use crate::sys;
use crate::tcp::{self, TcpOutcome};
use crate::wait::Strategy;
use hdrhistogram::Histogram;
use serde::Deserialize;
use timerbench_results::live::{
    Arrivals, LIVE_SCHEMA, LatenessParts, LiveEngine, LiveRecord, Usage,
};

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

/// An end of the engine's result: how a connection ended.
const CLOSED_BY_TIMER: u64 = 1;
const CLOSED_BY_CLIENT: u64 = 2;
const CLOSED_AT_END: u64 = 3;
const CLOSED_FOR_PROTOCOL: u64 = 4;

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
}

/// The engine process's usage over a phase.
#[derive(Debug, Clone, Copy, Deserialize)]
struct Window {
    wall_ns: u64,
    cpu_ns: u64,
    voluntary_switches: u64,
    involuntary_switches: u64,
}

/// What the replay of the engine's reads and ends found.
#[derive(Default)]
pub struct Checked {
    /// The TCP mode's counts.
    pub tcp: TcpOutcome,
    /// Closes before their deadline, and the most ns one came early.
    pub early: u64,
    /// See `early`.
    pub most_early_ns: u64,
    /// How long after its scheduled time each keepalive was read.
    pub behind: Vec<u64>,
    /// Each timer close's deadline as an offset from tick 0, for the baseline.
    pub deadlines: Vec<u64>,
    /// What disagrees, in words (the run is unverified when any does).
    pub problems: Vec<String>,
}

/// One connection's state in the replay.
#[derive(Clone, Copy, Default)]
struct Connection {
    deadline: Option<u64>,
    live_until: u64,
    ended: bool,
}

/// Replays `result` over `schedule` (see the module documentation).
pub fn check(
    result: &EngineResult,
    schedule: &Schedule,
    config: &EngineConfig,
    run: &EngineRun,
) -> Checked {
    let (origin, tick) = (run.origin_ns, config.tick_ns);
    let mut checked = Checked::default();
    let mut connections = vec![Connection::default(); schedule.slots];
    for &(slot, delay) in &schedule.fill {
        let deadline = origin + delay * tick;
        connections[slot as usize] = Connection {
            deadline: Some(deadline),
            live_until: deadline,
            ended: false,
        };
    }
    for &[slot, index, sent_ns, read_ns] in &result.reads {
        let timed = schedule.arrivals.get(index as usize);
        let delay = match timed.map(|t| t.arrival) {
            Some(Arrival::Start { slot: s, delay } | Arrival::Restart { slot: s, delay })
                if u64::from(s) == slot =>
            {
                delay
            }
            _ => {
                checked.problems.push(format!(
                    "connection {slot} read a record for operation {index}, not one of its \
                     keepalives"
                ));
                continue;
            }
        };
        let connection = &mut connections[slot as usize];
        connection.deadline = Some(read_ns + delay * tick);
        let until = tcp::live_until_ns(origin, tick, sent_ns, delay);
        connection.live_until = connection.live_until.max(until);
        let scheduled = origin + timed.map_or(0, |t| t.tick) * tick;
        checked.behind.push(read_ns.saturating_sub(scheduled));
    }
    for &[slot, how, closed, deadline] in &result.ends {
        let Some(connection) = usize::try_from(slot)
            .ok()
            .and_then(|s| connections.get_mut(s))
        else {
            checked.problems.push(format!(
                "the server ended connection {slot}, not one of its own"
            ));
            continue;
        };
        if std::mem::replace(&mut connection.ended, true) {
            checked
                .problems
                .push(format!("the server ended connection {slot} twice"));
        }
        let said = u64::try_from(deadline).ok();
        let (closed, tcp) = (closed.max(0) as u64, &mut checked.tcp);
        match how as u64 {
            CLOSED_BY_TIMER => {
                tcp.closed += 1;
                if said != connection.deadline {
                    checked.problems.push(format!(
                        "the server closed connection {slot} at its deadline {said:?}, but its \
                         keepalives set {:?}",
                        connection.deadline
                    ));
                }
                let deadline = said.unwrap_or(0);
                checked.deadlines.push(deadline.saturating_sub(origin));
                if closed < deadline {
                    checked.early += 1;
                    checked.most_early_ns = checked.most_early_ns.max(deadline - closed);
                } else {
                    tcp.close_lateness.push(closed - deadline);
                }
                if closed < connection.live_until {
                    tcp.closed_wrongly += 1;
                }
            }
            CLOSED_BY_CLIENT | CLOSED_AT_END => {
                if how as u64 == CLOSED_BY_CLIENT {
                    tcp.closed_by_client += 1;
                } else {
                    tcp.open_at_end += 1;
                }
                let lost = connection
                    .deadline
                    .filter(|&d| d + config.max_behind_ns < run.ended_ns);
                if let Some(deadline) = lost {
                    checked.problems.push(format!(
                        "connection {slot}'s timeout was due {:.0} ms before the workload's \
                         end and never closed it",
                        (run.ended_ns - deadline) as f64 / 1e6
                    ));
                }
            }
            CLOSED_FOR_PROTOCOL => {}
            _ => checked.problems.push(format!(
                "connection {slot} ended as {how}, which means nothing"
            )),
        }
    }
    let never = connections.iter().filter(|c| !c.ended).count();
    if never > 0 {
        checked
            .problems
            .push(format!("{never} connections the server never reported"));
    }
    checked.problems.extend(result.problems.iter().cloned());
    let tcp = &mut checked.tcp;
    tcp.connections = schedule.slots as u64;
    tcp.sources = crate::net::sources_for(tcp.connections);
    tcp.ramp_ns = run.ramp_ns;
    tcp.received = result.reads.len() as u64;
    tcp.rearmed = result.rearmed;
    if let Some([sent, refused, rss]) = run.client_done {
        (
            tcp.client_sent,
            tcp.client_refused,
            tcp.client_peak_rss_bytes,
        ) = (sent, refused, rss);
    }
    tcp.client_exit = run.client_exit.clone();
    checked
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
        server: GO_SERVER.into(),
        cpu_of: GO_CPU.into(),
        wakeups_of: GO_WAKEUPS.into(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Timed;
    use crate::tcp::TcpConfig;

    const ORIGIN: u64 = 1_000_000_000;
    const MS: u64 = 1_000_000;

    /// Two connections with a 10 ms fill; connection 0's keepalive (timeout 10 ms) is
    /// scheduled at tick 5.
    fn schedule() -> Schedule {
        Schedule {
            fill: vec![(0, 10), (1, 10)],
            arrivals: vec![Timed {
                tick: 5,
                arrival: Arrival::Restart { slot: 0, delay: 10 },
            }],
            end_tick: 30,
            slots: 2,
        }
    }

    fn config() -> EngineConfig {
        EngineConfig {
            name: "go-runtime".into(),
            server: Vec::new(),
            tcp: TcpConfig {
                client: Vec::new(),
                port: 0,
                ramp_ns: 0,
                baseline_limit_ns: 0,
                io: crate::tcp::TcpIo::Epoll,
            },
            workload: "keepalive-2".into(),
            peak_pending: 2,
            tick_ns: MS,
            duration_ns: 30 * MS,
            idle_ns: 0,
            max_behind_ns: 1_000 * MS,
            client_cpu: None,
        }
    }

    fn run() -> EngineRun {
        EngineRun {
            origin_ns: ORIGIN,
            ended_ns: ORIGIN + 30 * MS,
            ..EngineRun::default()
        }
    }

    fn window() -> Window {
        Window {
            wall_ns: 1,
            cpu_ns: 0,
            voluntary_switches: 0,
            involuntary_switches: 0,
        }
    }

    fn result(reads: Vec<[u64; 4]>, ends: Vec<[i64; 4]>) -> EngineResult {
        EngineResult {
            runtime: "go".into(),
            runtime_version: "go1.19.8".into(),
            runtime_flags: Vec::new(),
            reads,
            ends,
            rearmed: 0,
            problems: Vec::new(),
            workload: window(),
            idle: window(),
            gc_cycles: 0,
            gc_pause_ns: 0,
            peak_rss_bytes: 0,
        }
    }

    /// `ns` after tick 0, as the engine writes an instant.
    fn at(ns: u64) -> i64 {
        (ORIGIN + ns) as i64
    }

    /// Connection 0's keepalive sent at 5 ms and read at 5.2 ms: its deadline is 15.2 ms.
    const READ: [u64; 4] = [0, 0, ORIGIN + 5 * MS, ORIGIN + 5 * MS + 200_000];

    #[test]
    fn closes_on_the_deadlines_the_reads_set_verify_with_their_lateness() {
        let ends = vec![
            [0, 1, at(16 * MS), at(15 * MS + 200_000)],
            [1, 1, at(10 * MS + 500_000), at(10 * MS)],
        ];
        let checked = check(&result(vec![READ], ends), &schedule(), &config(), &run());
        assert!(checked.problems.is_empty(), "{:?}", checked.problems);
        assert_eq!(
            (
                checked.tcp.closed,
                checked.tcp.closed_wrongly,
                checked.early
            ),
            (2, 0, 0)
        );
        assert_eq!(checked.tcp.close_lateness, vec![800_000, 500_000]);
        assert_eq!(checked.behind, vec![200_000]);
        assert_eq!(checked.deadlines, vec![15 * MS + 200_000, 10 * MS]);
        assert_eq!(checked.tcp.received, 1);
    }

    #[test]
    fn a_deadline_not_set_by_the_reads_an_early_close_and_a_wrong_close_are_caught() {
        // Closed at 14 ms, saying its deadline was 14 ms: not what the read set (15.2 ms),
        // and before the keepalive's send tick plus the timeout (15 ms): closed wrongly.
        let wrong = vec![
            [0, 1, at(14 * MS), at(14 * MS)],
            [1, 3, at(29 * MS), at(10 * MS)],
        ];
        let checked = check(&result(vec![READ], wrong), &schedule(), &config(), &run());
        assert!(
            checked.problems[0].contains("keepalives set"),
            "{:?}",
            checked.problems
        );
        assert_eq!(
            (checked.tcp.closed_wrongly, checked.tcp.open_at_end),
            (1, 1)
        );
        // Closed before the deadline it reports.
        let early = vec![
            [0, 1, at(15 * MS), at(15 * MS + 200_000)],
            [1, 2, at(5 * MS), -1],
        ];
        let checked = check(&result(vec![READ], early), &schedule(), &config(), &run());
        assert_eq!((checked.early, checked.most_early_ns), (1, 200_000));
        assert_eq!(checked.tcp.closed_by_client, 1);
    }

    #[test]
    fn a_lost_timeout_a_foreign_record_and_a_missing_connection_are_problems() {
        // Connection 1's deadline (10 ms) passed 1.99 s before the end and never closed it.
        let late_end = EngineRun {
            ended_ns: ORIGIN + 2_000 * MS,
            ..run()
        };
        let lost = vec![
            [0, 1, at(16 * MS), at(15 * MS + 200_000)],
            [1, 3, at(2_000 * MS), at(10 * MS)],
        ];
        let checked = check(&result(vec![READ], lost), &schedule(), &config(), &late_end);
        assert_eq!(checked.problems.len(), 1, "{:?}", checked.problems);
        assert!(checked.problems[0].contains("connection 1's timeout was due 1990 ms"));
        // Connection 1 read connection 0's keepalive; connection 0 never reported.
        let foreign = [1, 0, ORIGIN + 5 * MS, ORIGIN + 6 * MS];
        let ends = vec![[1, 1, at(11 * MS), at(10 * MS)]];
        let checked = check(&result(vec![foreign], ends), &schedule(), &config(), &run());
        assert!(checked.problems[0].contains("not one of its keepalives"));
        assert!(checked.problems[1].contains("1 connections the server never reported"));
    }
}
