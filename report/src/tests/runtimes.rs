//! The Live section's table of the runtimes' servers beside timerbench's loop: present
//! when a `live.jsonl` holds an engine's keepalive server, its rows those of
//! `crate::runtimes` read off the records, absent otherwise.

use super::extras::{live_record, numbers, row, write_live};
use super::*;
use crate::{Extras, write_report_with};
use timerbench_results::live::{LiveEngine, LiveRecord, TcpFigures};

/// A TCP run at 400 connections: `implementation`, its CPU per second scaled by `scale`,
/// its server's peak RSS 4 MB.
fn tcp_run(implementation: &str, scale: u64) -> LiveRecord {
    let mut record = live_record(implementation, "pwait2", scale, "verified");
    record.tcp = Some(TcpFigures {
        connections: 400,
        connections_why: "requested".into(),
        close_lateness: record.lateness.total,
        server_peak_rss_bytes: 4_096_000,
        ..TcpFigures::default()
    });
    record
}

fn report_of(records: &[LiveRecord]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (run, live) = (dir.path().join("run"), dir.path().join("live"));
    write_run(&run, "alpha", 1.0);
    write_live(&live, records);
    let output = dir.path().join("report.html");
    let extras = Extras {
        live: vec![live],
        threads: Vec::new(),
    };
    write_report_with(&[run], &extras, &output, None, &catalog()).unwrap();
    std::fs::read_to_string(&output).unwrap()
}

#[test]
fn the_live_section_sets_the_runtimes_beside_the_loops_best_exact_structure() {
    let go = LiveRecord {
        wait: "runtime".into(),
        engine: Some(LiveEngine {
            name: "go-runtime".into(),
            runtime: "go".into(),
            runtime_version: "go1.19.8".into(),
            wakeups_of: "not counted: Go's runtime counts no waits".into(),
            ..LiveEngine::default()
        }),
        ..tcp_run("go-runtime", 3)
    };
    let records = [tcp_run("binary-heap", 2), tcp_run("quad-heap", 1), go];
    let html = report_of(&records);
    let section = section(&html, "live");
    assert!(
        section.contains("deployed runtimes beside timerbench"),
        "the table"
    );
    let start = section.find("table class=\"cells live runtimes\"").unwrap();
    let table = &section[start..];
    // quad-heap's CPU is the lesser: the best exact; binary-heap is not a row here.
    let best = row(table, "data-structure=\"quad-heap\"");
    assert!(best.contains("timerbench, best exact"), "{best}");
    assert_eq!(numbers(best)[..3], ["400: requested", "6.02", "262"]);
    let go = row(table, "data-structure=\"go-runtime\"");
    assert!(go.contains("go go1.19.8"), "{go}");
    // No wake-up count: a dash, and the runtime's own words below; 10 KB a connection.
    assert_eq!(numbers(go)[2], "–");
    assert_eq!(numbers(go)[7], "10.0");
    assert!(
        table.contains("wake-ups – for go-runtime: not counted: Go"),
        "{table}"
    );
    let end = table.find("</table>").unwrap();
    assert!(!table[..end].contains("data-structure=\"binary-heap\""));
}

#[test]
fn without_an_engine_server_the_live_section_has_no_runtimes_table() {
    let html = report_of(&[tcp_run("binary-heap", 1)]);
    assert!(!section(&html, "live").contains("deployed runtimes beside timerbench"));
}
