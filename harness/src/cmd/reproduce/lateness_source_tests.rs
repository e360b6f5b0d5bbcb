//! The lateness experiments' verdicts from small records, and their checks.

use super::super::experiments::{self, built_in as experiment};
use super::super::sources::{self, Measured};
use super::*;
use timerbench_results::Verdict;
use timerbench_results::live::{LIVE_SCHEMA, LatenessParts, LiveEngine, Spread, Usage};

/// A record at a `tick` ms tick with this median lateness and idle wake-ups per second:
/// the port's (`netty-wheel:tick=T`, verified) or, with `engine`, Netty's own.
fn record(engine: bool, tick: u64, p50_ns: u64, idle_wakeups: f64) -> LiveRecord {
    LiveRecord {
        schema: LIVE_SCHEMA,
        implementation: if engine {
            "netty-hashed-wheel".into()
        } else {
            format!("netty-wheel:tick={tick}")
        },
        precision: "approximate: less than one worker tick".into(),
        workload: "lateness.tw".into(),
        peak_pending: 100,
        tick_ns: 1_000_000,
        wait: "tick".into(),
        period_ns: Some(tick * 1_000_000),
        timer_slack_ns: 50_000,
        policy: "other".into(),
        status: if engine { ENGINE_OK } else { "verified" }.into(),
        end_tick: 1000,
        firings: 100,
        lateness: LatenessParts {
            total: Spread {
                count: 100,
                p50_ns,
                p99_ns: p50_ns * 2,
                p999_ns: p50_ns * 2,
                max_ns: p50_ns * 2,
            },
            ..LatenessParts::default()
        },
        idle_phase: Usage {
            wakeups_per_second: idle_wakeups,
            ..Usage::default()
        },
        engine: engine.then(|| LiveEngine {
            name: "netty-hashed-wheel".into(),
            runtime: "OpenJDK 64-Bit Server VM".into(),
            runtime_version: "17.0.13+11-Debian-2".into(),
            protocol: 2,
            timers: 100,
            wakeups_of: "the worker thread's voluntary context switches".into(),
            cpu_of: "the worker thread".into(),
            ..LiveEngine::default()
        }),
        ..LiveRecord::default()
    }
}

/// The finding of `experiment` from these runs, each (tick, series, run).
fn judge(experiment: &Experiment, runs: Vec<(u64, &str, Run)>) -> timerbench_results::Finding {
    let mut points: Vec<u64> = runs.iter().map(|r| r.0).collect();
    points.dedup();
    let read = |field: &str| -> Vec<Reading> {
        runs.iter()
            .map(|(tick, series, run)| reading(*tick, series, run, field))
            .collect()
    };
    let measured = Measured {
        workload: "lateness.tw".into(),
        readings: read(&experiment.field),
        point_words: points
            .iter()
            .map(|&p| (p, format!("{p} ms tick")))
            .collect(),
        points,
        ..Measured::default()
    };
    sources::finding(experiment, &measured, "")
}

fn both(tick: u64, port_p50: u64, netty_p50: u64) -> Vec<(u64, &'static str, Run)> {
    vec![
        (
            tick,
            "netty-wheel",
            Run::from(record(false, tick, port_p50, 10.0)),
        ),
        (
            tick,
            "netty-hashed-wheel",
            Run::from(record(true, tick, netty_p50, 10.0)),
        ),
    ]
}

#[test]
fn the_lateness_experiments_parse_with_their_series_and_ticks() {
    let lateness = experiment("netty-wheel-original-lateness");
    assert_eq!(lateness.kind, sources::SourceKind::Lateness);
    assert_eq!(
        sources::series_labels(&lateness),
        ["netty-wheel", "netty-hashed-wheel"]
    );
    assert_eq!(
        (&lateness.sizes, &lateness.quick_sizes),
        (&vec![100, 1], &vec![100, 1])
    );
    assert_eq!(sources::records_file(&lateness), "live.jsonl");
    let idle = experiment("netty-wheel-original-idle-wakeups");
    assert_eq!(idle.sizes, [100]);
    let words = port_words(
        "netty-wheel",
        "w.tw",
        idle.lateness.as_ref().unwrap().shape(true),
        100,
        Path::new("d"),
    );
    assert_eq!(
        words[1..].join(" "),
        "--file w.tw --impl netty-wheel:tick=100 --wait tick --idle 1000ms --out d"
    );
}

#[test]
fn the_median_lateness_ratio_is_judged_at_every_tick() {
    let lateness = experiment("netty-wheel-original-lateness");
    // Half a tick on both sides at 100 ms, and the same order at 1 ms: holds.
    let mut runs = both(100, 50_000_000, 48_000_000);
    runs.extend(both(1, 600_000, 900_000));
    let found = judge(&lateness, runs);
    assert_eq!(found.verdict, Verdict::Holds, "{}", found.reason);
    assert_eq!(found.values.len(), 2);
    assert!((found.values[0].value.unwrap() - 50.0 / 48.0).abs() < 1e-9);
    // 3x apart at 1 ms: a caveat; 20x apart: does not hold, the tick named.
    let mut runs = both(100, 50_000_000, 48_000_000);
    runs.extend(both(1, 300_000, 900_000));
    assert_eq!(judge(&lateness, runs).verdict, Verdict::HoldsWithCaveat);
    let mut runs = both(100, 50_000_000, 48_000_000);
    runs.extend(both(1, 45_000, 900_000));
    let found = judge(&lateness, runs);
    assert_eq!(found.verdict, Verdict::DoesNotHold);
    assert!(
        found.reason.contains("1 ms tick = 0.0500"),
        "{}",
        found.reason
    );
}

#[test]
fn idle_wakeups_hold_only_when_both_wake_ten_times_a_second() {
    let idle = experiment("netty-wheel-original-idle-wakeups");
    let runs = |port: f64, netty: f64| {
        vec![
            (100, "netty-wheel", Run::from(record(false, 100, 1, port))),
            (
                100,
                "netty-hashed-wheel",
                Run::from(record(true, 100, 1, netty)),
            ),
        ]
    };
    assert_eq!(judge(&idle, runs(10.0, 9.5)).verdict, Verdict::Holds);
    let found = judge(&idle, runs(10.0, 21.0));
    assert_eq!(found.verdict, Verdict::DoesNotHold);
    assert!(
        found.reason.contains("netty-hashed-wheel = 21.0"),
        "{}",
        found.reason
    );
}

#[test]
fn a_missing_toolchain_is_the_machines_limit_and_a_failed_engine_is_not() {
    let idle = experiment("netty-wheel-original-idle-wakeups");
    let install = "`javac` not found: apt-get install default-jdk-headless libnetty-java";
    let found = judge(
        &idle,
        vec![
            (100, "netty-wheel", Run::from(record(false, 100, 1, 10.0))),
            (100, "netty-hashed-wheel", Run::Unsupported(install.into())),
        ],
    );
    assert_eq!(found.verdict, Verdict::NotMeasured);
    assert!(found.reason.contains("apt-get install"), "{}", found.reason);
    assert_eq!(found.cells[1].status, UNSUPPORTED);
    assert!(sources::lacks_capability(&found));
    let crashed = judge(
        &idle,
        vec![
            (100, "netty-wheel", Run::from(record(false, 100, 1, 10.0))),
            (
                100,
                "netty-hashed-wheel",
                Run::Failed("crashed: exit 1".into()),
            ),
        ],
    );
    assert_eq!(crashed.verdict, Verdict::NotMeasured);
    assert!(!sources::lacks_capability(&crashed));
}

#[test]
fn an_engine_record_that_fired_early_or_not_at_all_gives_no_value() {
    let mut early = record(true, 100, 1, 10.0);
    early.lateness.early = 2;
    let why = engine_value(&early, "lateness.total.p50_ns").unwrap_err();
    assert!(why.contains("2 early firings"), "{why}");
    let mut short = record(true, 100, 1, 10.0);
    short.status = lateness_record::ENGINE_INCOMPLETE.into();
    short.reasons = vec!["90 of 100 timers fired within the engine's bound".into()];
    let why = engine_value(&short, "lateness.total.p50_ns").unwrap_err();
    assert!(why.starts_with("incomplete: 90 of 100"), "{why}");
    assert_eq!(
        engine_value(&record(true, 100, 7, 10.0), "lateness.total.p50_ns"),
        Ok(7.0)
    );
}

#[test]
fn an_engine_without_a_tick_or_a_port_with_parameters_is_refused() {
    let text = experiments::BUILT_IN;
    let start = text
        .find("[[experiment]]\nid = \"netty-wheel-original-idle-wakeups\"")
        .unwrap();
    let end = start + text[start..].find("quick_idle_ms = 1_000\n").unwrap();
    let one = &text[start..end + "quick_idle_ms = 1_000\n".len()];
    assert_eq!(experiments::parse(one, "x.toml").unwrap().len(), 1);
    for (from, to, message) in [
        (
            "engines = [\"netty-hashed-wheel\"]",
            "engines = [\"go-runtime\"]",
            "`go-runtime` has no tick",
        ),
        (
            "implementations = [\"netty-wheel\"]",
            "implementations = [\"netty-wheel:tick=5\"]",
            "named without parameters",
        ),
        (
            "implementations = [\"netty-wheel\"]",
            "implementations = [\"binary-heap\"]",
            "a port takes `tick`",
        ),
        ("quick_sizes = [100]", "quick_sizes = [0]", "at least 1 ms"),
        (
            "field = \"idle_phase.wakeups_per_second\"",
            "field = \"speed\"",
            "field `speed`",
        ),
    ] {
        let changed = one.replace(from, to);
        let error = experiments::parse(&changed, "x.toml")
            .unwrap_err()
            .to_string();
        assert!(error.contains(message), "{error}");
    }
}
