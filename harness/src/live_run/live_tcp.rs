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
