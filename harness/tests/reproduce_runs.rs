//! `timerbench reproduce --runs N` and `--from DIR...`: two quick runs of two tiny
//! experiments combined into findings with each figure's mean and interval, the same
//! findings again from the two runs' folders without measuring, and the clear refusals of
//! bad input.

mod support;

use serde_json::Value;
use std::path::Path;
use support::{assert_fails_with, assert_succeeded, text, timerbench_in as timerbench};

/// A ratio of the two heaps (its rule holds for any ratio a heap could give) and their
/// order, on one small cell each: four cells over two runs.
fn experiments(root: &Path) -> std::path::PathBuf {
    let file = root.join("experiments.toml");
    let common = "title = \"t\"\nclaim = \"c\"\nsource = \"s\"\nmeasured = \"m\"\n\
                  implementations = [\"quad-heap\", \"binary-heap\"]\n\
                  workloads = [\"start-stop\"]\nsizes = [300]\nquick_sizes = [300]\n\
                  field = \"throughput.ns_per_op.median\"\n";
    std::fs::write(
        &file,
        format!(
            "[[experiment]]\nid = \"ratio\"\n{common}\
             figure = {{ kind = \"ratio\", numerator = \"quad-heap\", denominator = \"binary-heap\" }}\n\
             rule.holds = {{ at_most = 1000.0 }}\n\n\
             [[experiment]]\nid = \"order\"\n{common}\
             figure = {{ kind = \"ordering\", tolerance = 0.05 }}\n\
             rule.expect_lowest = \"quad-heap\"\n"
        ),
    )
    .unwrap();
    file
}

fn findings(folder: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(folder.join("findings.json")).unwrap()).unwrap()
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn two_runs_give_each_figure_its_mean_and_interval_and_from_gives_them_again() {
    let root = tempfile::tempdir().unwrap();
    let file = experiments(root.path());
    let out = root.path().join("findings");
    let output = two_quick_runs(&file, &out, root.path());
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(stdout.contains("(run 2 of 2)"), "{stdout}");
    let (one, two) = (findings(&out.join("run-1")), findings(&out.join("run-2")));
    assert!(
        out.join("run-2")
            .join("ratio")
            .join("results.jsonl")
            .is_file()
    );
    let combined = findings(&out);
    assert_eq!(combined["schema"], timerbench_results::FINDINGS_SCHEMA);
    assert_eq!(combined["runs"][1]["folder"], "run-2");

    // The ratio: the mean of the two runs' figures, inside its interval, judged on it.
    let ratio = &combined["experiments"][0];
    assert_eq!(ratio["id"], "ratio");
    assert_eq!(ratio["runs"]["method"], "mean");
    assert_eq!(
        ratio["runs"]["folders"],
        serde_json::json!(["run-1", "run-2"])
    );
    let figure = &ratio["values"][0];
    let per_run = numbers(&figure["runs"]["values"]);
    let own = |run: &Value| {
        run["experiments"][0]["values"][0]["value"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(per_run, [own(&one), own(&two)]);
    let mean = figure["value"].as_f64().unwrap();
    assert!(
        (mean - (per_run[0] + per_run[1]) / 2.0).abs() < 1e-12,
        "{figure}"
    );
    let interval = numbers(&figure["runs"]["interval"]);
    assert!(interval[0] <= mean && mean <= interval[1], "{figure}");
    assert_eq!(ratio["verdict"], "holds", "{}", ratio["reason"]);
    assert!(
        ratio["reason"]
            .as_str()
            .unwrap()
            .starts_with("holds on the mean of 2 runs"),
        "{}",
        ratio["reason"]
    );

    // The order has no mean: each run judged, the verdicts kept.
    let order = &combined["experiments"][1];
    assert_eq!(order["runs"]["method"], "per_run");
    let verdict = |run: &Value| run["experiments"][1]["verdict"].clone();
    assert_eq!(
        order["runs"]["verdicts"],
        serde_json::json!([verdict(&one), verdict(&two)])
    );
    let markdown = std::fs::read_to_string(out.join("findings.md")).unwrap();
    assert!(markdown.contains("Combined from 2 runs"), "{markdown}");
    assert!(markdown.contains("| runs |"), "{markdown}");
    assert!(markdown.contains("95% interval"), "{markdown}");
    assert!(out.join("findings.html").is_file());

    // The same findings from the runs' folders, nothing measured.
    let again = root.path().join("again");
    let output = timerbench(
        &[
            "reproduce",
            "--from",
            out.join("run-1").to_str().unwrap(),
            out.join("run-2").to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
        ],
        root.path(),
    );
    assert_succeeded(&output);
    assert!(
        !text(&output.stdout).contains("timerbench run"),
        "measured nothing"
    );
    let from = findings(&again);
    assert!(
        same_within_rounding(
            &from["experiments"][0]["values"],
            &combined["experiments"][0]["values"]
        ),
        "{} against {}",
        from["experiments"][0]["values"],
        combined["experiments"][0]["values"]
    );
    for id in 0..2 {
        assert_eq!(
            from["experiments"][id]["verdict"],
            combined["experiments"][id]["verdict"]
        );
    }

    // A combination is not a run, and a run's experiment folder is not a findings folder.
    let refused = timerbench(
        &[
            "reproduce",
            "--from",
            out.to_str().unwrap(),
            out.join("run-1").to_str().unwrap(),
        ],
        root.path(),
    );
    assert_fails_with(
        &refused,
        "already combines 2 runs; give the runs' own folders",
    );
    let experiment = out.join("run-1").join("ratio");
    let refused = timerbench(
        &[
            "reproduce",
            "--from",
            experiment.to_str().unwrap(),
            out.join("run-2").to_str().unwrap(),
        ],
        root.path(),
    );
    assert_fails_with(
        &refused,
        &format!(
            "--from {}: not a findings folder of timerbench reproduce (it has no findings.json)",
            experiment.display()
        ),
    );
    // The same --out again is refused before anything is measured.
    let output = two_quick_runs(&file, &out, root.path());
    assert_fails_with(&output, "already holds results; choose another --out");
}

#[test]
fn bad_runs_and_from_are_one_clear_error_each() {
    let root = tempfile::tempdir().unwrap();
    let output = timerbench(&["reproduce", "--runs", "0", "--quick"], root.path());
    assert_fails_with(&output, "--runs");
    assert!(!root.path().join("results").exists(), "nothing created");

    let missing = root.path().join("missing");
    let empty = root.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = timerbench(
        &[
            "reproduce",
            "--from",
            missing.to_str().unwrap(),
            empty.to_str().unwrap(),
        ],
        root.path(),
    );
    assert_fails_with(
        &output,
        &format!("--from {}: no such folder", missing.display()),
    );
    let output = timerbench(
        &["reproduce", "--from", empty.to_str().unwrap()],
        root.path(),
    );
    assert_fails_with(&output, "--from: give two findings folders or more");
    std::fs::write(empty.join("findings.json"), "{ not json").unwrap();
    let output = timerbench(
        &[
            "reproduce",
            "--from",
            empty.to_str().unwrap(),
            empty.to_str().unwrap(),
        ],
        root.path(),
    );
    assert_fails_with(&output, "findings.json: not a findings file");
    let output = timerbench(
        &[
            "reproduce",
            "--from",
            empty.to_str().unwrap(),
            "--runs",
            "2",
        ],
        root.path(),
    );
    assert_fails_with(&output, "cannot be used with");
    assert!(!root.path().join("results").exists(), "nothing created");
}

/// Equal JSON, numbers compared to a relative 1e-12: an interval recomputed from the
/// runs' figures as read back may differ from the first computation in its last bit.
fn same_within_rounding(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_within_rounding(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_within_rounding(v, w)))
        }
        _ => a == b,
    }
}

/// `reproduce --quick --runs 2` of the experiments in `file` into `out`.
fn two_quick_runs(file: &Path, out: &Path, cwd: &Path) -> std::process::Output {
    timerbench(
        &[
            "reproduce",
            "--quick",
            "--runs",
            "2",
            "--experiments",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        cwd,
    )
}
