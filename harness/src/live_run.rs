//! The core of `timerbench live` (its flags and its run): one structure at a time in a real
//! event loop on CLOCK_MONOTONIC, for each wait strategy, with the bare baseline beside it
//! (the driver is the `timerbench-live` crate; `docs/live.md` says how to read it). It lives
//! beside `cmd/` because `live`, `engine --micro lateness` and `reproduce` all run it.

pub mod live_tables;
pub mod live_tcp;

use crate::flags::parse_duration;
use crate::folders::free_folder;
use anyhow::{anyhow, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use timerbench_impls::Variant;
use timerbench_live::api::{self, Config, EngineConfig, Machine, Policy, Schedule, Settings};
use timerbench_results::live::{LiveRecord, append_live};
use timerbench_workloads::families::{self, GenSpec};
use timerbench_workloads::{Program, compile, load};

/// Run a structure in a real epoll event loop on the monotonic clock: operations arrive
/// over a socket at their scheduled wall times, timers fire on the real clock; lateness,
/// wakeups and CPU per wait strategy, beside a bare loop's (docs/live.md).
#[derive(clap::Args)]
pub struct Args {
    /// The implementation or variant (repeatable): `hierarchical-wheel`,
    /// `netty-wheel:tick=100` (see `timerbench list`). Default: hierarchical-wheel, unless
    /// --engine is given.
    #[arg(long = "impl", value_name = "NAME[:KEY=VALUE,...]", value_parser = Variant::parse)]
    implementations: Vec<Variant>,
    /// Another runtime's keepalive server beside the structures, with --tcp (repeatable):
    /// `go-runtime`, Go's netpoller and timers; `tokio-current-thread`,
    /// `tokio-multi-thread`, tokio's timer wheel (`tokio-timeout-read`: `timeout` around
    /// each read); `libuv`, libuv's timer heap;
    /// `libev-timer-again`, `libev-lazy`, libev's timer heap kept by two strategies of its
    /// manual; `netty-idle-state`, Netty's IdleStateHandler; `netty-hashed-wheel-idle`, one
    /// Netty HashedWheelTimer (docs/live.md). Built from `engines/`;
    /// without its toolchain the record is `unsupported`, with the package to install.
    /// The command then ends with the runtimes beside timerbench's loop in one table.
    #[arg(long = "engine", value_name = "NAME", requires = "tcp")]
    engines: Vec<String>,
    /// Where --engine's programs are built.
    #[arg(long, value_name = "DIR", default_value = "target/engines")]
    build_dir: PathBuf,
    /// Wait strategies, comma-separated: `pwait2` (epoll_pwait2, ns timeout), `wait`
    /// (epoll_wait, ms rounded up), `timerfd` (absolute timerfd at the next deadline),
    /// `tick` (a periodic timerfd every --period, whatever is pending). Default: all four;
    /// `pwait2` with --tcp.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    wait: Option<Vec<String>>,
    /// The workload family (see `timerbench list`). Default: keepalive at 10,000
    /// connections with a 2 s timeout and a fifth of them silent, so that timers fire
    /// within the default --duration.
    #[arg(long, value_name = "FAMILY", conflicts_with = "file")]
    workload: Option<String>,
    /// The family's size (with --workload): default 10,000; with --tcp the connections,
    /// default the seed's 100,000, or with --engine the hard descriptor limit less 1,000
    /// when the kernel refuses more (an engine's server holds a descriptor per
    /// connection); every record says why (docs/live.md, *Sizes*).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    timers: Option<u64>,
    /// The family's --ops (with --workload; with --tcp, default: the --duration in ticks).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    ops: Option<u64>,
    /// A family parameter, KEY=VALUE (repeatable, with --workload).
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = parse_param)]
    params: Vec<(String, String)>,
    /// The generator's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A workload file (v1 format) instead of a family.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Wall time of one workload tick: `1ms`, `100us`, `10ms`.
    #[arg(long, default_value = "1ms", value_parser = parse_duration)]
    tick: u64,
    /// The period of `--wait tick` (default: the structure's natural tick: Netty's worker
    /// tick and the ring's bucket width from their parameters, skynet 10ms, Linux 4ms,
    /// else one --tick).
    #[arg(long, value_parser = parse_duration)]
    period: Option<u64>,
    /// The longest the workload phase may last; a longer workload is cut there (and the
    /// record says so). Default 10s; 45s with --tcp.
    #[arg(long, value_parser = parse_duration)]
    duration: Option<u64>,
    /// The idle phase after the workload (every timer stopped, nothing arriving).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    idle: u64,
    /// How far behind its schedule an operation may be applied before the run stops as
    /// too dense for real time.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    max_behind: u64,
    /// Timer slack of the loop thread in ns (PR_SET_TIMERSLACK; the kernel's default is
    /// 50000; at least 1). Default: leave it as it is (recorded either way).
    #[arg(long, value_name = "NS")]
    slack: Option<u64>,
    /// Scheduling policy of the loop thread: `other`, `fifo[:PRIORITY]`, `rr[:PRIORITY]`
    /// (real-time: root or CAP_SYS_NICE; refused with a message otherwise).
    #[arg(long, default_value = "other")]
    policy: Policy,
    /// Pin the loop thread to this CPU.
    #[arg(long, value_name = "CPU")]
    pin: Option<usize>,
    /// Pin the feeder thread (with --tcp: the client process) to this CPU (default with
    /// --pin: another CPU, if any).
    #[arg(long, value_name = "CPU")]
    feeder_cpu: Option<usize>,
    /// The folder for live.jsonl (default: results/live-<date>-<host>-<git rev>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The CI smoke: a one-second keepalive through hierarchical-wheel with each wait
    /// strategy and netty-wheel:tick=10 ticking; fails unless every run verifies with no
    /// early firing (about 15 s; other flags but --out and --tcp are ignored). With --tcp:
    /// 500 connections for 2 s, hierarchical-wheel with pwait2, netty-wheel:tick=10
    /// ticking, polling-scan scanning once a second, and every engine's server (Go's,
    /// tokio's, libuv's, libev's, Netty's; most of the time goes to building them).
    #[arg(long)]
    smoke: bool,
    /// The keepalive server for real: a client process opens the connections (--timers,
    /// default 100,000) to the loop on 127.0.0.1 and sends the keepalive family's messages
    /// at their times; each connection's idle timer closes it. Raises the descriptor
    /// limits (both, as root) in both processes. Loopback only.
    #[arg(long, conflicts_with = "file")]
    tcp: bool,
    /// The server's port on 127.0.0.1 with --tcp (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The longest the client may take to open every connection, with --tcp.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    ramp: u64,
    /// How the --tcp server holds its connections: `epoll` (a descriptor each, watched
    /// by the loop's epoll), `io-uring` (io_uring's registered files, in rings the loop's
    /// epoll watches: for more connections than the descriptor limit allows), or `auto`
    /// (epoll where the descriptor limit can be raised above the connections, else
    /// io-uring). Records say which ran (docs/live.md, *Past the descriptor limit*).
    #[arg(long, default_value = "auto", value_parser = ["auto", "epoll", "io-uring"])]
    tcp_io: String,
    /// Run every structure × wait strategy this many times, interleaved (each once, then
    /// each again), and print each one's median and range over the runs: its p99 against
    /// its own baseline's, and its CPU per second with the spread (docs/live.md,
    /// *Repeats*).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=50))]
    repeat: u32,
}

impl Args {
    fn duration_ns(&self) -> u64 {
        match (self.duration, self.tcp, self.smoke) {
            (_, true, true) => live_tcp::SMOKE_DURATION_NS,
            (Some(ns), _, _) => ns,
            (None, true, false) => live_tcp::DEFAULT_DURATION_NS,
            (None, false, _) => 10_000_000_000,
        }
    }

    /// `--repeat`, which the smoke ignores like the other flags.
    fn repeats(&self) -> usize {
        if self.smoke { 1 } else { self.repeat as usize }
    }

    fn waits(&self) -> Vec<String> {
        match &self.wait {
            Some(waits) => waits.clone(),
            None if self.tcp => vec![live_tcp::DEFAULT_WAIT.to_string()],
            None => ["pwait2", "wait", "timerfd", "tick"]
                .map(String::from)
                .to_vec(),
        }
    }

    /// The engines' servers to run: --engine's, or every live one in the TCP smoke.
    fn engines(&self) -> Vec<String> {
        match (self.smoke, self.tcp) {
            (true, true) => crate::engines::ENGINES
                .iter()
                .filter(|e| e.live)
                .map(|e| e.name.to_string())
                .collect(),
            (true, false) => Vec::new(),
            _ => self.engines.clone(),
        }
    }
}

fn parse_param(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}

/// One run to do: a variant and a wait strategy's name (checked by [`Config::new`]), with
/// the period for `tick` (`None`: the structure's natural one).
struct Plan {
    variant: Variant,
    wait: String,
    period_ns: Option<u64>,
}

fn plans(args: &Args) -> anyhow::Result<Vec<Plan>> {
    if args.smoke {
        let wheel = Variant::parse("hierarchical-wheel").map_err(|e| anyhow!(e))?;
        let netty = Variant::parse("netty-wheel:tick=10").map_err(|e| anyhow!(e))?;
        let waits: &[&str] = if args.tcp {
            &["pwait2"]
        } else {
            &["pwait2", "wait", "timerfd", "tick"]
        };
        let mut plans: Vec<Plan> = waits
            .iter()
            .map(|name| Plan {
                variant: wheel.clone(),
                wait: name.to_string(),
                period_ns: args.period,
            })
            .collect();
        plans.push(Plan {
            variant: netty,
            wait: "tick".into(),
            period_ns: args.period,
        });
        if args.tcp {
            // The seed's scan a second: its clock moves only on the period's wakeups.
            plans.push(Plan {
                variant: Variant::parse("polling-scan").map_err(|e| anyhow!(e))?,
                wait: "tick".into(),
                period_ns: Some(live_tcp::SMOKE_SCAN_PERIOD_NS),
            });
        }
        return Ok(plans);
    }
    let mut plans = Vec::new();
    let mut implementations = args.implementations.clone();
    if implementations.is_empty() && args.engines.is_empty() {
        implementations.push(Variant::parse("hierarchical-wheel").map_err(|e| anyhow!(e))?);
    }
    for variant in &implementations {
        for name in &args.waits() {
            plans.push(Plan {
                variant: variant.clone(),
                wait: name.trim().to_string(),
                period_ns: args.period,
            });
        }
    }
    Ok(plans)
}

/// The workload: a file, a family, the smoke's, or the default; with --tcp, `connections`
/// of them ([`live_tcp::size`]).
fn workload(args: &Args, connections: u64) -> anyhow::Result<(String, Program)> {
    if let Some(path) = &args.file {
        let program = load(path)?;
        return Ok((path.display().to_string(), program));
    }
    let (family, spec) = if args.tcp {
        let ticks = args.ops.unwrap_or(args.duration_ns() / args.tick);
        let spec =
            live_tcp::keepalive_spec(args.smoke, connections, ticks, args.seed, &args.params);
        ("keepalive".to_string(), spec)
    } else if args.smoke {
        let params = [("timeout", "200"), ("rate", "1000"), ("idle", "0.2")];
        let spec = GenSpec {
            timers: 200,
            ops: Some(1000),
            seed: 1,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        ("keepalive".to_string(), spec)
    } else if let Some(family) = &args.workload {
        let spec = GenSpec {
            timers: args.timers.unwrap_or(10_000),
            ops: args.ops,
            seed: args.seed,
            params: args.params.clone(),
        };
        (family.clone(), spec)
    } else {
        let params = [("timeout", "2000"), ("idle", "0.2")];
        let spec = GenSpec {
            timers: args.timers.unwrap_or(10_000),
            ops: args.ops,
            seed: args.seed,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        ("keepalive".to_string(), spec)
    };
    let generated = families::generate(&family, &spec)?;
    let name = families::workload_name(&family, &spec);
    let program = compile(&generated, Path::new(&name))
        .map_err(|e| anyhow!("the generated workload is invalid (a bug in the family): {e}"))?;
    Ok((name, program))
}

/// The configuration of `plan`'s run of workload `name`: the flags, or the smoke's fixed
/// values where it ignores them; the live crate checks them ([`Config::new`]).
fn config(args: &Args, plan: &Plan, name: &str, program: &Program) -> anyhow::Result<Config> {
    let smoke = args.smoke;
    let tcp = match args.tcp {
        true => Some(live_tcp::settings(args.port, args.ramp)?),
        false => None,
    };
    Config::new(&Settings {
        variant: plan.variant.clone(),
        wait: plan.wait.clone(),
        period_ns: plan.period_ns,
        workload: name.to_string(),
        peak_pending: program.peak_pending,
        tick_ns: if smoke { 1_000_000 } else { args.tick },
        duration_ns: if smoke && !args.tcp {
            2_000_000_000
        } else {
            args.duration_ns()
        },
        idle_ns: if smoke { 300_000_000 } else { args.idle },
        max_behind_ns: if smoke {
            1_000_000_000
        } else {
            args.max_behind
        },
        slack_ns: if smoke { None } else { args.slack },
        policy: if smoke { Policy::Other } else { args.policy },
        loop_cpu: if smoke { None } else { args.pin },
        feeder_cpu: if smoke { None } else { args.feeder_cpu },
        tcp,
        tcp_io: args.tcp_io.clone(),
    })
    .map_err(|e| anyhow!(e))
}

/// The structures' runs to make, ready: the workload's name, its program and schedule,
/// and a checked configuration per structure × wait strategy.
struct Prepared {
    name: String,
    program: Program,
    schedule: Arc<Schedule>,
    configs: Vec<Config>,
}

/// `timerbench live`: the checks that need nothing run, the workload and its
/// configurations, then every run interleaved, the tables, and the exit status.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let engines = args.engines();
    live_tcp::check_engines(&engines)?;
    let size = live_tcp::size(args.smoke, args.timers, !engines.is_empty());
    refuse_tcp_early(args, size.0)?;
    let prepared = prepare(args, size.0)?;
    let folder = args.out.clone().unwrap_or_else(|| free_folder("live-"));
    let machine = Machine {
        started: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        git_revision: crate::environment::git_revision(),
        host: crate::environment::host(),
    };
    let records = run_all(args, &prepared, &engines, &folder, &machine, &size.1)?;
    live_tables::print_tables(&records, args.repeats(), &folder);
    verdict(&records)
}

/// Refuses at once, before a workload of 100,000 connections is generated, what the TCP
/// mode cannot run: another family than keepalive, or a descriptor limit that cannot be
/// raised for the `connections` the way `--tcp-io` asks.
fn refuse_tcp_early(args: &Args, connections: u64) -> anyhow::Result<()> {
    if !args.tcp || args.smoke {
        return Ok(());
    }
    if let Some(family) = args.workload.as_deref().filter(|f| *f != "keepalive") {
        bail!(
            "--tcp --workload {family}: the TCP mode replays the keepalive family (a \
             message per keepalive on its connection)"
        );
    }
    api::check_tcp_io(connections, &args.tcp_io).map_err(|e| anyhow!(e))
}

/// The workload and a configuration per plan, refused before any run when a structure
/// cannot hold the workload's reach or the machine refuses a knob ([`api::preflight`]).
fn prepare(args: &Args, connections: u64) -> anyhow::Result<Prepared> {
    let (name, program) = workload(args, connections)?;
    let configs: Vec<Config> = plans(args)?
        .iter()
        .map(|plan| config(args, plan, &name, &program))
        .collect::<anyhow::Result<_>>()?;
    for config in &configs {
        let range = config.variant.declarations().range;
        if !program.reach.within(&range) {
            bail!(
                "{}: {name} reaches beyond what it holds ({})",
                config.variant,
                range.why
            );
        }
    }
    let schedule = Arc::new(Schedule::of(&program));
    for config in &configs {
        api::preflight(config).map_err(|e| anyhow!(e))?;
    }
    Ok(Prepared {
        name,
        program,
        schedule,
        configs,
    })
}

/// Every run, `--repeat` rounds of each structure's then each engine's, each record
/// printed and written as it comes ([`keep`]); a structure's run that cannot be made stops
/// the command, an engine's is recorded as failed and the others go on. A TCP record says
/// why it has its connections (`why`).
fn run_all(
    args: &Args,
    prepared: &Prepared,
    engines: &[String],
    folder: &Path,
    machine: &Machine,
    why: &str,
) -> anyhow::Result<Vec<LiveRecord>> {
    let Prepared {
        name,
        program,
        schedule,
        configs,
    } = prepared;
    let runs = (configs.len() + engines.len()) * args.repeats();
    println!(
        "live: {name} ({} operations after a fill of {}, {} ticks), {runs} runs; kernel {}, \
         clock source {}",
        schedule.arrivals.len(),
        schedule.fill.len(),
        schedule.end_tick,
        api::kernel(),
        api::clock_source()
    );
    let mut records = Vec::new();
    let base = engine_base(args, name, program)?;
    // Interleaved, so that a slow spell of the machine falls on every structure alike.
    let mut index = 0;
    for _ in 0..args.repeats() {
        for config in configs {
            index += 1;
            announce(&format!("[{index}/{runs}]"), config, schedule);
            let window = crate::machine_load::Window::start();
            let mut record = api::run(config, schedule, machine).map_err(|e| anyhow!(e))?;
            record.others_load = window.end();
            live_tcp::say_why(&mut record, why);
            let fired = format!("{} firings", record.firings);
            keep(folder, record, &fired, &mut records)?;
        }
        for engine in engines {
            index += 1;
            println!(
                "  [{index}/{runs}] the {engine} server (its runtime's own poller and timers), \
                 then the baseline"
            );
            let window = crate::machine_load::Window::start();
            let mut record =
                live_tcp::run_engine(engine, &base, &args.build_dir, schedule, machine);
            record.others_load = window.end();
            live_tcp::say_why(&mut record, why);
            let closes = format!("{} closes", record.tcp.as_ref().map_or(0, |tcp| tcp.closed));
            keep(folder, record, &closes, &mut records)?;
        }
    }
    Ok(records)
}

/// Says what a structure's run (`counter` of the runs) is about to do: its workload
/// phase, its idle phase and the baselines after.
fn announce(counter: &str, config: &Config, schedule: &Schedule) {
    let workload_s = (schedule.end_tick * config.tick_ns).min(config.duration_ns) as f64 / 1e9;
    // The TCP mode has no loaded baseline (docs/live.md, *How a run works*).
    let baselines = match config.tcp {
        Some(_) => "the baseline",
        None => "the baseline and the loaded baseline",
    };
    println!(
        "  {counter} {} with {}: {workload_s:.1} s of workload, {:.1} s idle, then \
         {baselines}",
        config.variant,
        config.strategy,
        config.idle_ns as f64 / 1e9
    );
}

/// Success, unless a run did not verify (an engine without its toolchain is
/// `unsupported`, not a failure), an exact structure fired early, or a TCP run closed a
/// connection wrongly or lost its client: then each such run on stderr, and the error.
fn verdict(records: &[LiveRecord]) -> anyhow::Result<ExitCode> {
    let failed: Vec<&LiveRecord> = records
        .iter()
        .filter(|r| {
            (r.status != "verified" && r.status != "unsupported")
                || (r.precision == "exact" && r.lateness.early > 0)
                || live_tcp::failure(r).is_some()
        })
        .collect();
    if failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    for record in failed {
        eprintln!(
            "timerbench: {} with {}: {} ({} early firings)",
            record.implementation,
            record.wait,
            live_tcp::failure(record)
                .or_else(|| record.reasons.first().cloned())
                .unwrap_or_else(|| "early firings".into()),
            record.lateness.early
        );
    }
    bail!(
        "a live run did not verify, an exact structure fired early, or a TCP run closed a \
         connection wrongly or lost its client (see above)"
    )
}

/// Prints a run's outcome (`what` happened: its firings or closes) and its reasons, and
/// appends its record to the folder's `live.jsonl` at once, so a later failure loses none.
fn keep(
    folder: &Path,
    record: LiveRecord,
    what: &str,
    records: &mut Vec<LiveRecord>,
) -> anyhow::Result<()> {
    let loaded = match &record.loaded_baseline {
        Some(loaded) => format!(", loaded {:.0} µs", loaded.lateness.p99_ns as f64 / 1e3),
        None => String::new(),
    };
    println!(
        "        {}: {what}, {} early, lateness p99 {:.0} µs (baseline {:.0} µs{loaded})",
        record.status,
        record.lateness.early,
        record.lateness.total.p99_ns as f64 / 1e3,
        record.baseline.p99_ns as f64 / 1e3
    );
    for reason in &record.reasons {
        println!("        {reason}");
    }
    let what = format!("{} with {}", record.implementation, record.wait);
    if let Some(warning) = record
        .others_load
        .as_ref()
        .and_then(|load| crate::machine_load::warning(load, &what))
    {
        println!("        {warning}");
    }
    append_live(folder, &record)?;
    records.push(record);
    Ok(())
}

/// What an engine's server run shares with the structures' runs: the same rules as
/// [`config`]'s for the smoke and the flags.
fn engine_base(args: &Args, name: &str, program: &Program) -> anyhow::Result<EngineConfig> {
    let smoke = args.smoke;
    Ok(EngineConfig {
        name: String::new(),
        server: Vec::new(),
        // The engine's server holds its own connections, a descriptor each.
        tcp: live_tcp::settings(args.port, args.ramp)?,
        workload: name.to_string(),
        peak_pending: program.peak_pending,
        tick_ns: if smoke { 1_000_000 } else { args.tick },
        duration_ns: args.duration_ns(),
        idle_ns: if smoke { 300_000_000 } else { args.idle },
        max_behind_ns: if smoke {
            1_000_000_000
        } else {
            args.max_behind
        },
        client_cpu: if smoke { None } else { args.feeder_cpu },
    })
}
