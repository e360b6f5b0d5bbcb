//! The tail next to the speed: every operation kind's p99.99 and max in the workload
//! tables, and each implementation's slowest call in the summary's rankings.

use super::*;
use crate::charts::nanoseconds_label;
use crate::figures::slowest_call;
use crate::write_report;

/// The page of one run of every cell.
fn one_run() -> String {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    write_run(&folder, "alpha", 1.0);
    let output = folder.join("report.html");
    write_report(std::slice::from_ref(&folder), &output, None, &catalog()).unwrap();
    std::fs::read_to_string(&output).unwrap()
}

/// The table row of `implementation` at `timers` in the table of `workload`.
fn row<'h>(html: &'h str, workload: &str, timers: u64, implementation: &str) -> &'h str {
    let table = section(html, "workloads");
    let start = table
        .find(&format!("id=\"w-{workload}\""))
        .unwrap_or_else(|| panic!("no table of {workload}"));
    let table = &table[start..];
    let table = &table[..table.find("</table>").unwrap()];
    let size = format!(">{} timers</th>", crate::figures::thousands(timers));
    let block = &table[table.find(&size).unwrap()..];
    let block = block[size.len()..]
        .find(" timers</th>")
        .map_or(block, |end| &block[..size.len() + end]);
    block
        .split("<tr>")
        .find(|row| row.contains(&format!("</span>{implementation}")))
        .unwrap_or_else(|| panic!("no row of {implementation} at {timers}"))
}

#[test]
fn the_slowest_call_is_the_largest_max_over_the_kinds() {
    let mut record = record("keepalive", "keepalive", 1_000, "btree", 1.0);
    // In the fixture the later kinds are the slower: advance.
    let advance = record.latency["advance"].percentiles["max"];
    assert_eq!(slowest_call(&record), Some(("advance", advance)));
    // A start that stalled longer than any advance is the slowest call.
    let start = record.latency.get_mut("start").unwrap();
    start.percentiles.insert("max".to_string(), advance + 1);
    assert_eq!(slowest_call(&record), Some(("start", advance + 1)));
    // A cell that did not verify has no figures, hence no slowest call.
    record.status = Status::Failed;
    assert_eq!(slowest_call(&record), None);
}

#[test]
fn the_workload_tables_show_every_kinds_p99_99_and_max() {
    let html = one_run();
    let workloads = section(&html, "workloads");
    // A header per kind, once per workload table.
    assert_eq!(
        workloads
            .matches("<span class=\"note\">p99.99 / max</span>")
            .count(),
        3 * WORKLOADS.len()
    );
    for (workload, family) in WORKLOADS {
        let clock = if *family == "keepalive" {
            "advance"
        } else {
            "next"
        };
        for &timers in SIZES {
            for implementation in IMPLEMENTATIONS {
                let record = record(workload, family, timers, implementation, 1.0);
                let row = row(&html, workload, timers, implementation);
                if record.status != Status::Ok {
                    assert!(!row.contains(" / "), "{row}");
                    continue;
                }
                // The kinds in the registry's order, after ns/op.
                let mut at = row.find(" ± ").expect("ns/op first");
                for kind in ["start", "stop", clock] {
                    let figures = &record.latency[kind].percentiles;
                    let cell = format!(
                        ">{} / {}</td>",
                        nanoseconds_label(figures["p99.99"] as f64),
                        nanoseconds_label(figures["max"] as f64)
                    );
                    let found = row[at..]
                        .find(&cell)
                        .unwrap_or_else(|| panic!("no {kind} tail {cell} in {row}"));
                    at += found + cell.len();
                }
            }
        }
    }
    // A known cell: btree's advance at 1,000 timers takes 30 ns per operation line, so its
    // advance latency has a base of 90 ns, a p99.99 of 100 times it and a max of 1000.
    let row = row(&html, "keepalive", 1_000, "btree");
    assert!(
        row.contains("title=\"advance: 99.99th percentile 9 µs, slowest of 2,000 calls 90 µs\">9 µs / 90 µs</td>"),
        "{row}"
    );
}

#[test]
fn the_summary_shows_each_implementations_slowest_call() {
    let html = one_run();
    let summary = section(&html, "summary");
    assert!(summary.contains(">slowest call</th>"));
    assert!(summary.contains("<th>slowest at</th>"));
    // btree's slowest call over all workloads: the next of hold-exponential at a million
    // timers (40 ns per operation line, a base of 120 ns, a max of 1000 times it), the
    // first of the cells with that figure (burst at a million ties).
    let overall = &summary[summary.find("<h4>All workloads</h4>").unwrap()..];
    let overall = &overall[..overall.find("</table>").unwrap()];
    let btree = overall
        .split("<tr>")
        .find(|row| row.contains("</span>btree"))
        .unwrap();
    assert!(
        btree.contains(
            "<span class=\"note\">next</span> 120 µs</td><td>hold-exponential at 1,000,000</td>"
        ),
        "{btree}"
    );
    // In the keepalive card, where btree timed out at a million timers: its advance at
    // 100,000 (36 ns per line, a base of 108 ns), the cell named in the tooltip.
    let card = &summary[summary.find("<h4>keepalive</h4>").unwrap()..];
    let card = &card[..card.find("</table>").unwrap()];
    let btree = card
        .split("<tr>")
        .find(|row| row.contains("</span>btree"))
        .unwrap();
    assert!(
        btree.contains(
            "title=\"advance took 108 µs (108000 ns) on keepalive at 100,000\"><span \
             class=\"note\">advance</span> 108 µs</td>"
        ),
        "{btree}"
    );
    // Every ranked implementation has one, as the records give it.
    for implementation in IMPLEMENTATIONS {
        let slowest = records(1.0)
            .iter()
            .filter(|r| r.key.implementation == *implementation)
            .filter_map(slowest_call)
            .map(|(_, ns)| ns)
            .max()
            .unwrap();
        let label = format!("</span> {}</td>", nanoseconds_label(slowest as f64));
        assert!(overall.contains(&label), "{implementation}: {label}");
    }
}

#[test]
fn a_slowest_call_measured_under_load_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let mut records = records(1.0);
    // btree's slowest cell, on a machine of two CPUs with a load average of 2.5.
    let loaded = records
        .iter_mut()
        .find(|r| {
            r.key.workload == "hold-exponential"
                && r.key.timers == 1_000_000
                && r.key.implementation == "btree"
        })
        .unwrap();
    loaded.conditions = vec![timerbench_results::Conditions {
        role: "full".to_string(),
        cpu: Some(1),
        load_before: Some(2.5),
        load_after: Some(2.5),
        governor: None,
        cpus: 2,
        calibration_ns: None,
        memory_probe_before_ns: None,
        memory_probe_after_ns: None,
        started_unix_ms: None,
    }];
    write_folder(&folder, &records, &environment("alpha", "abc1234"));
    let output = folder.join("report.html");
    write_report(std::slice::from_ref(&folder), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    let summary = section(&html, "summary");
    assert!(summary.contains(
        "120 µs</td><td>hold-exponential at 1,000,000 <span class=\"badge load\" title=\"this \
         cell was measured under load"
    ));
}
