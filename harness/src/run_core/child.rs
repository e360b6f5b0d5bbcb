//! One cell in a child process: `timerbench cell` started with the cell's spec on its
//! standard input, both its output pipes drained, killed at the time limit, and whatever
//! happens to it turned into a record (a crash, a kill or the time limit are results too).

use super::cache::Prepared;
use super::memory_probe;
use super::plan::{Structure, StructureCell};
use crate::child_process::{Ended, run_with_input};
use crate::schema::{CellMode, CellRecord, CellSpec, SampleSet, Spread, Status, identity, spread};
use std::process::Command;
use std::time::{Duration, Instant};
use timerbench_workloads::reach::first_beyond;

/// How many timed samples a cell takes, and the least time each runs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sampling {
    pub repeat: u32,
    pub min_sample: Duration,
}

/// Runs one cell in a child process and returns its record, whatever happens to it.
pub(super) fn run_cell(
    cell: StructureCell,
    workload: &Prepared,
    sampling: Sampling,
    limit: Duration,
    inject_panic: bool,
) -> CellRecord {
    let started = Instant::now();
    let spec = spec_of(cell, workload, sampling, inject_panic);
    if let Some(record) = left_out(cell, workload, &spec) {
        return record;
    }
    let before = memory_probe::read();
    let started_unix_ms = unix_ms();
    let outcome = spawn::<CellRecord>(&spec, limit);
    let after = memory_probe::read();
    let elapsed = started.elapsed().as_secs_f64();
    match outcome {
        Ok(mut record) => {
            if let Some(conditions) = record.conditions.last_mut() {
                conditions.memory_probe_before_ns = Some(before);
                conditions.memory_probe_after_ns = Some(after);
                conditions.started_unix_ms = started_unix_ms;
            }
            record
        }
        Err((status, reason)) => failure_record(&spec, status, reason, elapsed),
    }
}

/// The record of a cell that is not to run: skipped by the plan, or a workload beyond the
/// implementation's declared range (`unsupported`, naming the line); `None` to run it.
pub(super) fn left_out(
    cell: StructureCell,
    workload: &Prepared,
    spec: &CellSpec,
) -> Option<CellRecord> {
    let started = Instant::now();
    if let Some(reason) = &cell.structure.skip {
        return Some(failure_record(spec, Status::Skipped, reason.clone(), 0.0));
    }
    if !workload.reach.within(&cell.structure.declared.range) {
        let reason = refusal(cell.structure, workload);
        let elapsed = started.elapsed().as_secs_f64();
        return Some(failure_record(spec, Status::Unsupported, reason, elapsed));
    }
    None
}

/// Now, in milliseconds since the Unix epoch (`None` for a clock set before it).
fn unix_ms() -> Option<u64> {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.ok().map(|d| d.as_millis() as u64)
}

/// Runs one `samples` process of a cell whose `full` process verified: its samples, or
/// the status and reason that end the cell (a process that did not verify, crashed or ran
/// out of time).
pub(super) fn run_samples(
    cell: StructureCell,
    workload: &Prepared,
    sampling: Sampling,
    limit: Duration,
) -> Result<SampleSet, (Status, String)> {
    let mut spec = spec_of(cell, workload, sampling, false);
    spec.mode = CellMode::Samples;
    let before = memory_probe::read();
    let started_unix_ms = unix_ms();
    let mut set = spawn::<SampleSet>(&spec, limit)?;
    let after = memory_probe::read();
    if let Some(conditions) = set.conditions.as_mut() {
        conditions.memory_probe_before_ns = Some(before);
        conditions.memory_probe_after_ns = Some(after);
        conditions.started_unix_ms = started_unix_ms;
    }
    match (&set.throughput, &set.problem) {
        (Some(_), _) => Ok(set),
        (None, problem) => Err((
            Status::Unverified,
            problem
                .clone()
                .unwrap_or_else(|| "a samples process took no sample".into()),
        )),
    }
}

/// Adds a samples process's figures to `record`: the samples appended in the order run,
/// every spread recomputed over all of them, the process's median and conditions kept.
pub(super) fn merge(record: &mut CellRecord, set: SampleSet) {
    let (Some(throughput), Some(more)) = (record.throughput.as_mut(), set.throughput) else {
        return;
    };
    let joined = |into: &mut Spread, from: &Spread| {
        let mut samples = std::mem::take(&mut into.samples);
        samples.extend_from_slice(&from.samples);
        *into = spread(samples);
    };
    let optional = |into: &mut Option<Spread>, from: &Option<Spread>| {
        if let (Some(into), Some(from)) = (into.as_mut(), from) {
            joined(into, from);
        }
    };
    joined(&mut throughput.ns_per_op, &more.ns_per_op);
    optional(&mut throughput.ns_per_fired, &more.ns_per_fired);
    optional(&mut throughput.ns_per_unit, &more.ns_per_unit);
    optional(
        &mut throughput.ns_per_op_after_fill,
        &more.ns_per_op_after_fill,
    );
    optional(
        &mut throughput.ns_per_unit_after_fill,
        &more.ns_per_unit_after_fill,
    );
    throughput.repeats += more.repeats;
    throughput.iterations.extend(more.iterations);
    throughput.processes += more.processes;
    throughput.process_medians.extend(more.process_medians);
    if let (Some(into), Some(from)) = (throughput.page_faults.as_mut(), &more.page_faults) {
        into.add(from);
    }
    record.conditions.extend(set.conditions);
}

/// Why the workload is beyond the implementation's declared range: its first line past it.
fn refusal(structure: &Structure, workload: &Prepared) -> String {
    let range = &structure.declared.range;
    // The cached file is loaded with the model again, for the clock of every line: only
    // for a refused cell.
    match timerbench_workloads::load(&workload.path) {
        Ok(program) => match first_beyond(&program, range) {
            Some(beyond) => format!(
                "{} line {} asks for {}",
                workload.path.display(),
                beyond.line,
                beyond.what
            ),
            None => format!("the workload reaches beyond the declared range {range:?}"),
        },
        Err(error) => format!("beyond the declared range {range:?} ({error})"),
    }
}

/// What the child is told.
pub(super) fn spec_of(
    StructureCell { cell, structure }: StructureCell,
    workload: &Prepared,
    sampling: Sampling,
    inject_panic: bool,
) -> CellSpec {
    CellSpec {
        cell: identity(
            cell.key(),
            &cell.case.family,
            &cell.case.spec,
            cell.generator.clone(),
            structure.declared.precision.clone(),
            &workload.reference,
        ),
        workload_path: workload.path.clone(),
        reference: workload.reference.clone(),
        repeat: sampling.repeat,
        min_sample_ns: sampling.min_sample.as_nanos() as u64,
        inject_panic,
        mode: CellMode::Full,
    }
}

/// The record of a cell that produced none.
fn failure_record(spec: &CellSpec, status: Status, reason: String, elapsed: f64) -> CellRecord {
    CellRecord {
        elapsed_seconds: elapsed,
        ..CellRecord::for_spec(spec, status, Some(reason))
    }
}

/// Runs `timerbench cell` with `spec`, killing it at `limit`, and reads its one answer.
fn spawn<T: serde::de::DeserializeOwned>(
    spec: &CellSpec,
    limit: Duration,
) -> Result<T, (Status, String)> {
    let fail = |reason: String| (Status::Failed, reason);
    let executable =
        std::env::current_exe().map_err(|e| fail(format!("cannot find timerbench itself: {e}")))?;
    let input = serde_json::to_vec(spec).expect("specs serialise");
    let Ended {
        status,
        stdout,
        stderr,
    } = run_with_input(Command::new(executable).arg("cell"), &input, limit)
        .map_err(|e| fail(format!("cannot start the cell process: {e}")))?;
    let status = match status {
        Some(status) => status,
        None => {
            return Err((
                Status::Timeout,
                format!("killed after the {} s time limit", limit.as_secs()),
            ));
        }
    };
    if !status.success() {
        return Err(fail(describe_exit(status, &stderr)));
    }
    let text = String::from_utf8_lossy(&stdout);
    serde_json::from_str::<T>(text.trim()).map_err(|e| {
        fail(format!(
            "the cell process answered something unreadable ({e}): {}",
            excerpt(&text)
        ))
    })
}

/// Why a child ended badly: its signal or exit code, and the panic message if it printed one.
fn describe_exit(status: std::process::ExitStatus, stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let panic = text
        .lines()
        .skip_while(|l| !l.contains("panicked at"))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    let how = match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                match status.signal() {
                    Some(9) => "killed by SIGKILL (out of memory?)".to_string(),
                    Some(6) => "aborted (SIGABRT)".to_string(),
                    Some(signal) => format!("killed by signal {signal}"),
                    None => "ended abnormally".to_string(),
                }
            }
            #[cfg(not(unix))]
            {
                "ended abnormally".to_string()
            }
        }
    };
    if !panic.is_empty() {
        format!("{how}: {}", excerpt(&panic))
    } else if let Some(last) = text.lines().rev().find(|l| !l.trim().is_empty()) {
        format!("{how}: {}", excerpt(last))
    } else {
        how
    }
}

pub(super) fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(300) {
        // Cut at the last word's end before the limit, so that no word is cut in two.
        Some((cut, _)) => {
            let cut = text[..cut].rfind(char::is_whitespace).unwrap_or(cut);
            format!("{}...", text[..cut].trim_end())
        }
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::{Cell, Declared, Subject};
    use super::*;
    use crate::schema::CellDefinition;
    use timerbench_impls::Variant;
    use timerbench_workloads::families::GenSpec;
    use timerbench_workloads::suite::Case;

    /// A cell whose workload asks tokio-delay-queue for a 2^49-tick delay is recorded
    /// `unsupported`, naming the file's line and the limit, without starting a process.
    #[test]
    fn a_workload_beyond_the_declared_range_is_unsupported_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("far.tw");
        let text = "timer-workload v1\ns 1 5\na 3\ns 2 562949953421312\nn\n";
        std::fs::write(&path, text).unwrap();
        let program = timerbench_workloads::load(&path).unwrap();
        let variant = Variant::parse("tokio-delay-queue").unwrap();
        let declared = Declared::of(&variant);
        let cell = Cell {
            case: Case {
                workload: "far".into(),
                family: "hold".into(),
                spec: GenSpec {
                    timers: 2,
                    ops: None,
                    seed: 1,
                    params: Vec::new(),
                },
            },
            generator: "timerbench gen hold --timers 2".into(),
            subject: Subject::Structure(Structure {
                variant,
                declared,
                skip: None,
            }),
        };
        let cell = cell.structure().unwrap();
        let workload = Prepared {
            path: path.clone(),
            reference: program.summary.clone(),
            reach: program.reach,
        };
        let sampling = Sampling {
            repeat: 1,
            min_sample: Duration::ZERO,
        };
        let record = run_cell(cell, &workload, sampling, Duration::from_secs(5), false);
        assert_eq!(record.status, Status::Unsupported);
        let reason = record.reason.unwrap();
        assert!(
            reason.starts_with(&format!(
                "{} line 4 asks for a delay of 562949953421312 ticks, beyond the limit of",
                path.display()
            )),
            "{reason}"
        );
        assert!(record.throughput.is_none() && record.digest.is_none());
        // The same workload is within an exact implementation's range (all of u64).
        let heap = Variant::parse("binary-heap").unwrap();
        assert!(program.reach.within(&heap.declarations().range));
    }

    /// `reproduce` finds a planned cell's earlier record by definition: the one the plan
    /// gives must be the one read back from the record its spec makes.
    #[test]
    fn a_records_definition_is_its_planned_cells() {
        let variant = Variant::parse("hashed-wheel:slots=64").unwrap();
        let cell = Cell {
            case: Case {
                workload: "hold-pareto".into(),
                family: "hold".into(),
                spec: GenSpec {
                    timers: 1000,
                    ops: Some(5000),
                    seed: 9,
                    params: vec![("dist".into(), "pareto".into())],
                },
            },
            generator: "timerbench gen hold --timers 1000".into(),
            subject: Subject::Structure(Structure {
                declared: Declared::of(&variant),
                variant,
                skip: None,
            }),
        };
        let workload = Prepared {
            path: "hold.tw".into(),
            reference: Default::default(),
            reach: Default::default(),
        };
        let sampling = Sampling {
            repeat: 1,
            min_sample: Duration::ZERO,
        };
        let spec = spec_of(cell.structure().unwrap(), &workload, sampling, false);
        let record = CellRecord::for_spec(&spec, Status::Ok, None);
        let definition = CellDefinition::of(&record);
        assert_eq!(definition, cell.definition());
        assert_eq!(definition.implementation_parameters["slots"], 64);
        assert_eq!(definition.params["dist"], "pareto");
    }
}
