//! Lateness experiments (`kind = "lateness"`): a runtime's own ticking timer, run as an
//! engine (`timerbench engine --micro lateness`, docs/engines.md), and its Rust port, run
//! live (`timerbench live --wait tick`, docs/live.md), on the same timers on the real
//! clock, at each tick of the sweep. Both sides' records go to `DIR/<id>/live.jsonl`, the
//! engine's marked by its `engine` field; the experiment's field is read from each.
//!
//! The port runs as `IMPL:tick=T` at a point of `T` ms, its loop woken every tick as the
//! original's worker is. Without the engine's toolchain its series is `unsupported` (the
//! package in the reason): the machine's limit, not a failed run.

use super::experiments::Experiment;
use super::live_source::{check_field, read_value, run_one};
use super::sources::{Measured, Reading, finite, record_path};
use crate::engine_protocol::lateness::{LatenessRequest, write_live_workload};
use crate::engine_protocol::lateness_record::{self, ENGINE_OK, NoRecord};
use crate::engines::build::Builder;
use crate::engines::{Engine, names_where, select};
use anyhow::Context;
use serde::Deserialize;
use std::path::Path;
use timerbench_impls::Variant;
use timerbench_results::CellReading;
use timerbench_results::live::{LiveRecord, append_live};

/// The port's wait: a periodic timerfd every tick, as the original's worker sleeps to the
/// end of every tick.
const PORT_WAIT: &str = "tick";

/// The status of a series whose engine cannot run here (its toolchain is missing).
pub const UNSUPPORTED: &str = "unsupported";

/// Whether `cell` is an engine's that did not run because its toolchain is missing: the
/// machine's limit, which names the package to install, not a failed run.
pub fn lacks_toolchain(cell: &CellReading) -> bool {
    cell.status == UNSUPPORTED
        && cell
            .reason
            .as_deref()
            .is_some_and(|why| why.contains("apt-get install"))
}

/// The `lateness` table of an experiment: the timers both sides run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatenessSource {
    /// Timers scheduled, full and `--quick` (`--timers` of the micro).
    pub timers: u64,
    pub quick_timers: u64,
    /// Timer i is due floor(i × spread / timers) ms after it is scheduled (`--spread-ms`).
    pub spread_ms: u64,
    pub quick_spread_ms: Option<u64>,
    /// The idle phase after the last firing, ms (`--idle-ms`; live's `--idle`).
    pub idle_ms: u64,
    pub quick_idle_ms: Option<u64>,
}

/// What one run of an experiment schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    timers: u64,
    spread_ms: u64,
    idle_ms: u64,
}

impl LatenessSource {
    /// The series: each port by its name, then each engine by its name.
    pub fn series(&self, experiment: &Experiment) -> Vec<String> {
        experiment
            .implementations
            .iter()
            .chain(&experiment.engines)
            .cloned()
            .collect()
    }

    /// The checks when the file is read.
    pub fn check(&self, experiment: &Experiment) -> Result<(), String> {
        if experiment.engines.is_empty() {
            return Err("a lateness experiment needs an engine".to_string());
        }
        let engines = select(&experiment.engines).map_err(|why| format!("engines: {why:#}"))?;
        if let Some(engine) = engines.iter().find(|e| !e.ticked) {
            return Err(format!(
                "engines: `{}` has no tick; a lateness experiment sweeps the tick ({})",
                engine.name,
                names_where(|e| e.ticked)
            ));
        }
        for implementation in &experiment.implementations {
            if implementation.contains(':') {
                return Err(format!(
                    "implementations: `{implementation}`: a port is named without parameters \
                     (its tick is each point's)"
                ));
            }
            Variant::parse(&format!("{implementation}:tick=1"))
                .map_err(|why| format!("implementations: {why} (a port takes `tick`)"))?;
        }
        if experiment.sizes.is_empty() || experiment.quick_sizes.is_empty() {
            return Err("needs sizes and quick_sizes (the ticks, in ms)".to_string());
        }
        let mut points = experiment.sizes.iter().chain(&experiment.quick_sizes);
        if points.any(|&tick| tick == 0) {
            return Err("a tick lasts at least 1 ms".to_string());
        }
        for quick in [false, true] {
            let shape = self.shape(quick);
            if shape.timers == 0 || shape.idle_ms == 0 {
                return Err(
                    "lateness: timers and idle_ms (and their quick ones) are at least 1"
                        .to_string(),
                );
            }
        }
        for field in std::iter::once(&experiment.field).chain(&experiment.shown) {
            check_field(field)?;
        }
        Ok(())
    }

    fn shape(&self, quick: bool) -> Shape {
        let pick = |quick_value: Option<u64>, full: u64| {
            if quick {
                quick_value.unwrap_or(full)
            } else {
                full
            }
        };
        Shape {
            timers: pick(Some(self.quick_timers), self.timers),
            spread_ms: pick(self.quick_spread_ms, self.spread_ms),
            idle_ms: pick(self.quick_idle_ms, self.idle_ms),
        }
    }

    /// `lateness, 10000 timers over 1000 ms`: the workload in words, for `--list`.
    pub fn workload_words(&self) -> String {
        format!(
            "lateness, {} timers over {} ms",
            self.timers, self.spread_ms
        )
    }

    /// Runs every engine and port at every tick into `run_folder`; builds the engines under
    /// `build` (the findings folder's cache).
    pub fn measure(
        &self,
        experiment: &Experiment,
        run_folder: &Path,
        build: &Path,
        quick: bool,
    ) -> anyhow::Result<Measured> {
        std::fs::create_dir_all(run_folder)
            .with_context(|| format!("cannot create {}", run_folder.display()))?;
        let shape = self.shape(quick);
        let points = experiment.sizes(quick).to_vec();
        let longest = points.iter().copied().max().unwrap_or(1);
        let file_name = format!("lateness-{}-timers-{}ms.tw", shape.timers, shape.spread_ms);
        let file = run_folder.join(&file_name);
        write_live_workload(&file, shape.timers, shape.spread_ms, longest)?;
        let workload = file.display().to_string();
        let engines = select(&experiment.engines)?;
        let sources = crate::engines::sources();
        let mut builder = Builder::new(&sources, build);
        let mut runs: Vec<(u64, String, Run)> = Vec::new();
        for &tick in &points {
            for engine in &engines {
                let run = engine_run(engine, &mut builder, (shape, tick), &workload, run_folder);
                runs.push((tick, engine.name.to_string(), run));
            }
            for port in &experiment.implementations {
                let words = port_words(port, &workload, shape, tick, run_folder);
                println!("  timerbench live {}", words[1..].join(" "));
                let run = run_one(&words, run_folder).map_or_else(Run::Failed, Run::from);
                runs.push((tick, port.clone(), run));
            }
        }
        let read = |field: &str| -> Vec<Reading> {
            runs.iter()
                .map(|(tick, series, run)| reading(*tick, series, run, field))
                .collect()
        };
        Ok(Measured {
            note: sides(&runs, &experiment.implementations),
            workload: file_name.clone(),
            readings: read(&experiment.field),
            shown: experiment
                .shown
                .iter()
                .map(|field| (field.clone(), read(field)))
                .collect(),
            point_words: points
                .iter()
                .map(|&p| (p, format!("{p} ms tick")))
                .collect(),
            points,
            detail: format!(
                "{} timers over {} ms, then {} ms idle; each engine run by `timerbench engine \
                 --micro lateness` at the tick, each port by `timerbench live --file \
                 {file_name}` as `PORT:tick=T` with `--wait {PORT_WAIT}`",
                shape.timers, shape.spread_ms, shape.idle_ms
            ),
            axis: "tick (ms)".to_string(),
        })
    }
}

/// Which side each series is: the original's own timers here (with its runtime, as its
/// records give it), or the Rust port here; so that a ratio is never read as published.
fn sides(runs: &[(u64, String, Run)], ports: &[String]) -> String {
    let mut originals: Vec<String> = Vec::new();
    for (_, _, run) in runs {
        if let Run::Record(record) = run
            && let Some(engine) = &record.engine
        {
            let words = format!(
                "{}: the original's own timers here, on {} {}",
                engine.name, engine.runtime, engine.runtime_version
            );
            if !originals.contains(&words) {
                originals.push(words);
            }
        }
    }
    originals.push(format!("{}: the Rust port here, live", ports.join(", ")));
    format!("sides: {}", originals.join("; "))
}

/// One series at one tick: its record, or why there is none.
#[derive(Debug, Clone)]
enum Run {
    Record(Box<LiveRecord>),
    Unsupported(String),
    Failed(String),
}

impl Run {
    fn of(record: Result<LiveRecord, NoRecord>) -> Self {
        match record {
            Ok(record) => Run::Record(Box::new(record)),
            Err(NoRecord::Unsupported(why)) => Run::Unsupported(why),
            Err(NoRecord::Failed(why)) => Run::Failed(why),
        }
    }
}

impl From<LiveRecord> for Run {
    fn from(record: LiveRecord) -> Self {
        Run::Record(Box::new(record))
    }
}

/// The engine at one tick, its record (named by the port's `workload`) appended to the
/// run's `live.jsonl`; its raw answer kept in `run_folder/engines/NAME-tick-Tms/`.
fn engine_run(
    engine: &Engine,
    builder: &mut Builder<'_>,
    (shape, tick): (Shape, u64),
    workload: &str,
    run_folder: &Path,
) -> Run {
    let request = LatenessRequest {
        timers: shape.timers,
        spread_ms: shape.spread_ms,
        idle_ms: shape.idle_ms,
        tick_ms: Some(tick),
    };
    println!(
        "  timerbench engine --micro lateness --engine {} --tick-ms {tick} --timers {} \
         --spread-ms {} --idle-ms {}",
        engine.name, shape.timers, shape.spread_ms, shape.idle_ms
    );
    let scratch = run_folder
        .join("engines")
        .join(format!("{}-tick-{tick}ms", engine.name));
    let run = Run::of(lateness_record::measure(
        engine, builder, &request, &scratch, workload,
    ));
    let run = match run {
        Run::Record(record) => match append_live(run_folder, &record) {
            Ok(()) => Run::Record(record),
            Err(why) => Run::Failed(format!("{why:#}")),
        },
        other => other,
    };
    match &run {
        Run::Record(_) => {}
        Run::Unsupported(why) => println!("  -> {UNSUPPORTED}: {why}"),
        Run::Failed(why) => println!("  -> no record: {why}"),
    }
    run
}

/// `timerbench live --file FILE --impl PORT:tick=T --wait tick --idle Ims --out DIR`.
fn port_words(port: &str, workload: &str, shape: Shape, tick: u64, out: &Path) -> Vec<String> {
    let idle = format!("{}ms", shape.idle_ms);
    let implementation = format!("{port}:tick={tick}");
    [
        "timerbench",
        "--file",
        workload,
        "--impl",
        &implementation,
        "--wait",
        PORT_WAIT,
        "--idle",
        &idle,
        "--out",
        &out.display().to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// The field's value in an engine's record: one whose timers all fired, with its wake-ups
/// counted, and none early (every engine here fires at or after the deadline by its own
/// rule, so an early firing means the measurement is wrong).
fn engine_value(record: &LiveRecord, field: &str) -> Result<f64, String> {
    if record.status != ENGINE_OK {
        return Err(format!("{}: {}", record.status, record.reasons.join("; ")));
    }
    if record.lateness.early > 0 {
        return Err(format!(
            "{} early firings of a timer that never fires early",
            record.lateness.early
        ));
    }
    finite(field, record_path(record, field)?)
}

fn reading(tick: u64, series: &str, run: &Run, field: &str) -> Reading {
    match run {
        Run::Record(record) if record.is_engine() => {
            Reading::new(tick, series, &record.status, engine_value(record, field))
        }
        Run::Record(record) => {
            Reading::new(tick, series, &record.status, read_value(record, field))
        }
        Run::Unsupported(why) => Reading::new(tick, series, UNSUPPORTED, Err(why.clone())),
        Run::Failed(why) => Reading::new(tick, series, "missing", Err(why.clone())),
    }
}

#[cfg(test)]
#[path = "lateness_source_tests.rs"]
mod tests;
