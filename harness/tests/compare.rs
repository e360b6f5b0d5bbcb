//! `timerbench compare` and `timerbench rank` as a user meets them, on results folders
//! written here record by record: the ratios, the rows beyond noise and within it, the
//! cells in one folder only or without figures, Markdown, and clear failures.

mod support;

use serde_json::{Value, json};
use std::path::Path;
use support::{assert_fails_with, assert_succeeded, text, timerbench_in as timerbench};

/// A cell record as `timerbench run` writes it (only the fields the format requires):
/// `samples` are its ns/op samples; `None` makes it a failed cell without figures.
fn record(workload: &str, timers: u64, implementation: &str, samples: Option<&[f64]>) -> Value {
    let family = workload.split('-').next().unwrap();
    let throughput = samples.map(|samples| {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let mut deviations: Vec<f64> = sorted.iter().map(|s| (s - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        json!({
            "repeats": samples.len(),
            "ns_per_op": {"median": median, "mad": deviations[deviations.len() / 2], "samples": samples},
            "ns_per_fired": null,
        })
    });
    json!({
        "schema": 2,
        "workload": workload,
        "timers": timers,
        "implementation": implementation,
        "family": family,
        "params": {},
        "ops": null,
        "seed": 1,
        "generator": format!("timerbench gen {family} --timers {timers} --seed 1"),
        "peer": false,
        "status": if samples.is_some() { "ok" } else { "failed" },
        "reason": if samples.is_some() { Value::Null } else { json!("killed by signal 9") },
        "operations": 1000,
        "fired": 500,
        "reference_digest": "00",
        "digest": null,
        "throughput": throughput,
        "latency": {},
        "clock": null,
        "advance_series": null,
        "memory": null,
        "elapsed_seconds": 0.5,
    })
}

/// Writes `records` as the `results.jsonl` of folder `name` under `dir`.
fn folder(dir: &Path, name: &str, records: &[Value]) {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(folder.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
}

/// Two runs sharing four cells with figures: one 2% apart within noise, one 50% slower and
/// one twice as fast beyond noise, one 20% apart but within the noise of its wide samples;
/// a fifth shared cell failed in B, and each run has a cell of its own.
fn two_runs(dir: &Path) {
    let steady_a: &[f64] = &[10.0, 10.1, 9.9, 10.05, 9.95];
    let steady_b: &[f64] = &[10.2, 10.3, 10.1, 10.25, 10.15];
    let slow_a: &[f64] = &[20.0, 20.2, 19.8, 20.1, 19.9];
    let slow_b: &[f64] = &[30.0, 30.3, 29.7, 30.15, 29.85];
    let fast_a: &[f64] = &[40.0, 40.4, 39.6, 40.2, 39.8];
    let fast_b: &[f64] = &[20.0, 20.2, 19.8, 20.1, 19.9];
    // Median 10 and 12, MAD 1.5 each: 2 apart is within 3 x sqrt(2) x 1.4826 x 1.5.
    let noisy_a: &[f64] = &[10.0, 13.0, 7.0, 11.5, 8.5];
    let noisy_b: &[f64] = &[12.0, 15.0, 9.0, 13.5, 10.5];
    folder(
        dir,
        "a",
        &[
            record("hold-exponential", 1000, "binary-heap", Some(steady_a)),
            record("hold-exponential", 1000, "hierarchical-wheel", Some(slow_a)),
            record("keepalive", 1000, "binary-heap", Some(fast_a)),
            record("keepalive", 1000, "hierarchical-wheel", Some(noisy_a)),
            record("keepalive", 1000, "btree", Some(steady_a)),
            record("burst", 1000, "binary-heap", Some(steady_a)),
        ],
    );
    folder(
        dir,
        "b",
        &[
            record("hold-exponential", 1000, "binary-heap", Some(steady_b)),
            record("hold-exponential", 1000, "hierarchical-wheel", Some(slow_b)),
            record("keepalive", 1000, "binary-heap", Some(fast_b)),
            record("keepalive", 1000, "hierarchical-wheel", Some(noisy_b)),
            record("keepalive", 1000, "btree", None),
            record("cron", 5000, "quad-heap", Some(steady_b)),
        ],
    );
}

/// The table row of `workload`, `implementation` in `stdout`.
fn row<'s>(stdout: &'s str, workload: &str, implementation: &str) -> &'s str {
    stdout
        .lines()
        .find(|line| {
            let words: Vec<&str> = line
                .split(|c: char| c.is_whitespace() || c == '|')
                .filter(|w| !w.is_empty())
                .collect();
            words.first() == Some(&workload) && words.get(2) == Some(&implementation)
        })
        .unwrap_or_else(|| panic!("no row {workload} {implementation} in:\n{stdout}"))
}

#[test]
fn two_runs_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    two_runs(dir.path());
    let output = timerbench(&["compare", "a", "b"], dir.path());
    assert_succeeded(&output);
    let stdout = text(&output.stdout);

    let steady = row(&stdout, "hold-exponential", "binary-heap");
    assert!(
        steady.contains("10.00") && steady.contains("10.20"),
        "{steady}"
    );
    assert!(steady.contains("1.02"), "{steady}");
    let slow = row(&stdout, "hold-exponential", "hierarchical-wheel");
    assert!(slow.contains("1.50") && slow.ends_with("slower"), "{slow}");
    let fast = row(&stdout, "keepalive", "binary-heap");
    assert!(fast.contains("0.50") && fast.ends_with("faster"), "{fast}");
    // 20% apart, but within the noise of its samples: not marked.
    let noisy = row(&stdout, "keepalive", "hierarchical-wheel");
    assert!(noisy.ends_with("1.20"), "{noisy}");
    assert!(steady.ends_with("1.02"), "{steady}");
    assert!(
        stdout.contains("3 × √(σA² + σB²), σ = 1.4826 × the MAD"),
        "{stdout}"
    );
    // A verdict between two separate runs says that runs drift beyond that noise, and
    // what gives a verdict between runs.
    assert!(
        stdout.contains("between two separate runs") && stdout.contains("timerbench ab"),
        "{stdout}"
    );

    // Nothing dropped silently: the failed cell and each run's own cell are named.
    assert!(stdout.contains("Only in A: 1 cell\n  burst at 1,000 timers: binary-heap"));
    assert!(stdout.contains("Only in B: 1 cell\n  cron at 5,000 timers: quad-heap"));
    assert!(
        stdout.contains("Without figures (status not ok in A or B): 1 cell\n  keepalive at 1,000 timers, btree: A ok, B failed"),
        "{stdout}"
    );
    assert!(!stdout.contains('\x1b'), "no colour off a terminal");
    assert_eq!(stdout.lines().last(), Some("1 of 4 cells within ±5%"));
    // The same count per size, on the line before (every cell here is at 1,000 timers).
    assert!(
        stdout.contains("\nBy size: 1,000 timers 1 of 4\n1 of 4 cells within ±5%"),
        "{stdout}"
    );

    // Colour on request: red slower, green faster, nothing else coloured.
    let output = timerbench(&["compare", "a", "b", "--color", "always"], dir.path());
    let coloured = text(&output.stdout);
    let plain = |line: &str| {
        line.replace("\x1b[31m", "")
            .replace("\x1b[32m", "")
            .replace("\x1b[0m", "")
    };
    let lines: Vec<&str> = coloured.lines().collect();
    let colour_of = |workload: &str, implementation: &str| {
        let wanted = row(&stdout, workload, implementation);
        let line = lines
            .iter()
            .find(|l| plain(l) == wanted)
            .expect("the same row");
        line.strip_prefix("\x1b[")
            .and_then(|rest| rest.split_once('m'))
            .map(|(code, rest)| (code.to_string(), rest.ends_with("\x1b[0m")))
    };
    assert_eq!(
        colour_of("hold-exponential", "hierarchical-wheel"),
        Some(("31".into(), true))
    );
    assert_eq!(
        colour_of("keepalive", "binary-heap"),
        Some(("32".into(), true))
    );
    assert_eq!(colour_of("keepalive", "hierarchical-wheel"), None);
    assert_eq!(colour_of("hold-exponential", "binary-heap"), None);

    // The other way round, the ratios invert.
    let output = timerbench(&["compare", "b", "a"], dir.path());
    let reversed = text(&output.stdout);
    let slow = row(&reversed, "hold-exponential", "hierarchical-wheel");
    assert!(slow.contains("0.67") && slow.ends_with("faster"), "{slow}");

    // A folder with itself: every cell the same.
    let output = timerbench(&["compare", "a", "a"], dir.path());
    assert_succeeded(&output);
    let same = text(&output.stdout);
    assert_eq!(same.lines().last(), Some("6 of 6 cells within ±5%"));
    assert!(
        !same.contains("slower") && !same.contains("faster"),
        "{same}"
    );
}

#[test]
fn filters_choose_workloads_families_and_implementations() {
    let dir = tempfile::tempdir().unwrap();
    two_runs(dir.path());
    let output = timerbench(
        &[
            "compare",
            "a",
            "b",
            "--workload",
            "hold",
            "--impl",
            "binary-heap",
        ],
        dir.path(),
    );
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    row(&stdout, "hold-exponential", "binary-heap");
    assert!(
        !stdout.contains("keepalive") && !stdout.contains("Only in"),
        "{stdout}"
    );
    assert_eq!(stdout.lines().last(), Some("1 of 1 cells within ±5%"));

    let output = timerbench(
        &["compare", "a", "b", "--impl", "no-such-queue"],
        dir.path(),
    );
    assert_fails_with(&output, "--impl no-such-queue: no cell of a or b");
}

#[test]
fn markdown_for_an_issue() {
    let dir = tempfile::tempdir().unwrap();
    two_runs(dir.path());
    let output = timerbench(&["compare", "a", "b", "--format", "markdown"], dir.path());
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(stdout.contains(
        "| workload | timers | implementation | A ns/op | B ns/op | B/A | beyond noise |\n\
         | --- | ---: | --- | ---: | ---: | ---: | --- |\n"
    ));
    assert_eq!(
        row(&stdout, "hold-exponential", "hierarchical-wheel"),
        "| hold-exponential | 1,000 | hierarchical-wheel | 20.00 | 30.00 | **1.50** | **slower** |"
    );
    assert_eq!(
        row(&stdout, "keepalive", "hierarchical-wheel"),
        "| keepalive | 1,000 | hierarchical-wheel | 10.00 | 12.00 | 1.20 |  |"
    );
    assert!(stdout.contains("**Only in A**: 1 cell\n- burst at 1,000 timers: binary-heap"));
    assert!(!stdout.contains('\x1b'));
    assert_eq!(stdout.lines().last(), Some("1 of 4 cells within ±5%"));
}

/// `record` with one process whose memory probe read `before` and `after`.
fn probed(mut record: Value, before: f64, after: f64) -> Value {
    record["schema"] = json!(3);
    record["conditions"] = json!([{
        "role": "full", "cpu": 1, "load_before": 0.2, "load_after": 0.3, "governor": null,
        "cpus": 2, "calibration_ns": 320000.0,
        "memory_probe_before_ns": before, "memory_probe_after_ns": after,
    }]);
    record
}

#[test]
fn the_memory_probe_of_each_cell_sits_beside_its_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let samples = [10.0, 10.1, 9.9];
    let slower = [20.0, 20.2, 19.8];
    folder(
        dir.path(),
        "a",
        &[
            probed(
                record("hold-exponential", 1_000_000, "binary-heap", Some(&samples)),
                50.0,
                60.0,
            ),
            record("hold-exponential", 1_000, "binary-heap", Some(&samples)),
        ],
    );
    folder(
        dir.path(),
        "b",
        &[
            probed(
                record("hold-exponential", 1_000_000, "binary-heap", Some(&slower)),
                150.0,
                170.0,
            ),
            record("hold-exponential", 1_000, "binary-heap", Some(&samples)),
        ],
    );
    let output = timerbench(&["compare", "a", "b"], dir.path());
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    // The probe's median per cell: 60 in A, 170 in B (the upper of two readings).
    let large = row(&stdout, "hold-exponential", "binary-heap");
    assert!(
        large.contains("2.00") && large.contains("2.83") && large.ends_with("slower"),
        "{large}"
    );
    assert!(
        stdout.contains("memory B/A: the cell's memory probe in B over A"),
        "{stdout}"
    );
    assert!(stdout.contains("Memory speed (a 32 MiB pointer chase before and after every process, median): A 60 ns, B 170 ns per load, B/A 2.83"), "{stdout}");
    assert!(
        stdout.contains(
            "By size: 1,000 timers 1 of 1, 1,000,000 timers 0 of 1\n1 of 2 cells within ±5%"
        ),
        "{stdout}"
    );
}

#[test]
fn failures_are_one_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    two_runs(dir.path());
    folder(
        dir.path(),
        "other",
        &[record("cron", 1000, "btree", Some(&[1.0, 1.1, 0.9]))],
    );
    let output = timerbench(&["compare", "a", "other"], dir.path());
    assert_fails_with(&output, "a and other share no cell");
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());

    std::fs::create_dir(dir.path().join("bad")).unwrap();
    std::fs::write(dir.path().join("bad/results.jsonl"), "\n{not a record}\n").unwrap();
    let output = timerbench(&["compare", "a", "bad"], dir.path());
    assert_fails_with(&output, "bad/results.jsonl:2: not a cell record");

    let output = timerbench(&["compare", "nowhere", "a"], dir.path());
    assert_fails_with(&output, "results folder nowhere does not exist");

    let output = timerbench(&["rank", "bad"], dir.path());
    assert_fails_with(&output, "bad/results.jsonl:2: not a cell record");
    let output = timerbench(&["rank"], dir.path());
    assert_fails_with(&output, "no results folder given");
}

/// Two families: in hold, binary-heap averages sqrt(1 x 1.2) = 1.10 and hierarchical-wheel
/// sqrt(2 x 1) = 1.41; in keepalive hierarchical-wheel is best and binary-heap 3 times
/// slower; overall hierarchical-wheel (2 x 1 x 1)^(1/3) = 1.26 before binary-heap
/// (1 x 1.2 x 3)^(1/3) = 1.53.
fn ranked_run(dir: &Path, name: &str) {
    folder(
        dir,
        name,
        &[
            with_slowest(
                record("keepalive", 1000, "binary-heap", Some(&[30.0, 30.1, 29.9])),
                16_000,
            ),
            with_slowest(
                record("keepalive", 1000, "hierarchical-wheel", Some(&[10.0])),
                9_800_000,
            ),
            record("hold-uniform", 1000, "binary-heap", Some(&[12.0])),
            record("hold-uniform", 1000, "hierarchical-wheel", Some(&[10.0])),
            record("hold-exponential", 1000, "binary-heap", Some(&[10.0])),
            record(
                "hold-exponential",
                1000,
                "hierarchical-wheel",
                Some(&[20.0]),
            ),
        ],
    );
}

const HISTOGRAM: &str = "HISTEwAAAJEAAAAAAAAAAwAAAAAAAAABAAADRjC4oAA/8AAAAAAAACMEBCAmJiACBgYABAQQBgg2GjhcDgYIGhwWJhIaGgIEFhoQDBwWChQIDhYSDAwmCAgaBAQGDAgCBgYCDgQCBBIEBgQECgwCBgYIBAQQDAAIBAYIBAIIBgMCAgICBAICBAYAAgIJAggABAcCAAIABAgDAgICAAQABAMCCwIEBwIHAgcCLwJDAj0CXwLfAwKdEgI=";

/// `record` with a latency for `start` (max 1 µs) and `advance` (max `advance_max_ns`),
/// so that its slowest call is the advance.
fn with_slowest(mut record: Value, advance_max_ns: u64) -> Value {
    let latency = |max: u64| {
        json!({
            "count": 1000,
            "mean_ns": 50.0,
            "percentiles": {"p50": 40, "p90": 60, "p99": 90, "p99.9": 200, "p99.99": 500, "max": max},
            // A real histogram from a run: the ranking reads the percentiles, the
            // report's reader decodes this too.
            "histogram_v2": HISTOGRAM,
        })
    };
    record["latency"] = json!({"start": latency(1_000), "advance": latency(advance_max_ns)});
    record
}

/// The words of the rows after the line starting with `title`, up to a blank line.
fn ranking<'s>(stdout: &'s str, title: &str) -> Vec<Vec<&'s str>> {
    stdout
        .lines()
        .skip_while(|line| !line.starts_with(title))
        .skip(2)
        .take_while(|line| !line.trim().is_empty())
        .map(|line| line.split_whitespace().collect())
        .collect()
}

#[test]
fn rank_prints_the_summary_rankings() {
    let dir = tempfile::tempdir().unwrap();
    ranked_run(&dir.path().join("results"), "a-older");
    ranked_run(&dir.path().join("results"), "b-newer");
    // No folder named: the newest under results/, as `timerbench report` picks it.
    let output = timerbench(&["rank"], dir.path());
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(
        stdout.starts_with("Ranking of results/b-newer (3 workloads)"),
        "{stdout}"
    );

    let overall = ranking(&stdout, "All workloads: 3 cells");
    assert_eq!(
        overall[0][..3],
        ["1", "hierarchical-wheel", "1.26×"],
        "{stdout}"
    );
    assert_eq!(overall[1][..3], ["2", "binary-heap", "1.53×"], "{stdout}");
    assert_eq!(
        overall[1][3..],
        [
            // The cells first: a reader compares coverage before the ratios.
            "3",
            "of",
            "3",
            "3.00×",
            "keepalive",
            "at",
            "1,000",
            "advance",
            "16.0",
            "us",
            "keepalive",
            "at",
            "1,000",
        ]
    );
    // The slowest call is the tail, not the ratio: hierarchical-wheel, fastest overall,
    // has the slowest advance.
    assert_eq!(overall[0][10..13], ["advance", "9.80", "ms"], "{stdout}");
    assert_eq!(overall.len(), 2);
    // The families in suite order (hold before keepalive), each ranked on its own.
    let hold = ranking(&stdout, "hold (hold-exponential, hold-uniform): 2 cells");
    assert_eq!(hold[0][..3], ["1", "binary-heap", "1.10×"], "{stdout}");
    assert_eq!(
        hold[1][..3],
        ["2", "hierarchical-wheel", "1.41×"],
        "{stdout}"
    );
    let keepalive = ranking(&stdout, "keepalive: 1 cell");
    assert_eq!(
        keepalive[0][..3],
        ["1", "hierarchical-wheel", "1.00×"],
        "{stdout}"
    );
    assert_eq!(keepalive[1][..3], ["2", "binary-heap", "3.00×"], "{stdout}");
    assert!(stdout.find("\nhold (").unwrap() < stdout.find("\nkeepalive:").unwrap());

    let output = timerbench(
        &["rank", "results/a-older", "--format", "markdown"],
        dir.path(),
    );
    assert_succeeded(&output);
    let markdown = text(&output.stdout);
    assert!(
        markdown.contains(
            "### keepalive: 1 cell\n\n\
             | # | implementation | × best | cells | worst | worst at | slowest call | slowest at |\n\
             | ---: | --- | ---: | ---: | ---: | --- | ---: | --- |\n\
             | 1 | hierarchical-wheel | 1.00× | 1 of 1 | 1.00× | keepalive at 1,000 | advance 9.80 ms | keepalive at 1,000 |\n\
             | 2 | binary-heap | 3.00× | 1 of 1 | 3.00× | keepalive at 1,000 | advance 16.0 us | keepalive at 1,000 |\n"
        ),
        "{markdown}"
    );
}
