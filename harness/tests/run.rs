//! `timerbench run` as a user meets it: a complete results folder, nothing lost when a
//! run is interrupted and resumed, and one crashing cell not taking the others with it.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{SMALL_RUN, assert_succeeded, text, timerbench_in as timerbench};

/// `(workload, timers, implementation, status)` of each complete line of `results.jsonl`
/// (a line being written has no newline yet).
fn cells(folder: &Path) -> Vec<(String, u64, String, String)> {
    let text = std::fs::read_to_string(folder.join("results.jsonl")).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n') && !l.trim().is_empty())
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON record");
            (
                v["workload"].as_str().unwrap().to_string(),
                v["timers"].as_u64().unwrap(),
                v["implementation"].as_str().unwrap().to_string(),
                v["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_run_writes_a_complete_results_folder() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("run");
    let mut args = SMALL_RUN.to_vec();
    args.extend(["--out", out.to_str().unwrap()]);
    let output = timerbench(&args, root.path());
    assert_succeeded(&output);
    // The workload cache is the results root's, not a `.cache` beside `--out`'s folder.
    assert!(root.path().join("results").join(".cache").is_dir());
    assert!(!root.path().join(".cache").exists());
    let recorded = cells(&out);
    assert_eq!(recorded.len(), 8, "{recorded:?}");
    assert!(recorded.iter().all(|c| c.3 == "ok"), "{recorded:?}");
    let environment: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("environment.json")).unwrap())
            .unwrap();
    for field in [
        "cpu",
        "cores",
        "memory_bytes",
        "os",
        "rustc",
        "git_revision",
        "command",
        "started",
    ] {
        assert!(
            !environment[field].is_null(),
            "environment.json lacks {field}"
        );
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        9,
        "a header and a row per cell:\n{csv}"
    );
    // Every ok record carries its figures.
    for line in std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(
            v["throughput"]["ns_per_op"]["median"].as_f64().unwrap() > 0.0,
            "{line}"
        );
        assert!(
            v["memory"]["peak_rss_bytes"].as_u64().unwrap() > 0,
            "{line}"
        );
        assert!(!v["latency"].as_object().unwrap().is_empty(), "{line}");
        assert_eq!(v["digest"], v["reference_digest"], "{line}");
        // The other processes' CPU over the cell's group, read from /proc (whether they
        // competed depends on the machine, so only its shape is asserted).
        let load = &v["others_load"];
        assert!(load["cpus"].as_u64().unwrap() >= 1, "{line}");
        assert!(load["seconds"].as_f64().unwrap() > 0.0, "{line}");
        assert!(load["others_cores"].as_f64().unwrap() >= 0.0, "{line}");
        assert!(load["competed"].is_boolean(), "{line}");
        // Samples from three processes (the default), interleaved: one full, two samples
        // processes, each pinned and with its load read; up to six (the default most)
        // when their medians disagreed by more than 2%.
        let throughput = &v["throughput"];
        let processes = throughput["processes"].as_u64().unwrap() as usize;
        assert!((3..=6).contains(&processes), "{line}");
        let medians: Vec<f64> = throughput["process_medians"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_f64().unwrap())
            .collect();
        assert_eq!(medians.len(), processes);
        assert_eq!(
            throughput["ns_per_op"]["samples"].as_array().unwrap().len(),
            processes
        );
        if processes > 3 {
            // A fourth process only when the first three's medians disagreed.
            let mut first = medians[..3].to_vec();
            first.sort_by(f64::total_cmp);
            let median = first[1];
            let mut deviations: Vec<f64> = first.iter().map(|m| (m - median).abs()).collect();
            deviations.sort_by(f64::total_cmp);
            assert!(deviations[1] / median > 0.02, "{line}");
        }
        let roles: Vec<&str> = v["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles.len(), processes, "{line}");
        assert_eq!(roles[0], "full", "{line}");
        assert!(roles[1..].iter().all(|r| *r == "samples"), "{line}");
        assert!(
            v["conditions"][0]["calibration_ns"].as_f64().unwrap() > 0.0,
            "{line}"
        );
        // The parent reads the memory probe around every process, the full one and each
        // samples one alike.
        for conditions in v["conditions"].as_array().unwrap() {
            for field in ["memory_probe_before_ns", "memory_probe_after_ns"] {
                assert!(conditions[field].as_f64().unwrap() > 0.0, "{field}: {line}");
            }
        }
        assert!(
            v["conditions"][0]["load_before"].as_f64().is_some(),
            "{line}"
        );
        assert!(v["conditions"][0]["cpu"].as_u64().is_some(), "{line}");
    }
    assert_eq!(environment["processes"], 3);
    assert_eq!(environment["max_processes"], 6);
    assert_eq!(environment["min_sample_ms"], 10);
    // Spreading the large groups is a study switch, off unless asked for.
    assert_eq!(environment["spread_from"], 0);
    // The workloads were cached in results/.cache and are reused by the next run.
    let again = root.path().join("again");
    let mut args = SMALL_RUN.to_vec();
    args.extend(["--out", again.to_str().unwrap()]);
    let output = timerbench(&args, root.path());
    assert!(
        text(&output.stdout).contains("(0 generated, 4 from the cache"),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn a_cell_that_panics_is_recorded_and_the_others_go_on() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("run");
    let mut args = SMALL_RUN.to_vec();
    args.extend([
        "--out",
        out.to_str().unwrap(),
        "--inject-panic",
        "burst/500/hierarchical-wheel",
    ]);
    let output = timerbench(&args, root.path());
    assert!(
        !output.status.success(),
        "a failed cell makes the run exit non-zero"
    );
    // The last word counts ok, failed and skipped apart; each progress line says the time
    // so far and an estimate of what is left.
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains(": 7 ok, 1 failed, 0 unsupported, 0 skipped\n"),
        "{stdout}"
    );
    // Nothing of this run is in the suite's costs table: until a group is finished the
    // estimate is the first guess (the mean so far), then learned from finished groups.
    let progress: Vec<&str> = stdout.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(progress.len(), 8, "{stdout}");
    assert!(
        progress[0].starts_with("[1/8, ") && progress[0].contains(" left (first guess)] "),
        "{stdout}"
    );
    assert!(
        progress[7].starts_with("[8/8, ")
            && progress[7].contains(" elapsed, ~")
            && !progress[7].contains("first guess"),
        "{stdout}"
    );
    let recorded = cells(&out);
    assert_eq!(recorded.len(), 8, "{recorded:?}");
    let failed: Vec<_> = recorded.iter().filter(|c| c.3 != "ok").collect();
    assert_eq!(
        failed,
        [&(
            "burst".to_string(),
            500,
            "hierarchical-wheel".to_string(),
            "failed".to_string()
        )]
    );
    let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let line = results.lines().find(|l| l.contains("\"failed\"")).unwrap();
    assert!(
        line.contains("panicked"),
        "the reason names the panic: {line}"
    );
}

#[test]
fn an_interrupted_run_resumes_without_losing_or_repeating_a_cell() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("run");
    let mut args = SMALL_RUN.to_vec();
    args.extend(["--out", out.to_str().unwrap()]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args(&args)
        .current_dir(root.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill the run once it has finished some cells but not all.
    let deadline = Instant::now() + Duration::from_secs(120);
    while cells(&out).len() < 3 {
        assert!(Instant::now() < deadline, "the run made no progress");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = cells(&out);
    assert!(
        before.len() < 8,
        "killed too late to test anything: {before:?}"
    );

    let mut args = vec!["run", "--resume", out.to_str().unwrap()];
    args.extend(&SMALL_RUN[1..]);
    let output = timerbench(&args, root.path());
    assert_succeeded(&output);
    let after = cells(&out);
    assert_eq!(after.len(), 8, "{after:?}");
    let unique: BTreeSet<_> = after.iter().map(|c| (&c.0, c.1, &c.2)).collect();
    assert_eq!(unique.len(), 8, "a cell was repeated: {after:?}");
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "finished cells are kept as they were"
    );
}

/// The case: a smoke run killed early, then `--resume DIR` alone ran the whole
/// default suite into it. It continues the run in DIR with DIR's own suite and filters.
#[test]
fn resume_takes_the_runs_own_settings_and_refuses_contradicting_flags() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("run");
    let mut args = SMALL_RUN.to_vec();
    args.extend(["--out", out.to_str().unwrap(), "--processes", "1"]);
    assert_succeeded(&timerbench(&args, root.path()));
    // As if it had been killed after its first group: keep two of its eight records.
    let results = out.join("results.jsonl");
    let written = std::fs::read_to_string(&results).unwrap();
    let kept: String = written.split_inclusive('\n').take(2).collect();
    std::fs::write(&results, kept).unwrap();

    let folder = out.to_str().unwrap();
    let output = timerbench(
        &["run", "--resume", folder, "--suite", "default"],
        root.path(),
    );
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("--suite contradicts the run in") && stderr.contains("--suite smoke"),
        "{stderr}"
    );
    assert_eq!(cells(&out).len(), 2, "nothing ran");

    let output = timerbench(
        &["run", "--resume", folder, "--suite", "smoke"],
        root.path(),
    );
    assert_succeeded(&output);
    let after = cells(&out);
    assert_eq!(after.len(), 8, "the run's own eight cells: {after:?}");
    assert!(
        text(&output.stdout).contains("8 cells (2 already done)"),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn bad_flags_are_refused_before_anything_runs() {
    let root = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["run", "--suite", "huge"], "--suite"),
        (vec!["run", "--impl", "red-black"], "--impl"),
        (
            vec!["run", "--workload", "holdd"],
            "--workload holdd: no such workload",
        ),
        (vec!["run", "--repeat", "0"], "--repeat"),
        (
            vec!["run", "--impl", "floor"],
            "the floor is not an implementation",
        ),
        (
            vec!["run", "--resume", "/no/such/run"],
            "no results.jsonl there to resume",
        ),
    ] {
        let output = timerbench(&args, root.path());
        let stderr = text(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert_eq!(
        std::fs::read_dir(root.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn the_floor_runs_beside_the_implementations_unverified_and_marked() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("run");
    let output = timerbench(
        &[
            "run",
            "--suite",
            "smoke",
            "--workload",
            "hold-exponential",
            "--timers",
            "1000",
            "--impl",
            "binary-heap",
            "--floor",
            "--processes",
            "1",
            "--repeat",
            "1",
            "--min-sample-ms",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        root.path(),
    );
    assert_succeeded(&output);
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let floor: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|v: &serde_json::Value| v["implementation"] == "floor")
        .collect();
    assert_eq!(floor.len(), 1, "{text}");
    assert_eq!(floor[0]["status"], "ok");
    assert_eq!(floor[0]["precision"], "floor: not a queue, never verified");
    assert!(
        floor[0]["throughput"]["ns_per_op"]["median"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // On a workload that fires, the floor fires from its list what the model fires: its
    // replay's digest of the firings is the verified heap's.
    let heap: serde_json::Value = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .find(|v: &serde_json::Value| v["implementation"] == "binary-heap")
        .unwrap();
    assert_eq!(floor[0]["digest"], heap["digest"], "{text}");
    let faults = &floor[0]["throughput"]["page_faults"];
    assert!(faults["replays"].as_u64().unwrap() >= 1, "{text}");
}

#[test]
fn the_standard_suite_adds_the_floor_unless_implementations_are_named() {
    let root = tempfile::tempdir().unwrap();
    let floors = |extra: &[&str]| {
        let out = root.path().join(format!("run-{}", extra.len()));
        let mut args = vec![
            "run",
            "--suite",
            "smoke",
            "--workload",
            "sparse-next",
            "--timers",
            "100",
            "--processes",
            "1",
            "--repeat",
            "1",
            "--min-sample-ms",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        assert_succeeded(&timerbench(&args, root.path()));
        let all = cells(&out);
        let floor = all.iter().filter(|c| c.2 == "floor").count();
        (floor, all.len())
    };
    let (floor, all) = floors(&[]);
    assert_eq!(floor, 1, "the suite's own run holds the floor");
    assert!(
        all > 10,
        "and every registered implementation beside it: {all} cells"
    );
    assert_eq!(
        floors(&["--impl", "binary-heap"]),
        (0, 1),
        "--impl chooses what runs"
    );
}

/// The start of each process of every cell in `folder`, by role: `(full, samples)`.
fn process_starts(folder: &Path) -> (Vec<u64>, Vec<u64>) {
    let (mut full, mut samples) = (Vec::new(), Vec::new());
    for line in std::fs::read_to_string(folder.join("results.jsonl"))
        .unwrap()
        .lines()
    {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for conditions in v["conditions"].as_array().unwrap() {
            let started = conditions["started_unix_ms"]
                .as_u64()
                .expect("a start time");
            match conditions["role"].as_str().unwrap() {
                "full" => full.push(started),
                _ => samples.push(started),
            }
        }
    }
    (full, samples)
}

#[test]
fn groups_from_the_spread_size_take_their_rounds_together() {
    let root = tempfile::tempdir().unwrap();
    let run = |spread_from: &str, name: &str| {
        let out = root.path().join(name);
        let mut args = SMALL_RUN.to_vec();
        args.extend(["--processes", "2", "--max-processes", "2"]);
        args.extend(["--min-sample-ms", "1", "--spread-from", spread_from]);
        args.extend(["--out", out.to_str().unwrap()]);
        assert_succeeded(&timerbench(&args, root.path()));
        out
    };
    // Every group (500 and 1000 timers) in one block: all four groups' full processes
    // start before any group's second process.
    let spread = run("500", "spread");
    let (full, samples) = process_starts(&spread);
    assert_eq!((full.len(), samples.len()), (8, 8));
    assert!(
        full.iter().max() <= samples.iter().min(),
        "{full:?} {samples:?}"
    );
    let environment: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(spread.join("environment.json")).unwrap())
            .unwrap();
    assert_eq!(environment["spread_from"], 500);
    // Each group on its own: the first group's second processes come before the last
    // group's full ones.
    let alone = run("0", "alone");
    let (full, samples) = process_starts(&alone);
    assert!(
        samples.iter().min() < full.iter().max(),
        "{full:?} {samples:?}"
    );
    assert_eq!(cells(&alone).len(), cells(&spread).len());
}
