//! What the command-line tests share: running the binary and reading its output.

#![allow(dead_code)] // Each test file uses a different part.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `timerbench ARGS` in `cwd`.
pub fn timerbench_in(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the timerbench binary runs")
}

/// Runs `timerbench ARGS` here.
pub fn timerbench(args: &[&str]) -> Output {
    timerbench_in(args, Path::new("."))
}

/// Bytes as text, lossily.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts a clean failure: non-zero exit, no panic, and `needle` on standard error.
pub fn assert_fails_with(output: &Output, needle: &str) {
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "should fail: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(needle),
        "stderr lacks {needle:?}:\n{stderr}"
    );
}

/// A small `timerbench run` selection: two workloads, two sizes, two implementations, one
/// repeat (8 cells); add `--out DIR`.
pub const SMALL_RUN: &[&str] = &[
    "run",
    "--suite",
    "smoke",
    "--workload",
    "burst",
    "--workload",
    "sparse-next",
    "--timers",
    "500",
    "--timers",
    "1000",
    "--impl",
    "btree",
    "--impl",
    "hierarchical-wheel",
    "--repeat",
    "1",
];

/// Asserts success, showing both outputs otherwise.
pub fn assert_succeeded(output: &Output) {
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// A verified cell record (only the fields the format requires) with one median ns/op.
pub fn cell_record(
    workload: &str,
    timers: u64,
    implementation: &str,
    median: f64,
) -> serde_json::Value {
    serde_json::json!({
        "schema": 2, "workload": workload, "timers": timers, "implementation": implementation,
        "family": workload, "params": {}, "ops": null, "seed": 1,
        "generator": format!("timerbench gen {workload} --timers {timers} --seed 1"),
        "peer": false, "status": "ok", "reason": null, "operations": 1000, "fired": 500,
        "reference_digest": "00", "digest": null,
        "throughput": {
            "repeats": 3,
            "ns_per_op": {"median": median, "mad": 0.01, "samples": [median, median, median]},
            "ns_per_fired": null,
        },
        "latency": {}, "clock": null, "advance_series": null, "memory": null,
        "elapsed_seconds": 0.5,
    })
}

/// The repository's root: the workspace above this crate.
pub fn repository_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the harness sits in the workspace")
        .to_path_buf()
}

/// A file of the repository, by its path from the root.
pub fn read_repository_file(relative: &str) -> String {
    std::fs::read_to_string(repository_root().join(relative))
        .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
}
