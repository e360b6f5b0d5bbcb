//! The report built from records made here: two runs of three workloads at three sizes,
//! three of the project's implementations and a peer, with failed, timed-out and
//! unverified cells, described by a catalog made here too. This module makes them; the
//! tests are in [`page`] (what the page shows), [`lateness`] (approximate
//! implementations, variants and unsupported cells), [`extras`] (the live and threads
//! sections), [`processes`] (the spread between a
//! cell's processes, cells measured under load), [`tail`] (the slowest calls beside the
//! speed) and [`errors`] (what it refuses).
//!
//! The report of a real results folder is tested in `tests/fixtures.rs` (a folder of the
//! previous layout) and in the harness (a fresh `timerbench run`).

mod counts;
mod engines;
mod errors;
mod extras;
mod floor;
mod lateness;
mod page;
mod processes;
mod reader;
mod runtimes;
mod tail;

use crate::catalog::{Catalog, Described, FamilyInfo};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::path::Path;
use timerbench_results::{
    AdvanceSeries, CellKey, CellRecord, Clock, Environment, Latency, Memory, SCHEMA_VERSION,
    Status, Throughput, spread,
};

pub(super) const WORKLOADS: &[(&str, &str)] = &[
    ("hold-exponential", "hold"),
    ("keepalive", "keepalive"),
    ("burst", "burst"),
];
pub(super) const SIZES: &[u64] = &[1_000, 100_000, 1_000_000];
pub(super) const IMPLEMENTATIONS: &[&str] = &[
    "btree",
    "binary-heap",
    "hierarchical-wheel",
    "tokio-delay-queue",
];
pub(super) const PEER: &str = "tokio-delay-queue";

/// The cells that do not verify, with their status and reason (the same in both runs).
pub(super) const BAD: &[(&str, u64, &str, Status, &str)] = &[
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
    let mut histogram = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
    for i in 0..count {
        // A body around `base` and a tail up to 1000 times it.
        let value = base + (i * 7919) % base.max(1);
        histogram.record(value).unwrap();
    }
    histogram.record(base * 1000).unwrap();
    timerbench_results::histogram::encode_v2(&histogram).unwrap()
}

pub(super) fn latency(base: u64, count: u64) -> Latency {
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

pub(super) fn record(
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
        implementation_base: implementation.to_string(),
        implementation_parameters: BTreeMap::new(),
        precision: Some("exact".to_string()),
        status: bad.map_or(Status::Ok, |b| b.3),
        reason: bad.map(|b| b.4.to_string()),
        operations: timers * 4,
        fired: timers,
        reference_digest: "0123".to_string(),
        digest: verified.then(|| "0123".to_string()),
        throughput: verified.then(|| throughput(ns)),
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
        lateness: None,
        conditions: Vec::new(),
        engine: None,
        counts: None,
        others_load: None,
        fixed_costs: verified.then_some(timerbench_results::FixedCosts {
            idle_advance_ns: 5.0 * (index + 1.0),
            start_stop_ns: 20.0 * (index + 1.0),
            calls: 20_000,
            rounds: 7,
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

/// Three timed repeats around `ns` per operation. Read from JSON as a results file is, so
/// that figures the schema adds later (each with a default) need nothing here.
pub(super) fn throughput(ns: f64) -> Throughput {
    let json = serde_json::json!({
        "repeats": 3,
        "ns_per_op": spread(vec![ns, ns * 1.02, ns * 0.99]),
        "ns_per_fired": null,
    });
    serde_json::from_value(json).expect("a throughput record")
}

pub(super) fn environment(host: &str, revision: &str) -> Environment {
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
        processes: 3,
        min_sample_ms: 10,
        max_processes: 0,
        spread_from: 0,
        processes_at_1m: 0,
        plan: None,
        shard: None,
        host_label: None,
    }
}

/// Every (workload, size, implementation) cell of a run at `speedup`.
pub(super) fn records(speedup: f64) -> Vec<CellRecord> {
    let mut records = Vec::new();
    for (workload, family) in WORKLOADS {
        for &timers in SIZES {
            for implementation in IMPLEMENTATIONS {
                records.push(record(workload, family, timers, implementation, speedup));
            }
        }
    }
    records
}

/// Writes a results folder of every (workload, size, implementation) cell.
pub(super) fn write_run(folder: &Path, host: &str, speedup: f64) {
    write_folder(folder, &records(speedup), &environment(host, "abc1234"));
}

/// Writes a results folder of `records` and `environment`.
pub(super) fn write_folder(folder: &Path, records: &[CellRecord], environment: &Environment) {
    std::fs::create_dir_all(folder).unwrap();
    let mut lines = String::new();
    for record in records {
        lines.push_str(&serde_json::to_string(record).unwrap());
        lines.push('\n');
    }
    std::fs::write(folder.join("results.jsonl"), lines).unwrap();
    let environment = serde_json::to_string_pretty(environment).unwrap();
    std::fs::write(folder.join("environment.json"), environment).unwrap();
}

/// Every `<svg ...>...</svg>` of the page.
pub(super) fn svgs(html: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("every svg is closed") + start + 6;
        found.push(&rest[start..end]);
        rest = &rest[end..];
    }
    found
}

/// The top-level section `anchor`, up to the next one (workload sections have their
/// class first, so `<section id=` is only ever a top-level one).
pub(super) fn section<'h>(html: &'h str, anchor: &str) -> &'h str {
    let opening = format!("<section id=\"{anchor}\">");
    let start = html
        .find(&opening)
        .unwrap_or_else(|| panic!("no section {anchor}"));
    let after = start + opening.len();
    let end = html[after..]
        .find("<section id=")
        .map_or(html.len(), |e| after + e);
    &html[start..end]
}

/// `text` as the page writes it.
pub(super) fn escaped(text: &str) -> String {
    maud::html! { (text) }.into_string()
}

/// The registries' entries of the synthetic implementations and families.
pub(super) fn catalog() -> Catalog {
    let described = |name: &str, summary: &str| Described {
        name: name.to_string(),
        summary: summary.to_string(),
        parameters: Vec::new(),
    };
    let family = |name: &str, models: &str| FamilyInfo {
        name: name.to_string(),
        models: models.to_string(),
        shape: format!("the shape of {name}"),
        tick: "1ms".to_string(),
        params: Vec::new(),
    };
    Catalog {
        implementations: IMPLEMENTATIONS
            .iter()
            .filter(|name| **name != PEER)
            .map(|name| described(name, &format!("what {name} is")))
            .collect(),
        peers: vec![described(PEER, "peer: tokio-util's DelayQueue")],
        families: vec![
            family("hold", "the hold model of Jones 1986"),
            family(
                "keepalive",
                "idle-connection timeouts refreshed by keepalive packets",
            ),
            family("burst", "a burst of timers on one deadline"),
        ],
        suite_order: WORKLOADS.iter().map(|(name, _)| name.to_string()).collect(),
    }
}

pub(super) fn check_self_contained(html: &str) {
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
