//! `timerbench engine --micro lateness`: the real-clock microbenchmark of docs/engines.md
//! ("micro lateness"). N timers on a runtime's own timer, each firing's lateness on the
//! engine's monotonic clock, and its worker's wake-ups and CPU while busy and while idle;
//! Netty's wheel once per `--tick-ms`, the deadline-driven engines once.
//!
//! Its columns are those of `timerbench live`'s table, so that netty-wheel (the port, run
//! live with `--wait tick`) reads beside Netty itself; `--live-workload` writes the same
//! timers as a workload file for that live run.

use super::protocol::{self, Answer, Failure, Request, Sampling};
use crate::engines::Engine;
use crate::engines::build::{Builder, NotBuilt};
use crate::table::Table;
use anyhow::Context;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The flags of `--micro lateness`.
#[derive(clap::Args, Debug, Clone)]
pub struct LatenessArgs {
    /// Lateness: the timers scheduled, one after another.
    #[arg(long, default_value_t = 10_000)]
    timers: u64,
    /// Lateness: timer i is due floor(i × SPREAD / timers) ms after it was scheduled.
    #[arg(long, default_value_t = 1000)]
    spread_ms: u64,
    /// Lateness: the idle phase (nothing pending) after the last firing, in ms.
    #[arg(long, default_value_t = 1000)]
    idle_ms: u64,
    /// Lateness: a tick of Netty's wheel, in ms (repeatable; default 100 and 1).
    #[arg(long = "tick-ms")]
    ticks_ms: Vec<u64>,
    /// Lateness: also write the same timers as a workload file, for `timerbench live --file`.
    #[arg(long)]
    live_workload: Option<PathBuf>,
    /// Lateness: then run the port, netty-wheel, live on the same timers at each tick
    /// (`timerbench live --wait tick`), its table below the engines'.
    #[arg(long)]
    with_live: bool,
}

/// `timerbench live`'s flags, parsed from the command `--with-live` builds.
#[derive(clap::Parser)]
struct LiveCommand {
    #[command(flatten)]
    args: crate::live_run::Args,
}

/// `micro lateness` as the engine receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatenessRequest {
    /// Timers scheduled.
    pub timers: u64,
    /// Timer i's delay is floor(i × spread / timers) ms.
    pub spread_ms: u64,
    /// The idle phase, in ms.
    pub idle_ms: u64,
    /// The wheel's tick, for an engine that has one.
    pub tick_ms: Option<u64>,
}

impl LatenessRequest {
    /// `micro lateness timers=N spread-ms=S idle-ms=I [tick-ms=T]`.
    pub fn arguments(&self) -> Vec<String> {
        let mut args = vec![
            "micro".to_string(),
            "lateness".to_string(),
            format!("timers={}", self.timers),
            format!("spread-ms={}", self.spread_ms),
            format!("idle-ms={}", self.idle_ms),
        ];
        args.extend(self.tick_ms.map(|t| format!("tick-ms={t}")));
        args
    }
}

/// The answer's `lateness` object.
#[derive(Debug, Clone, Deserialize)]
pub struct LatenessAnswer {
    /// Timers scheduled.
    pub timers: u64,
    /// Timers that fired within the engine's bound.
    pub fired: u64,
    /// Firings before `schedule time + delay`.
    pub early: u64,
    /// The tick the engine ran with; none for a deadline-driven timer.
    pub tick_ms: Option<u64>,
    /// The spread of the delays, in ms.
    pub spread_ms: u64,
    /// Nearest-rank percentiles of the lateness, in µs (absent when nothing fired).
    pub lateness_us: Percentiles,
    /// From the first schedule to the last firing.
    pub busy: Phase,
    /// Nothing pending.
    pub idle: Phase,
    /// What a wake-up is: the worker thread's voluntary context switches, or the process's.
    pub wakeups_of: String,
    /// Whose CPU time `cpu_ms_per_s` is.
    pub cpu_of: String,
}

/// p50, p99, p99.9 and the maximum, in µs.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Percentiles {
    /// The median.
    pub p50: Option<f64>,
    /// The 99th percentile.
    pub p99: Option<f64>,
    /// The 99.9th percentile.
    pub p999: Option<f64>,
    /// The largest.
    pub max: Option<f64>,
}

/// One phase's figures.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Phase {
    /// Its wall time, on the engine's clock.
    pub seconds: f64,
    /// Wake-ups per second (see `wakeups_of`); none where they could not be counted.
    pub wakeups_per_s: Option<f64>,
    /// CPU ms per wall second (see `cpu_of`).
    pub cpu_ms_per_s: f64,
    /// The whole process's CPU ms per wall second.
    pub process_cpu_ms_per_s: Option<f64>,
}

/// Why a `lateness` answer cannot be right, whatever the machine's load.
pub fn check(request: &LatenessRequest, answer: &LatenessAnswer) -> Result<(), String> {
    let quantiles = [
        answer.lateness_us.p50,
        answer.lateness_us.p99,
        answer.lateness_us.p999,
        answer.lateness_us.max,
    ];
    if answer.timers != request.timers {
        Err(format!(
            "{} timers, asked {}",
            answer.timers, request.timers
        ))
    } else if answer.fired > answer.timers || answer.early > answer.fired {
        Err(format!(
            "{} fired ({} early) of {} timers",
            answer.fired, answer.early, answer.timers
        ))
    } else if !(sane(&answer.busy) && sane(&answer.idle)) {
        Err("a phase's seconds, wake-ups or CPU is negative or not a number".into())
    } else if answer.fired > 0 && quantiles.iter().any(|q| !q.is_some_and(f64::is_finite)) {
        Err("timers fired but a lateness percentile is missing".into())
    } else if !quantiles.iter().flatten().is_sorted() {
        Err("lateness percentiles out of order".into())
    } else {
        Ok(())
    }
}

/// A phase of positive length whose rates are finite and not negative.
fn sane(phase: &Phase) -> bool {
    let rate = |x: f64| x.is_finite() && x >= 0.0;
    phase.seconds.is_finite()
        && phase.seconds > 0.0
        && rate(phase.cpu_ms_per_s)
        && phase.wakeups_per_s.is_none_or(rate)
        && phase.process_cpu_ms_per_s.is_none_or(rate)
}

/// One row: an engine at one tick, or what became of it.
enum Row {
    Answered(Box<LatenessAnswer>),
    Unsupported(String),
    Failed {
        failure: String,
        stderr_tail: String,
    },
}

/// Runs the microbenchmark on each engine (Netty's at each tick) and prints the table.
pub fn run(
    args: &LatenessArgs,
    engines: &[&'static Engine],
    mut builder: Builder<'_>,
    sampling: &Sampling,
    limit: Duration,
    build_dir: &Path,
) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.timers > 0,
        "--timers 0: the lateness micro needs a timer"
    );
    anyhow::ensure!(args.idle_ms > 0, "--idle-ms 0: the idle phase must last");
    let ticks = if args.ticks_ms.is_empty() {
        vec![100, 1]
    } else {
        args.ticks_ms.clone()
    };
    if let Some(zero) = ticks.iter().find(|t| **t == 0) {
        anyhow::bail!("--tick-ms {zero}: a tick lasts at least 1 ms");
    }
    let workload = match (&args.live_workload, args.with_live) {
        (Some(path), _) => Some(path.clone()),
        (None, true) => Some(build_dir.join("lateness.tw")),
        (None, false) => None,
    };
    if let Some(path) = &workload {
        let longest = *ticks.iter().max().unwrap();
        write_live_workload(path, args.timers, args.spread_ms, longest)?;
    }
    let mut rows = Vec::new();
    for engine in engines {
        let engine_ticks: Vec<Option<u64>> = if engine.ticked {
            ticks.iter().copied().map(Some).collect()
        } else {
            vec![None]
        };
        for tick_ms in engine_ticks {
            let request = LatenessRequest {
                timers: args.timers,
                spread_ms: args.spread_ms,
                idle_ms: args.idle_ms,
                tick_ms,
            };
            let row = match builder.build(engine) {
                Err(NotBuilt::Unsupported(install)) => Row::Unsupported(install),
                Err(NotBuilt::BuildFailed(stderr_tail)) => Row::Failed {
                    failure: "build failed".into(),
                    stderr_tail,
                },
                Ok(argv) => {
                    let scratch = build_dir.join("runs").join(engine.name);
                    exchange(engine, &argv, &request, sampling, limit, &scratch)
                }
            };
            rows.push((engine.name, tick_ms, row));
        }
    }
    print(&rows);
    let engines_failed = rows.iter().any(|(_, _, r)| matches!(r, Row::Failed { .. }));
    match workload {
        Some(path) => port_side(&path, &ticks, args, engines_failed),
        None => Ok(exit(engines_failed)),
    }
}

/// Prints the live command for the port on the same timers, and with `--with-live` runs it.
fn port_side(
    workload: &Path,
    ticks: &[u64],
    args: &LatenessArgs,
    engines_failed: bool,
) -> anyhow::Result<ExitCode> {
    let live = live_command(workload, ticks, args.idle_ms);
    println!("the same timers as a workload: {}", workload.display());
    println!("  the port's side: timerbench {}", live.join(" "));
    if !args.with_live {
        return Ok(exit(engines_failed));
    }
    println!();
    let parsed = <LiveCommand as clap::Parser>::try_parse_from(&live)
        .context("the live command --with-live builds")?;
    let live_exit = crate::live_run::run(&parsed.args)?;
    Ok(if live_exit == ExitCode::SUCCESS {
        exit(engines_failed)
    } else {
        live_exit
    })
}

fn exit(failed: bool) -> ExitCode {
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `live --file FILE --wait tick --idle Ims --impl netty-wheel:tick=T...`: the port on
/// the same timers, woken every tick as Netty's worker is.
fn live_command(workload: &Path, ticks: &[u64], idle_ms: u64) -> Vec<String> {
    let mut command = [
        "live",
        "--file",
        &workload.display().to_string(),
        "--wait",
        "tick",
        "--idle",
        &format!("{idle_ms}ms"),
    ]
    .map(String::from)
    .to_vec();
    for tick in ticks {
        command.push("--impl".to_string());
        command.push(format!("netty-wheel:tick={tick}"));
    }
    command
}

/// One exchange, its answer checked: an `ok` answer must carry a sane `lateness`.
fn exchange(
    engine: &Engine,
    argv: &[String],
    request: &LatenessRequest,
    sampling: &Sampling,
    limit: Duration,
    scratch: &Path,
) -> Row {
    let exchange = protocol::exchange(argv, &Request::Lateness(*request), sampling, limit, scratch);
    let failed = |failure: Failure| Row::Failed {
        failure: failure.to_string(),
        stderr_tail: exchange.stderr_tail.clone(),
    };
    match exchange.answer.clone() {
        Err(failure) => failed(failure),
        Ok(Answer { status, reason, .. }) if status == "unsupported" => {
            Row::Unsupported(reason.unwrap_or_default())
        }
        Ok(Answer { lateness: None, .. }) if !engine.verifies => {
            Row::Unsupported("it measures nothing (the protocol's own cost)".into())
        }
        Ok(Answer { lateness: None, .. }) => failed(Failure::Malformed(
            "a lateness answer without `lateness`".into(),
        )),
        Ok(Answer {
            lateness: Some(lateness),
            ..
        }) => match check(request, &lateness) {
            Ok(()) => Row::Answered(lateness),
            Err(why) => failed(Failure::Malformed(why)),
        },
    }
}

fn print(rows: &[(&str, Option<u64>, Row)]) {
    let mut table = Table::new(&[
        "engine",
        "tick",
        ">firings",
        ">early",
        ">lateness µs",
        ">wakeups/s",
        ">CPU ms/s",
        ">idle wakeups/s",
        ">idle CPU ms/s",
        "wake-ups and CPU of",
    ]);
    for (name, tick_ms, row) in rows {
        let tick = tick_ms.map_or("-".into(), |t| format!("{t} ms"));
        let cells = match row {
            Row::Answered(a) => vec![
                name.to_string(),
                tick,
                format!("{}/{}", a.fired, a.timers),
                a.early.to_string(),
                micros(&a.lateness_us),
                rate(a.busy.wakeups_per_s),
                format!("{:.2}", a.busy.cpu_ms_per_s),
                rate(a.idle.wakeups_per_s),
                format!("{:.2}", a.idle.cpu_ms_per_s),
                whose(&a.wakeups_of),
            ],
            Row::Unsupported(_) => vec![name.to_string(), tick, "unsupported".into()],
            Row::Failed { failure, .. } => {
                vec![name.to_string(), tick, format!("FAILED: {failure}")]
            }
        };
        table.row(cells);
    }
    println!("{}", table.render("").trim_end());
    for (name, _, row) in rows {
        match row {
            Row::Unsupported(why) => println!("{name}: unsupported: {why}"),
            Row::Failed {
                failure,
                stderr_tail,
            } => {
                let indented: String = stderr_tail.lines().map(|l| format!("    {l}\n")).collect();
                eprintln!("timerbench: engine {name}: {failure}\n{indented}");
            }
            Row::Answered(_) => {}
        }
    }
}

/// `p50/p99/p99.9/max` in whole µs, as `timerbench live` shows lateness.
fn micros(p: &Percentiles) -> String {
    match (p.p50, p.p99, p.p999, p.max) {
        (Some(a), Some(b), Some(c), Some(d)) => format!("{a:.0}/{b:.0}/{c:.0}/{d:.0}"),
        _ => "-".into(),
    }
}

fn rate(per_second: Option<f64>) -> String {
    per_second.map_or("-".into(), |r| format!("{r:.1}"))
}

/// `worker` or `process`, from the answer's own words.
fn whose(wakeups_of: &str) -> String {
    if wakeups_of.contains("process") {
        "process".into()
    } else if wakeups_of.contains("worker") {
        "worker thread".into()
    } else {
        wakeups_of.into()
    }
}

/// The lateness micro's timers as a workload: `s i floor(i × spread / timers)` for every
/// timer, then the clock moved a spread and two ticks on, so that a live run's end record
/// comes after the last firing of a wheel of that tick.
pub fn live_workload(timers: u64, spread_ms: u64, tick_ms: u64) -> String {
    let mut out =
        format!("timer-workload v1\n@name lateness-{timers}-timers-{spread_ms}ms\n@tick 1ms\n");
    for i in 0..timers {
        let delay = (u128::from(spread_ms) * u128::from(i) / u128::from(timers)) as u64;
        out.push_str(&format!("s {i} {delay}\n"));
    }
    out.push_str(&format!("a {}\n", spread_ms + 2 * tick_ms));
    out
}

/// Writes [`live_workload`] to `path`, creating its folder.
pub fn write_live_workload(
    path: &Path,
    timers: u64,
    spread_ms: u64,
    tick_ms: u64,
) -> anyhow::Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    parent
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, live_workload(timers, spread_ms, tick_ms)))
        .with_context(|| format!("the lateness workload {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_workload_fires_every_timer_at_its_delay_before_the_end() {
        let text = live_workload(7, 1000, 100);
        let program =
            timerbench_workloads::program::load_from(text.as_bytes(), Path::new("lateness.tw"))
                .expect("the workload loads");
        assert_eq!(program.summary.started, 7);
        assert_eq!(program.summary.fired, 7);
        assert_eq!(program.summary.final_clock, 1200);
        // floor(i × 1000 / 7): the same delays the engines schedule.
        assert!(
            text.contains("\ns 1 142\n") && text.contains("\ns 6 857\n"),
            "{text}"
        );
    }

    fn answer(fired: u64, early: u64, p50: f64, p99: f64) -> LatenessAnswer {
        let phase = Phase {
            seconds: 1.0,
            wakeups_per_s: Some(10.0),
            cpu_ms_per_s: 1.0,
            process_cpu_ms_per_s: None,
        };
        LatenessAnswer {
            timers: 10,
            fired,
            early,
            tick_ms: Some(100),
            spread_ms: 1000,
            lateness_us: Percentiles {
                p50: Some(p50),
                p99: Some(p99),
                p999: Some(p99),
                max: Some(p99),
            },
            busy: phase,
            idle: phase,
            wakeups_of: "worker".into(),
            cpu_of: "worker".into(),
        }
    }

    #[test]
    fn impossible_answers_are_refused() {
        let request = LatenessRequest {
            timers: 10,
            spread_ms: 1000,
            idle_ms: 1000,
            tick_ms: Some(100),
        };
        assert_eq!(check(&request, &answer(10, 0, 5.0, 9.0)), Ok(()));
        let more_than_scheduled = check(&request, &answer(11, 0, 5.0, 9.0)).unwrap_err();
        assert!(
            more_than_scheduled.contains("11 fired"),
            "{more_than_scheduled}"
        );
        assert!(check(&request, &answer(10, 11, 5.0, 9.0)).is_err());
        let disordered = check(&request, &answer(10, 0, 9.0, 5.0)).unwrap_err();
        assert!(disordered.contains("out of order"), "{disordered}");
        let mut negative = answer(10, 0, 5.0, 9.0);
        negative.idle.wakeups_per_s = Some(-1.0);
        assert!(check(&request, &negative).is_err());
        let other_count = LatenessRequest {
            timers: 20,
            ..request
        };
        assert!(check(&other_count, &answer(10, 0, 5.0, 9.0)).is_err());
    }
}
