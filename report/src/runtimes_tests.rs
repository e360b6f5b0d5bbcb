use super::*;
use timerbench_results::live::{LiveEngine, TcpFigures};

/// A verified TCP run of `implementation` at `connections`, with its CPU per second, its
/// close lateness p99 and its server's peak RSS.
fn run(implementation: &str, connections: u64, cpu: f64, p99_us: u64, rss: u64) -> LiveRecord {
    let mut record = LiveRecord {
        implementation: implementation.into(),
        precision: "exact".into(),
        wait: "pwait2".into(),
        status: "verified".into(),
        tcp: Some(TcpFigures {
            connections,
            connections_why: "requested".into(),
            close_lateness: Spread {
                count: 10,
                p50_ns: 1_000,
                p99_ns: p99_us * 1000,
                p999_ns: p99_us * 1000,
                max_ns: 2 * p99_us * 1000,
            },
            server_peak_rss_bytes: rss,
            ..TcpFigures::default()
        }),
        ..LiveRecord::default()
    };
    record.workload_phase.cpu_ms_per_second = cpu;
    record.workload_phase.wakeups_per_second = 2.0 * cpu;
    record.baseline = Spread {
        count: 10,
        p50_ns: 500,
        p99_ns: 900,
        p999_ns: 950,
        max_ns: 1_200,
    };
    record
}

/// An engine's server run: the runtime's own poller, its wake-ups not counted.
fn engine(name: &str, connections: u64, cpu: f64, p99_us: u64, rss: u64) -> LiveRecord {
    LiveRecord {
        wait: ENGINE_WAIT.into(),
        engine: Some(LiveEngine {
            name: name.into(),
            runtime: "go".into(),
            runtime_version: "go1.19.8".into(),
            runtime_flags: vec!["GOMAXPROCS=2".into()],
            wakeups_of: "not counted: Go counts no netpoller waits".into(),
            ..LiveEngine::default()
        }),
        ..run(name, connections, cpu, p99_us, rss)
    }
}

/// An engine whose toolchain is missing: no TCP figures, the package in its reason.
fn unsupported(name: &str) -> LiveRecord {
    LiveRecord {
        implementation: name.into(),
        wait: ENGINE_WAIT.into(),
        status: "unsupported".into(),
        reasons: vec!["apt-get install libuv1-dev pkg-config gcc".into()],
        engine: Some(LiveEngine {
            name: name.into(),
            ..LiveEngine::default()
        }),
        ..LiveRecord::default()
    }
}

fn fixture() -> Vec<LiveRecord> {
    let mut ring = run("ring-buckets", 2_000, 6.0, 900_000, 60_000_000);
    ring.precision = "approximate: up to a bucket".into();
    let mut fast_but_wrong = run("hierarchical-wheel", 2_000, 1.0, 50, 40_000_000);
    fast_but_wrong.status = "unverified".into();
    vec![
        run("binary-heap", 2_000, 30.0, 80, 40_000_000),
        engine("go-runtime", 2_000, 90.0, 1_100, 100_000_000),
        run("quad-heap", 2_000, 20.0, 70, 40_000_000),
        fast_but_wrong,
        ring,
        unsupported("libuv"),
        run("quad-heap", 100_000, 25.0, 75, 400_000_000),
    ]
}

#[test]
fn the_best_exact_structure_the_ring_and_each_runtime_are_rows_by_size() {
    let records = fixture();
    let rows = rows(&records);
    let named: Vec<(&str, Side, u64)> = rows
        .iter()
        .map(|r| (r.server.as_str(), r.side, r.connections))
        .collect();
    // quad-heap is the exact structure with the least CPU among the verified ones; the
    // unverified wheel is cheaper but not a candidate.
    assert_eq!(
        named,
        [
            ("quad-heap", Side::BestExact, 2_000),
            ("ring-buckets", Side::Ring, 2_000),
            ("go-runtime", Side::Runtime, 2_000),
            ("quad-heap", Side::BestExact, 100_000),
            ("libuv", Side::Runtime, 0),
        ]
    );
    let go = &rows[2];
    assert_eq!(go.runtime, "go go1.19.8 GOMAXPROCS=2");
    assert_eq!(go.wakeups_per_second, None);
    assert_eq!(go.cpu_ms_per_second, Some(90.0));
    assert_eq!(go.close_lateness, Some([1_000, 1_100_000, 2_200_000]));
    assert_eq!(go.rss_per_connection, Some(50_000.0));
    assert_eq!(go.baseline, Some([500, 900, 1_200]));
    assert_eq!(rows[0].wakeups_per_second, Some(40.0));
    assert_eq!(rows[0].io, "epoll");
    let libuv = &rows[4];
    assert_eq!(
        (libuv.status.as_str(), libuv.cpu_ms_per_second),
        ("unsupported", None)
    );
    assert!(
        libuv.why.contains("apt-get install libuv1-dev"),
        "{}",
        libuv.why
    );
    assert_eq!(size_words(&rows[0]), "2,000: requested");
}

#[test]
fn without_an_engine_server_there_is_no_table() {
    let records: Vec<LiveRecord> = fixture()
        .into_iter()
        .filter(|r| r.engine.is_none())
        .collect();
    assert!(rows(&records).is_empty());
    // An engine's micro lateness answer is not a server.
    let lateness = LiveRecord {
        wait: "tick".into(),
        engine: Some(LiveEngine::default()),
        ..LiveRecord::default()
    };
    assert!(!is_engine_server(&lateness));
    assert!(rows(&[lateness]).is_empty());
}

#[test]
fn repeats_are_one_row_of_medians_with_the_wrong_closes_summed() {
    let mut second = engine("go-runtime", 2_000, 70.0, 900, 80_000_000);
    second.tcp.as_mut().unwrap().closed_wrongly = 2;
    let third = engine("go-runtime", 2_000, 110.0, 1_000, 120_000_000);
    let records = [
        engine("go-runtime", 2_000, 90.0, 1_100, 100_000_000),
        second,
        third,
    ];
    let rows = rows(&records);
    assert_eq!(rows.len(), 1);
    let go = &rows[0];
    assert_eq!((go.runs, go.verified, go.closed_wrongly), (3, 3, 2));
    assert_eq!(go.cpu_ms_per_second, Some(90.0));
    assert_eq!(go.close_lateness.map(|l| l[1]), Some(1_000_000));
    assert_eq!(go.rss_per_connection, Some(50_000.0));
}

#[test]
fn the_footnotes_give_each_runtimes_words_for_its_dashes_and_why_one_did_not_run() {
    let records = fixture();
    let notes = footnotes(&rows(&records), &records).join("\n");
    assert!(
        notes.contains("wake-ups – for go-runtime: not counted: Go counts no netpoller waits"),
        "{notes}"
    );
    assert!(
        notes.contains("libuv: unsupported (apt-get install"),
        "{notes}"
    );
}
