//! `timerbench reproduce` as a user meets it: one cheap experiment end to end into a
//! folder of findings with a computed verdict, and the clear errors of a bad `--only` and a
//! malformed experiments file.

mod support;

use std::path::Path;
use support::{assert_fails_with, assert_succeeded, text, timerbench_in as timerbench};

/// `reproduce --quick --experiments FILE --out OUT`.
fn quick<'a>(file: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![
        "reproduce",
        "--quick",
        "--experiments",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]
}

#[test]
fn a_quick_experiment_writes_findings_with_a_computed_verdict() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("findings");
    let output = timerbench(
        &[
            "reproduce",
            "--quick",
            "--only",
            "go-quad-heap",
            "--out",
            out.to_str().unwrap(),
        ],
        root.path(),
    );
    assert_succeeded(&output);
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    assert_eq!(findings["quick"], true);
    let experiments = findings["experiments"].as_array().unwrap();
    assert_eq!(experiments.len(), 1);
    let finding = &experiments[0];
    assert_eq!(finding["id"], "go-quad-heap");
    let verdict = finding["verdict"].as_str().unwrap();
    assert!(
        ["holds", "holds_with_caveat", "does_not_hold"].contains(&verdict),
        "a computed verdict, not {verdict}: {}",
        finding["reason"]
    );
    // Every cell read back with its value (two sizes, the two heaps and the two lazy
    // peers), and one ratio per size.
    let cells = finding["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8, "{cells:?}");
    assert!(
        cells.iter().all(|c| c["value"].as_f64().is_some()),
        "{cells:?}"
    );
    assert_eq!(finding["values"].as_array().unwrap().len(), 2);
    assert!(out.join("go-quad-heap").join("results.jsonl").is_file());
    let markdown = std::fs::read_to_string(out.join("findings.md")).unwrap();
    assert!(markdown.contains("| go-quad-heap |"), "{markdown}");
    let html = std::fs::read_to_string(out.join("findings.html")).unwrap();
    assert!(html.contains("<svg"), "the page has its chart");
    // The terminal's table: the experiment's block, one labelled line a column, wrapped
    // to the terminal, not the Markdown row of several hundred characters.
    let stdout = text(&output.stdout);
    assert!(!stdout.contains("| go-quad-heap |"), "{stdout}");
    let block: Vec<&str> = stdout
        .lines()
        .skip_while(|line| *line != "go-quad-heap")
        .take_while(|line| !line.is_empty())
        .collect();
    assert!(
        block.iter().any(|line| line.starts_with("  verdict:")),
        "{stdout}"
    );
    assert!(block.iter().all(|line| line.len() <= 100), "{block:#?}");
}

#[test]
fn an_unknown_experiment_is_one_error_listing_the_ids() {
    let root = tempfile::tempdir().unwrap();
    let output = timerbench(&["reproduce", "--only", "nope"], root.path());
    assert_fails_with(
        &output,
        "--only nope: no such experiment (experiments: go-timingwheel,",
    );
    assert!(!root.path().join("results").exists(), "nothing created");
}

#[test]
fn a_malformed_experiments_file_is_one_error_naming_file_and_line() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("bad.toml");
    std::fs::write(&file, "[[experiment]]\nid = \"x\"\ntitle = 3\n").unwrap();
    let output = timerbench(
        &["reproduce", "--experiments", file.to_str().unwrap()],
        root.path(),
    );
    assert_fails_with(&output, "bad.toml:3: invalid type");
}

#[test]
fn an_experiment_that_cannot_run_is_not_measured_and_the_others_go_on() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("experiments.toml");
    let common = "title = \"t\"\nclaim = \"c\"\nsource = \"s\"\nmeasured = \"m\"\n\
                  implementations = [\"quad-heap\", \"binary-heap\"]\n";
    std::fs::write(
        &file,
        format!(
            "[[experiment]]\nid = \"lost-trace\"\n{common}\
             traces = [{{ name = \"gone\", path = \"gone.txt\", timers = \"wheel\" }}]\n\
             field = \"fraction_stopped\"\nfigure = {{ kind = \"value\" }}\n\
             rule.holds = {{ at_least = 0.5 }}\n\n\
             [[experiment]]\nid = \"tiny\"\n{common}workloads = [\"start-stop\"]\n\
             sizes = [300]\nquick_sizes = [300]\nfield = \"throughput.ns_per_op.median\"\n\
             figure = {{ kind = \"ratio\", numerator = \"quad-heap\", denominator = \"binary-heap\" }}\n\
             rule.holds = {{ at_most = 1000.0 }}\n"
        ),
    )
    .unwrap();
    let out = root.path().join("findings");
    let output = timerbench(&quick(&file, &out), root.path());
    assert!(
        !output.status.success(),
        "a not-measured experiment fails the command"
    );
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let lost = &findings["experiments"][0];
    assert_eq!(lost["verdict"], "not_measured");
    let reason = lost["reason"].as_str().unwrap();
    assert!(reason.contains("gone.txt not found"), "{reason}");
    let tiny = &findings["experiments"][1];
    assert_eq!(tiny["verdict"], "holds", "{}", tiny["reason"]);
}

/// The records of `folder/results.jsonl`, by `WORKLOAD/TIMERS/IMPL`, whole.
fn records(folder: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    std::fs::read_to_string(folder.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let name = format!(
                "{}/{}/{}",
                record["workload"].as_str().unwrap(),
                record["timers"],
                record["implementation"].as_str().unwrap()
            );
            (name, record)
        })
        .collect()
}

#[test]
fn a_cell_is_measured_once_and_a_later_experiment_copies_its_record() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("experiments.toml");
    let common = "title = \"t\"\nclaim = \"c\"\nsource = \"s\"\nmeasured = \"m\"\n\
                  workloads = [\"start-stop\"]\nfigure = { kind = \"value\" }\n\
                  rule.holds = { at_least = 0.0 }\n";
    // b shares start-stop/300/quad-heap with a; c is a's two cells read another way.
    std::fs::write(
        &file,
        format!(
            "[[experiment]]\nid = \"a\"\n{common}sizes = [300]\nquick_sizes = [300]\n\
             implementations = [\"quad-heap\", \"binary-heap\"]\n\
             field = \"throughput.ns_per_op.median\"\n\n\
             [[experiment]]\nid = \"b\"\n{common}sizes = [300, 400]\nquick_sizes = [300, 400]\n\
             implementations = [\"quad-heap\", \"btree\"]\n\
             field = \"throughput.ns_per_op.median\"\n\n\
             [[experiment]]\nid = \"c\"\n{common}sizes = [300]\nquick_sizes = [300]\n\
             implementations = [\"binary-heap\", \"quad-heap\"]\n\
             field = \"memory.peak_live_bytes\"\n"
        ),
    )
    .unwrap();
    let reproduce = |out: &Path, only: &[&str]| {
        let mut args = quick(&file, out);
        for id in only {
            args.extend(["--only", id]);
        }
        let output = timerbench(&args, root.path());
        assert_succeeded(&output);
        let findings: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap())
                .unwrap();
        (text(&output.stdout), findings)
    };
    let out = root.path().join("findings");
    let (stdout, findings) = reproduce(&out, &[]);
    let (a, b, c) = (
        records(&out.join("a")),
        records(&out.join("b")),
        records(&out.join("c")),
    );
    assert_eq!(a.len(), 2);
    // b measured its three new cells and copied the shared one: the same record, samples
    // and all, and one record a cell.
    assert_eq!(
        b.keys().collect::<Vec<_>>(),
        [
            "start-stop/300/btree",
            "start-stop/300/quad-heap",
            "start-stop/400/btree",
            "start-stop/400/quad-heap"
        ]
    );
    let lines = std::fs::read_to_string(out.join("b").join("results.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 4, "one record a cell: {lines}");
    assert_eq!(b["start-stop/300/quad-heap"], a["start-stop/300/quad-heap"]);
    assert!(
        stdout
            .contains("  1 of 4 cells reused: 1 cell measured in a (records copied, not measured"),
        "{stdout}"
    );
    assert!(
        stdout.contains("4 cells (0 already done, 1 copied from an earlier run)"),
        "{stdout}"
    );
    // c ran nothing: both records are a's.
    assert_eq!(c, a);
    assert!(
        stdout.contains("  2 of 2 cells reused: 2 cells measured in a")
            && stdout.contains("  nothing new to measure: no cell run"),
        "{stdout}"
    );
    let reused = |id: usize| findings["experiments"][id]["reused"].clone();
    assert_eq!(reused(0), serde_json::json!([]));
    assert_eq!(
        reused(1),
        serde_json::json!([{ "experiment": "a", "cells": 1 }])
    );
    assert_eq!(
        reused(2),
        serde_json::json!([{ "experiment": "a", "cells": 2 }])
    );
    for id in 0..3 {
        assert_eq!(
            findings["experiments"][id]["verdict"], "holds",
            "{}",
            findings["experiments"][id]["reason"]
        );
    }
    assert!(
        out.join("c").join("report.html").is_file(),
        "c's folder is whole"
    );
    let markdown = std::fs::read_to_string(out.join("findings.md")).unwrap();
    assert!(
        markdown.contains("Of its 2 cells, 2 cells measured in a"),
        "{markdown}"
    );

    // With --only b, a was not run: b measures all its cells.
    let alone = root.path().join("alone");
    let (stdout, findings) = reproduce(&alone, &["b"]);
    assert!(!stdout.contains("reused"), "{stdout}");
    assert_eq!(findings["experiments"][0]["reused"], serde_json::json!([]));
    let b_alone = records(&alone.join("b"));
    assert_eq!(b_alone.len(), 4);
    assert_ne!(
        b_alone["start-stop/300/quad-heap"],
        a["start-stop/300/quad-heap"]
    );
}

#[test]
fn live_and_threads_experiments_are_run_read_back_and_judged() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("experiments.toml");
    let common = "title = \"t\"\nclaim = \"c\"\nsource = \"s\"\nmeasured = \"m\"\n";
    // Three sparse timers 10 ms apart through a timerfd (every kernel has one), and one
    // producer thread on a small start-stop inside the global lock.
    std::fs::write(
        &file,
        format!(
            "[[experiment]]\nid = \"wake\"\nkind = \"live\"\n{common}\
             implementations = [\"binary-heap\"]\nsizes = [3]\nquick_sizes = [3]\n\
             field = \"firings\"\nshown = [\"lateness.wake.p50_ns\"]\n\
             figure = {{ kind = \"value\" }}\nrule.holds = {{ at_least = 3.0, at_most = 3.0 }}\n\
             [experiment.live]\nfamily = \"sparse\"\nparams = {{ gap = 1, pending = 3 }}\n\
             waits = [\"timerfd\"]\ntick = \"10ms\"\nidle = \"10ms\"\n\n\
             [[experiment]]\nid = \"lock\"\nkind = \"threads\"\n{common}\
             implementations = [\"binary-heap\"]\nsizes = [1, 1024]\nquick_sizes = [1, 1024]\n\
             field = \"ns_per_op\"\nfigure = {{ kind = \"value\" }}\n\
             rule.holds = {{ at_least = 0.0 }}\n\
             [experiment.threads]\nschemes = [\"global-lock\"]\ntimers = 100\n\
             quick_timers = 100\nops = 200\nquick_ops = 200\n"
        ),
    )
    .unwrap();
    let list = timerbench(
        &[
            "reproduce",
            "--list",
            "--experiments",
            file.to_str().unwrap(),
        ],
        root.path(),
    );
    assert_succeeded(&list);
    let listed = text(&list.stdout);
    assert!(
        listed.contains("binary-heap with timerfd on live sparse gap=1 pending=3; timers 3"),
        "{listed}"
    );
    assert!(
        listed.contains("binary-heap under global-lock on threads start-stop"),
        "{listed}"
    );
    let out = root.path().join("findings");
    let output = timerbench(&quick(&file, &out), root.path());
    assert_succeeded(&output);
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let wake = &findings["experiments"][0];
    assert_eq!(wake["verdict"], "holds", "{}", wake["reason"]);
    assert_eq!(wake["records"], "wake/live.jsonl");
    assert_eq!(
        wake["cells"][0]["implementation"],
        "binary-heap with timerfd"
    );
    assert_eq!(wake["cells"][0]["value"], 3.0);
    assert!(out.join("wake").join("live.jsonl").is_file());
    let lock = &findings["experiments"][1];
    assert_eq!(lock["verdict"], "holds", "{}", lock["reason"]);
    assert_eq!(lock["axis"], "producer threads");
    // 1024 producers are above any test machine's cores: left out, and said so.
    assert_eq!(lock["cells"].as_array().unwrap().len(), 1);
    let reason = lock["reason"].as_str().unwrap();
    assert!(
        reason.contains("computed at 1 producer thread on this"),
        "{reason}"
    );
    assert!(reason.contains("1024 not run: above the cores"), "{reason}");
    let html = std::fs::read_to_string(out.join("findings.html")).unwrap();
    assert!(
        html.contains("lock/threads.jsonl"),
        "the page names the records file"
    );
}
