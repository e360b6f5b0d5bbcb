//! Engine cells: the timers of other runtimes (docs/engines.md) run beside the Rust
//! structures on the same workloads and sizes, each a cell of the results format with an
//! `engine` field (results/FORMAT.md, *`engine`*).
//!
//! A replay engine (`jdk-delay-queue`, `jdk-priority-queue`, and `null`) replays the cell's
//! workload in virtual time; its expiry log is verified against the reference model in
//! every process before its samples count, as a Rust cell's is. A micro-only engine (Go's
//! runtime timers, the JDK's executor, Netty's wheel) runs on the real clock, where no
//! workload can be replayed: it runs its start+stop microbenchmark on the `start-stop`
//! workload (resident timers = the cell's timers), and is `unsupported` on any other.
//!
//! Each cell takes as many processes as a Rust cell of its size (`--processes`, or
//! `--processes-at-1m`), each one exchange with samples `--repeat` and `--min-sample-ms`,
//! run after the Rust cells of the same workload and size. A missing toolchain is
//! `unsupported` with the package to install; a crash, a malformed answer or a failed
//! build is `failed`, a hang `timeout`, a wrong log `unverified`, each with the engine's
//! stderr's last lines, and the run goes on.

use super::Args;
use super::cache::Prepared;
use super::plan::Cell;
use crate::engine_protocol::protocol::{Answer, PROTOCOL, Request, Sampling};
use crate::engine_protocol::{self, Outcome};
use crate::engines::build::{self, NotBuilt};
use crate::engines::{Engine, sources};
use crate::schema::{CellRecord, EngineInfo, Status, Throughput, identity, spread};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use timerbench_workloads::program::Step;

/// Warm-up iterations at least, then until the last three settle within 5%: the defaults
/// of `timerbench engine`, JMH's rule (docs/engines.md, *The sampling rule*).
const WARMUP: u32 = 5;

/// Warm-up iterations at most, settled or not.
const MAX_WARMUP: u32 = 50;

/// The workload family the micro-only engines' start+stop microbenchmark models.
const START_STOP: &str = "start-stop";

/// Where the engines come from and go: their sources, the build directory, and the test
/// hook's scripts (`--engine-script ENGINE=SCRIPT`) run in place of a build.
pub(super) struct Engines {
    sources: PathBuf,
    build: PathBuf,
    scripts: BTreeMap<String, PathBuf>,
    built: BTreeMap<&'static str, Result<Vec<String>, NotBuilt>>,
}

impl Engines {
    /// Engines built under `cache/engines` from the repository's `engines/`.
    pub fn new(args: &Args, cache: &Path) -> anyhow::Result<Self> {
        let mut scripts = BTreeMap::new();
        for hook in &args.engine_scripts {
            let (name, script) = hook
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--engine-script {hook}: not ENGINE=SCRIPT"))?;
            scripts.insert(name.to_string(), PathBuf::from(script));
        }
        Ok(Engines {
            sources: sources(),
            build: cache.join("engines"),
            scripts,
            built: BTreeMap::new(),
        })
    }

    /// The command of a built engine, or why there is none (each engine built once).
    fn command(&mut self, engine: &'static Engine) -> Result<Vec<String>, NotBuilt> {
        if let Some(script) = self.scripts.get(engine.name) {
            return Ok(vec!["sh".into(), script.display().to_string()]);
        }
        let (sources, build) = (&self.sources, &self.build);
        self.built
            .entry(engine.name)
            .or_insert_with(|| build::build(engine, sources, build))
            .clone()
    }
}

/// How engine cells are sampled: the run's settings.
pub(super) struct Settings {
    pub processes: u32,
    pub sampling: Sampling,
    pub limit: Duration,
}

impl Settings {
    pub fn of(args: &Args, processes: u32) -> Self {
        Settings {
            processes,
            sampling: Sampling {
                samples: args.repeat,
                min_sample_ms: args.min_sample_ms,
                warmup: WARMUP,
                max_warmup: MAX_WARMUP,
            },
            limit: Duration::from_secs(args.timeout),
        }
    }
}

/// Runs one engine cell (`cell`, run by `engine`), its processes one after another, and
/// returns its record.
pub(super) fn measure(
    cell: &Cell,
    engine: &'static Engine,
    workload: &Prepared,
    settings: &Settings,
    engines: &mut Engines,
) -> CellRecord {
    let started = Instant::now();
    let precision = if engine.verifies && engine.replays {
        "exact"
    } else {
        "engine: not verified (runs on the real clock, or does nothing)"
    };
    let base = CellRecord::for_spec(
        identity(
            cell.key(),
            &cell.case.family,
            &cell.case.spec,
            cell.generator.clone(),
            precision.to_string(),
            &workload.reference,
        ),
        Status::Ok,
        None,
    );
    let mut record = run_processes(cell, engine, workload, settings, engines, base);
    record.elapsed_seconds = started.elapsed().as_secs_f64();
    record
}

/// The record of an engine cell under `--counts`: `unsupported`, since the counts are of
/// the Rust structures' replay (an engine runs in another runtime, through a protocol
/// whose exchange Callgrind would count with it).
pub(super) fn not_counted(cell: &Cell, engine: &'static Engine, workload: &Prepared) -> CellRecord {
    let mut record = CellRecord::for_spec(
        identity(
            cell.key(),
            &cell.case.family,
            &cell.case.spec,
            cell.generator.clone(),
            "engine: not counted".to_string(),
            &workload.reference,
        ),
        Status::Unsupported,
        Some("counts are of Rust structures: an engine's cells are not counted".to_string()),
    );
    record.engine = Some(info(engine, None));
    record
}

/// The cell's processes and its record: one exchange per process ([`exchange`]), their
/// answers gathered into the `engine` field ([`gathered`]) and their figures
/// ([`replay_throughput`], [`pair_throughput`]); or, when the cell cannot run or a process
/// fails, `base` with the status and reason.
fn run_processes(
    cell: &Cell,
    engine: &'static Engine,
    workload: &Prepared,
    settings: &Settings,
    engines: &mut Engines,
    base: CellRecord,
) -> CellRecord {
    let stopped = |stop: Stop| CellRecord {
        status: stop.status,
        reason: Some(stop.reason),
        engine: Some(info(engine, stop.first.as_deref())),
        ..base.clone()
    };
    let job = match job(cell, engine, workload, engines) {
        Ok(job) => job,
        Err(stop) => return stopped(stop),
    };
    let Answered { answers, digest } = match exchange(engine, &job, settings) {
        Ok(answered) => answered,
        Err(stop) => return stopped(stop),
    };
    let mut engine = gathered(engine, &answers);
    let throughput = match &job.program {
        Some(program) => replay_throughput(&answers, program, &settings.sampling, &mut engine),
        None => pair_throughput(&answers, &settings.sampling, &mut engine),
    };
    CellRecord {
        digest,
        throughput,
        engine: Some(engine),
        ..base
    }
}

/// Why an engine cell ends without figures: its status and reason, and the first answer
/// of a process that answered before another failed (its runtime goes in the record).
struct Stop {
    status: Status,
    reason: String,
    first: Option<Box<Answer>>,
}

impl Stop {
    /// A cell left out, or failed, before any process answered.
    fn before_any(status: Status, reason: String) -> Self {
        Stop {
            status,
            reason,
            first: None,
        }
    }
}

/// What each process of an engine cell is handed: the engine's command, its request, the
/// workload it replays (none for a micro-only engine) and the folder for its expiry log.
struct Job {
    argv: Vec<String>,
    request: Request,
    program: Option<timerbench_workloads::Program>,
    scratch: PathBuf,
}

/// The cell's [`Job`], or why it cannot run: a micro-only engine on another workload than
/// `start-stop` is `unsupported` (it cannot replay), so is a missing toolchain; a failed
/// build or an unreadable workload is `failed`.
fn job(
    cell: &Cell,
    engine: &'static Engine,
    workload: &Prepared,
    engines: &mut Engines,
) -> Result<Job, Stop> {
    let micro_only = !engine.replays;
    if micro_only && (cell.case.family != START_STOP || !cell.case.spec.params.is_empty()) {
        return Err(Stop::before_any(
            Status::Unsupported,
            format!(
                "{} runs only the start+stop microbenchmark on the real clock, the shape of \
                 the default `start-stop` workload; it cannot replay a workload in virtual time",
                engine.name
            ),
        ));
    }
    let argv = match engines.command(engine) {
        Ok(argv) => argv,
        Err(NotBuilt::Unsupported(install)) => {
            return Err(Stop::before_any(Status::Unsupported, install));
        }
        Err(NotBuilt::BuildFailed(tail)) => {
            let reason = format!("build failed; stderr:\n{tail}");
            return Err(Stop::before_any(Status::Failed, reason));
        }
    };
    let program = if micro_only {
        None
    } else {
        match timerbench_workloads::load(&workload.path) {
            Ok(program) => Some(program),
            Err(e) => {
                let reason = format!("cannot load the workload: {e}");
                return Err(Stop::before_any(Status::Failed, reason));
            }
        }
    };
    let scratch = engines.build.join("runs").join(format!(
        "{}-{}-{}",
        engine.name, cell.case.workload, cell.case.spec.timers
    ));
    let request = match micro_only {
        true => Request::StartStop {
            resident: cell.case.spec.timers,
            parameters: Vec::new(),
        },
        false => Request::Replay {
            workload: absolute(&workload.path),
            log: absolute(&scratch.join("expiries")),
            parameters: Vec::new(),
        },
    };
    Ok(Job {
        argv,
        request,
        program,
        scratch,
    })
}

/// What the processes of a cell answered: each answer with the harness's wall time around
/// its exchange, and the verified digest.
struct Answered {
    answers: Vec<(Answer, Duration)>,
    digest: Option<String>,
}

/// Runs the cell's processes one after another (`--processes`, at least one), each one
/// exchange: every answer with its wall time, and the last verified digest; or the first
/// process that is unsupported or fails, which ends the cell.
fn exchange(engine: &'static Engine, job: &Job, settings: &Settings) -> Result<Answered, Stop> {
    let mut answers = Vec::new();
    let mut digest = None;
    for _ in 0..settings.processes.max(1) {
        let outcome = engine_protocol::run_engine(
            engine,
            &job.argv,
            &job.request,
            job.program.as_ref(),
            &settings.sampling,
            settings.limit,
            &job.scratch,
        );
        match outcome {
            Outcome::Answered {
                answer,
                digest: verified,
                wall,
            } => {
                digest = verified.or(digest);
                answers.push((*answer, wall));
            }
            Outcome::Unsupported(why) => return Err(Stop::before_any(Status::Unsupported, why)),
            Outcome::Failed {
                failure,
                stderr_tail,
            } => {
                return Err(Stop {
                    status: failure_status(&failure),
                    reason: format!("{failure}; stderr:\n{stderr_tail}"),
                    first: answers
                        .into_iter()
                        .next()
                        .map(|(answer, _)| Box::new(answer)),
                });
            }
        }
    }
    Ok(Answered { answers, digest })
}

/// The `engine` field of a cell whose processes all answered: the first answer's runtime,
/// every process's samples, warm-up, GC and JIT figures in process order, the largest
/// memory figures, and each exchange's wall time.
fn gathered(engine: &Engine, answers: &[(Answer, Duration)]) -> EngineInfo {
    let mut info = info(engine, answers.first().map(|(a, _)| a));
    for (answer, wall) in answers {
        info.samples_ns.extend(&answer.samples_ns);
        info.samples_gc_count.extend(&answer.samples_gc_count);
        info.samples_gc_ms.extend(&answer.samples_gc_ms);
        info.samples_jit_ms.extend(&answer.samples_jit_ms);
        info.warmup_iterations
            .push(answer.warmup_iterations.unwrap_or(0));
        info.warmup_settled
            .push(answer.warmup_settled.unwrap_or(false));
        info.peak_rss_bytes = info.peak_rss_bytes.max(answer.peak_rss_bytes);
        info.heap_live_bytes = info.heap_live_bytes.max(answer.heap_live_bytes);
        if let Some(fired) = answer.resident_fired {
            info.resident_fired.push(fired);
        }
        info.exchange_seconds.push(wall.as_secs_f64());
    }
    info
}

/// What a failure's words say it was: a hang is a `timeout`, a wrong log `unverified`
/// (as for a Rust cell), anything else `failed`. The words are [`Failure`]'s `Display`,
/// which a test of this module holds to.
///
/// [`Failure`]: crate::engine_protocol::protocol::Failure
fn failure_status(failure: &str) -> Status {
    if failure.starts_with("hung") {
        Status::Timeout
    } else if failure.starts_with("wrong expiry log") {
        Status::Unverified
    } else {
        Status::Failed
    }
}

/// The `engine` field before any sample: from the first answer, when there is one.
fn info(engine: &Engine, answer: Option<&Answer>) -> EngineInfo {
    EngineInfo {
        name: engine.name.to_string(),
        runtime: answer.map(|a| a.runtime.clone()).unwrap_or_default(),
        runtime_version: answer
            .map(|a| a.runtime_version.clone())
            .unwrap_or_default(),
        runtime_flags: answer.map(|a| a.runtime_flags.clone()).unwrap_or_default(),
        between_samples: answer
            .and_then(|a| a.between_samples.clone())
            .unwrap_or_default(),
        protocol: PROTOCOL,
        mode: if engine.replays {
            "replay".into()
        } else {
            "micro start-stop".into()
        },
        unit: answer.and_then(|a| a.unit.clone()).unwrap_or_default(),
        ..EngineInfo::default()
    }
}

/// A replay engine's figures: each sample (ns per whole replay) over the workload's
/// operation lines, units and firings, as a Rust cell's whole-replay figures. The fill is
/// not timed apart inside the engine, so the after-fill figures are absent. `None` when
/// the engine took no sample (the null engine).
fn replay_throughput(
    answers: &[(Answer, Duration)],
    program: &timerbench_workloads::Program,
    sampling: &Sampling,
    engine: &mut EngineInfo,
) -> Option<Throughput> {
    let operations = program.summary.operations.max(1) as f64;
    let units: u64 = program
        .steps
        .iter()
        .map(|step| match step {
            Step::Tick { ticks } => *ticks,
            _ => 1,
        })
        .sum();
    engine.conversion = "ns_per_op, ns_per_unit and ns_per_fired: each sample (ns per whole \
                         replay, fill included) over the workload's operation lines, units and \
                         firings; no after-fill figure (the engine does not time the fill apart)"
        .into();
    let per = |divisor: f64| spread(engine.samples_ns.iter().map(|s| s / divisor).collect());
    let fired = program.summary.fired;
    throughput(answers, sampling, operations, engine).map(|mut t| {
        t.ns_per_unit = Some(per(units.max(1) as f64));
        t.ns_per_fired = (fired > 0).then(|| per(fired as f64));
        t.fill_operations = program.fill_steps() as u64;
        t
    })
}

/// A micro-only engine's figures: each sample (ns per start+stop pair) halved, a pair being
/// two lines (`s` and `x`) of the `start-stop` workload after its fill, so that every
/// figure reads as the Rust cells' `ns_per_op_after_fill` and `ns_per_unit_after_fill`.
/// The fill is not timed and the workload's `a 1` (one per 1,000 pairs) is not run, so
/// `ns_per_op` here is that after-fill figure too (FORMAT.md, *`engine`*).
fn pair_throughput(
    answers: &[(Answer, Duration)],
    sampling: &Sampling,
    engine: &mut EngineInfo,
) -> Option<Throughput> {
    engine.conversion = "every throughput figure (ns_per_op included) is ns per start+stop \
                         pair / 2: ns per line after the fill, the fill not timed, the \
                         workload's `a 1` lines not run"
        .into();
    throughput(answers, sampling, 2.0, engine).map(|mut t| {
        t.ns_per_unit = Some(t.ns_per_op.clone());
        t.ns_per_op_after_fill = Some(t.ns_per_op.clone());
        t.ns_per_unit_after_fill = Some(t.ns_per_op.clone());
        t
    })
}

/// `throughput` with `ns_per_op` the engine's samples over `divisor`, one median per
/// process; `None` without samples.
fn throughput(
    answers: &[(Answer, Duration)],
    sampling: &Sampling,
    divisor: f64,
    engine: &EngineInfo,
) -> Option<Throughput> {
    if engine.samples_ns.is_empty() {
        return None;
    }
    let per_op: Vec<f64> = engine.samples_ns.iter().map(|s| s / divisor).collect();
    let process_medians = answers
        .iter()
        .filter(|(a, _)| !a.samples_ns.is_empty())
        .map(|(a, _)| spread(a.samples_ns.iter().map(|s| s / divisor).collect()).median)
        .collect();
    Some(Throughput {
        repeats: per_op.len() as u32,
        ns_per_op: spread(per_op),
        ns_per_fired: None,
        ns_per_unit: None,
        ns_per_op_after_fill: None,
        ns_per_unit_after_fill: None,
        fill_operations: 0,
        iterations: answers
            .iter()
            .flat_map(|(a, _)| {
                let each = a.iterations_per_sample.unwrap_or(0);
                a.samples_ns.iter().map(move |_| each)
            })
            .collect(),
        min_sample_ns: sampling.min_sample_ms * 1_000_000,
        processes: answers.len() as u32,
        process_medians,
        page_faults: None,
    })
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine_protocol::protocol::Failure;

    #[test]
    fn failures_map_to_the_statuses_a_rust_cell_would_have() {
        let status = |f: Failure| failure_status(&f.to_string());
        assert_eq!(
            status(Failure::Hung(Duration::from_secs(1))),
            Status::Timeout
        );
        assert_eq!(status(Failure::WrongLog("x".into())), Status::Unverified);
        assert_eq!(status(Failure::Crashed("exit 3".into())), Status::Failed);
        assert_eq!(status(Failure::Malformed("x".into())), Status::Failed);
    }
}
