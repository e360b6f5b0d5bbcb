//! `timerbench combine` and `timerbench compare --a RUN... --b RUN...` on results folders
//! written here: the mean over runs and its interval, one run without an interval, the
//! verdict from the runs' interval of B/A, a malformed folder, bad flags.

mod support;

use std::path::Path;
use support::{
    assert_fails_with, assert_succeeded, cell_record as record, text, timerbench_in as timerbench,
};

/// Writes a run folder `name` under `dir` with `hold` 1000 binary-heap at `heap` ns/op
/// and `cron` 1000 btree at `tree` ns/op.
fn run_folder(dir: &Path, name: &str, heap: f64, tree: f64) {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let lines = [
        record("hold", 1000, "binary-heap", heap).to_string(),
        record("cron", 1000, "btree", tree).to_string(),
    ];
    std::fs::write(folder.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
}

/// The output line of the cell `workload`.
fn line<'s>(stdout: &'s str, workload: &str) -> &'s str {
    stdout
        .lines()
        .find(|l| l.trim_start_matches("| ").starts_with(workload))
        .unwrap_or_else(|| panic!("no {workload} in:\n{stdout}"))
}

#[test]
fn the_mean_over_runs_with_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    run_folder(dir.path(), "r1", 10.0, 20.0);
    run_folder(dir.path(), "r2", 11.0, 20.0);
    run_folder(dir.path(), "r3", 12.0, 20.0);
    let output = timerbench(&["combine", "r1", "r2", "r3"], dir.path());
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    // Mean 11, s = 1, t(0.975, 2) = 4.303: ±2.48.
    let hold = line(&stdout, "hold");
    assert!(
        hold.contains("3/3") && hold.contains("11.00") && hold.contains("±2.48"),
        "{hold}"
    );
    assert!(line(&stdout, "cron").contains("±0.00"), "{stdout}");
    let markdown = timerbench(&["combine", "r1", "r2", "--format", "markdown"], dir.path());
    assert_succeeded(&markdown);
    assert!(
        text(&markdown.stdout).contains("| --- |"),
        "{}",
        text(&markdown.stdout)
    );
}

#[test]
fn one_run_has_no_interval() {
    let dir = tempfile::tempdir().unwrap();
    run_folder(dir.path(), "r1", 10.0, 20.0);
    let output = timerbench(&["combine", "r1"], dir.path());
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(line(&stdout, "hold").contains("none: one run"), "{stdout}");
    assert!(stdout.contains("One run: no interval"), "{stdout}");
}

#[test]
fn compare_over_runs_says_differs_only_beyond_the_runs_interval() {
    let dir = tempfile::tempdir().unwrap();
    for (name, heap, tree) in [("a1", 10.0, 20.0), ("a2", 10.2, 20.4), ("a3", 9.8, 19.6)] {
        run_folder(dir.path(), name, heap, tree);
    }
    // hold 30% slower, far beyond the runs' 2% spread; cron 1% slower, within it.
    for (name, heap, tree) in [("b1", 13.0, 20.2), ("b2", 13.2, 20.6), ("b3", 12.8, 19.8)] {
        run_folder(dir.path(), name, heap, tree);
    }
    let output = timerbench(
        &["compare", "--a", "a1", "a2", "a3", "--b", "b1", "b2", "b3"],
        dir.path(),
    );
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(
        line(&stdout, "hold").contains("differs: slower"),
        "{stdout}"
    );
    assert!(line(&stdout, "cron").contains("same"), "{stdout}");
    assert!(stdout.contains("1 of 2 cells differ"), "{stdout}");
    assert!(stdout.contains("1 of 2 cells within ±5%"), "{stdout}");
    // The two-folder form is unchanged.
    assert_succeeded(&timerbench(&["compare", "a1", "b1"], dir.path()));
}

#[test]
fn a_malformed_run_is_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    run_folder(dir.path(), "r1", 10.0, 20.0);
    std::fs::create_dir_all(dir.path().join("bad")).unwrap();
    std::fs::write(dir.path().join("bad/results.jsonl"), "{\"schema\": 2,\n").unwrap();
    let output = timerbench(&["combine", "r1", "bad"], dir.path());
    assert_fails_with(&output, "bad");
    assert!(text(&output.stdout).is_empty());
    assert_fails_with(
        &timerbench(&["combine", "r1", "missing"], dir.path()),
        "missing",
    );
    assert_fails_with(&timerbench(&["combine"], dir.path()), "RUN");
    assert_fails_with(&timerbench(&["compare", "--a", "r1"], dir.path()), "--b");
}
