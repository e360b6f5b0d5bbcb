//! The findings of `timerbench reproduce` in HTML: the page of its own, and the Findings
//! section of an experiment's run report (`DIR/<id>/` beside `DIR/findings.json`), which a
//! run that is not an experiment's never shows.

use std::path::Path;
use timerbench_report::{Catalog, write_findings_page, write_report};
use timerbench_results::{
    CellReading, FigureValue, Finding, Findings, PublishedFigure, ReusedCells, Verdict,
    write_findings,
};

/// A finding about the schema-1 fixture's start-stop cells, as reproduce writes one.
fn findings(id: &str) -> Findings {
    let cell = |timers, implementation: &str, value| CellReading {
        workload: "start-stop".to_string(),
        timers,
        implementation: implementation.to_string(),
        status: "ok".to_string(),
        value: Some(value),
        reason: None,
    };
    Findings {
        schema: 1,
        quick: true,
        started: "2026-11-24T06:00:00Z".to_string(),
        command: "timerbench reproduce --quick".to_string(),
        git_revision: "abc".to_string(),
        experiments: vec![Finding {
            id: id.to_string(),
            title: "A claim <of> the literature".to_string(),
            claim: "the wheel is flat".to_string(),
            source: "a paper".to_string(),
            published: vec![PublishedFigure {
                label: "flat".to_string(),
                value: 1.0,
                unit: "ns".to_string(),
            }],
            measured: "hierarchical-wheel on start-stop".to_string(),
            field: "throughput.ns_per_op.median".to_string(),
            figure: "the slope".to_string(),
            rule: "holds at most 0.15".to_string(),
            rule_data: serde_json::json!({ "holds": { "at_most": 0.15 } }),
            folder: id.to_string(),
            records: None,
            axis: None,
            reused: vec![ReusedCells {
                experiment: "earlier".to_string(),
                cells: 1,
            }],
            cells: vec![
                cell(1000, "hierarchical-wheel", 20.0),
                cell(4000, "hierarchical-wheel", 21.0),
            ],
            values: vec![FigureValue {
                label: "start-stop, hierarchical-wheel".to_string(),
                value: Some(0.035),
                text: None,
                verdict: Verdict::Holds,
                implementation: None,
                runs: None,
            }],
            verdict: Verdict::Holds,
            reason: "start-stop, hierarchical-wheel = 0.035".to_string(),
            runs: None,
        }],
        runs: Vec::new(),
    }
}

fn copy_fixture(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-1");
    std::fs::create_dir_all(to).unwrap();
    for file in ["results.jsonl", "environment.json"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
}

fn catalog() -> Catalog {
    Catalog {
        implementations: Vec::new(),
        peers: Vec::new(),
        families: Vec::new(),
        suite_order: Vec::new(),
    }
}

#[test]
fn the_findings_page_has_each_claim_its_chart_and_verdict() {
    let root = tempfile::tempdir().unwrap();
    let page = root.path().join("findings.html");
    write_findings_page(&findings("flat"), &page).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>Findings</h2>"));
    assert!(html.contains("id=\"finding-flat\""));
    assert!(
        html.contains("A claim &lt;of&gt; the literature"),
        "escaped"
    );
    assert!(html.contains("<svg"), "the chart");
    assert!(html.contains("Verdict: holds."));
    assert!(
        html.contains("; 1 of its 2 cells measured in <a href=\"#finding-earlier\">earlier</a>"),
        "the cells another experiment measured"
    );
}

#[test]
fn an_experiments_run_report_has_its_finding_and_another_run_none() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("flat");
    copy_fixture(&run);
    write_findings(root.path(), &findings("flat")).unwrap();
    let output = root.path().join("report.html");
    write_report(std::slice::from_ref(&run), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    assert!(html.contains("<h2>Findings</h2>"));
    assert!(
        html.contains("href=\"#findings\""),
        "linked from the navigation"
    );
    assert!(html.contains("id=\"finding-flat\""));

    let other = root.path().join("other");
    copy_fixture(&other);
    write_report(std::slice::from_ref(&other), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    assert!(!html.contains("<h2>Findings</h2>"));
}
