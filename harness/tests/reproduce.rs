//! `timerbench reproduce` as a user meets it: one cheap experiment end to end into a
//! folder of findings with a computed verdict, and the clear errors of a bad `--only` and a
//! malformed experiments file.

mod support;

use support::{assert_fails_with, assert_succeeded, text, timerbench_in as timerbench};

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
    assert!(text(&output.stdout).contains("go-quad-heap"));
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
    let output = timerbench(
        &[
            "reproduce",
            "--quick",
            "--experiments",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        root.path(),
    );
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
