//! `timerbench report` as a user meets it: a report from a real small run, found by default
//! under `results/`, and clear failures that write nothing.

mod support;

use support::{SMALL_RUN, assert_fails_with, text, timerbench_in as timerbench};

#[test]
fn a_report_of_a_real_small_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = SMALL_RUN.to_vec();
    args.extend(["--out", "results/small"]);
    let run = timerbench(&args, dir.path());
    assert!(run.status.success(), "{}", text(&run.stderr));

    // No folder named: the newest under results/. Neither the workload cache nor the
    // results-format crate's own sources (results/src/, newer than the run) are a run.
    std::fs::create_dir_all(dir.path().join("results/src")).unwrap();
    std::fs::write(dir.path().join("results/src/lib.rs"), "").unwrap();
    let report = timerbench(&["report", "--png", "charts"], dir.path());
    assert!(report.status.success(), "{}", text(&report.stderr));
    let path = dir.path().join("results/small/report.html");
    let html = std::fs::read_to_string(&path).expect("the report is in the run's folder");

    for heading in [
        "Summary",
        "Implementations",
        "Workloads",
        "Cells that did not verify",
        "Lateness",
        "Environment and reproduction",
    ] {
        assert!(html.contains(&format!("<h2>{heading}</h2>")), "{heading}");
    }
    for name in ["btree", "hierarchical-wheel", "burst", "sparse-next"] {
        assert!(html.contains(name), "{name}");
    }
    // The registries describe what the records only name.
    for description in [
        "a thundering herd: many timers expiring at once",
        "BTreeMap keyed by (deadline, slot)",
    ] {
        assert!(html.contains(description), "{description}");
    }
    assert!(html.contains("timerbench run --suite smoke --workload burst"));
    // Per workload: ns/op and bytes against size, and a latency curve per operation kind.
    for id in [
        "chart-burst-ns-per-op",
        "chart-burst-bytes-per-timer",
        "chart-burst-latency-start",
        "chart-burst-latency-advance",
        "chart-sparse-next-ns-per-op",
        "chart-sparse-next-latency-next",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no chart {id}");
    }
    let mut charts = 0;
    let mut rest = html.as_str();
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").unwrap() + start + 6;
        roxmltree::Document::parse(&rest[start..end]).expect("each SVG is well-formed XML");
        charts += 1;
        rest = &rest[end..];
    }
    assert_eq!(charts, html.matches("<figure class=\"chart\"").count());
    assert!(charts >= 8, "{charts} charts");
    let pngs = std::fs::read_dir(dir.path().join("charts"))
        .unwrap()
        .count();
    assert_eq!(pngs, charts);
    assert!(!html.contains("<script") && !html.contains("<link"));
    assert!(
        !html.contains("<h2>Threads</h2>"),
        "no threads records, no section"
    );

    // A real threads study beside the run: its Threads section, one row per run.
    let threads = timerbench(
        &[
            "threads",
            "--timers",
            "256",
            "--ops",
            "200",
            "--impl",
            "binary-heap",
            "--scheme",
            "global-lock,owner",
            "--threads",
            "1",
            "--out",
            "study",
        ],
        dir.path(),
    );
    assert!(threads.status.success(), "{}", text(&threads.stderr));
    let report = timerbench(
        &[
            "report",
            "results/small",
            "--threads",
            "study",
            "-o",
            "both.html",
        ],
        dir.path(),
    );
    assert!(report.status.success(), "{}", text(&report.stderr));
    assert!(
        text(&report.stdout).contains("2 threads runs"),
        "{}",
        text(&report.stdout)
    );
    let html = std::fs::read_to_string(dir.path().join("both.html")).unwrap();
    assert!(html.contains("<h2>Threads</h2>"));
    for scheme in ["global-lock", "owner"] {
        let row =
            format!("data-structure=\"binary-heap\" data-scheme=\"{scheme}\" data-threads=\"1\"");
        assert!(html.contains(&row), "no row {row}");
    }
    assert!(html.contains("id=\"chart-threads-1-start-stop-256-binary-heap\""));

    // A live folder that is not there: named, and no report written.
    let report = timerbench(
        &[
            "report",
            "results/small",
            "--live",
            "no-live",
            "-o",
            "none.html",
        ],
        dir.path(),
    );
    assert_fails_with(&report, "no-live does not exist");
    assert!(!dir.path().join("none.html").exists());
}

#[test]
fn failures_are_clear_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = timerbench(&["report", "nowhere"], dir.path());
    assert_fails_with(&output, "results folder nowhere does not exist");

    let output = timerbench(&["report"], dir.path());
    assert_fails_with(&output, "no results folder given");

    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let output = timerbench(&["report", "empty"], dir.path());
    assert_fails_with(&output, "empty has no results.jsonl");
    assert!(!dir.path().join("empty/report.html").exists());

    std::fs::create_dir(dir.path().join("bad")).unwrap();
    std::fs::write(dir.path().join("bad/results.jsonl"), "\n{not a record}\n").unwrap();
    let output = timerbench(&["report", "bad", "-o", "out.html"], dir.path());
    assert_fails_with(&output, "bad/results.jsonl:2: not a cell record");
    assert!(!dir.path().join("out.html").exists());
    let leftovers = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".partial")
        })
        .count();
    assert_eq!(leftovers, 0);
}
