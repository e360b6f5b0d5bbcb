//! `timerbench engine`: the timers of real runtimes (Go, the JDK) run through the engine
//! protocol of docs/engines.md beside the Rust ports, each built from `engines/` when its
//! toolchain is here and `unsupported` (with the package to install) when not.
//!
//! An engine that crashes, hangs past its limit, answers malformed JSON or replays a wrong
//! expiry log is reported as such with its stderr's last lines, and the others go on; the
//! command then exits non-zero. Timings are the engine's own, taken inside its process.

use crate::engine_protocol::protocol::{Answer, Request, Sampling};
use crate::engine_protocol::{Outcome, lateness, run_engine};
use crate::engines::build::{self, NotBuilt};
use crate::engines::{Engine, select};
use crate::table::Table;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Run the engines of other runtimes on a workload or a microbenchmark.
#[derive(clap::Args)]
pub struct Args {
    /// An engine to run (repeatable; default every engine): null, go-runtime,
    /// jdk-delay-queue, jdk-priority-queue, jdk-scheduled-executor, netty-hashed-wheel
    /// (with --micro lateness, the default is go-runtime and the last two).
    #[arg(long = "engine")]
    engines: Vec<String>,
    /// A workload to replay in virtual time; its expiry log is verified against the model.
    #[arg(long, conflicts_with = "resident")]
    workload: Option<PathBuf>,
    /// An engine-specific parameter, KEY=VALUE (repeatable): `purge-interval=3` for the JDK
    /// replay engines (Kafka's default is 1000); `remove-on-cancel=false` and
    /// `worker=waiting` for jdk-scheduled-executor's start+stop pairs (docs/engines.md).
    #[arg(long = "param", value_parser = key_value)]
    parameters: Vec<String>,
    /// The microbenchmark with this many resident timers (the Go article's shape).
    #[arg(long)]
    resident: Option<u64>,
    /// Which microbenchmark: start+stop pairs, or restarts of the resident timers in turn.
    #[arg(long, value_enum, default_value_t = Micro::StartStop)]
    micro: Micro,
    /// Measured iterations.
    #[arg(long, default_value_t = 10)]
    samples: u32,
    /// Minimum length of one iteration, in milliseconds.
    #[arg(long, default_value_t = 100)]
    min_sample_ms: u64,
    /// Warm-up iterations at least (then until the last three settle within 5%).
    #[arg(long, default_value_t = 5)]
    warmup: u32,
    /// Warm-up iterations at most.
    #[arg(long, default_value_t = 50)]
    max_warmup: u32,
    /// Seconds each engine may run before it is killed as hung.
    #[arg(long, default_value_t = 600)]
    limit_secs: u64,
    /// The engines' sources.
    #[arg(long, default_value = "engines")]
    sources: PathBuf,
    /// Where engines are built and their answers kept.
    #[arg(long, default_value = "target/engines")]
    build_dir: PathBuf,
    #[command(flatten)]
    lateness: lateness::LatenessArgs,
}

/// The microbenchmarks of `--resident`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Micro {
    /// Start a timer, stop it.
    StartStop,
    /// Restart a resident timer (Go's `Timer.Reset`).
    Restart,
    /// Timers on the real clock: lateness, wake-ups and CPU (no --resident; see --timers).
    Lateness,
}

/// Runs the command.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let selected = select(&args.engines)?;
    if args.micro == Micro::Lateness {
        return run_lateness(args, selected);
    }
    let program = match &args.workload {
        Some(path) => Some(timerbench_workloads::load(path).map_err(|e| anyhow::anyhow!("{e}"))?),
        None if args.resident.is_none() => {
            anyhow::bail!("give --workload FILE (replay) or --resident N (start+stop pairs)")
        }
        None if args.micro == Micro::Restart && args.resident == Some(0) => {
            anyhow::bail!("--resident 0: --micro restart needs at least one timer to restart")
        }
        None => None,
    };
    let sampling = Sampling {
        samples: args.samples,
        min_sample_ms: args.min_sample_ms,
        warmup: args.warmup,
        max_warmup: args.max_warmup,
    };
    let limit = Duration::from_secs(args.limit_secs);
    let mut builder = build::Builder::new(&args.sources, &args.build_dir);
    let mut outcomes = Vec::new();
    for engine in selected {
        let scratch = args.build_dir.join("runs").join(engine.name);
        let request = request(args, &scratch)?;
        let outcome = match builder.build(engine) {
            Err(NotBuilt::Unsupported(install)) => Outcome::Unsupported(install),
            Err(NotBuilt::BuildFailed(stderr_tail)) => Outcome::Failed {
                failure: "build failed".into(),
                stderr_tail,
            },
            Ok(argv) => run_engine(
                engine,
                &argv,
                &request,
                program.as_ref(),
                &sampling,
                limit,
                &scratch,
            ),
        };
        outcomes.push((engine.name, outcome));
    }
    Ok(print_outcomes(&outcomes))
}

/// `--micro lateness`: the named engines, or those that run it.
fn run_lateness(args: &Args, selected: Vec<&'static Engine>) -> anyhow::Result<ExitCode> {
    if args.resident.is_some() || args.workload.is_some() {
        anyhow::bail!("--micro lateness takes --timers, not --resident or --workload");
    }
    let engines: Vec<&'static Engine> = selected
        .into_iter()
        .filter(|e| !args.engines.is_empty() || e.lateness)
        .collect();
    let sampling = Sampling {
        samples: args.samples,
        min_sample_ms: args.min_sample_ms,
        warmup: args.warmup,
        max_warmup: args.max_warmup,
    };
    let builder = build::Builder::new(&args.sources, &args.build_dir);
    let limit = Duration::from_secs(args.limit_secs);
    lateness::run(
        &args.lateness,
        &engines,
        builder,
        &sampling,
        limit,
        &args.build_dir,
    )
}

/// The request the flags make; a replay's log goes to `scratch`.
fn request(args: &Args, scratch: &Path) -> anyhow::Result<Request> {
    let resident = args.resident.unwrap_or_default();
    Ok(match &args.workload {
        Some(path) => Request::Replay {
            workload: path.clone(),
            log: std::path::absolute(scratch.join("expiries")).context("the scratch directory")?,
            parameters: args.parameters.clone(),
        },
        None if args.micro == Micro::Restart => Request::Restart {
            resident,
            parameters: args.parameters.clone(),
        },
        None => Request::StartStop {
            resident,
            parameters: args.parameters.clone(),
        },
    })
}

/// The table on stdout, then why each engine was unsupported; each failure with its stderr
/// on stderr. Failure when any engine failed.
fn print_outcomes(outcomes: &[(&str, Outcome)]) -> ExitCode {
    let mut table = Table::new(&[
        "engine",
        "runtime",
        "status",
        ">median ns",
        "unit",
        ">samples",
        ">spread",
        ">GCs in samples",
        "warm-up",
        ">peak RSS",
        "log",
        ">exchange",
    ]);
    for (name, outcome) in outcomes {
        table.row(row(name, outcome));
    }
    println!("{}", table.render("").trim_end());
    for (name, outcome) in outcomes {
        if let Outcome::Unsupported(why) = outcome {
            println!("{name}: unsupported: {why}");
        }
    }
    for (name, outcome) in outcomes {
        if let Outcome::Failed {
            failure,
            stderr_tail,
        } = outcome
        {
            eprintln!(
                "timerbench: engine {name}: {failure}\n{}",
                indent(stderr_tail)
            );
        }
    }
    if outcomes.iter().any(|(_, outcome)| outcome.failed()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn row(name: &str, outcome: &Outcome) -> Vec<String> {
    match outcome {
        Outcome::Answered {
            answer,
            digest,
            wall,
        } => vec![
            name.into(),
            format!("{} {}", answer.runtime, answer.runtime_version)
                .trim()
                .into(),
            "ok".into(),
            (!answer.samples_ns.is_empty())
                .then(|| crate::stats::median(&answer.samples_ns))
                .map_or("-".into(), |m| format!("{m:.1}")),
            answer.unit.clone().unwrap_or_default(),
            answer.samples_ns.len().to_string(),
            spread(&answer.samples_ns).map_or("-".into(), |s| format!("{:.1}%", 100.0 * s)),
            gc_in_samples(answer),
            warm_up(answer),
            answer
                .peak_rss_bytes
                .map_or("-".into(), |b| format!("{:.1} MiB", b as f64 / 1048576.0)),
            digest
                .as_ref()
                .map_or("-".into(), |d| format!("verified {}", &d[..12])),
            format!("{:.0} ms", wall.as_secs_f64() * 1e3),
        ],
        Outcome::Unsupported(_) => vec![name.into(), String::new(), "unsupported".into()],
        Outcome::Failed { failure, .. } => {
            vec![name.into(), String::new(), format!("FAILED: {failure}")]
        }
    }
}

fn warm_up(answer: &Answer) -> String {
    match (answer.warmup_iterations, answer.warmup_settled) {
        (Some(n), Some(true)) => format!("{n}, settled"),
        (Some(n), _) if n > 0 => format!("{n}, not settled"),
        _ => "-".into(),
    }
}

/// The samples' spread, max / min − 1; `None` without two samples or with a zero.
fn spread(samples: &[f64]) -> Option<f64> {
    let min = samples.iter().copied().reduce(f64::min)?;
    let max = samples.iter().copied().reduce(f64::max)?;
    (samples.len() > 1 && min > 0.0).then_some(max / min - 1.0)
}

/// The collections during the samples and the samples they fell in, where counted; `, N
/// each` when every sample held the same number, N > 0 (docs/engines.md, *Between samples*).
fn gc_in_samples(answer: &Answer) -> String {
    let counts = &answer.samples_gc_count;
    let Some(&first) = counts.first() else {
        return "-".into();
    };
    let total: u64 = counts.iter().sum();
    let hit = counts.iter().filter(|&&n| n > 0).count();
    if first > 0 && counts.iter().all(|&n| n == first) {
        format!("{total} in {hit}, {first} each")
    } else {
        format!("{total} in {hit}")
    }
}

fn key_value(text: &str) -> Result<String, String> {
    match text.split_once('=') {
        Some((key, _)) if !key.is_empty() && !key.contains(char::is_whitespace) => {
            Ok(text.to_string())
        }
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}
