//! Engine cells of `timerbench run --engine`: the null engine's cell, fake engines that
//! crash, hang, answer malformed JSON or replay a wrong log (each recorded with its status
//! and stderr, the run going on), and a missing toolchain recorded `unsupported`.

mod support;

use serde_json::Value;
use std::path::Path;
use support::{text, timerbench_in};

/// The run's records by implementation label, `workload/label`.
fn records(folder: &Path) -> Vec<Value> {
    std::fs::read_to_string(folder.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn record<'a>(records: &'a [Value], workload: &str, implementation: &str) -> &'a Value {
    records
        .iter()
        .find(|r| r["workload"] == workload && r["implementation"] == implementation)
        .unwrap_or_else(|| panic!("no record of {workload}/{implementation}"))
}

/// A small run of `start-stop` and `burst` at 500 timers, binary-heap beside the engines.
fn run(dir: &Path, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    let out = dir.join("results").join("run");
    let mut args = vec![
        "run",
        "--suite",
        "smoke",
        "--workload",
        "start-stop",
        "--workload",
        "burst",
        "--timers",
        "500",
        "--impl",
        "binary-heap",
        "--repeat",
        "1",
        "--processes",
        "1",
        "--min-sample-ms",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = timerbench_in(&args, dir);
    let records = records(&out);
    (output, records)
}

#[test]
fn the_null_engine_is_a_cell_of_the_results_with_its_exchange_cost() {
    let dir = tempfile::tempdir().unwrap();
    let (output, records) = run(dir.path(), &["--engine", "null"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(records.len(), 4, "two workloads, binary-heap and null");
    for workload in ["start-stop", "burst"] {
        let null = record(&records, workload, "null");
        assert_eq!(null["status"], "ok");
        assert_eq!(null["engine"]["name"], "null");
        assert_eq!(null["engine"]["protocol"], 2);
        assert_eq!(null["engine"]["mode"], "replay");
        assert!(null["throughput"].is_null(), "{null}");
        assert_eq!(
            null["engine"]["exchange_seconds"].as_array().unwrap().len(),
            1
        );
        assert!(record(&records, workload, "binary-heap")["engine"].is_null());
    }
}

/// Writes `script` to `dir/name.sh` and gives the `--engine-script` hook for `engine`.
fn fake(dir: &Path, engine: &str, script: &str) -> String {
    let path = dir.join(format!("{engine}.sh"));
    std::fs::write(&path, script).unwrap();
    format!("{engine}={}", path.display())
}

/// The log path of a replay request, as a fake script finds it among its arguments.
const LOG_OF_ARGS: &str = r#"for a in "$@"; do case "$a" in log=*) log="${a#log=}";; esac; done
"#;

#[test]
fn broken_engines_are_recorded_with_their_status_and_stderr_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let crash = fake(
        dir.path(),
        "null",
        "echo 'Exception in thread main: boom' >&2\nexit 3\n",
    );
    let hang = fake(dir.path(), "go-runtime", "echo 'waiting' >&2\nsleep 60\n");
    let malformed = fake(
        dir.path(),
        "jdk-priority-queue",
        "echo 'half an answer' >&2\necho '{\"protocol\":2,'\n",
    );
    let wrong = fake(
        dir.path(),
        "jdk-delay-queue",
        &format!(
            "{LOG_OF_ARGS}echo '5 1 5' > \"$log\"\necho 'replayed' >&2\n\
             echo '{{\"protocol\":2,\"engine\":\"jdk-delay-queue\",\"runtime\":\"fake\",\
             \"runtime_version\":\"0\",\"status\":\"ok\",\"unit\":\"replay\",\
             \"samples_ns\":[1000],\"replay\":{{\"operations\":1,\"started\":1,\"fired\":1,\
             \"stopped\":0,\"misses\":0,\"pending\":0,\"final_clock\":5,\"log\":\"'\"$log\"'\"}}}}'\n"
        ),
    );
    let (output, records) = run(
        dir.path(),
        &[
            "--engine",
            "null,go-runtime,jdk-priority-queue,jdk-delay-queue",
            "--timeout",
            "3",
            "--engine-script",
            &crash,
            "--engine-script",
            &hang,
            "--engine-script",
            &malformed,
            "--engine-script",
            &wrong,
        ],
    );
    assert!(!output.status.success(), "failed engine cells fail the run");
    assert!(!text(&output.stderr).contains("panicked"));
    let expect = |implementation: &str, workload: &str, status: &str, words: &[&str]| {
        let r = record(&records, workload, implementation);
        assert_eq!(r["status"], status, "{r}");
        let reason = r["reason"].as_str().unwrap();
        for word in words {
            assert!(reason.contains(word), "{implementation}: {reason}");
        }
        assert!(r["throughput"].is_null());
    };
    expect(
        "null",
        "burst",
        "failed",
        &["crashed", "exit status: 3", "boom"],
    );
    expect("go-runtime", "start-stop", "timeout", &["hung", "waiting"]);
    expect("go-runtime", "burst", "unsupported", &["start+stop"]);
    expect(
        "jdk-priority-queue",
        "burst",
        "failed",
        &["malformed", "half an answer"],
    );
    expect(
        "jdk-delay-queue",
        "burst",
        "unverified",
        &["wrong expiry log", "replayed"],
    );
    // The Rust cells beside them were measured.
    for workload in ["start-stop", "burst"] {
        assert_eq!(record(&records, workload, "binary-heap")["status"], "ok");
    }
}

#[test]
fn a_missing_toolchain_is_unsupported_with_the_package_to_install() {
    let dir = tempfile::tempdir().unwrap();
    // A PATH with `sh` alone: no `go`, no `java`.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink("/bin/sh", bin.join("sh")).unwrap();
    let out = dir.path().join("results").join("run");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args([
            "run",
            "--suite",
            "smoke",
            "--workload",
            "start-stop",
            "--timers",
            "500",
            "--impl",
            "binary-heap",
            "--repeat",
            "1",
            "--processes",
            "1",
            "--engine",
            "go-runtime,jdk-delay-queue,netty-hashed-wheel",
            "--out",
        ])
        .arg(&out)
        .current_dir(dir.path())
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let records = records(&out);
    for (engine, install) in [
        ("go-runtime", "apt-get install golang-go"),
        ("jdk-delay-queue", "apt-get install default-jdk-headless"),
        (
            "netty-hashed-wheel",
            "apt-get install default-jdk-headless libnetty-java",
        ),
    ] {
        let r = record(&records, "start-stop", engine);
        assert_eq!(r["status"], "unsupported", "{r}");
        assert!(r["reason"].as_str().unwrap().contains(install), "{r}");
        assert_eq!(r["engine"]["name"], engine);
    }
    // The summary counts them under the word its list and the records use.
    let stdout = text(&output.stdout);
    assert!(stdout.contains(", 3 unsupported, 0 skipped\n"), "{stdout}");
    assert!(
        stdout.contains("start-stop/500/go-runtime: unsupported: "),
        "{stdout}"
    );
    assert!(!stdout.contains("Unsupported"), "{stdout}");
}

/// With the toolchains here, the JDK's DelayQueue replays every smoke workload (each
/// verified against the model before its time counts) and Go's runtime runs start+stop.
#[test]
fn real_engines_run_as_cells_when_their_toolchains_are_here() {
    let have = |program: &str| {
        std::process::Command::new(program)
            .arg("-version")
            .output()
            .is_ok()
    };
    if !have("java") {
        eprintln!("skipped: no java here (apt-get install default-jdk-headless)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut engines = "jdk-delay-queue".to_string();
    if have("go") {
        engines.push_str(",go-runtime");
    } else {
        eprintln!("go-runtime left out: no go here (apt-get install golang-go)");
    }
    let (output, records) = run(dir.path(), &["--engine", &engines]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    for workload in ["start-stop", "burst"] {
        let r = record(&records, workload, "jdk-delay-queue");
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["digest"], r["reference_digest"]);
        assert_eq!(r["engine"]["unit"], "replay");
        // The record says how the JVM ran and what its collector did in each sample.
        let flags = r["engine"]["runtime_flags"].as_array().unwrap();
        assert!(flags.iter().any(|f| f == "-XX:+UseSerialGC"), "{r}");
        let samples = r["engine"]["samples_ns"].as_array().unwrap().len();
        assert_eq!(
            r["engine"]["samples_gc_count"].as_array().unwrap().len(),
            samples
        );
        assert!(r["engine"]["heap_live_bytes"].as_u64().unwrap() > 0, "{r}");
    }
    if have("go") {
        let r = record(&records, "start-stop", "go-runtime");
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["engine"]["unit"], "start-stop pair");
        assert!(
            r["engine"]["runtime_version"]
                .as_str()
                .unwrap()
                .starts_with("go")
        );
        let pair = r["engine"]["samples_ns"][0].as_f64().unwrap();
        let line = r["throughput"]["ns_per_unit_after_fill"]["samples"][0]
            .as_f64()
            .unwrap();
        assert_eq!(line, pair / 2.0, "a pair is two lines");
        assert_eq!(
            record(&records, "burst", "go-runtime")["status"],
            "unsupported"
        );
    }
}

/// The JDK's DelayQueue replays every workload of the smoke suite (at a small size) with
/// the reference model's digest: the smoke suite's half of the engine's target (the
/// random workloads with stale stops, reused names and delays up to 2^50 ticks are
/// tests/engine.rs's `jdk_engines_replay_like_the_reference_model`).
#[test]
fn the_jdk_delay_queue_replays_every_smoke_workload_like_the_model() {
    if std::process::Command::new("java")
        .arg("-version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no java here (apt-get install default-jdk-headless)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results").join("run");
    let output = timerbench_in(
        &[
            "run",
            "--suite",
            "smoke",
            "--timers",
            "200",
            "--impl",
            "binary-heap",
            "--engine",
            "jdk-delay-queue",
            "--repeat",
            "1",
            "--processes",
            "1",
            "--min-sample-ms",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let records = records(&out);
    let engine_cells: Vec<&Value> = records
        .iter()
        .filter(|r| r["implementation"] == "jdk-delay-queue")
        .collect();
    let workloads = records
        .iter()
        .filter(|r| r["implementation"] == "binary-heap")
        .count();
    assert_eq!(engine_cells.len(), workloads);
    for r in engine_cells {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["digest"], r["reference_digest"], "{r}");
    }
}
