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

use super::cache::Prepared;
use super::{Args, case_id};
use crate::engine_protocol::protocol::{Answer, PROTOCOL, Request, Sampling};
use crate::engine_protocol::{self, Outcome};
use crate::engines::build::{self, NotBuilt};
use crate::engines::{Engine, select, sources};
use crate::schema::{
    CellDefinition, CellKey, CellRecord, EngineInfo, Status, Throughput, identity, spread,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use timerbench_workloads::program::Step;
use timerbench_workloads::suite::Case;

/// Warm-up iterations at least, then until the last three settle within 5%: the defaults
/// of `timerbench engine`, JMH's rule (docs/engines.md, *The sampling rule*).
const WARMUP: u32 = 5;

/// Warm-up iterations at most, settled or not.
const MAX_WARMUP: u32 = 50;

/// The workload family the micro-only engines' start+stop microbenchmark models.
const START_STOP: &str = "start-stop";

/// One planned engine cell: a workload at one size, run by one engine.
pub(super) struct EngineCell {
    pub case: Case,
    pub generator: String,
    pub engine: &'static Engine,
}

impl EngineCell {
    pub fn key(&self) -> CellKey {
        CellKey {
            workload: self.case.workload.clone(),
            timers: self.case.spec.timers,
            implementation: self.engine.name.to_string(),
        }
    }

    pub fn definition(&self) -> CellDefinition {
        CellDefinition {
            key: self.key(),
            family: self.case.family.clone(),
            params: self.case.spec.params.iter().cloned().collect(),
            ops: self.case.spec.ops,
            seed: self.case.spec.seed,
            implementation_parameters: BTreeMap::new(),
        }
    }
}

/// The engine cells of `cases` for the engines `--engine` names (an unknown name is an
/// error naming the flag).
pub(super) fn plan(args: &Args, cases: &[Case]) -> anyhow::Result<Vec<EngineCell>> {
    if args.engines.is_empty() {
        return Ok(Vec::new());
    }
    let engines = select(&args.engines)?;
    Ok(cases
        .iter()
        .flat_map(|case| {
            engines.iter().map(move |engine| EngineCell {
                case: case.clone(),
                generator: case_id(case),
                engine,
            })
        })
        .collect())
}

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

/// Runs one engine cell, its processes one after another, and returns its record.
pub(super) fn measure(
    cell: &EngineCell,
    workload: &Prepared,
    settings: &Settings,
    engines: &mut Engines,
) -> CellRecord {
    let started = Instant::now();
    let precision = if cell.engine.verifies && cell.engine.replays {
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
    let mut record = run_processes(cell, workload, settings, engines, base);
    record.elapsed_seconds = started.elapsed().as_secs_f64();
    record
}

/// The record of an engine cell under `--counts`: `unsupported`, since the counts are of
/// the Rust structures' replay (an engine runs in another runtime, through a protocol
/// whose exchange Callgrind would count with it).
pub(super) fn not_counted(cell: &EngineCell, workload: &Prepared) -> CellRecord {
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
    record.engine = Some(info(cell.engine, None));
    record
}

fn run_processes(
    cell: &EngineCell,
    workload: &Prepared,
    settings: &Settings,
    engines: &mut Engines,
    base: CellRecord,
) -> CellRecord {
    let left_out = |status, reason: String| CellRecord {
        status,
        reason: Some(reason),
        engine: Some(info(cell.engine, None)),
        ..base.clone()
    };
    let micro_only = !cell.engine.replays;
    if micro_only && (cell.case.family != START_STOP || !cell.case.spec.params.is_empty()) {
        return left_out(
            Status::Unsupported,
            format!(
                "{} runs only the start+stop microbenchmark on the real clock, the shape of \
                 the default `start-stop` workload; it cannot replay a workload in virtual time",
                cell.engine.name
            ),
        );
    }
    let argv = match engines.command(cell.engine) {
        Ok(argv) => argv,
        Err(NotBuilt::Unsupported(install)) => return left_out(Status::Unsupported, install),
        Err(NotBuilt::BuildFailed(tail)) => {
            return left_out(Status::Failed, format!("build failed; stderr:\n{tail}"));
        }
    };
    let program = if micro_only {
        None
    } else {
        match timerbench_workloads::load(&workload.path) {
            Ok(program) => Some(program),
            Err(e) => return left_out(Status::Failed, format!("cannot load the workload: {e}")),
        }
    };
    let scratch = engines.build.join("runs").join(format!(
        "{}-{}-{}",
        cell.engine.name, cell.case.workload, cell.case.spec.timers
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
    let mut answers = Vec::new();
    let mut digest = None;
    for _ in 0..settings.processes.max(1) {
        let outcome = engine_protocol::run_engine(
            cell.engine,
            &argv,
            &request,
            program.as_ref(),
            &settings.sampling,
            settings.limit,
            &scratch,
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
            Outcome::Unsupported(why) => return left_out(Status::Unsupported, why),
            Outcome::Failed {
                failure,
                stderr_tail,
            } => {
                let mut record = left_out(
                    failure_status(&failure),
                    format!("{failure}; stderr:\n{stderr_tail}"),
                );
                record.engine = Some(info(cell.engine, answers.first().map(|(a, _)| a)));
                return record;
            }
        }
    }
    let mut engine = info(cell.engine, answers.first().map(|(a, _)| a));
    for (answer, wall) in &answers {
        engine.samples_ns.extend(&answer.samples_ns);
        engine.samples_gc_count.extend(&answer.samples_gc_count);
        engine.samples_gc_ms.extend(&answer.samples_gc_ms);
        engine.samples_jit_ms.extend(&answer.samples_jit_ms);
        engine
            .warmup_iterations
            .push(answer.warmup_iterations.unwrap_or(0));
        engine
            .warmup_settled
            .push(answer.warmup_settled.unwrap_or(false));
        engine.peak_rss_bytes = engine.peak_rss_bytes.max(answer.peak_rss_bytes);
        engine.heap_live_bytes = engine.heap_live_bytes.max(answer.heap_live_bytes);
        if let Some(fired) = answer.resident_fired {
            engine.resident_fired.push(fired);
        }
        engine.exchange_seconds.push(wall.as_secs_f64());
    }
    let throughput = match &program {
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
