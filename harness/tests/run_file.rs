//! `timerbench run --file PATH`: a workload file measured as a suite workload is, its
//! records naming the file, its shape in the folder and the report; a missing or
//! malformed file refused before anything is created; `--resume` of such a run.

mod support;

use sha2::{Digest, Sha256};
use std::path::Path;
use support::{assert_fails_with, assert_succeeded, text, timerbench_in as timerbench};

/// A small hand-written trace: five timers, at most three pending at once.
const TINY: &str = "timer-workload v1\n@name tiny\n@tick 1ms\n@source hand-written\n\
                    s 1 0\ns 2 3\ns 3 1000\nr 2 5\nx 3\nx 3\na 2\nt 4\ns 4 100\ns 5 50\nn\nn\n";

/// `run --file FILE` over two implementations, one process and one short sample each.
fn run_file<'a>(file: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--file",
        file,
        "--impl",
        "btree",
        "--impl",
        "hierarchical-wheel",
        "--repeat",
        "1",
        "--processes",
        "1",
        "--min-sample-ms",
        "1",
        "--out",
        out,
    ]
}

fn records(folder: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(folder.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_file_is_measured_into_a_complete_folder_with_its_shape_and_resumes() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("tiny.tw"), TINY).unwrap();
    let sha256: String = Sha256::digest(TINY.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let out = root.path().join("out");
    let output = timerbench(&run_file("tiny.tw", "out"), root.path());
    assert_succeeded(&output);

    let recorded = records(&out);
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    for record in &recorded {
        assert_eq!(record["workload"], "tiny", "named by its @name");
        assert_eq!(record["timers"], 3, "sized by its peak of pending timers");
        assert_eq!(record["family"], "file");
        assert_eq!(record["params"]["path"], "tiny.tw", "the path as given");
        assert_eq!(record["params"]["sha256"], sha256.as_str());
        assert_eq!(record["status"], "ok", "{record}");
        assert_eq!(record["digest"], record["reference_digest"]);
        assert!(
            record["throughput"]["ns_per_op"]["median"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        assert!(!record["latency"].as_object().unwrap().is_empty());
        assert!(record["memory"]["peak_pending"].as_u64().unwrap() == 3);
    }
    let environment: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("environment.json")).unwrap())
            .unwrap();
    assert_eq!(environment["suite"], "none", "a run of files only");
    assert_eq!(
        std::fs::read_to_string(out.join("summary.csv"))
            .unwrap()
            .lines()
            .count(),
        3
    );
    let workloads: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("workloads.json")).unwrap())
            .unwrap();
    let file = &workloads["files"][0];
    assert_eq!(file["name"], "tiny");
    assert_eq!(file["sha256"], sha256.as_str());
    assert_eq!(file["peak_pending"], 3);
    assert_eq!(file["final_clock"], 106);
    assert_eq!(file["pending"]["max"].as_array().unwrap().len(), 107);
    // Delays 0, 3, 1000, 5, 100, 50: buckets 0, 2, 10, 3, 7, 6.
    assert_eq!(
        file["delays"]["counts"],
        serde_json::json!([1, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1])
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    for needle in [
        "A workload file",
        "hand-written",
        "id=\"chart-tiny-pending\"",
        "id=\"chart-tiny-delays\"",
        "tiny: pending timers",
        "tiny: delays",
        sha256.as_str(),
    ] {
        assert!(report.contains(needle), "the report lacks {needle}");
    }

    // Resumed with its first cell only: the other is measured, the first kept.
    let first = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(out.join("results.jsonl"), format!("{first}\n")).unwrap();
    let output = timerbench(&["run", "--resume", "out"], root.path());
    assert_succeeded(&output);
    assert!(
        text(&output.stdout).contains("2 cells (1 already done)"),
        "{}",
        text(&output.stdout)
    );
    let after = records(&out);
    assert_eq!(after.len(), 2);
    assert_eq!(after[0].to_string(), recorded[0].to_string());
    assert_ne!(after[1]["implementation"], after[0]["implementation"]);

    // The same name from other bytes is not the run's file.
    std::fs::write(root.path().join("tiny.tw"), format!("{TINY}s 9 1\n")).unwrap();
    let output = timerbench(&["run", "--resume", "out"], root.path());
    assert_fails_with(
        &output,
        "--file tiny.tw: the run in out measured workload `tiny`",
    );
    assert_eq!(records(&out).len(), 2);
}

#[test]
fn a_missing_or_malformed_file_is_one_error_and_no_folder() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("bad.tw"),
        "timer-workload v1\ns 1 5\nq 3\n",
    )
    .unwrap();
    std::fs::write(root.path().join("tiny.tw"), TINY).unwrap();
    let cases = [
        (
            run_file("bad.tw", "out"),
            "--file bad.tw:3: unknown operation",
        ),
        (
            run_file("missing.tw", "out"),
            "--file missing.tw: cannot read it",
        ),
        (
            [run_file("tiny.tw", "out"), vec!["--file", "bad.tw"]].concat(),
            "--file bad.tw:3:",
        ),
        (
            [run_file("tiny.tw", "out"), vec!["--timers", "10"]].concat(),
            "--timers does not apply to --file",
        ),
    ];
    for (args, message) in cases {
        let output = timerbench(&args, root.path());
        assert_fails_with(&output, message);
        let stderr = text(&output.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "one message: {stderr}");
        assert!(
            !root.path().join("out").exists(),
            "no folder after {args:?}"
        );
    }
}
