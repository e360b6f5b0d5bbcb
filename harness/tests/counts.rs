//! `timerbench run --counts`: each cell's lines after the fill counted once under
//! Callgrind, identical from one count to the next; no valgrind or a cell above the limit
//! told in one message. The tests that need Valgrind say `skipped` without it (`.ci/run`
//! installs it).

mod support;

use std::path::Path;
use std::process::Command;
use support::{assert_fails_with, assert_succeeded, text, timerbench_in as timerbench};
use timerbench::cell_core::timed::COUNTED_FUNCTION;

/// Whether `valgrind` runs here; prints why a test is skipped when not.
fn have_valgrind(test: &str) -> bool {
    let found = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        println!("{test}: skipped: no valgrind on the PATH (apt-get install valgrind)");
    }
    found
}

/// A small counts run: one workload at 1k, two structures.
const COUNTS_RUN: &[&str] = &[
    "run",
    "--counts",
    "--workload",
    "hold-exponential",
    "--timers",
    "1000",
    "--impl",
    "binary-heap",
    "--impl",
    "hashed-wheel",
];

fn records(folder: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(folder.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn counting_a_cell_twice_gives_identical_totals_of_the_stated_machine() {
    if !have_valgrind("counting_twice") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A last level other than the default's, to see the flag reach the record.
    let geometry = "LL=16777216,16,64";
    let mut runs = Vec::new();
    for out in ["first", "second"] {
        let mut args = COUNTS_RUN.to_vec();
        args.extend(["--cache-geometry", geometry, "--out", out]);
        let output = timerbench(&args, dir.path());
        assert_succeeded(&output);
        runs.push(records(&dir.path().join(out)));
    }
    let (first, second) = (&runs[0], &runs[1]);
    assert_eq!(first.len(), 2);
    for (a, b) in first.iter().zip(second) {
        assert_eq!(a["status"], "ok", "{a}");
        assert!(a["throughput"].is_null(), "{a}");
        let counts = &a["counts"];
        let lines = counts["lines"].as_u64().unwrap();
        assert!(
            lines > 0 && lines < a["operations"].as_u64().unwrap(),
            "{counts}"
        );
        assert!(
            counts["totals"]["instructions"].as_u64().unwrap() > 0,
            "{counts}"
        );
        assert_eq!(counts["cache"]["ll"]["size_bytes"], 16_777_216);
        let default = timerbench::counts_core::DEFAULT_GEOMETRY;
        assert_eq!(counts["cache"]["d1"]["size_bytes"], default.d1.size_bytes);
        assert!(counts["tool"].as_str().unwrap().ends_with(" callgrind"));
        // The first target: every event identical, not only the instructions.
        assert_eq!(a["key"], b["key"]);
        assert_eq!(counts["totals"], b["counts"]["totals"], "{a}\n{b}");
    }
    // Two structures, two different counts: the toggle counted each one's own replay.
    assert_ne!(
        first[0]["counts"]["totals"]["instructions"],
        first[1]["counts"]["totals"]["instructions"]
    );
}

#[test]
fn without_valgrind_the_run_says_what_to_install_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args(COUNTS_RUN)
        .args(["--out", "counted"])
        .current_dir(dir.path())
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_fails_with(&output, "valgrind not found: apt-get install valgrind");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(!dir.path().join("counted").exists());
    assert!(!dir.path().join("results").exists());
}

#[test]
fn a_cell_above_the_limit_is_skipped_with_its_estimate() {
    if !have_valgrind("above_the_limit") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut args = COUNTS_RUN.to_vec();
    args.extend(["--counts-limit", "1", "--out", "limited"]);
    let output = timerbench(&args, dir.path());
    // Skipped on purpose is no failure.
    assert_succeeded(&output);
    for record in records(&dir.path().join("limited")) {
        assert_eq!(record["status"], "skipped", "{record}");
        let reason = record["reason"].as_str().unwrap();
        assert!(reason.starts_with("counting would take about "), "{reason}");
        assert!(reason.ends_with("above --counts-limit 1 s"), "{reason}");
        assert!(record["counts"].is_null());
    }
}

#[test]
fn a_timed_runs_sampling_flags_are_refused_beside_counts_and_the_counts_flags_without() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = COUNTS_RUN.to_vec();
    args.extend(["--repeat", "2"]);
    let output = timerbench(&args, dir.path());
    assert_fails_with(&output, "--repeat");
    let output = timerbench(&["run", "--jobs", "2", "--out", "x"], dir.path());
    assert_fails_with(&output, "--counts");
    let mut args = COUNTS_RUN.to_vec();
    args.extend(["--cache-geometry", "L3=1,2,3"]);
    let output = timerbench(&args, dir.path());
    assert_fails_with(&output, "unknown cache level `L3`");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// The toggle's glob `*NAME*` must match the counted function's symbol (a mangled Rust
/// name) in the binary under test and in a release build: a symbol renamed or inlined
/// away would count nothing. The release binary is checked when it is newer than the
/// function's source (`cargo build --release` first), else the check says skipped.
#[test]
fn the_counted_functions_symbol_is_in_the_binaries() {
    let has_nm = Command::new("nm").arg("--version").output().is_ok();
    if !has_nm {
        println!("counted symbol: skipped: no `nm` (binutils)");
        return;
    }
    let symbols = |binary: &Path| {
        let output = Command::new("nm").arg(binary).output().unwrap();
        text(&output.stdout)
            .lines()
            .filter(|line| line.contains(COUNTED_FUNCTION))
            .count()
    };
    let debug = Path::new(env!("CARGO_BIN_EXE_timerbench"));
    assert!(
        symbols(debug) > 0,
        "no {COUNTED_FUNCTION} in {}",
        debug.display()
    );
    let release = debug
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("release/timerbench");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cell_core/timed.rs");
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    match (modified(&release), modified(&source)) {
        (Some(built), Some(written)) if built >= written => {
            assert!(
                symbols(&release) > 0,
                "no {COUNTED_FUNCTION} in {}",
                release.display()
            );
        }
        _ => println!(
            "counted symbol: release build not checked: {} is missing or older than {}",
            release.display(),
            source.display()
        ),
    }
}

/// `ab --metric instructions`: one build against itself reads exactly no change; two
/// structures read the difference of their counts, both in one record each in `ab.jsonl`.
#[test]
fn ab_with_a_count_metric_states_the_change_exactly() {
    if !have_valgrind("ab_counts") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ab = |b: &str, out: &str| {
        let args = [
            "ab",
            "--metric",
            "instructions",
            "--workload",
            "hold-exponential",
            "--timers",
            "1000",
            "--a",
            "binary-heap",
            "--b",
            b,
            "--out",
            out,
        ];
        let output = timerbench(&args, dir.path());
        assert_succeeded(&output);
        let line = std::fs::read_to_string(dir.path().join(out).join("ab.jsonl")).unwrap();
        let record: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        (text(&output.stdout), record)
    };
    let (same_text, same) = ab("binary-heap", "same");
    assert_eq!(same["metric"], "instructions");
    assert_eq!(same["median_ratio"], 1.0, "{same}");
    assert_eq!(same["verdict"], "no change");
    assert_eq!(same["counts"][0]["totals"], same["counts"][1]["totals"]);
    assert!(same_text.contains("B - A = +0.000 per line"), "{same_text}");
    let (_, other) = ab("hashed-wheel", "other");
    let instructions = |side: usize| {
        other["counts"][side]["totals"]["instructions"]
            .as_f64()
            .unwrap()
    };
    let expected = instructions(1) / instructions(0);
    assert_eq!(other["median_ratio"].as_f64().unwrap(), expected, "{other}");
    assert_ne!(other["verdict"], "no change");
}

#[test]
fn ab_with_a_count_metric_refuses_the_duets_flags_and_an_unknown_metric() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "ab",
        "--workload",
        "hold",
        "--timers",
        "100",
        "--a",
        "btree",
    ];
    let mut args = base.to_vec();
    args.extend(["--metric", "instructions", "--pairs", "2"]);
    assert_fails_with(&timerbench(&args, dir.path()), "--pairs is a duet's");
    let mut args = base.to_vec();
    args.extend(["--metric", "cycles"]);
    assert_fails_with(&timerbench(&args, dir.path()), "unknown metric `cycles`");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}
