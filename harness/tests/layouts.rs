//! `timerbench layouts`: the summary of fabricated layout folders (each cell's spread,
//! the orders that flip), and the bad inputs refused before anything is built. No test
//! builds a layout: where a check could let a build through, cargo is a script that
//! fails.

mod support;

use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{
    assert_fails_with, assert_succeeded, cell_record as record, text, timerbench_in as timerbench,
};

/// Writes `study/layout-N` with `hold` 1000 at `heap` and `wheel` ns/op and `cron` 1000
/// at `cron_heap` and `cron_wheel`, for binary-heap and hashed-wheel.
fn layout(study: &Path, n: u32, hold: [f64; 2], cron: [f64; 2]) {
    let folder = study.join(format!("layout-{n}"));
    std::fs::create_dir_all(&folder).unwrap();
    let lines = [
        record("hold", 1000, "binary-heap", hold[0]).to_string(),
        record("hold", 1000, "hashed-wheel", hold[1]).to_string(),
        record("cron", 1000, "binary-heap", cron[0]).to_string(),
        record("cron", 1000, "hashed-wheel", cron[1]).to_string(),
    ];
    std::fs::write(folder.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
}

/// The line of `text` that starts with `workload` and names `implementation`.
fn line<'s>(text: &'s str, workload: &str, implementation: &str) -> &'s str {
    text.lines()
        .find(|l| l.trim_start_matches("| ").starts_with(workload) && l.contains(implementation))
        .unwrap_or_else(|| panic!("no {workload} {implementation} in:\n{text}"))
}

#[test]
fn the_summary_gives_each_cells_spread_and_marks_the_orders_that_flip() {
    let dir = tempfile::tempdir().unwrap();
    let study = dir.path().join("study");
    // hold: the heap is faster in layouts 0 and 2, the wheel in layout 1: a flip.
    // cron: the wheel is faster in every layout.
    layout(&study, 0, [10.0, 11.0], [8.0, 4.0]);
    layout(&study, 1, [12.0, 11.0], [8.0, 4.2]);
    layout(&study, 2, [11.0, 11.5], [8.0, 4.1]);
    // Neither a layout folder nor a run: left out.
    std::fs::create_dir_all(study.join("layout-3")).unwrap();
    std::fs::create_dir_all(study.join("bin")).unwrap();
    let output = timerbench(&["layouts", "--summarize", "--out", "study"], dir.path());
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("layout 2") && !stdout.contains("layout 3"),
        "{stdout}"
    );
    // hold binary-heap: 10, 12, 11: spread 20%, CV 1/11 = 9.1%.
    let heap = line(&stdout, "hold", "binary-heap");
    assert!(
        heap.contains("20.0%") && heap.contains("9.1%") && heap.contains("hashed-wheel"),
        "{heap}"
    );
    assert!(
        !line(&stdout, "cron", "binary-heap").contains("hashed-wheel"),
        "{stdout}"
    );
    assert!(stdout.contains("1 of 2 orders"), "{stdout}");
    // B/A of the flip: 11/12 = 0.917 to 11/10 = 1.100.
    assert!(stdout.contains("0.917–1.100"), "{stdout}");

    let csv = std::fs::read_to_string(study.join("layouts.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert_eq!(
        header,
        "workload,timers,implementation,layouts,layout_0,layout_1,layout_2,min,max,spread,cv"
    );
    assert!(
        csv.lines()
            .any(|l| l.starts_with("hold,1000,binary-heap,3,10,12,11,10,12,0.19999")),
        "{csv}"
    );
    let orders = std::fs::read_to_string(study.join("layout-orders.csv")).unwrap();
    assert!(
        orders.contains("hold,1000,binary-heap,hashed-wheel,3,2,1,") && orders.contains(",true"),
        "{orders}"
    );
    assert!(
        orders.contains("cron,1000,binary-heap,hashed-wheel,3,0,3,") && orders.contains(",false"),
        "{orders}"
    );
    let markdown = std::fs::read_to_string(study.join("layouts.md")).unwrap();
    assert!(markdown.contains("| --- |") && markdown.contains("layout-sensitive"));
}

#[test]
fn layout_folders_are_runs_that_combine_reads() {
    let dir = tempfile::tempdir().unwrap();
    layout(dir.path(), 0, [10.0, 11.0], [8.0, 4.0]);
    layout(dir.path(), 1, [12.0, 11.0], [8.0, 4.0]);
    let output = timerbench(&["combine", "layout-0", "layout-1"], dir.path());
    assert_succeeded(&output);
    assert!(
        text(&output.stdout).contains("11.00"),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn bad_flags_are_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| timerbench(args, dir.path());
    assert_fails_with(
        &run(&["layouts", "--builds", "1", "--", "--suite", "smoke"]),
        "--builds",
    );
    assert_fails_with(&run(&["layouts", "--", "--suite", "smoke"]), "--builds");
    assert_fails_with(&run(&["layouts", "--summarize"]), "--out");
    assert_fails_with(
        &run(&["layouts", "--summarize", "--out", "."]),
        "no layout folder",
    );
    // The run's own checks, before anything is built.
    let bogus = run(&["layouts", "--builds", "2", "--", "--bogus"]);
    assert_fails_with(&bogus, "run arguments");
    assert_fails_with(&bogus, "--bogus");
    assert_fails_with(
        &run(&["layouts", "--builds", "2", "--", "--impl", "no-such-queue"]),
        "no-such-queue",
    );
    assert_fails_with(
        &run(&["layouts", "--builds", "2", "--", "--out", "x"]),
        "--out",
    );
    assert_fails_with(
        &run(&["layouts", "--builds", "2", "--", "--resume=x"]),
        "--resume",
    );
    // None of them made a folder.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// An executable shell script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    path
}

/// `timerbench layouts --builds 2 --out study -- (a small run)` in `dir` with `env`.
fn study_with(dir: &Path, env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_timerbench"));
    command.current_dir(dir).args([
        "layouts",
        "--builds",
        "2",
        "--out",
        "study",
        "--",
        "--suite",
        "smoke",
        "--impl",
        "binary-heap",
    ]);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn a_missing_cargo_or_lld_is_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-cargo");
    assert_fails_with(
        &study_with(dir.path(), &[("CARGO", missing.as_path())]),
        "cargo",
    );
    let rustc = script(
        dir.path(),
        "rustc",
        "case \"$1\" in --print) echo /no/such/sysroot ;; *) echo 'host: x86_64-unknown-linux-gnu' ;; esac",
    );
    let output = study_with(dir.path(), &[("RUSTC", rustc.as_path())]);
    assert_fails_with(&output, "no lld at /no/such/sysroot");
    assert!(!dir.path().join("study").exists());
}

#[test]
fn a_study_folder_with_other_settings_is_refused_before_any_build() {
    let dir = tempfile::tempdir().unwrap();
    // Should a check let a build through, this cargo fails it at once.
    let cargo = script(
        dir.path(),
        "cargo",
        "[ \"$1\" = --version ] && echo 'cargo 1.0.0' && exit 0; echo 'no build in tests' >&2; exit 1",
    );
    let study = dir.path().join("study");
    std::fs::create_dir_all(&study).unwrap();
    let settings = json!({
        "builds": 2, "first_seed": 7, "shuffle": "-Wl,--shuffle-sections=*=SEED",
        "run_arguments": ["--suite", "smoke"], "source": "unknown",
    });
    std::fs::write(study.join("study.json"), settings.to_string()).unwrap();
    let output = study_with(dir.path(), &[("CARGO", cargo.as_path())]);
    assert_fails_with(&output, "other settings");
    assert!(!text(&output.stderr).contains("no build in tests"));
    // A folder of layouts without settings is no study.
    let other = dir.path().join("other");
    std::fs::create_dir_all(other.join("layout-0")).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_timerbench"));
    let output = command
        .current_dir(dir.path())
        .env("CARGO", &cargo)
        .args([
            "layouts", "--builds", "2", "--out", "other", "--", "--suite", "smoke",
        ])
        .output()
        .unwrap();
    assert_fails_with(&output, "no study.json");
}
