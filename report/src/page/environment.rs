//! The environment of each run (machine, build, suite, limits, how each cell was sampled,
//! and what its processes saw: the CPU they were pinned to, its governor, the load, the
//! speed of the CPU and of the shared cache and memory around each process) side
//! by side, the commands that reproduce each run, and the command that made this report.

use super::Context;
use super::format::shell_word;
use crate::runs::Run;
use maud::{Markup, html};
use std::collections::BTreeSet;
use timerbench_results::{CellRecord, Conditions, Environment, Status, is_floor};

/// A row of the environment table: its heading and how to read it off `environment.json`.
type Field = (&'static str, fn(&Environment) -> String);

/// A row read off the records of a run instead: what each cell's processes saw.
type Seen = (&'static str, fn(&Run) -> String);

const FIELDS: &[Field] = &[
    ("host", |e| e.host.clone()),
    ("CPU", |e| e.cpu.clone()),
    ("logical cores", |e| e.cores.to_string()),
    ("memory", |e| {
        format!("{:.1} GiB", e.memory_bytes as f64 / (1u64 << 30) as f64)
    }),
    ("operating system", |e| e.os.clone()),
    ("compiler", |e| e.rustc.clone()),
    ("git revision", |e| e.git_revision.clone()),
    ("started (UTC)", |e| e.started.clone()),
    ("suite", |e| e.suite.clone()),
    ("time limit per cell", |e| {
        format!("{} s", e.cell_timeout_seconds)
    }),
    ("processes per cell", |e| match e.processes {
        0 => "1 (the run predates --processes)".to_string(),
        n => n.to_string(),
    }),
    ("timed samples per process", |e| e.repeat.to_string()),
];

/// What the records say of the conditions of their processes.
const SEEN: &[Seen] = &[
    ("least time per sample", least_sample_time),
    ("pinned to CPU", |run| {
        let cpus: BTreeSet<u32> = conditions(run).filter_map(|c| c.cpu).collect();
        let cpus: Vec<String> = cpus.iter().map(u32::to_string).collect();
        match cpus.as_slice() {
            [] if any_conditions(run) => "not pinned".to_string(),
            [] => NOT_RECORDED.to_string(),
            _ => cpus.join(", "),
        }
    }),
    ("CPU frequency governor", |run| {
        let governors: BTreeSet<&str> = conditions(run)
            .filter_map(|c| c.governor.as_deref())
            .collect();
        let governors: Vec<&str> = governors.into_iter().collect();
        match governors.as_slice() {
            [] if any_conditions(run) => "not exposed (no cpufreq)".to_string(),
            [] => NOT_RECORDED.to_string(),
            _ => governors.join(", "),
        }
    }),
    ("load average (1 min)", |run| {
        let loads: Vec<f64> = conditions(run)
            .flat_map(|c| [c.load_before, c.load_after])
            .flatten()
            .collect();
        let low = loads.iter().copied().fold(f64::INFINITY, f64::min);
        let high = loads.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if loads.is_empty() {
            NOT_RECORDED.to_string()
        } else {
            format!("{low:.2} to {high:.2}, at the start and end of each cell process")
        }
    }),
    ("CPU speed (calibration kernel)", |run| {
        let readings = conditions(run).filter_map(|c| c.calibration_ns).collect();
        describe_readings(readings, 1e-3, "µs")
    }),
    ("memory speed (32 MiB pointer chase)", |run| {
        let readings = conditions(run)
            .flat_map(|c| [c.memory_probe_before_ns, c.memory_probe_after_ns])
            .flatten()
            .collect();
        describe_readings(readings, 1.0, "ns per load")
    }),
    ("cells measured under load", |run| {
        let (verified, loaded) = run.under_load();
        if any_conditions(run) {
            format!("{loaded} of {verified} verified")
        } else {
            NOT_RECORDED.to_string()
        }
    }),
];

/// A machine reading over the run's processes: its median and the range of its middle
/// 80% (10th to 90th percentile), scaled by `scale` into `unit`. The range is the point:
/// a memory speed that moved by half during a run says its large cells were measured on
/// two different machines, as far as their caches go.
fn describe_readings(mut readings: Vec<f64>, scale: f64, unit: &str) -> String {
    if readings.is_empty() {
        return NOT_RECORDED.to_string();
    }
    readings.sort_by(f64::total_cmp);
    let at = |q: f64| readings[((readings.len() - 1) as f64 * q).round() as usize] * scale;
    format!(
        "median {:.0} {unit}, 10th to 90th percentile {:.0} to {:.0}, over {} readings",
        at(0.5),
        at(0.1),
        at(0.9),
        readings.len()
    )
}

/// What a row says of a run whose records predate the conditions of their processes.
const NOT_RECORDED: &str = "not recorded (the run predates it)";

/// The conditions of every process of every cell of `run`.
fn conditions(run: &Run) -> impl Iterator<Item = &Conditions> {
    run.records.values().flat_map(|r| &r.conditions)
}

fn any_conditions(run: &Run) -> bool {
    conditions(run).next().is_some()
}

/// The least time of one sample: `environment.json`'s, else the records', else none (each
/// sample was one replay then).
fn least_sample_time(run: &Run) -> String {
    let from_environment = run.environment.as_ref().map_or(0, |e| e.min_sample_ms);
    let from_records = run
        .records
        .values()
        .filter_map(|r| r.throughput.as_ref())
        .map(|t| t.min_sample_ns)
        .max()
        .unwrap_or(0);
    if from_environment > 0 {
        format!("{from_environment} ms")
    } else if from_records > 0 {
        format!("{} ms", from_records as f64 / 1e6)
    } else {
        "none: each sample one replay".to_string()
    }
}

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let folders: Vec<String> = model
        .runs
        .iter()
        .map(|r| shell_word(&r.folder.display().to_string()))
        .collect();
    let body = html! {
        div.scroll {
            table {
                tr {
                    th {}
                    @for run in &model.runs { th { (run.title()) } }
                }
                tr {
                    th { "folder" }
                    @for run in &model.runs { td { code { (run.folder.display()) } } }
                }
                @for (name, field) in FIELDS {
                    tr {
                        th { (name) }
                        @for run in &model.runs {
                            td {
                                @match &run.environment {
                                    Some(environment) => (field(environment)),
                                    None => "(no environment.json)",
                                }
                            }
                        }
                    }
                }
                @for (name, read) in SEEN {
                    tr {
                        th { (name) }
                        @for run in &model.runs { td { (read(run)) } }
                    }
                }
                tr {
                    th { "cells" }
                    @for run in &model.runs { td { (cells_words(run)) } }
                }
            }
        }
        @for run in &model.runs {
            h4 {
                "Reproduce "
                @if model.several() { "run " (run.title()) } @else { "this run" }
            }
            (reproduce(run))
        }
        p { "This report: " code { "timerbench report " (folders.join(" ")) } }
    };
    super::section("environment", body)
}

/// The commands that run `run` again, from a checkout of its revision.
fn reproduce(run: &Run) -> Markup {
    let Some(environment) = &run.environment else {
        return html! { p { "This folder has no environment.json: the command is unknown." } };
    };
    let revision = &environment.git_revision;
    let clean = revision.trim_end_matches("-dirty");
    html! {
        p {
            "The exact command of the run, as it was typed, from a checkout of its revision"
            @if revision.ends_with("-dirty") {
                " (the tree had uncommitted changes then, which this does not restore)"
            }
            ":"
        }
        pre {
            "git checkout " (clean) "\n"
            "cargo build --release\n"
            (environment.command) "\n"
        }
    }
}

/// Whether a cell is not verified by design: the floor (not a queue) and an engine that
/// does not replay the workload (its own microbenchmark on the real clock), whose `ok`
/// says they ran, not that a log matched the model's.
fn unverified_by_design(record: &CellRecord) -> bool {
    is_floor(&record.key.implementation)
        || record.engine.as_ref().is_some_and(|e| e.mode != "replay")
}

/// The run's cells: `576 (520 of 540 verified; 36 not verified by design: ...)`, the
/// verified counted among the cells that are verified, so that the floor's `ok` cells do
/// not read as verified ones.
fn cells_words(run: &Run) -> String {
    let (by_design, checked): (Vec<&CellRecord>, Vec<&CellRecord>) =
        run.records.values().partition(|r| unverified_by_design(r));
    let ok = checked.iter().filter(|r| r.status == Status::Ok).count();
    let mut words = format!("{} ({ok} of {} verified", run.records.len(), checked.len());
    if !by_design.is_empty() {
        words.push_str(&format!(
            "; {} not verified by design: the floor and engines without a replay",
            by_design.len()
        ));
    }
    words.push(')');
    words
}
