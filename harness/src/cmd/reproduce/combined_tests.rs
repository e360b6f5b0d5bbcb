//! The combination of runs on fabricated findings: the mean and interval of each figure,
//! the verdicts an interval reaches and the words that say so, orderings judged per run,
//! and runs that cannot be combined.

use super::*;
use serde_json::json;

/// Go's claim as the experiments file reads it: from 0.63 to 0.83 holds, below 1 a caveat.
fn go_rule() -> serde_json::Value {
    json!({ "holds": { "at_least": 0.63, "at_most": 0.83 }, "caveat": { "at_most": 1.0 } })
}

fn rule(data: serde_json::Value) -> Rule {
    serde_json::from_value(data).unwrap()
}

/// A run's finding of `id` with one figure per `(label, number)`, each judged by `data`.
fn finding(id: &str, data: &serde_json::Value, figures: &[(&str, f64)]) -> Finding {
    let computed: Vec<Computed> = figures
        .iter()
        .map(|(label, number)| Computed {
            label: label.to_string(),
            implementation: None,
            payload: Ok(Payload::Number(*number)),
        })
        .collect();
    let (values, verdict, reason) = judge(&FigureSpec::Value, &rule(data.clone()), &computed);
    Finding {
        id: id.to_string(),
        title: "t".to_string(),
        claim: "c".to_string(),
        source: "s".to_string(),
        published: Vec::new(),
        measured: "m".to_string(),
        field: "throughput.ns_per_op.median".to_string(),
        figure: "f".to_string(),
        rule: "r".to_string(),
        rule_data: data.clone(),
        folder: id.to_string(),
        reused: Vec::new(),
        records: None,
        axis: None,
        cells: vec![CellReading {
            workload: "start-stop".to_string(),
            timers: 1000,
            implementation: "quad-heap".to_string(),
            status: "ok".to_string(),
            value: figures.first().map(|f| f.1 * 100.0),
            reason: None,
        }],
        values,
        verdict,
        reason,
        runs: None,
    }
}

/// The runs `run-1`, `run-2`, ... of one figure each, `numbers` one per run.
fn one_figure(data: &serde_json::Value, numbers: &[f64]) -> Vec<(String, Finding)> {
    numbers
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            (
                format!("run-{}", i + 1),
                finding("x", data, &[("start-stop at 1000", n)]),
            )
        })
        .collect()
}

fn combined(runs: &[(String, Finding)]) -> Finding {
    let refs: Vec<(&str, &Finding)> = runs.iter().map(|(n, f)| (n.as_str(), f)).collect();
    combine_experiment(&refs)
}

#[test]
fn a_figure_is_the_mean_over_the_runs_with_the_combine_modules_interval() {
    let numbers = [0.70, 0.72, 0.74];
    let found = combined(&one_figure(&go_rule(), &numbers));
    let expected = combine(&numbers);
    let figure = &found.values[0];
    assert_eq!(figure.value, Some(expected.mean));
    let runs = figure.runs.as_ref().unwrap();
    let half = expected.half_width.unwrap();
    assert_eq!(
        runs.interval,
        Some((expected.mean - half, expected.mean + half))
    );
    assert_eq!(runs.values, numbers.map(Some));
    assert_eq!(runs.within, [Verdict::Holds]);
    assert_eq!(runs.straddle, "");
    assert_eq!(found.verdict, Verdict::Holds);
    let summary = found.runs.as_ref().unwrap();
    assert_eq!(summary.method, CombinedBy::Mean);
    assert_eq!(summary.folders, ["run-1", "run-2", "run-3"]);
    assert_eq!(summary.within, [Verdict::Holds]);
    assert!(
        summary
            .note
            .starts_with("on the mean of 3 runs; the verdict is the same")
    );
    assert!(found.reason.starts_with("holds on the mean of 3 runs"));
    // The cells are the means of the runs' cells too.
    assert_eq!(
        found.cells[0].value,
        Some(combine(&numbers.map(|n| n * 100.0)).mean)
    );
    assert_eq!(found.folder, "run-1/x");
    assert_eq!(
        found.records.as_deref(),
        Some("run-1/x/results.jsonl, run-2/x/results.jsonl, run-3/x/results.jsonl")
    );
}

#[test]
fn a_verdict_whose_interval_crosses_a_boundary_says_where() {
    // A speed-up claim: holds at 1 or more. The mean holds; the interval reaches below 1.
    let at_least_one = json!({ "holds": { "at_least": 1.0 } });
    let found = combined(&one_figure(&at_least_one, &[0.98, 1.05, 1.12]));
    assert_eq!(found.verdict, Verdict::Holds);
    let (low, high) = found.values[0].runs.as_ref().unwrap().interval.unwrap();
    assert!(low < 1.0 && high > 1.0, "{low} {high}");
    let summary = found.runs.as_ref().unwrap();
    assert_eq!(summary.within, [Verdict::Holds, Verdict::DoesNotHold]);
    assert!(
        summary.note.starts_with(
            "on the mean of 3 runs, but the interval straddles the rule's boundary: \
             start-stop at 1000 = 1.05 (95% interval "
        ),
        "{}",
        summary.note
    );
    assert!(
        summary.note.ends_with("): does not hold at the low end"),
        "{}",
        summary.note
    );
    assert!(found.reason.starts_with("holds on the mean of 3 runs, but"));
    // The same spread well inside the band straddles nothing.
    let inside = combined(&one_figure(&at_least_one, &[1.98, 2.05, 2.12]));
    assert_eq!(inside.runs.unwrap().within, [Verdict::Holds]);
}

#[test]
fn what_a_run_adds_to_its_reason_is_kept() {
    let mut runs = one_figure(&go_rule(), &[0.70, 0.72]);
    for (_, run) in &mut runs {
        run.reason
            .push_str(". Sides: go-runtime: the original's own timers");
    }
    let found = combined(&runs);
    assert!(
        found
            .reason
            .ends_with("start-stop at 1000 = 0.710. Sides: go-runtime: the original's own timers"),
        "{}",
        found.reason
    );
}

#[test]
fn the_verdicts_within_an_interval_include_a_band_lying_inside_it() {
    // Holds from 0.63 to 0.83, a caveat from 0.5 to 1.
    let banded = rule(json!({
        "holds": { "at_least": 0.63, "at_most": 0.83 },
        "caveat": { "at_least": 0.5, "at_most": 1.0 }
    }));
    let (within, words) = within_interval(&banded, None, 0.73, 0.55, 0.95);
    assert_eq!(within, [Verdict::Holds, Verdict::HoldsWithCaveat]);
    assert_eq!(words, "holds with a caveat at both ends");
    let (within, words) = within_interval(&banded, None, 0.73, 0.4, 1.1);
    assert_eq!(
        within,
        [
            Verdict::Holds,
            Verdict::HoldsWithCaveat,
            Verdict::DoesNotHold
        ]
    );
    assert_eq!(
        words,
        "holds with a caveat inside the interval, does not hold at both ends"
    );
    // A mean with a caveat, its interval holding the whole band that holds.
    let (within, words) = within_interval(&banded, None, 0.9, 0.6, 0.95);
    assert_eq!(within, [Verdict::Holds, Verdict::HoldsWithCaveat]);
    assert_eq!(words, "holds inside the interval");
    // A band's end is inside it: 0.83 holds, as the rule reads it.
    let (within, _) = within_interval(&banded, None, 0.7, 0.65, 0.83);
    assert_eq!(within, [Verdict::Holds]);
}

#[test]
fn the_experiment_reaches_only_what_its_worst_figure_allows() {
    use Verdict::*;
    // One figure surely does not hold: the other's straddle changes nothing.
    assert_eq!(
        experiment_within(&[vec![DoesNotHold], vec![Holds, HoldsWithCaveat]]),
        [DoesNotHold]
    );
    assert_eq!(
        experiment_within(&[vec![Holds], vec![Holds, HoldsWithCaveat]]),
        [Holds, HoldsWithCaveat]
    );
    assert_eq!(
        experiment_within(&[vec![HoldsWithCaveat], vec![Holds, DoesNotHold]]),
        [HoldsWithCaveat, DoesNotHold]
    );
    // So a straddling figure beside a failing one leaves the finding settled.
    let data = json!({ "holds": { "at_least": 1.0 } });
    let runs: Vec<(String, Finding)> = [(0.5, 0.98), (0.5, 1.05), (0.5, 1.12)]
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| {
            let f = finding("x", &data, &[("at 1000", a), ("at 2000", b)]);
            (format!("run-{}", i + 1), f)
        })
        .collect();
    let found = combined(&runs);
    assert_eq!(found.verdict, DoesNotHold);
    assert_eq!(found.runs.as_ref().unwrap().within, [DoesNotHold]);
    assert_eq!(
        found.values[1].runs.as_ref().unwrap().within,
        [Holds, DoesNotHold]
    );
}

/// A run's finding of an ordering: one figure in words, judged `verdict`.
fn ordering(text: &str, verdict: Verdict) -> Finding {
    let mut f = finding("o", &json!({ "expect_lowest": "a" }), &[]);
    f.values = vec![FigureValue {
        label: "at 1000".to_string(),
        value: None,
        text: Some(text.to_string()),
        verdict,
        implementation: None,
        runs: None,
    }];
    f.verdict = verdict;
    f.reason = format!("at 1000: {text}");
    f
}

#[test]
fn an_ordering_is_judged_per_run_and_says_in_how_many_it_holds() {
    use Verdict::*;
    let runs = vec![
        ("run-1".to_string(), ordering("w: a < b", Holds)),
        ("run-2".to_string(), ordering("w: b < a", DoesNotHold)),
        ("run-3".to_string(), ordering("w: a < b", Holds)),
    ];
    let found = combined(&runs);
    assert_eq!(found.verdict, Holds);
    let summary = found.runs.as_ref().unwrap();
    assert_eq!(summary.method, CombinedBy::PerRun);
    assert_eq!(summary.verdicts, [Holds, DoesNotHold, Holds]);
    assert_eq!(summary.within, [Holds, DoesNotHold]);
    assert!(
        summary
            .note
            .ends_with("holds in 2 of 3 (run-1, run-3), does not hold in 1 (run-2)"),
        "{}",
        summary.note
    );
    let figure = &found.values[0];
    assert_eq!(
        figure.text.as_deref(),
        Some("in run-1: w: a < b; in run-2: w: b < a; in run-3: w: a < b")
    );
    assert_eq!(figure.verdict, Holds);
    // Two runs that disagree settle on the worse: a tie is not the claim's.
    assert_eq!(combined(&runs[..2]).verdict, DoesNotHold);
    let same = combined(&[runs[0].clone(), runs[2].clone()]);
    assert!(same.runs.unwrap().note.starts_with("in each of the 2 runs"));
    assert_eq!(same.values[0].text.as_deref(), Some("w: a < b"));
}

#[test]
fn runs_that_cannot_be_combined_leave_the_experiment_not_measured_with_the_reason() {
    let mut runs = one_figure(&go_rule(), &[0.7, 0.72]);
    runs[1].1.verdict = Verdict::NotMeasured;
    runs[1].1.reason = "start-stop at 1000, quad-heap: failed: panic".to_string();
    runs[1].1.cells[0].value = None;
    runs[1].1.cells[0].status = "failed".to_string();
    runs[1].1.cells[0].reason = Some("panic".to_string());
    let found = combined(&runs);
    assert_eq!(found.verdict, Verdict::NotMeasured);
    assert!(
        found
            .reason
            .starts_with("not measured in 1 of 2 runs: run-2: start-stop at 1000"),
        "{}",
        found.reason
    );
    assert_eq!(found.cells[0].status, "failed");
    assert_eq!(found.cells[0].reason.as_deref(), Some("run-2: panic"));

    let mut runs = one_figure(&go_rule(), &[0.7, 0.72]);
    runs[1].1 = finding("x", &go_rule(), &[("start-stop at 2000", 0.7)]);
    let found = combined(&runs);
    assert_eq!(found.verdict, Verdict::NotMeasured);
    assert!(found.reason.contains("the runs computed different figures"));

    let mut runs = one_figure(&go_rule(), &[0.7, 0.72]);
    runs[1].1.rule_data = json!({ "holds": { "at_most": 2.0 } });
    assert!(
        combined(&runs)
            .reason
            .contains("judged it by different rules")
    );
}

#[test]
fn a_rule_for_one_implementation_needs_the_figures_to_name_theirs() {
    let data = json!({
        "holds": { "at_most": 0.15 },
        "implementation": { "polling-scan": { "holds": { "at_least": 0.8, "at_most": 1.2 } } }
    });
    let named = |n: f64| {
        let mut f = finding("s", &data, &[("w, polling-scan", n)]);
        f.values[0].implementation = Some("polling-scan".to_string());
        f.values[0].verdict = judge_number(&rule(data.clone()), Some("polling-scan"), n);
        f.verdict = f.values[0].verdict;
        f
    };
    let runs = vec![
        ("run-1".to_string(), named(0.9)),
        ("run-2".to_string(), named(1.0)),
    ];
    assert_eq!(combined(&runs).verdict, Verdict::Holds);
    let mut old = runs.clone();
    old[0].1.values[0].implementation = None;
    let found = combined(&old);
    assert_eq!(found.verdict, Verdict::NotMeasured);
    assert!(
        found
            .reason
            .contains("do not name each figure's implementation")
    );
}

#[test]
fn a_reported_figure_keeps_its_mean_and_interval_and_reaches_no_verdict() {
    let data = json!({ "holds": { "at_most": 1.0 }, "reported": ["shown"] });
    // One run's finding: `judged` at `a`, `shown` at `b`, each named by its implementation.
    let run = |a: f64, b: f64| {
        let computed: Vec<Computed> = [("judged", a), ("shown", b)]
            .iter()
            .map(|(name, number)| Computed {
                label: format!("w, {name}"),
                implementation: Some(name.to_string()),
                payload: Ok(Payload::Number(*number)),
            })
            .collect();
        let (values, verdict, reason) = judge(&FigureSpec::Value, &rule(data.clone()), &computed);
        Finding {
            values,
            verdict,
            reason,
            ..finding("r", &data, &[])
        }
    };
    // `shown` spreads far across the band's end; `judged` stays inside it.
    let runs = vec![
        ("run-1".to_string(), run(0.5, 0.2)),
        ("run-2".to_string(), run(0.6, 40.0)),
        ("run-3".to_string(), run(0.55, 3.0)),
    ];
    assert_eq!(runs[1].1.verdict, Verdict::Holds, "{}", runs[1].1.reason);
    let found = combined(&runs);
    assert_eq!(found.verdict, Verdict::Holds, "{}", found.reason);
    assert_eq!(found.runs.as_ref().unwrap().within, [Verdict::Holds]);
    let shown = &found.values[1];
    assert_eq!(shown.verdict, Verdict::Reported);
    let figure = shown.runs.as_ref().unwrap();
    assert!(
        figure
            .interval
            .is_some_and(|(low, high)| low < 1.0 && high > 1.0)
    );
    assert_eq!(figure.within, [Verdict::Reported]);
    assert!(figure.straddle.is_empty(), "{}", figure.straddle);
    assert!(!found.reason.contains("straddles"), "{}", found.reason);
}

#[test]
fn runs_of_other_sizes_or_builds_are_refused_and_experiments_keep_their_order() {
    let run = |folder: &str, ids: &[&str], quick: bool, revision: &str| Run {
        folder: folder.to_string(),
        findings: Findings {
            schema: FINDINGS_SCHEMA,
            quick,
            started: format!("2026-01-01T00:0{}:00Z", folder.len() % 10),
            command: "timerbench reproduce".to_string(),
            git_revision: revision.to_string(),
            experiments: ids
                .iter()
                .map(|id| finding(id, &go_rule(), &[("at 1000", 0.7)]))
                .collect(),
            runs: Vec::new(),
        },
    };
    let error = combine_runs(
        &[run("a", &["x"], true, "r"), run("b", &["x"], false, "r")],
        String::new(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "a is a --quick run and b is not: combine runs of the same sizes"
    );
    let error = combine_runs(
        &[run("a", &["x"], true, "r1"), run("b", &["x"], true, "r2")],
        String::new(),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("a is of revision r1 and b of r2"), "{error}");
    let both = combine_runs(
        &[
            run("a", &["x", "y"], true, "r"),
            run("bb", &["z", "x"], true, "r"),
        ],
        "cmd".to_string(),
    )
    .unwrap();
    let ids: Vec<&str> = both.experiments.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["x", "y", "z"]);
    assert_eq!(both.experiments[1].runs.as_ref().unwrap().folders, ["a"]);
    assert!(
        both.experiments[1]
            .reason
            .contains("on one run: no interval"),
        "{}",
        both.experiments[1].reason
    );
    assert_eq!(both.runs.len(), 2);
    assert_eq!(both.started, "2026-01-01T00:01:00Z");
}
