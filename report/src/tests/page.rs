//! What the page shows: every section, workload, implementation and chart, well-formed
//! SVG, escaped names, nothing fetched; one run or several side by side.

use super::*;
use crate::SECTIONS;
use crate::write_report;
use std::path::PathBuf;

#[test]
fn two_runs_side_by_side_with_every_section_implementation_and_chart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("run-a"), dir.path().join("run-b"));
    write_run(&a, "alpha", 1.0);
    write_run(&b, "beta", 0.8);
    let output = dir.path().join("out/report.html");
    let png = dir.path().join("png");
    let written = write_report(&[a.clone(), b.clone()], &output, Some(&png), &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();

    // Every section, in order (the live runs and the threads study need their records:
    // tests/extras.rs; the hosts need runs of two CPU models or labels, which these two of
    // one CPU are not: harness/tests/shards.rs).
    let mut at = 0;
    for (anchor, heading) in SECTIONS
        .iter()
        .filter(|(a, _)| !["live", "threads", "hosts"].contains(a))
    {
        let position = html
            .find(&format!("<section id=\"{anchor}\"><h2>{heading}</h2>"))
            .unwrap_or_else(|| panic!("no section {heading}"));
        assert!(position > at, "{heading} out of order");
        at = position;
    }
    // Every workload with its description, every implementation in its section.
    for (workload, _) in WORKLOADS {
        assert!(html.contains(&format!("<h3>{workload}</h3>")), "{workload}");
    }
    assert!(
        html.contains("idle-connection timeouts"),
        "what keepalive models"
    );
    let implementations = section(&html, "implementations");
    for implementation in IMPLEMENTATIONS {
        assert!(implementations.contains(implementation), "{implementation}");
    }
    assert!(implementations.contains("badge peer"), "the peer is marked");

    // Every chart: per workload and run, ns/op and bytes against size, a latency curve per
    // kind, and for keepalive the advance series.
    let mut expected = Vec::new();
    for (workload, family) in WORKLOADS {
        let clock = if *family == "keepalive" {
            "advance"
        } else {
            "next"
        };
        let mut kinds = vec!["ns-per-op", "bytes-per-timer"];
        let latency: Vec<String> = ["start", "stop", clock]
            .iter()
            .map(|k| format!("latency-{k}"))
            .collect();
        kinds.extend(latency.iter().map(String::as_str));
        // The advance over the run: one small chart per implementation.
        let series: Vec<String> = IMPLEMENTATIONS
            .iter()
            .map(|i| format!("advance-series-{i}"))
            .collect();
        if *family == "keepalive" {
            kinds.extend(series.iter().map(String::as_str));
        }
        for kind in kinds {
            for run in ["A", "B"] {
                expected.push(format!("chart-{workload}-{kind}-{run}"));
            }
        }
    }
    for id in &expected {
        assert!(html.contains(&format!("id=\"{id}\"")), "no chart {id}");
    }
    assert_eq!(written.charts, expected.len());
    assert_eq!(
        html.matches("<figure class=\"chart\"").count(),
        expected.len()
    );
    assert_eq!(written.runs, 2);
    assert_eq!(
        written.cells,
        2 * WORKLOADS.len() * SIZES.len() * IMPLEMENTATIONS.len()
    );

    // Each SVG is well-formed XML, with axis labels and every implementation in its legend.
    let svgs = svgs(&html);
    assert_eq!(svgs.len(), expected.len());
    for svg in &svgs {
        let document = roxmltree::Document::parse(svg)
            .unwrap_or_else(|e| panic!("an SVG is not well-formed XML: {e}"));
        assert_eq!(document.root_element().tag_name().name(), "svg");
        let text: String = document
            .descendants()
            .filter(|n| n.is_text())
            .filter_map(|n| n.text())
            .collect();
        assert!(text.contains("log scale") || text.contains("(B)") || text.contains("(count)"));
        if text.contains("slowest advance per window") {
            // A small multiple: its title names its one implementation.
            assert!(
                IMPLEMENTATIONS
                    .iter()
                    .any(|i| text.starts_with(i) || text.contains(&format!("{i}:")))
            );
        } else {
            for implementation in IMPLEMENTATIONS {
                assert!(
                    text.contains(implementation),
                    "legend lacks {implementation}"
                );
            }
        }
    }
    // The peer's lines are dashed: many short segments of its colour.
    assert!(html.contains("peer"), "peers are marked");

    // Cells that did not verify: each listed with its reason, in both runs.
    let failures = section(&html, "not-verified");
    for (workload, timers, implementation, status, reason) in BAD {
        let escaped = escaped(reason);
        assert_eq!(
            failures.matches(&escaped).count(),
            2,
            "{workload} {timers} {implementation}"
        );
        let word = serde_json::to_value(status).unwrap();
        assert!(failures.contains(word.as_str().unwrap()));
    }
    assert!(!failures.contains("<at>"), "reasons are escaped");

    // The runs side by side: the ratio B/A in the tables, and the comparison section.
    assert!(html.contains("B/A"));
    assert!(section(&html, "comparison").contains("0.80×"));
    // The environment and the command that reproduces the run.
    let environment = section(&html, "environment");
    for text in [
        "alpha",
        "beta",
        "Test CPU",
        "git checkout abc1234",
        "timerbench run --suite default",
    ] {
        assert!(environment.contains(text), "{text}");
    }
    // The summary ranks per family and says what the geometric mean hides.
    let summary = section(&html, "summary");
    assert!(summary.contains("What the geometric mean hides"));
    for (_, family) in WORKLOADS {
        assert!(summary.contains(&format!("<h4>{family}</h4>")), "{family}");
    }
    // The fastest implementation is hold's best, in bold.
    assert!(html.contains("class=\"num sep best\""));
    // Every implementation here is exact: the lateness section says so and draws nothing.
    let lateness = section(&html, "lateness");
    assert!(lateness.contains("No approximate implementation was run"));
    assert!(!lateness.contains("<svg"));

    check_self_contained(&html);

    // The PNGs: one per chart.
    for id in &expected {
        let path = png.join(format!("{}.png", id.trim_start_matches("chart-")));
        let bytes = std::fs::read(&path).unwrap_or_else(|_| panic!("no {}", path.display()));
        assert!(bytes.starts_with(b"\x89PNG"), "{}", path.display());
    }
}

#[test]
fn one_run_has_no_comparison_and_every_cell() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("run");
    write_run(&a, "alpha", 1.0);
    let output = a.join("report.html");
    write_report(std::slice::from_ref(&a), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    assert!(!html.contains("<section id=\"comparison\">"));
    for implementation in IMPLEMENTATIONS {
        let id = format!("id=\"chart-keepalive-advance-series-{implementation}\"");
        assert!(html.contains(&id), "{id}");
    }
    // Every cell appears in its workload's table, verified or not.
    let rows = html.matches("<tr><td><span class=\"impl\">").count();
    let failed_rows = BAD.len();
    assert!(rows >= WORKLOADS.len() * SIZES.len() * IMPLEMENTATIONS.len() + failed_rows);
    for (.., reason) in BAD {
        let short: String = reason.chars().take(40).collect();
        assert!(html.contains(&escaped(&short)));
    }
    check_self_contained(&html);
}

#[test]
fn names_from_the_results_are_escaped_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("odd");
    std::fs::create_dir_all(&folder).unwrap();
    let odd = "x<&>\"y";
    let mut lines = String::new();
    for &timers in SIZES {
        for implementation in ["btree", PEER] {
            let mut record = record("burst", "burst", timers, implementation, 1.0);
            record.key.workload = odd.to_string();
            record
                .params
                .insert("shape<".to_string(), "\"v\"&".to_string());
            lines.push_str(&serde_json::to_string(&record).unwrap());
            lines.push('\n');
        }
    }
    std::fs::write(folder.join("results.jsonl"), lines).unwrap();
    let output = folder.join("report.html");
    write_report(std::slice::from_ref(&folder), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    assert!(!html.contains(odd) && !html.contains("shape<"));
    assert!(html.contains("x&lt;&amp;&gt;&quot;y"));
    assert!(html.contains("no environment.json"));
    let svgs = svgs(&html);
    assert!(!svgs.is_empty());
    for svg in svgs {
        roxmltree::Document::parse(svg).expect("well-formed with an odd name in its title");
    }
    check_self_contained(&html);
}
#[test]
fn percentile_curves_run_from_the_median_to_the_max() {
    let latency = latency(100, 5_000);
    let curve = crate::figures::percentile_curve(&latency).unwrap();
    assert_eq!(curve[0].0, 1.0);
    assert!(
        curve
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
    );
    let last = curve.last().unwrap();
    assert_eq!(last.0, 5_001.0);
    assert!((last.1 - 100_000.0).abs() / 100_000.0 < 0.01, "{last:?}");
}

/// Writes the synthetic runs into `$TIMERBENCH_REPORT_SAMPLE` (`run-a`, `run-b`), to look at
/// the report they make: `cargo test -p timerbench-report -- --ignored write_sample_runs`.
#[test]
#[ignore = "writes sample results for a person to look at"]
fn write_sample_runs() {
    let Some(dir) = std::env::var_os("TIMERBENCH_REPORT_SAMPLE") else {
        return;
    };
    let dir = PathBuf::from(dir);
    write_run(&dir.join("run-a"), "alpha", 1.0);
    write_run(&dir.join("run-b"), "beta", 0.8);
}

/// The number in `css` right after `after` (`minmax(min(100%, ` → 600).
fn css_px(css: &str, rule: &str, after: &str) -> f64 {
    let start = css
        .find(rule)
        .unwrap_or_else(|| panic!("no rule {rule:?} in report.css"));
    let rule_text = &css[start..start + css[start..].find('}').unwrap()];
    let at = rule_text
        .find(after)
        .unwrap_or_else(|| panic!("no {after:?} in {rule_text}"));
    let digits: String = rule_text[at + after.len()..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().unwrap()
}

/// At 1,400 px, the family cards of the summary come two a row at most, so that a card's
/// ranking table (rank, name, × best, cells, lateness, worst, slowest call) is wide
/// enough for its columns, and in a card a figure with its note may wrap.
#[test]
fn the_family_cards_fit_a_page_1400_px_wide() {
    let css = include_str!("../page/report.css");
    let page = css_px(css, "main {", "max-width: ").min(1400.0);
    let content = page - 2.0 * css_px(css, "main {", "padding: 20px ");
    let column = css_px(css, ".cards {", "minmax(min(100%, ");
    let gap = css_px(css, ".cards {", "gap: 8px ");
    let per_row = ((content + gap) / (column + gap)).floor();
    assert!(
        (1.0..=2.0).contains(&per_row),
        "{per_row} cards a row of {content} px"
    );
    assert!(
        css.contains(".card td.num, .card th.num, .card th { white-space: normal; }"),
        "figures and headers in a card may wrap"
    );
}
