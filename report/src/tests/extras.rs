//! The records besides the runs': the Live runs section (`live.jsonl`) and the Threads
//! section (`threads.jsonl`), from small records made here: their tables hold the records'
//! figures, their charts are drawn, a section is absent without records, and a missing
//! folder or a malformed line is one message naming it, with no report written.

use super::*;
use crate::{Extras, write_report, write_report_with};
use hdrhistogram::Histogram;
use std::path::PathBuf;
use timerbench_results::live::{LIVE_FILE, LIVE_SCHEMA, LiveRecord};
use timerbench_results::threads::{
    Latency as CallLatency, THREADS_FILE, THREADS_SCHEMA, ThreadsRecord,
};

/// A spread as a live record holds it.
fn spread(count: u64, p50: u64, p99: u64, p999: u64, max: u64) -> serde_json::Value {
    serde_json::json!({"count": count, "p50_ns": p50, "p99_ns": p99, "p999_ns": p999, "max_ns": max})
}

/// A loop phase as a live record holds it.
fn usage(wakeups_per_second: f64, useless_per_second: f64, cpu_ms: f64) -> serde_json::Value {
    serde_json::json!({
        "wall_ns": 1_000_000_000u64, "wakeups": wakeups_per_second as u64,
        "useless_wakeups": useless_per_second as u64, "wakeups_per_second": wakeups_per_second,
        "useless_per_second": useless_per_second, "cpu_ns": (cpu_ms * 1e6) as u64,
        "cpu_ms_per_second": cpu_ms, "voluntary_switches": 10, "involuntary_switches": 0,
    })
}

/// A live record of `implementation` with `wait`, its figures scaled by `scale`. Read from
/// JSON as a `live.jsonl` line is, so that fields a later live schema adds with a default
/// need nothing here.
pub(super) fn live_record(
    implementation: &str,
    wait: &str,
    scale: u64,
    status: &str,
) -> LiveRecord {
    let lateness = spread(
        2_000,
        40_000 * scale,
        1_020_927 * scale,
        3_481_599 * scale,
        3_500_000 * scale,
    );
    let mut json = serde_json::json!({
        "schema": LIVE_SCHEMA, "started": "2026-11-26T09:15:56Z", "git_revision": "6a19c7d8c7",
        "host": "testhost", "kernel": "6.18.44", "clock_source": "tsc",
        "implementation": implementation, "precision": "exact",
        "workload": "keepalive-200", "peak_pending": 200, "tick_ns": 1_000_000,
        "wait": wait, "period_ns": if wait == "tick" { Some(10_000_000u64) } else { None },
        "timer_slack_ns": 50_000, "policy": "other", "priority": 0,
        "loop_cpu": null, "feeder_cpu": null, "duration_limit_ns": 2_000_000_000u64,
        "status": status,
        "reasons": if status == "verified" { vec![] } else { vec!["timer 7 fired at tick 12, the model at tick 11"] },
        "end_tick": 1000, "cut_at_tick": null,
        "arrivals": {"fill": 200, "scheduled": 157, "sent": 157, "applied": 157,
                     "starts_as_restarts": 0, "behind": spread(157, 1, 2, 3, 4)},
        "firings": 200 * scale,
        "lateness": {"total": lateness, "rounding": spread(0, 0, 0, 0, 0),
                     "wake": spread(0, 0, 0, 0, 0), "dispatch": spread(0, 0, 0, 0, 0),
                     "early": 0, "most_early_ns": 0},
        "baseline": spread(171, 89_087, 1_911_807, 2_852_863, 2_852_863),
        "workload_phase": usage(262.21 * scale as f64, 9.0, 6.017 * scale as f64),
        "idle_phase": usage(if wait == "tick" { 100.0 } else { 0.0 }, 0.0, 0.11),
        "timerfd_rearms": 0, "missed_ticks": 0,
    });
    // The pwait2 run has a loaded baseline; the tick ones stand for records without one.
    if wait == "pwait2" {
        json["loaded_baseline"] = serde_json::json!({
            "lateness": spread(171, 95_000, 1_950_000, 2_900_000, 2_900_000), "arrivals": 157,
        });
    }
    serde_json::from_value(json).expect("a live record")
}

pub(super) fn write_live(folder: &Path, records: &[LiveRecord]) {
    std::fs::create_dir_all(folder).unwrap();
    let lines: String = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(folder.join(LIVE_FILE), lines).unwrap();
}

/// A call's latency: `count` calls of `base` ns and one of `slowest` (none when `count` is
/// 0). Values below 2,048 are exact in a 3-digit HdrHistogram.
fn call(base: u64, count: u64, slowest: u64) -> CallLatency {
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
    if count > 0 {
        histogram.record_n(base, count).unwrap();
        histogram.record(slowest).unwrap();
    }
    CallLatency::of(&histogram).unwrap()
}

fn threads_record(scheme: &str, implementation: &str, threads: usize, ops: f64) -> ThreadsRecord {
    let helpers = if scheme == "owner" { 2 } else { 1 };
    // Producer 1's starts take 100 ns, producer 2's 300 ns and it makes twice as many: over
    // both, the median is 300.
    let producer = |index: usize| {
        BTreeMap::from([
            (
                "start".to_string(),
                call(100 + 200 * index as u64, 1_000 * (index as u64 + 1), 1_500),
            ),
            ("stop".to_string(), call(70, 1_000, 2_000)),
            ("restart".to_string(), call(0, 0, 0)),
        ])
    };
    ThreadsRecord {
        schema: THREADS_SCHEMA,
        scheme: scheme.to_string(),
        shards: 1,
        implementation: implementation.to_string(),
        threads,
        helper_threads: helpers,
        cores: 2,
        oversubscribed: threads + helpers > 2,
        workload: "start-stop-1024".to_string(),
        seed: 1,
        cross_share: 0.5,
        operations: 4_000,
        cross_stops: 500,
        wall_ns: 1_000_000,
        ops_per_second: ops,
        latency: (0..threads).map(producer).collect(),
        cross_stop: call(1_187, 50, 1_843),
        peak_queued: 37,
        peak_queued_bytes: 1_184,
        owner_cpu_share: (scheme == "owner").then_some(0.44),
        verified: scheme != "per-thread" || threads == 1,
        offence: (scheme == "per-thread" && threads > 1)
            .then(|| "timer 99 on shard 1 fired after its stop was acknowledged".to_string()),
    }
}

fn write_threads(folder: &Path, records: &[ThreadsRecord]) {
    std::fs::create_dir_all(folder).unwrap();
    let lines: String = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(folder.join(THREADS_FILE), lines).unwrap();
}

fn threads_records() -> Vec<ThreadsRecord> {
    let mut records = Vec::new();
    for threads in [1, 2] {
        for scheme in ["global-lock", "owner", "per-thread"] {
            records.push(threads_record(
                scheme,
                "binary-heap",
                threads,
                4.2e6 / threads as f64,
            ));
        }
    }
    records
}

/// A results folder, a live folder and a threads folder.
fn folders(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let (run, live, threads) = (dir.join("run"), dir.join("live"), dir.join("threads"));
    write_run(&run, "alpha", 1.0);
    write_live(
        &live,
        &[
            live_record("hierarchical-wheel", "pwait2", 1, "verified"),
            live_record("hierarchical-wheel", "tick", 2, "verified"),
            live_record("netty-wheel:tick=10", "tick", 3, "unverified"),
        ],
    );
    write_threads(&threads, &threads_records());
    (run, live, threads)
}

/// The table row of `section` whose attributes include `attributes`.
pub(super) fn row<'h>(section: &'h str, attributes: &str) -> &'h str {
    let start = section
        .find(&format!("<tr {attributes}>"))
        .unwrap_or_else(|| panic!("no row {attributes}"));
    let end = section[start..].find("</tr>").unwrap() + start;
    &section[start..end]
}

/// The numbers of a row, in order.
pub(super) fn numbers(row: &str) -> Vec<&str> {
    row.split("<td class=\"num")
        .skip(1)
        .map(|cell| {
            let cell = &cell[cell.find('>').unwrap() + 1..];
            let end = cell.find(['<']).unwrap();
            &cell[..end]
        })
        .collect()
}

#[test]
fn the_live_section_shows_each_run_beside_its_bare_loop() {
    let dir = tempfile::tempdir().unwrap();
    let (run, live, _) = folders(dir.path());
    let output = dir.path().join("report.html");
    let extras = Extras {
        live: vec![live.clone()],
        threads: Vec::new(),
    };
    let written = write_report_with(&[run], &extras, &output, None, &catalog()).unwrap();
    assert_eq!((written.live, written.threads), (3, 0));
    let html = std::fs::read_to_string(&output).unwrap();
    assert!(
        html.contains("<a href=\"#live\">Live runs</a>"),
        "in the navigation"
    );
    assert!(
        !html.contains("<section id=\"threads\">"),
        "no threads records, no section"
    );
    let section = section(&html, "live");
    assert!(section.contains("testhost") && section.contains("kernel 6.18.44"));

    // Firings, early; lateness p50/p99/p99.9/max; the bare loop's; the loaded loop's p99;
    // wakeups all/useless; CPU ms/s; idle wakeups/s: in µs, as the record's nanoseconds.
    let pwait2 = row(
        section,
        "data-structure=\"hierarchical-wheel\" data-wait=\"pwait2\"",
    );
    assert_eq!(
        numbers(pwait2),
        [
            "200", "0", "40.0", "1,021", "3,482", "3,500", "89.1", "1,912", "2,853", "2,853",
            "1,950", "262", "9.0", "6.02", "0.0"
        ]
    );
    assert!(pwait2.contains("<span class=\"badge verified\">verified</span>"));
    let tick = row(
        section,
        "data-structure=\"hierarchical-wheel\" data-wait=\"tick\"",
    );
    assert!(
        tick.contains("<td>tick/10ms</td>"),
        "the period with the wait"
    );
    assert_eq!(numbers(tick)[2..6], ["80.0", "2,042", "6,963", "7,000"]);
    assert_eq!(numbers(tick)[10], "–", "a record with no loaded baseline");
    assert_eq!(
        numbers(tick)[14],
        "100",
        "a tick-driven loop wakes when idle"
    );
    let netty = row(
        section,
        "data-structure=\"netty-wheel:tick=10\" data-wait=\"tick\"",
    );
    assert!(netty.contains("<span class=\"badge unverified\">unverified</span>"));
    assert!(section.contains("timer 7 fired at tick 12, the model at tick 11"));
    assert!(
        !section.contains("TCP connections"),
        "no TCP run, no TCP columns"
    );

    // A lateness chart per structure, and CPU against wakeups; lines in the live scopes.
    let id = "chart-live-1-keepalive-200";
    for chart in [
        format!("{id}-lateness-hierarchical-wheel"),
        format!("{id}-lateness-netty-wheel-tick-10"),
        format!("{id}-cpu"),
    ] {
        assert!(
            section.contains(&format!("id=\"{chart}\"")),
            "no chart {chart}"
        );
    }
    assert!(section.contains("data-series=\"pwait2|#0072b2|solid;bare pwait2|#0072b2|dotted"));
    assert!(section.contains("data-scope=\"live-lateness\""));
    assert!(section.contains("data-scope=\"live-cpu\""));
    for svg in svgs(section) {
        roxmltree::Document::parse(svg).expect("each SVG is well-formed XML");
    }
    check_self_contained(&html);
}

#[test]
fn the_threads_section_shows_each_scheme_at_each_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let (run, _, threads) = folders(dir.path());
    let output = dir.path().join("report.html");
    let extras = Extras {
        live: Vec::new(),
        threads: vec![threads.join(THREADS_FILE)],
    };
    let written = write_report_with(&[run], &extras, &output, None, &catalog()).unwrap();
    assert_eq!((written.live, written.threads), (0, 6));
    let html = std::fs::read_to_string(&output).unwrap();
    assert!(
        !html.contains("<section id=\"live\">"),
        "no live records, no section"
    );
    let section = section(&html, "threads");

    // Mops/s; start, stop, restart p50/p99/p99.99 over both producers; cross stop p50/p99;
    // pending stops (commands, bytes); owner CPU.
    let owner = row(
        section,
        "data-structure=\"binary-heap\" data-scheme=\"owner\" data-threads=\"2\"",
    );
    let figures = numbers(owner);
    assert_eq!(figures[1], "2.10", "Mops/s");
    // 1,000 starts at 100 ns and 2,000 at 300 ns, and one of 1,500 ns each.
    assert_eq!(
        figures[2..5],
        ["300", "300", "1,500"],
        "start over both producers"
    );
    assert_eq!(figures[5..8], ["70", "70", "2,000"], "stop");
    assert_eq!(figures[8..11], ["–", "–", "–"], "no restart");
    assert_eq!(figures[11..13], ["1,187", "1,843"], "cross-thread stop");
    assert_eq!(figures[13..16], ["37", "1,184", "44%"]);
    assert!(
        owner.contains("badge over"),
        "2 producers and 2 helpers on 2 cores"
    );
    let alone = row(
        section,
        "data-structure=\"binary-heap\" data-scheme=\"global-lock\" data-threads=\"1\"",
    );
    assert!(
        !alone.contains("badge over"),
        "1 producer and the ticker fit 2 cores"
    );
    assert_eq!(numbers(alone)[15], "–", "no owner");
    assert!(section.contains("timer 99 on shard 1 fired after its stop was acknowledged"));
    assert!(section.contains("<span class=\"badge unverified\">unverified</span>"));

    // Throughput against threads, a line per scheme.
    assert!(section.contains("id=\"chart-threads-1-start-stop-1024-binary-heap\""));
    assert!(section.contains("data-scope=\"threads\""));
    assert!(section.contains(
        "Oversubscribed (more threads than cores; not scaling): global-lock at 2; owner at 1, 2"
    ));
}

#[test]
fn records_in_a_results_folder_are_shown_without_being_named() {
    let dir = tempfile::tempdir().unwrap();
    let (run, _, _) = folders(dir.path());
    let output = dir.path().join("report.html");
    write_report(std::slice::from_ref(&run), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    assert!(!html.contains("<section id=\"live\">") && !html.contains("href=\"#live\""));

    write_live(&run, &[live_record("binary-heap", "wait", 1, "verified")]);
    write_threads(&run, &threads_records());
    // The same file named too: shown once.
    let extras = Extras {
        live: vec![run.clone()],
        threads: Vec::new(),
    };
    let written = write_report_with(&[run], &extras, &output, None, &catalog()).unwrap();
    assert_eq!((written.live, written.threads), (1, 6));

    // A file with no records: its section says so.
    let empty = dir.path().join("empty");
    write_live(&empty, &[]);
    let extras = Extras {
        live: vec![empty],
        threads: Vec::new(),
    };
    write_report_with(
        &[dir.path().join("run")],
        &extras,
        &output,
        None,
        &catalog(),
    )
    .unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    assert!(section(&html, "live").contains("No live runs in this file."));
}

#[test]
fn a_missing_folder_or_a_malformed_line_names_it_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (run, live, threads) = folders(dir.path());
    let output = dir.path().join("report.html");
    std::fs::write(&output, "the previous report").unwrap();
    let attempt = |extras: Extras| {
        let error = write_report_with(
            std::slice::from_ref(&run),
            &extras,
            &output,
            None,
            &catalog(),
        )
        .unwrap_err();
        assert_eq!(
            std::fs::read_to_string(&output).unwrap(),
            "the previous report"
        );
        format!("{error:#}")
    };
    let live_only = |path: PathBuf| Extras {
        live: vec![path],
        threads: Vec::new(),
    };

    let error = attempt(live_only(dir.path().join("nowhere")));
    assert!(error.contains("nowhere does not exist"), "{error}");
    let error = attempt(live_only(run.clone()));
    assert!(
        error.contains("has no live.jsonl: not a folder of `timerbench live`"),
        "{error}"
    );

    let path = live.join(LIVE_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}{{\"schema\": 1, \"wait\": \n")).unwrap();
    let error = attempt(live_only(live.clone()));
    assert!(error.contains("live.jsonl:4"), "{error}");

    // A threads histogram that does not decode: its line, run and producer.
    let mut records = threads_records();
    records[1].latency[0].get_mut("start").unwrap().histogram_v2 = "AAAA".to_string();
    write_threads(&threads, &records);
    let error = attempt(Extras {
        live: Vec::new(),
        threads: vec![threads],
    });
    assert!(
        error.contains(
            "threads.jsonl:2: owner around binary-heap at 1 threads: the `start` histogram of producer 1"
        ),
        "{error}"
    );
}

#[test]
fn a_tcp_run_shows_its_connections_closes_and_both_processes_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (run, live) = (dir.path().join("run"), dir.path().join("live"));
    write_run(&run, "alpha", 1.0);
    let mut tcp =
        serde_json::to_value(live_record("ring-buckets", "pwait2", 1, "verified")).unwrap();
    tcp["tcp"] = serde_json::json!({
        "connections": 500, "sources": 1, "ramp_ns": 1_000_000, "client_sent": 4_000,
        "client_refused": 0, "received": 4_000, "closed": 120, "closed_on_time": 118,
        "on_time_allowance_ns": 1_000_000_000u64, "closed_wrongly": 0, "rearmed": 3,
        "closed_by_client": 0, "open_at_end": 380, "close_lateness": spread(120, 1, 2, 3, 4),
        "server_peak_rss_bytes": 12u64 << 20, "client_peak_rss_bytes": 3u64 << 19,
        "client_exit": null,
    });
    let tcp: LiveRecord = serde_json::from_value(tcp).unwrap();
    write_live(
        &live,
        &[tcp, live_record("binary-heap", "pwait2", 1, "verified")],
    );
    let output = dir.path().join("report.html");
    let extras = Extras {
        live: vec![live],
        threads: Vec::new(),
    };
    write_report_with(&[run], &extras, &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    let section = section(&html, "live");
    assert!(section.contains("TCP connections"));
    let figures = numbers(row(
        section,
        "data-structure=\"ring-buckets\" data-wait=\"pwait2\"",
    ));
    assert_eq!(figures[15..], ["500", "118 of 120", "0", "12.0", "1.5"]);
    let figures = numbers(row(
        section,
        "data-structure=\"binary-heap\" data-wait=\"pwait2\"",
    ));
    assert_eq!(
        figures[15..],
        ["–", "–", "–", "–", "–"],
        "fed over the socket pair"
    );
}

#[test]
fn an_engine_record_sits_beside_the_port_marked_as_an_engine() {
    let dir = tempfile::tempdir().unwrap();
    let (run, live) = (dir.path().join("run"), dir.path().join("live"));
    write_run(&run, "alpha", 1.0);
    let mut netty =
        serde_json::to_value(live_record("netty-hashed-wheel", "tick", 1, "ok")).unwrap();
    netty["engine"] = serde_json::json!({
        "name": "netty-hashed-wheel", "runtime": "OpenJDK", "runtime_version": "17.0.13",
        "protocol": 2, "timers": 200, "wakeups_of": "the worker thread's voluntary context \
        switches", "cpu_of": "the worker thread",
    });
    netty["reasons"] = serde_json::json!([]);
    let netty: LiveRecord = serde_json::from_value(netty).unwrap();
    write_live(
        &live,
        &[
            netty,
            live_record("netty-wheel:tick=10", "tick", 1, "verified"),
        ],
    );
    let output = dir.path().join("report.html");
    let extras = Extras {
        live: vec![live],
        threads: Vec::new(),
    };
    write_report_with(&[run], &extras, &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    let section = section(&html, "live");
    let engine = row(
        section,
        "data-structure=\"netty-hashed-wheel\" data-wait=\"tick\"",
    );
    assert!(engine.contains("badge engine"), "{engine}");
    // Its useless wake-ups are not counted: a dash, not 0.
    assert_eq!(numbers(engine)[12], "–");
    let port = row(
        section,
        "data-structure=\"netty-wheel:tick=10\" data-wait=\"tick\"",
    );
    assert!(!port.contains("badge engine"), "{port}");
    assert_eq!(numbers(port)[12], "9.0");
}
