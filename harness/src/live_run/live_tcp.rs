//! `timerbench live --tcp`: the keepalive server for real, over TCP on loopback (the
//! driver is `timerbench-live`'s `tcp` module: its servers and client; `docs/live.md`, "The TCP
//! mode"). This file holds what the command adds for it: its defaults, its smoke, the
//! hidden `live-tcp-client` subcommand the server starts, the engines' servers
//! (`--engine`), and the table of its figures.

use crate::engines::build::{self, NotBuilt};
use crate::engines::{ENGINES, names_where, sources};
use crate::table::Table;
use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;
use timerbench_live::api::{self, ClientArgs, EngineConfig, Machine, Schedule, TcpSettings};
use timerbench_report::runtimes;
use timerbench_results::live::LiveRecord;
use timerbench_workloads::families::GenSpec;

/// Connections by default in the TCP mode: the seed's server.
pub const DEFAULT_CONNECTIONS: u64 = 100_000;

/// The workload phase by default in the TCP mode: with the ramp, the idle phase and a
/// baseline of at most [`BASELINE_LIMIT_NS`], a run at 100k fits in two minutes.
pub const DEFAULT_DURATION_NS: u64 = 45_000_000_000;

/// The longest baseline of a TCP run (it sleeps to the run's own deadlines up to then).
pub const BASELINE_LIMIT_NS: u64 = 15_000_000_000;

/// The wait strategy by default in the TCP mode (one run: see `DEFAULT_DURATION_NS`).
pub const DEFAULT_WAIT: &str = "pwait2";

/// The TCP smoke: 500 connections, a 1 s timeout, 2,000 keepalives a second for 2 s.
pub const SMOKE_CONNECTIONS: u64 = 500;

/// The smoke's workload phase.
pub const SMOKE_DURATION_NS: u64 = 2_000_000_000;

/// The period of the smoke's polling-scan run: the seed's scan a second.
pub const SMOKE_SCAN_PERIOD_NS: u64 = 1_000_000_000;

/// Descriptors an engine's server keeps beside its connections' when the hard limit sets
/// the default size: its runtime's own files (a JVM's jars, a Go binary's pipes) and the
/// listener, with room to spare, so that the default is the limit less a thousand.
pub const ENGINE_SPARE_DESCRIPTORS: u64 = 1_000;

/// The connections of a TCP run and why that many (the record's `tcp.connections_why`):
/// the smoke's, `--timers` (`requested`), or by default the seed's 100,000, unless an
/// engine's server is among the runs and the kernel will not let a process hold that many
/// descriptors: an engine's server holds one per connection (timerbench's own loop gets
/// past the limit with io_uring; docs/live.md, *Past the descriptor limit*), so the
/// default is then what the hard limit allows ([`size_under`]).
pub fn size(smoke: bool, requested: Option<u64>, engines: bool) -> (u64, String) {
    match (smoke, requested) {
        (true, _) => (SMOKE_CONNECTIONS, "the smoke's".to_string()),
        (false, Some(connections)) => (connections, "requested".to_string()),
        (false, None) if !engines => (DEFAULT_CONNECTIONS, "the seed's".to_string()),
        (false, None) => size_under(api::descriptor_room(
            DEFAULT_CONNECTIONS + ENGINE_SPARE_DESCRIPTORS,
        )),
    }
}

/// The default size with an engine's server among the runs, given whether the process may
/// hold the seed's connections and the spare (`Err`: the hard limit that stops it): the
/// seed's 100,000, or the hard limit less [`ENGINE_SPARE_DESCRIPTORS`] in whole thousands
/// (half the limit where that leaves nothing).
pub fn size_under(room: Result<(), u64>) -> (u64, String) {
    match room {
        Ok(()) => (DEFAULT_CONNECTIONS, "the seed's".to_string()),
        Err(hard) => {
            let below = hard.saturating_sub(ENGINE_SPARE_DESCRIPTORS) / 1_000 * 1_000;
            let why = format!(
                "the hard descriptor limit is {}",
                timerbench_report::thousands(hard)
            );
            (below.max(hard / 2).max(1), why)
        }
    }
}

/// Writes into a TCP record why it has its connections.
pub fn say_why(record: &mut LiveRecord, why: &str) {
    if let Some(tcp) = record.tcp.as_mut() {
        tcp.connections_why = why.to_string();
    }
}

/// The hidden client subcommand's arguments: the server gives them.
#[derive(clap::Args)]
pub struct ClientCommand {
    /// The server's port on 127.0.0.1.
    #[arg(long)]
    port: u16,
    /// Connections to open.
    #[arg(long)]
    connections: u64,
    /// Loopback source addresses to spread them over.
    #[arg(long)]
    sources: u64,
    /// Nanoseconds per workload tick.
    #[arg(long)]
    tick_ns: u64,
    /// The CPU to run on.
    #[arg(long)]
    cpu: Option<usize>,
}

/// Runs the client; a failure is one `error:` line on stdout for the server (which
/// reports it) and on stderr, and exit status 1.
pub fn run_client(command: &ClientCommand) -> anyhow::Result<ExitCode> {
    let args = ClientArgs {
        port: command.port,
        connections: command.connections,
        sources: command.sources,
        tick_ns: command.tick_ns,
        cpu: command.cpu,
    };
    match api::run_tcp_client(&args) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(why) => anyhow::bail!("the TCP client: {why}"),
    }
}

/// How the server starts its client: this very binary, `live-tcp-client`.
pub fn client_command() -> anyhow::Result<Vec<OsString>> {
    let program = std::env::current_exe().map_err(|e| {
        anyhow::anyhow!("cannot find the timerbench binary to start the client: {e}")
    })?;
    Ok(vec![program.into(), "live-tcp-client".into()])
}

/// The TCP mode's settings, for the Rust server and an engine's.
pub fn settings(port: u16, ramp_ns: u64) -> anyhow::Result<TcpSettings> {
    Ok(TcpSettings {
        client: client_command()?,
        port,
        ramp_ns,
        baseline_limit_ns: BASELINE_LIMIT_NS,
    })
}

/// The keepalive workload of a TCP run: the family's seed scenario (30 s timeout, 3,000
/// keepalives a second per 100k connections) over `ticks`, or the smoke's.
pub fn keepalive_spec(
    smoke: bool,
    connections: u64,
    ticks: u64,
    seed: u64,
    params: &[(String, String)],
) -> GenSpec {
    if smoke {
        let params = [("timeout", "1000"), ("rate", "2000"), ("idle", "0.2")];
        return GenSpec {
            timers: SMOKE_CONNECTIONS,
            ops: Some(SMOKE_DURATION_NS / 1_000_000),
            seed: 1,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
    }
    GenSpec {
        timers: connections,
        ops: Some(ticks),
        seed,
        params: params.to_vec(),
    }
}

/// Refuses, before anything runs, an engine without a live server.
pub fn check_engines(names: &[String]) -> anyhow::Result<()> {
    match names
        .iter()
        .find(|n| !ENGINES.iter().any(|e| e.live && e.name == n.as_str()))
    {
        Some(name) => anyhow::bail!(
            "--engine {name}: no live keepalive server; the engines with one: {}",
            names_where(|e| e.live)
        ),
        None => Ok(()),
    }
}

/// Builds engine `name` into `build_dir` and runs its server over `schedule` with `base`'s
/// settings: its record, `unsupported` without its toolchain and `failed` (with why) when
/// it does not build or its run breaks, so that the other runs go on.
pub fn run_engine(
    name: &str,
    base: &EngineConfig,
    build_dir: &Path,
    schedule: &Schedule,
    machine: &Machine,
) -> LiveRecord {
    let mut config = base.clone();
    config.name = name.to_string();
    let engine = ENGINES
        .iter()
        .find(|e| e.name == name)
        .expect("check_engines lets only built engines through");
    match build::build(engine, &sources(), build_dir) {
        Ok(argv) => {
            config.server = argv.into_iter().map(OsString::from).collect();
            config.server.push("live-tcp".into());
        }
        Err(NotBuilt::Unsupported(why)) => {
            return api::engine_not_run(&config, schedule, machine, "unsupported", &why);
        }
        Err(NotBuilt::BuildFailed(why)) => {
            let why = format!("its build failed: {why}");
            return api::engine_not_run(&config, schedule, machine, "failed", &why);
        }
    }
    api::run_engine(&config, schedule, machine)
}

/// The TCP figures of each record, a row each.
pub fn table(records: &[LiveRecord]) -> Option<Table> {
    let mut table = Table::new(&[
        "implementation",
        "wait",
        "server",
        ">connections",
        "why that many",
        ">ramp s",
        ">keepalives sent/read",
        ">closed",
        ">on time",
        ">wrongly",
        ">re-armed",
        ">close late µs p50/p99/max",
        ">RSS MB server/client",
    ]);
    let mut any = false;
    for r in records {
        let Some(tcp) = &r.tcp else { continue };
        any = true;
        let us = |ns: u64| format!("{:.0}", ns as f64 / 1e3);
        let mb = |bytes: u64| format!("{:.0}", bytes as f64 / 1e6);
        table.row(vec![
            r.implementation.clone(),
            r.wait.clone(),
            match tcp.io.as_str() {
                "" => "epoll".to_string(),
                io => io.to_string(),
            },
            tcp.connections.to_string(),
            match tcp.connections_why.as_str() {
                "" => "-".to_string(),
                why => why.to_string(),
            },
            format!("{:.1}", tcp.ramp_ns as f64 / 1e9),
            format!("{}/{}", tcp.client_sent, tcp.received),
            tcp.closed.to_string(),
            tcp.closed_on_time.to_string(),
            tcp.closed_wrongly.to_string(),
            tcp.rearmed.to_string(),
            format!(
                "{}/{}/{}",
                us(tcp.close_lateness.p50_ns),
                us(tcp.close_lateness.p99_ns),
                us(tcp.close_lateness.max_ns)
            ),
            format!(
                "{}/{}",
                mb(tcp.server_peak_rss_bytes),
                mb(tcp.client_peak_rss_bytes)
            ),
        ]);
    }
    any.then_some(table)
}

/// Why a TCP record fails the command: connections closed wrongly, or a client that did
/// not end cleanly.
pub fn failure(record: &LiveRecord) -> Option<String> {
    let tcp = record.tcp.as_ref()?;
    if tcp.closed_wrongly > 0 {
        return Some(format!("{} connections closed wrongly", tcp.closed_wrongly));
    }
    tcp.client_exit.clone()
}

/// The runtimes' servers beside timerbench's loop ([`timerbench_report::runtimes`], the
/// rows the report and `reproduce` read too), with what its dashes and columns mean;
/// `None` unless an engine's server is among the records.
pub fn runtimes_table(records: &[LiveRecord]) -> Option<(Table, Vec<String>)> {
    let rows = runtimes::rows(records);
    if rows.is_empty() {
        return None;
    }
    let mut table = Table::new(&[
        "server",
        "side",
        "runtime",
        "io",
        ">connections",
        ">runs",
        "status",
        ">CPU ms/s",
        ">wake-ups/s",
        ">close late µs p50/p99/max",
        ">wrongly",
        ">RSS KB/conn",
        ">baseline µs p50/p99/max",
    ]);
    let us = |three: Option<[u64; 3]>| match three {
        Some([p50, p99, max]) => format!(
            "{:.0}/{:.0}/{:.0}",
            p50 as f64 / 1e3,
            p99 as f64 / 1e3,
            max as f64 / 1e3
        ),
        None => "–".to_string(),
    };
    let number = |value: Option<f64>, digits: usize| {
        value.map_or("–".to_string(), |v| format!("{v:.digits$}"))
    };
    for row in &rows {
        let ran = row.cpu_ms_per_second.is_some();
        table.row(vec![
            row.server.clone(),
            row.side.words().to_string(),
            row.runtime.clone(),
            row.io.clone(),
            if ran {
                runtimes::size_words(row)
            } else {
                "–".to_string()
            },
            row.runs.to_string(),
            row.status.clone(),
            number(row.cpu_ms_per_second, 2),
            number(row.wakeups_per_second, 0),
            us(row.close_lateness),
            if ran {
                row.closed_wrongly.to_string()
            } else {
                "–".to_string()
            },
            number(row.rss_per_connection.map(|b| b / 1e3), 1),
            us(row.baseline),
        ]);
    }
    let notes = runtimes::footnotes(&rows, records);
    Some((table, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerbench_results::live::{LiveEngine, TcpFigures};

    #[test]
    fn the_size_says_why_and_an_engine_under_a_hard_limit_runs_below_it() {
        let (connections, why) = size_under(Err(20_000));
        assert_eq!(
            (connections, why.as_str()),
            (19_000, "the hard descriptor limit is 20,000")
        );
        assert_eq!(size_under(Err(1_024)).0, 512);
        assert_eq!(size_under(Ok(())).0, DEFAULT_CONNECTIONS);
        assert_eq!(size(false, Some(700), true), (700, "requested".to_string()));
        assert_eq!(size(false, None, false).0, DEFAULT_CONNECTIONS);
        assert_eq!(size(true, Some(700), true).0, SMOKE_CONNECTIONS);
        let mut record = LiveRecord {
            tcp: Some(TcpFigures::default()),
            ..LiveRecord::default()
        };
        say_why(&mut record, "requested");
        assert_eq!(record.tcp.unwrap().connections_why, "requested");
    }

    #[test]
    fn the_runtimes_table_comes_with_an_engine_and_dashes_what_it_does_not_count() {
        let tcp = TcpFigures {
            connections: 300,
            connections_why: "requested".into(),
            server_peak_rss_bytes: 3_000_000,
            ..TcpFigures::default()
        };
        let heap = LiveRecord {
            implementation: "binary-heap".into(),
            precision: "exact".into(),
            wait: "pwait2".into(),
            status: "verified".into(),
            tcp: Some(tcp.clone()),
            ..LiveRecord::default()
        };
        assert!(runtimes_table(std::slice::from_ref(&heap)).is_none());
        let go = LiveRecord {
            implementation: "go-runtime".into(),
            wait: "runtime".into(),
            engine: Some(LiveEngine {
                name: "go-runtime".into(),
                wakeups_of: "not counted".into(),
                ..LiveEngine::default()
            }),
            ..heap.clone()
        };
        let (table, notes) = runtimes_table(&[heap, go]).unwrap();
        let text = table.render("");
        let row = text.lines().find(|l| l.starts_with("go-runtime")).unwrap();
        assert!(row.contains("300: requested"), "{row}");
        assert!(row.contains("10.0"), "RSS per connection in KB: {row}");
        assert!(row.contains(" – "), "{row}");
        assert!(text.lines().any(|l| l.starts_with("binary-heap")), "{text}");
        assert!(
            notes.iter().any(|n| n.contains("go-runtime: not counted")),
            "{notes:?}"
        );
    }
}
