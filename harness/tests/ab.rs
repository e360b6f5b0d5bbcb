//! `timerbench ab` end to end on a tiny workload: both sides verify, the rounds and the
//! solo phase run, the record is written; bad flags fail with one message. No timing is
//! asserted (other processes share the machine): only the shape of what it wrote.

mod support;

use serde_json::Value;
use support::{assert_fails_with, assert_succeeded, text, timerbench_in as timerbench};

/// The one CPU pair the test can pin to: `0,1` where there are two CPUs, else `0` twice is
/// refused, so the test needs two.
fn cores() -> Option<&'static str> {
    (std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2).then_some("0,1")
}

/// Runs `timerbench ab --workload hold --cores CORES --out out EXTRA...` in `dir`: the
/// set-up every duet below shares, its own flags in `extra`.
fn duet(dir: &std::path::Path, cores: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["ab", "--workload", "hold", "--cores", cores, "--out", "out"];
    args.extend_from_slice(extra);
    timerbench(&args, dir)
}

/// The one record a duet wrote to `out/ab.jsonl` in `dir`.
fn only_record(dir: &std::path::Path) -> Value {
    let written = std::fs::read_to_string(dir.join("out/ab.jsonl")).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 1, "{written}");
    serde_json::from_str(lines[0]).unwrap()
}

#[test]
fn two_variants_run_as_a_duet_and_write_their_record() {
    let Some(cores) = cores() else {
        eprintln!("skipped: one CPU");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let output = duet(
        dir.path(),
        cores,
        &[
            "--timers",
            "200",
            "--a",
            "binary-heap",
            "--b",
            "hashed-wheel:slots=64",
            "--rounds",
            "4",
            "--pairs",
            "1",
            "--min-seconds",
            "0s",
            "--resamples",
            "200",
            "--solo",
        ],
    );
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("hold 200 (binary-heap vs hashed-wheel:slots=64, 4 rounds)"),
        "{stdout}"
    );
    assert!(stdout.contains("beside its partner"), "{stdout}");
    let record = only_record(dir.path());
    assert_eq!(record["ratios"].as_array().unwrap().len(), 4);
    assert_eq!(record["a"]["duet_ns"].as_array().unwrap().len(), 4);
    assert_eq!(record["solo"]["b_ns"].as_array().unwrap().len(), 4);
    // Both verified: the same outcome, the same digest (both are exact).
    assert_eq!(record["a"]["digest"], record["b"]["digest"]);
    assert!(record["a"]["operations"].as_u64().unwrap() > 0);
    let [low, high] = [&record["interval"][0], &record["interval"][1]].map(|v| v.as_f64().unwrap());
    let median = record["median_ratio"].as_f64().unwrap();
    assert!(low <= median && median <= high, "{record}");
    assert!(["no change", "faster", "slower"].contains(&record["verdict"].as_str().unwrap()));
}

#[test]
fn pairs_of_processes_share_the_rounds_and_the_record_says_how() {
    let Some(cores) = cores() else {
        eprintln!("skipped: one CPU");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let output = duet(
        dir.path(),
        cores,
        &[
            "--timers",
            "200",
            "--a",
            "binary-heap",
            "--rounds",
            "5",
            "--pairs",
            "2",
            "--min-seconds",
            "0s",
            "--resamples",
            "200",
        ],
    );
    assert_succeeded(&output);
    // Five rounds in two pairs: three each, rounded up to an even four.
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("(binary-heap vs binary-heap, 8 rounds in 2 pairs of processes)"),
        "{stdout}"
    );
    let record = only_record(dir.path());
    assert_eq!(record["pairs"], serde_json::json!([4, 4]));
    assert_eq!(record["ratios"].as_array().unwrap().len(), 8);
    assert_eq!(record["b"]["duet_ns"].as_array().unwrap().len(), 8);
    assert_fails_with(
        &timerbench(
            &[
                "ab",
                "--workload",
                "hold",
                "--timers",
                "100",
                "--a",
                "btree",
                "--pairs",
                "0",
                "--out",
                "o",
            ],
            dir.path(),
        ),
        "--pairs",
    );
}

#[test]
fn an_injected_slowdown_is_calibrated_on_b_only() {
    let Some(cores) = cores() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let output = duet(
        dir.path(),
        cores,
        &[
            "--timers",
            "100",
            "--a",
            "btree",
            "--rounds",
            "2",
            "--pairs",
            "1",
            "--min-seconds",
            "0s",
            "--resamples",
            "100",
            "--inject-b-slowdown",
            "50",
        ],
    );
    assert_succeeded(&output);
    let record = only_record(dir.path());
    assert!(record["a"].get("injected_delay_ns").is_none(), "{record}");
    assert!(
        record["b"]["injected_delay_ns"].as_u64().unwrap() > 0,
        "{record}"
    );
}

#[test]
fn bad_flags_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let base = ["ab", "--workload", "hold", "--timers", "100", "--out", "o"];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        timerbench(&args, dir.path())
    };
    assert_fails_with(&with(&["--a", "linked-list"]), "--a linked-list");
    assert_fails_with(&with(&["--a", "btree", "--b", "nope"]), "--b nope");
    assert_fails_with(&with(&["--a", "btree", "--cores", "1,1"]), "--cores");
    assert_fails_with(&with(&["--a", "btree", "--rounds", "1"]), "--rounds");
    assert_fails_with(&with(&["--a", "btree", "--margin=-1"]), "--margin");
    assert_fails_with(
        &with(&["--a", "btree", "--a-bin", "no/such/binary"]),
        "--a-bin",
    );
    let output = timerbench(
        &[
            "ab",
            "--workload",
            "no-such-family",
            "--timers",
            "10",
            "--a",
            "btree",
            "--out",
            "o",
        ],
        dir.path(),
    );
    assert_fails_with(&output, "--workload");
    assert!(!dir.path().join("o/ab.jsonl").exists());
}

/// A process that keeps one core busy until it is killed: the competition a duet should
/// notice.
struct Busy(std::process::Child);

impl Busy {
    fn start() -> Busy {
        Busy(
            std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .expect("sh starts"),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_duet_beside_a_busy_process_warns_and_records_the_others_cpu() {
    let Some(cores) = cores() else {
        eprintln!("skipped: one CPU");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let busy = Busy::start();
    let output = duet(
        dir.path(),
        cores,
        &[
            // A window of a few tenths of a second: long beside the counters' jiffies.
            "--timers",
            "20000",
            "--a",
            "binary-heap",
            "--rounds",
            "40",
            "--pairs",
            "1",
            "--min-seconds",
            "0s",
            "--resamples",
            "100",
        ],
    );
    drop(busy);
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("warning: other processes used") && stdout.contains("competed"),
        "{stdout}"
    );
    let load = &only_record(dir.path())["others_load"];
    assert_eq!(load["competed"], true, "{load}");
    assert!(load["others_cores"].as_f64().unwrap() > 0.1, "{load}");
    assert!(load["cpus"].as_u64().unwrap() >= 2, "{load}");
}
