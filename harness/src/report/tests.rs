//! The report built from records made here: two runs of three workloads at three sizes,
//! three of the project's implementations and a peer, with failed, timed-out and
//! unverified cells.

use super::html::SECTIONS;
use super::*;
use crate::schema::{
    AdvanceSeries, CellKey, CellRecord, Clock, Environment, Latency, Memory, SCHEMA_VERSION,
    Status, Throughput, spread,
};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use std::collections::BTreeMap;

const WORKLOADS: &[(&str, &str)] = &[
    ("hold-exponential", "hold"),
    ("keepalive", "keepalive"),
    ("burst", "burst"),
];
const SIZES: &[u64] = &[1_000, 100_000, 1_000_000];
const IMPLEMENTATIONS: &[&str] = &[
    "btree",
    "binary-heap",
    "hierarchical-wheel",
    "tokio-delay-queue",
];
const PEER: &str = "tokio-delay-queue";

/// The cells that do not verify, with their status and reason (the same in both runs).
const BAD: &[(&str, u64, &str, Status, &str)] = &[
    (
        "hold-exponential",
        1_000_000,
        "binary-heap",
        Status::Failed,
        "the cell process panicked: index out of bounds: the len is 3 but the index is 7 <at> heap.rs:88",
    ),
    (
        "keepalive",
        100_000,
        PEER,
        Status::Unverified,
        "first difference at firing 17: timer 42 fired at tick 1001, the reference fires it at tick 1000",
    ),
    (
        "keepalive",
        1_000_000,
        "btree",
        Status::Timeout,
        "killed after the time limit of 1800 s",
    ),
];

fn histogram_v2(base: u64, count: u64) -> String {
    use base64::Engine;
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
    for i in 0..count {
        // A body around `base` and a tail up to 1000 times it.
        let value = base + (i * 7919) % base.max(1);
        histogram.record(value).unwrap();
    }
    histogram.record(base * 1000).unwrap();
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(&histogram, &mut bytes)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn latency(base: u64, count: u64) -> Latency {
    let mut percentiles = BTreeMap::new();
    for (name, factor) in [
        ("p50", 1),
        ("p90", 2),
        ("p99", 3),
        ("p99.9", 10),
        ("p99.99", 100),
    ] {
        percentiles.insert(name.to_string(), base * factor);
    }
    percentiles.insert("max".to_string(), base * 1000);
    Latency {
        count,
        mean_ns: base as f64 * 1.2,
        percentiles,
        histogram_v2: histogram_v2(base, count),
    }
}

fn record(
    workload: &str,
    family: &str,
    timers: u64,
    implementation: &str,
    speedup: f64,
) -> CellRecord {
    let index = IMPLEMENTATIONS
        .iter()
        .position(|i| *i == implementation)
        .unwrap() as f64;
    let bad = BAD
        .iter()
        .find(|(w, t, i, ..)| *w == workload && *t == timers && *i == implementation);
    let ns = (20.0 + 15.0 * index) * (1.0 + (timers as f64).log10() / 6.0) * speedup;
    let mut kinds = vec!["start", "stop"];
    kinds.push(if family == "keepalive" {
        "advance"
    } else {
        "next"
    });
    let verified = bad.is_none();
    CellRecord {
        schema: SCHEMA_VERSION,
        key: CellKey {
            workload: workload.to_string(),
            timers,
            implementation: implementation.to_string(),
        },
        family: family.to_string(),
        params: BTreeMap::new(),
        ops: None,
        seed: 1,
        generator: format!("timerbench gen {family} --timers {timers} --seed 1"),
        peer: implementation == PEER,
        status: bad.map_or(Status::Ok, |b| b.3),
        reason: bad.map(|b| b.4.to_string()),
        operations: timers * 4,
        fired: timers,
        reference_digest: "0123".to_string(),
        digest: verified.then(|| "0123".to_string()),
        throughput: verified.then(|| Throughput {
            repeats: 3,
            ns_per_op: spread(vec![ns, ns * 1.02, ns * 0.99]),
            ns_per_fired: None,
        }),
        latency: if verified {
            kinds
                .iter()
                .enumerate()
                .map(|(k, kind)| {
                    let base = (ns as u64).max(1) * (k as u64 + 1);
                    (kind.to_string(), latency(base, 2_000))
                })
                .collect()
        } else {
            BTreeMap::new()
        },
        clock: verified.then(|| Clock {
            source: "tsc (quanta)".to_string(),
            overhead_ns: 11.5,
        }),
        advance_series: (verified && family == "keepalive").then(|| AdvanceSeries {
            window_ops: timers / 50,
            max_ns: (0..200)
                .map(|w| if w % 40 == 39 { 90_000 } else { 300 + w as u64 } * (index as u64 + 1))
                .collect(),
        }),
        memory: verified.then(|| Memory {
            peak_live_bytes: timers * (24 + 8 * index as u64),
            peak_pending: timers,
            bytes_per_pending_timer: 24.0 + 8.0 * index,
            allocations: 10,
            allocations_per_op: 0.001,
            peak_rss_bytes: 50 << 20,
        }),
        elapsed_seconds: 1.5,
    }
}

fn environment(host: &str, revision: &str) -> Environment {
    Environment {
        schema: SCHEMA_VERSION,
        cpu: "Test CPU @ 3.0GHz".to_string(),
        cores: 2,
        memory_bytes: 24 << 30,
        os: "Debian GNU/Linux 12 (bookworm), Linux 6.1".to_string(),
        rustc: "rustc 1.95.0".to_string(),
        git_revision: revision.to_string(),
        host: host.to_string(),
        command: "target/release/timerbench run --suite default --repeat 3".to_string(),
        started: "2026-11-22T01:00:00Z".to_string(),
        suite: "default".to_string(),
        repeat: 3,
        cell_timeout_seconds: 1800,
    }
}

/// Writes a results folder of every (workload, size, implementation) cell.
fn write_run(folder: &Path, host: &str, speedup: f64) {
    std::fs::create_dir_all(folder).unwrap();
    let mut lines = String::new();
    for (workload, family) in WORKLOADS {
        for &timers in SIZES {
            for implementation in IMPLEMENTATIONS {
                let record = record(workload, family, timers, implementation, speedup);
                lines.push_str(&serde_json::to_string(&record).unwrap());
                lines.push('\n');
            }
        }
    }
    std::fs::write(folder.join("results.jsonl"), lines).unwrap();
    let environment = serde_json::to_string_pretty(&environment(host, "abc1234")).unwrap();
    std::fs::write(folder.join("environment.json"), environment).unwrap();
}

/// Every `<svg ...>...</svg>` of the page.
fn svgs(html: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("every svg is closed") + start + 6;
        found.push(&rest[start..end]);
        rest = &rest[end..];
    }
    found
}

fn section<'h>(html: &'h str, anchor: &str) -> &'h str {
    let start = html
        .find(&format!("<section id=\"{anchor}\">"))
        .unwrap_or_else(|| panic!("no section {anchor}"));
    let end = html[start..]
        .find("\n</section>\n<section id=")
        .map_or(html.len(), |e| start + e);
    &html[start..end]
}

fn check_self_contained(html: &str) {
    let lower = html.to_lowercase();
    for forbidden in [
        "<script", "<link", "src=", "url(", "@import", "<img", "<iframe",
    ] {
        assert!(!lower.contains(forbidden), "the page has {forbidden}");
    }
    // `http` only as the SVG namespace name (never fetched).
    let namespaces = lower.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(
        lower.matches("http").count(),
        namespaces,
        "an external address"
    );
    for href in lower.split("href=\"").skip(1) {
        assert!(
            href.starts_with('#'),
            "a link out of the page: {}",
            &href[..40.min(href.len())]
        );
    }
}

#[test]
fn two_runs_side_by_side_with_every_section_implementation_and_chart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("run-a"), dir.path().join("run-b"));
    write_run(&a, "alpha", 1.0);
    write_run(&b, "beta", 0.8);
    let output = dir.path().join("out/report.html");
    let png = dir.path().join("png");
    let written = write(&[a.clone(), b.clone()], &output, Some(&png)).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();

    // Every section, in order.
    let mut at = 0;
    for (anchor, heading) in SECTIONS {
        let position = html
            .find(&format!("<section id=\"{anchor}\">\n<h2>{heading}</h2>"))
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
        let escaped = super::html::escape(reason);
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
    assert!(section(&html, "lateness").contains("none recorded"));

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
    write_report(std::slice::from_ref(&a), &output, None).unwrap();
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
        assert!(html.contains(&super::html::escape(&short)));
    }
    check_self_contained(&html);
}

#[test]
fn errors_name_the_file_and_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("report.html");
    std::fs::write(&output, "the previous report").unwrap();
    let unchanged = || std::fs::read_to_string(&output).unwrap() == "the previous report";

    let missing = dir.path().join("nowhere");
    let error = format!("{:#}", write_report(&[missing], &output, None).unwrap_err());
    assert!(
        error.contains("nowhere") && error.contains("does not exist"),
        "{error}"
    );
    assert!(unchanged());

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let error = format!("{:#}", write_report(&[empty], &output, None).unwrap_err());
    assert!(error.contains("has no results.jsonl"), "{error}");
    assert!(unchanged());

    let bad = dir.path().join("bad");
    write_run(&bad, "alpha", 1.0);
    let results = bad.join("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{\"schema\": 1, \"workload\": \"burst\"";
    std::fs::write(&results, lines.join("\n") + "\n").unwrap();
    let good = dir.path().join("good");
    write_run(&good, "beta", 1.0);
    let error = format!(
        "{:#}",
        write_report(&[good.clone(), bad.clone()], &output, None).unwrap_err()
    );
    assert!(error.contains("results.jsonl:2"), "{error}");
    assert!(unchanged());

    // A histogram that does not decode is as malformed as a line that does not parse.
    let mut record = record("burst", "burst", 1_000, "btree", 1.0);
    record.latency.get_mut("start").unwrap().histogram_v2 = "AAAA".to_string();
    std::fs::write(&results, serde_json::to_string(&record).unwrap() + "\n").unwrap();
    let error = format!("{:#}", write_report(&[bad], &output, None).unwrap_err());
    assert!(
        error.contains("record 1") && error.contains("`start` latency histogram"),
        "{error}"
    );
    assert!(unchanged());

    // No partial file is left beside the report.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn the_default_folder_is_the_newest_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("results");
    assert!(newest_results_folder(&root).is_err());
    std::fs::create_dir_all(root.join(".cache")).unwrap();
    let error = newest_results_folder(&root).unwrap_err().to_string();
    assert!(error.contains("none under"), "{error}");
    for name in ["2026-11-20-host-aaa", "2026-11-21-host-bbb"] {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join("results.jsonl"), "").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::write(root.join("README.md"), "not a folder").unwrap();
    assert_eq!(
        newest_results_folder(&root).unwrap(),
        root.join("2026-11-21-host-bbb")
    );
}

#[test]
fn percentile_curves_run_from_the_median_to_the_max() {
    let latency = latency(100, 5_000);
    let curve = super::data::percentile_curve(&latency).unwrap();
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
/// the report they make: `cargo test -p timerbench -- --ignored write_sample_runs`.
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
    write_report(std::slice::from_ref(&folder), &output, None).unwrap();
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
