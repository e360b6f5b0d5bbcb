//! `timerbench cell`, the measuring child of `timerbench run`, as the parent meets it: a
//! spec on standard input, one record on standard output, and the exit status.
//!
//! Each cell runs in a process of its own here, as in a run, so the counting allocator sees
//! that cell's allocations only and the memory figures can be checked.

#[allow(dead_code)]
#[path = "../src/schema.rs"]
mod schema;
mod support;

use base64::Engine;
use schema::{CellKey, CellMode, CellRecord, CellSpec, Status, identity};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use support::text;
use timerbench_impls::IMPLEMENTATIONS;
use timerbench_workloads::families::{self, GenSpec};
use timerbench_workloads::program::Step;
use timerbench_workloads::{Program, load, writer};

/// Runs `timerbench cell` with `input` on its standard input.
fn cell(input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .arg("cell")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the timerbench binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input)
        .expect("the child reads its spec");
    child.wait_with_output().unwrap()
}

/// Runs a cell that must exit 0 and answer one record on one line.
fn record_of(spec: &CellSpec) -> CellRecord {
    let output = cell(&serde_json::to_vec(spec).unwrap());
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "{}: {}",
        spec.cell.key.implementation,
        text(&output.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.ends_with('\n'));
    serde_json::from_str(&stdout).unwrap()
}

/// Generates a workload into `dir`; returns its spec (for the first implementation) and
/// the program loaded with the model.
fn workload(dir: &Path, family: &str, timers: u64, params: &[(&str, &str)]) -> (CellSpec, Program) {
    let params: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let gen_spec = GenSpec {
        timers,
        ops: None,
        seed: 3,
        params,
    };
    let generated = families::generate(family, &gen_spec).unwrap();
    let path = dir.join(format!("{family}.tw"));
    writer::write_file(&path, &generated).unwrap();
    let program = load(&path).unwrap();
    let key = CellKey {
        workload: format!("{family}-test"),
        timers,
        implementation: IMPLEMENTATIONS[0].name.to_string(),
    };
    let spec = CellSpec {
        cell: identity(
            key,
            family,
            &gen_spec,
            format!("timerbench gen {family} --timers {timers} --seed 3"),
            "exact".to_string(),
            &program.summary,
        ),
        workload_path: path,
        reference: program.summary.clone(),
        repeat: 3,
        min_sample_ns: 1_000_000,
        mode: CellMode::Full,
        inject_panic: false,
    };
    (spec, program)
}

/// The units of each kind a replay times: one per line, one per tick of a `t`.
fn units(program: &Program) -> BTreeMap<String, u64> {
    let mut units = BTreeMap::new();
    for step in &program.steps {
        let (kind, n) = match *step {
            Step::Start { .. } => ("start", 1),
            Step::Stop { .. } => ("stop", 1),
            Step::Restart { .. } => ("restart", 1),
            Step::Advance { .. } => ("advance", 1),
            Step::Tick { ticks } => ("tick", ticks),
            Step::Next => ("next", 1),
        };
        if n > 0 {
            *units.entry(kind.to_string()).or_insert(0) += n;
        }
    }
    units
}

fn assert_no_figures(record: &CellRecord) {
    assert!(record.throughput.is_none());
    assert!(record.latency.is_empty());
    assert!(record.clock.is_none());
    assert!(record.advance_series.is_none());
    assert!(record.memory.is_none());
}

/// Checks every figure of a verified record; `memory_bound` checks the bytes per pending
/// timer (meaningful only where enough timers are pending to hide fixed costs).
fn check_record(spec: &CellSpec, program: &Program, record: &CellRecord, memory_bound: bool) {
    let name = format!("{} on {}", spec.cell.key.implementation, spec.cell.family);
    assert_eq!(record.status, Status::Ok, "{name}: {:?}", record.reason);
    assert_eq!(record.reason, None);
    assert_eq!(record.schema, schema::SCHEMA_VERSION);
    assert_eq!(record.key, spec.cell.key);
    assert_eq!(
        (&record.family, &record.params, record.ops, record.seed),
        (
            &spec.cell.family,
            &spec.cell.params,
            spec.cell.ops,
            spec.cell.seed
        )
    );
    assert_eq!(record.generator, spec.cell.generator);
    assert!(!record.peer);
    assert_eq!(record.operations, program.steps.len() as u64);
    assert_eq!(record.fired, program.summary.fired);
    assert_eq!(record.reference_digest, program.summary.digest);
    if record.is_approximate() {
        // Its own digest, and its lateness against the model in lockstep.
        assert!(record.digest.is_some(), "{name}");
        let lateness = record
            .lateness
            .as_ref()
            .expect("an approximate cell's lateness");
        assert!(
            lateness.firings + lateness.early > 0,
            "{name}: {lateness:?}"
        );
        assert_eq!(lateness.percentiles.len(), 6, "{name}");
    } else {
        assert_eq!(record.precision.as_deref(), Some("exact"), "{name}");
        assert_eq!(record.digest.as_ref(), Some(&program.summary.digest));
        assert!(record.lateness.is_none(), "{name}");
    }
    assert!(record.elapsed_seconds > 0.0);

    let throughput = record.throughput.as_ref().unwrap();
    assert_eq!(throughput.repeats, spec.repeat);
    for spread in [
        Some(&throughput.ns_per_op),
        throughput.ns_per_fired.as_ref(),
    ]
    .into_iter()
    .flatten()
    {
        assert_eq!(spread.samples.len(), spec.repeat as usize, "{name}");
        assert!(
            spread.median > 0.0 && spread.mad >= 0.0,
            "{name}: {spread:?}"
        );
    }
    assert_eq!(throughput.ns_per_fired.is_some(), program.summary.fired > 0);

    let clock = record.clock.as_ref().unwrap();
    assert!(!clock.source.is_empty());
    assert!(
        clock.overhead_ns > 0.0 && clock.overhead_ns < 1000.0,
        "{clock:?}"
    );
    let counts: BTreeMap<String, u64> = record
        .latency
        .iter()
        .map(|(kind, latency)| (kind.clone(), latency.count))
        .collect();
    assert_eq!(counts, units(program), "{name}");
    for (kind, latency) in &record.latency {
        let p = &latency.percentiles;
        let keys: Vec<&str> = p.keys().map(String::as_str).collect();
        assert_eq!(keys, ["max", "p50", "p90", "p99", "p99.9", "p99.99"]);
        assert!(p["p50"] <= p["p90"] && p["p90"] <= p["p99"] && p["p99"] <= p["p99.9"]);
        assert!(p["p99.9"] <= p["p99.99"] && p["p99.99"] <= p["max"]);
        assert!(latency.mean_ns >= 0.0 && latency.mean_ns <= p["max"] as f64);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&latency.histogram_v2)
            .unwrap();
        let histogram: hdrhistogram::Histogram<u64> =
            hdrhistogram::serialization::Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .unwrap();
        assert_eq!(histogram.len(), latency.count, "{name}: {kind}");
        assert_eq!(histogram.max(), p["max"]);
    }
    let series = record.advance_series.as_ref().unwrap();
    assert_eq!(series.window_ops, (record.operations / 500).max(1));
    assert_eq!(
        series.max_ns.len() as u64,
        record.operations.div_ceil(series.window_ops)
    );
    let slowest_advance = ["advance", "tick", "next"]
        .iter()
        .filter_map(|kind| record.latency.get(*kind))
        .map(|latency| latency.percentiles["max"])
        .max();
    // The series holds raw readings; the histogram's maximum is within its precision.
    let series_max = series.max_ns.iter().copied().max().unwrap();
    match slowest_advance {
        Some(max) => assert!(series_max.abs_diff(max) <= max / 500 + 1, "{name}"),
        None => assert_eq!(series_max, 0),
    }

    let memory = record.memory.as_ref().unwrap();
    if record.is_approximate() {
        // Its own peak: late timers stay pending beside the ones started after them.
        assert!(memory.peak_pending > 0, "{name}");
    } else {
        assert_eq!(memory.peak_pending, program.peak_pending);
    }
    assert!(memory.peak_live_bytes > 0);
    assert!(memory.allocations >= 1, "{name}: with_capacity allocates");
    let per_op = memory.allocations as f64 / record.operations as f64;
    assert!((memory.allocations_per_op - per_op).abs() <= per_op * 1e-12);
    assert!(memory.peak_rss_bytes > memory.peak_live_bytes);
    if memory_bound {
        assert!(
            (8.0..200.0).contains(&memory.bytes_per_pending_timer),
            "{name}: {memory:?}"
        );
    }
}

#[test]
fn every_implementation_measures_every_kind_of_unit() {
    let dir = tempfile::tempdir().unwrap();
    // Between them: s and n (hold), a, r and x (retransmit), t (sparse).
    let workloads = [
        (workload(dir.path(), "hold", 2000, &[]), true),
        (workload(dir.path(), "retransmit", 200, &[]), false),
        (
            workload(
                dir.path(),
                "sparse",
                30,
                &[("gap", "100"), ("pending", "3")],
            ),
            false,
        ),
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for ((spec, program), memory_bound) in &workloads {
        kinds.extend(units(program).into_keys());
        for implementation in IMPLEMENTATIONS {
            let mut spec = spec.clone();
            spec.cell.key.implementation = implementation.name.to_string();
            let record = record_of(&spec);
            check_record(&spec, program, &record, *memory_bound);
        }
    }
    assert_eq!(kinds.len(), 6, "{kinds:?}");
}

#[test]
fn a_wrong_reference_is_unverified_and_reports_no_figures() {
    let dir = tempfile::tempdir().unwrap();
    let (mut spec, program) = workload(dir.path(), "hold", 100, &[]);
    spec.cell.key.implementation = "skiplist".into();
    spec.reference.digest = "f".repeat(64);
    let record = record_of(&spec);
    assert_eq!(record.status, Status::Unverified);
    let reason = record.reason.as_deref().unwrap();
    assert!(reason.contains("digest: expected ffff"), "{reason}");
    assert_eq!(record.digest.as_ref(), Some(&program.summary.digest));
    assert_eq!(record.reference_digest, "f".repeat(64));
    assert_no_figures(&record);

    // A count that differs is named too.
    spec.reference = program.summary.clone();
    spec.reference.fired += 1;
    let record = record_of(&spec);
    assert_eq!(record.status, Status::Unverified);
    let reason = record.reason.as_deref().unwrap();
    assert!(
        reason.contains(&format!(
            "fired: expected {}, got {}",
            program.summary.fired + 1,
            program.summary.fired
        )),
        "{reason}"
    );
    assert_no_figures(&record);
}

#[test]
fn an_injected_panic_is_a_crash_without_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let (mut spec, _) = workload(dir.path(), "hold", 100, &[]);
    spec.inject_panic = true;
    let output = cell(&serde_json::to_vec(&spec).unwrap());
    assert!(!output.status.success());
    assert!(output.stdout.is_empty(), "{}", text(&output.stdout));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("panicked") && stderr.contains("injected panic"),
        "{stderr}"
    );
}

#[test]
fn a_spec_that_cannot_be_used_exits_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, _) = workload(dir.path(), "hold", 10, &[]);
    let mut unknown = serde_json::to_value(&spec).unwrap();
    unknown["cell"]["key"]["implementation"] = "linked-list".into();
    let mut no_reference = serde_json::to_value(&spec).unwrap();
    no_reference.as_object_mut().unwrap().remove("reference");
    for (input, needle) in [
        (b"{\"key\": ".to_vec(), "EOF"),
        (b"".to_vec(), "EOF"),
        (b"42".to_vec(), "expected struct CellSpec"),
        (
            serde_json::to_vec(&no_reference).unwrap(),
            "missing field `reference`",
        ),
        (
            serde_json::to_vec(&unknown).unwrap(),
            "unknown implementation `linked-list`",
        ),
    ] {
        let output = cell(&input);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(output.stdout.is_empty());
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(stderr.contains("bad cell spec"), "{stderr}");
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
}

#[test]
fn a_missing_workload_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (mut spec, _) = workload(dir.path(), "hold", 10, &[]);
    spec.workload_path = dir.path().join("gone.tw");
    let output = cell(&serde_json::to_vec(&spec).unwrap());
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert!(
        stderr.contains("gone.tw") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

#[test]
fn the_cell_runs_with_the_allocator_tuned_and_tells_its_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let (mut spec, _) = workload(dir.path(), "hold", 1000, &[]);
    spec.cell.key.implementation = "binary-heap".into();
    let mut child = Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args(["cell", "--diagnostics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&spec).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let record: CellRecord = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(record.status, Status::Ok);
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        assert!(
            stderr.contains("allocator: GLIBC_TUNABLES=glibc.malloc.mmap_max=0"),
            "{stderr}"
        );
    }
    // A heap built with its capacity does not allocate while it replays (the memory
    // pass counts; the timed ones no longer do).
    assert!(stderr.contains(", 0 inside drive"), "{stderr}");
    assert!(
        stderr.contains("per timed sample: minor page faults ["),
        "{stderr}"
    );
    assert!(stderr.contains("passes: load "), "{stderr}");
}

#[test]
fn the_subcommand_is_hidden() {
    let output = Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .arg("--help")
        .output()
        .unwrap();
    let help = text(&output.stdout);
    let listed = |name: &str| {
        help.lines()
            .any(|l| l.trim_start().starts_with(&format!("{name} ")))
    };
    assert!(listed("replay") && !listed("cell"), "{help}");
}

#[test]
fn the_subcommand_tells_its_options_and_compares_the_clocks() {
    let output = Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args(["cell", "--help"])
        .output()
        .unwrap();
    let help = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        help.contains("--diagnostics") && help.contains("--compare-clocks"),
        "{help}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args(["cell", "--compare-clocks"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        stdout.matches("an empty unit records").count(),
        2,
        "{stdout}"
    );
}
