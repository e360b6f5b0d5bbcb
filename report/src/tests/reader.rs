//! What a reader takes away: a run with 16 implementations (more than the palette has
//! colours), two approximate ones faster than every exact one, and an exact one fastest
//! on the only size it ran. The headline must name an exact structure, no family's best may
//! have fewer cells than the family's most, and no two lines may look alike.

use super::*;
use crate::write_report;
use std::collections::BTreeSet;

/// The exact implementations with every cell, slowest last.
const EXACT: usize = 13;
/// An exact one that ran at the smallest size only, where it is the fastest of all.
const PARTIAL: &str = "partial-scan";
/// Approximate ones, faster than any exact one.
const APPROXIMATE: &[&str] = &["coarse-ring", "coarse-wheel"];

fn exact_name(index: usize) -> String {
    format!("exact-{index:02}")
}

/// A verified cell of `name` at `ns` per operation.
fn cell((workload, family): (&str, &str), timers: u64, name: &str, ns: f64) -> CellRecord {
    let mut record = record(workload, family, timers, "btree", 1.0);
    record.key.implementation = name.to_string();
    record.implementation_base = name.to_string();
    record.throughput = Some(throughput(ns));
    record
}

fn run_records() -> Vec<CellRecord> {
    let mut records = Vec::new();
    for &(workload, family) in WORKLOADS {
        for &timers in SIZES {
            for index in 0..EXACT {
                let ns = 50.0 + 5.0 * index as f64;
                records.push(cell((workload, family), timers, &exact_name(index), ns));
            }
            let mut partial = cell((workload, family), timers, PARTIAL, 10.0);
            if timers != SIZES[0] {
                partial.status = Status::Skipped;
                partial.reason = Some("above its suite limit of 60,000 timers".to_string());
                partial.throughput = None;
                partial.latency.clear();
            }
            records.push(partial);
            for (index, name) in APPROXIMATE.iter().enumerate() {
                let mut record = cell((workload, family), timers, name, 5.0 + index as f64);
                record.precision = Some("approximate: less than one bucket late".to_string());
                records.push(record);
            }
        }
    }
    records
}

fn reader_catalog() -> Catalog {
    let mut catalog = catalog();
    let names = (0..EXACT)
        .map(exact_name)
        .chain([PARTIAL.to_string()])
        .chain(APPROXIMATE.iter().map(|n| n.to_string()));
    catalog.implementations = names
        .map(|name| Described {
            summary: format!("what {name} is"),
            name,
            parameters: Vec::new(),
        })
        .collect();
    catalog
}

/// The values of `attribute="..."` in `html`, in order.
fn attributes<'h>(html: &'h str, attribute: &str) -> Vec<&'h str> {
    let opening = format!(" {attribute}=\"");
    html.split(&opening)
        .skip(1)
        .map(|rest| &rest[..rest.find('"').expect("a closed attribute")])
        .collect()
}

#[test]
fn a_reader_sees_exact_winners_with_full_coverage_and_every_line_apart() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let records = run_records();
    write_folder(&folder, &records, &environment("host", "abc1234"));
    let output = dir.path().join("report.html");
    write_report(&[folder], &output, None, &reader_catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();

    // The headline names the fastest exact structure that ran every cell: not an
    // approximate one, not the one fastest on the smallest size alone.
    let fastest = attributes(&html, "data-fastest");
    assert_eq!(fastest, [exact_name(0).as_str()], "the headline's fastest");
    let summary = section(&html, "summary");
    let headline = &summary[summary.find("class=\"headline\"").unwrap()..];
    let headline = &headline[..headline.find("</p>").unwrap()];
    assert!(headline.contains("fastest exact structure"), "{headline}");
    for name in APPROXIMATE {
        assert!(
            headline.contains(name),
            "{name} is weighed apart: {headline}"
        );
    }

    // Every ranking table: its first row covers as many cells as any of its rows, and the
    // partial one is marked and never ranked first; the approximate ones are in tables of
    // their own.
    let tables: Vec<&str> = summary.split("<table").skip(1).collect();
    assert!(
        tables.len() >= 2 * (1 + WORKLOADS.len()),
        "exact and approximate tables"
    );
    for table in tables {
        let kind = attributes(table, "data-table")[0];
        let names = attributes(table, "data-implementation");
        let cells: Vec<usize> = attributes(table, "data-cells")
            .iter()
            .map(|c| c.parse().unwrap())
            .collect();
        let most = *cells.iter().max().unwrap();
        assert_eq!(
            cells[0], most,
            "{kind} table led by {} with fewer cells",
            names[0]
        );
        assert_eq!(
            names.iter().any(|n| APPROXIMATE.contains(n)),
            kind == "approximate",
            "{kind} table holds {names:?}"
        );
        if kind == "exact" {
            let at = names
                .iter()
                .position(|n| *n == PARTIAL)
                .expect("the partial one");
            assert_ne!(at, 0, "the partial one leads a table");
            assert_eq!(attributes(table, "data-partial")[at], "true");
        }
    }

    // Every line of every chart: 16 implementations, no two alike in colour and dash,
    // and each drawn the same way in every chart.
    let mut looks: BTreeMap<String, String> = BTreeMap::new();
    let mut charts = 0;
    for series in attributes(&html, "data-series") {
        charts += 1;
        let mut seen = BTreeSet::new();
        for line in series.split(';') {
            let (name, look) = line.split_once('|').unwrap();
            assert!(seen.insert(look), "two lines of one chart look like {look}");
            let first = looks.entry(name.to_string()).or_insert(look.to_string());
            assert_eq!(first, look, "{name} changes its look between charts");
        }
    }
    assert!(charts > 0, "the page has charts");
    assert_eq!(looks.len(), EXACT + 1 + APPROXIMATE.len(), "{looks:?}");
    let distinct: BTreeSet<&String> = looks.values().collect();
    assert_eq!(
        distinct.len(),
        looks.len(),
        "two implementations look alike"
    );
}
