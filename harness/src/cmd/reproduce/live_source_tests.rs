//! The live experiments' verdicts from small records, and their flags.

use super::super::experiments::{self, built_in as experiment};
use super::super::sources::{self, Measured};
use super::*;
use timerbench_results::Verdict;
use timerbench_results::live::LIVE_SCHEMA;

/// A verified record of `implementation` with `wait` at 100 ms ticks.
fn record(implementation: &str, wait: &str) -> LiveRecord {
    LiveRecord {
        schema: LIVE_SCHEMA,
        implementation: implementation.into(),
        precision: "exact".into(),
        workload: "w".into(),
        peak_pending: 8,
        tick_ns: 100_000_000,
        wait: wait.into(),
        timer_slack_ns: 50_000,
        policy: "other".into(),
        status: "verified".into(),
        end_tick: 8,
        firings: 8,
        ..LiveRecord::default()
    }
}

/// The verdict of `experiment` on these records (series label, record), at one point.
fn judge(experiment: &Experiment, records: &[(&str, LiveRecord)]) -> (Verdict, String) {
    let measured = Measured {
        workload: "w".into(),
        points: vec![1],
        readings: records
            .iter()
            .map(|(series, record)| reading(1, series, &Ok(record.clone()), &experiment.field))
            .collect(),
        ..Measured::default()
    };
    let series = sources::series_labels(experiment);
    let computed = sources::compute(&experiment.figure, &series, &measured);
    let (_, verdict, reason) =
        super::super::verdict::judge(&experiment.figure, &experiment.rule, &computed);
    (verdict, reason)
}

#[test]
fn the_slack_claim_is_judged_on_pwait2_minus_timerfd_as_a_share_of_the_wait() {
    let slack = experiment("live-epoll-slack");
    let with = |pwait2_ns: u64, timerfd_ns: u64| {
        let mut pwait2 = record("binary-heap", "pwait2");
        pwait2.lateness.wake.p50_ns = pwait2_ns;
        let mut timerfd = record("binary-heap", "timerfd");
        timerfd.lateness.wake.p50_ns = timerfd_ns;
        judge(
            &slack,
            &[
                ("binary-heap with pwait2", pwait2),
                ("binary-heap with timerfd", timerfd),
            ],
        )
    };
    // 100 µs of slack on a 100 ms wait: 0.1%.
    assert_eq!(with(140_000, 40_000).0, Verdict::Holds);
    // Part of the slack: another wakeup expired the timer early in its window.
    assert_eq!(with(60_000, 40_000).0, Verdict::HoldsWithCaveat);
    // No slack at all, or far more than 0.1%.
    assert_eq!(with(40_000, 40_000).0, Verdict::DoesNotHold);
    assert_eq!(with(400_000, 40_000).0, Verdict::DoesNotHold);
}

#[test]
fn the_idle_claim_has_a_rule_per_series_and_an_unverified_run_is_not_measured() {
    let idle = experiment("live-idle-wakeups");
    let with = |tick: f64, pwait2: f64| {
        let mut ticking = record("netty-wheel:tick=100", "tick");
        ticking.idle_phase.wakeups_per_second = tick;
        let mut deadline = record("netty-wheel:tick=100", "pwait2");
        deadline.idle_phase.wakeups_per_second = pwait2;
        (ticking, deadline)
    };
    let run = |(ticking, deadline): (LiveRecord, LiveRecord)| {
        judge(
            &idle,
            &[
                ("netty-wheel:tick=100 with tick", ticking),
                ("netty-wheel:tick=100 with pwait2", deadline),
            ],
        )
    };
    assert_eq!(run(with(10.0, 0.0)).0, Verdict::Holds);
    assert_eq!(run(with(10.0, 5.0)).0, Verdict::DoesNotHold);
    assert_eq!(run(with(1000.0, 0.0)).0, Verdict::DoesNotHold);
    let (ticking, mut deadline) = with(10.0, 0.0);
    deadline.status = "unverified".into();
    deadline.reasons = vec!["timer 7 fired twice".into()];
    let (verdict, reason) = run((ticking, deadline));
    assert_eq!(verdict, Verdict::NotMeasured);
    assert!(
        reason.contains("unverified: timer 7 fired twice"),
        "{reason}"
    );
}

#[test]
fn the_keepalive_claim_wants_the_ring_lowest_in_cpu() {
    let cpu = experiment("live-keepalive-100k-cpu");
    let names = [
        "ring-buckets",
        "binary-heap",
        "hierarchical-wheel",
        "polling-scan",
    ];
    let with = |costs: [f64; 4]| {
        let records: Vec<(String, LiveRecord)> = names
            .iter()
            .zip(costs)
            .map(|(name, cost)| {
                let mut r = record(name, "wait");
                r.workload_phase.cpu_ms_per_second = cost;
                (series_label(name, "wait"), r)
            })
            .collect();
        let borrowed: Vec<(&str, LiveRecord)> = records
            .iter()
            .map(|(s, r)| (s.as_str(), r.clone()))
            .collect();
        judge(&cpu, &borrowed)
    };
    assert_eq!(with([10.0, 20.0, 15.0, 200.0]).0, Verdict::Holds);
    assert_eq!(with([10.2, 20.0, 10.0, 200.0]).0, Verdict::HoldsWithCaveat);
    let (verdict, reason) = with([30.0, 20.0, 15.0, 200.0]);
    assert_eq!(verdict, Verdict::DoesNotHold);
    assert!(
        reason.contains("hierarchical-wheel with wait < binary-heap"),
        "{reason}"
    );
}

#[test]
fn the_words_are_live_flags_and_a_transport_is_passed_on() {
    let slack = experiment("live-epoll-slack");
    let live = slack.live.as_ref().unwrap();
    let words = live.words(("binary-heap", "pwait2"), 100, true, Path::new("out"));
    let line = words.join(" ");
    assert!(line.contains("--tick 100ms"), "{line}");
    assert!(line.contains("--workload sparse"), "{line}");
    assert!(!line.contains("--transport"), "{line}");
    assert!(LiveCommand::try_parse_from(&words).is_ok(), "{line}");
    let mut tcp = live.clone();
    tcp.transport = Some("tcp".into());
    let line = tcp
        .words(("binary-heap", "pwait2"), 100, true, Path::new("out"))
        .join(" ");
    assert!(line.contains("--tcp"), "{line}");
    assert!(
        LiveCommand::try_parse_from(line.split(' ')).is_ok(),
        "{line}"
    );
}

#[test]
fn a_bad_live_table_is_refused_with_its_reason() {
    let text = experiments::BUILT_IN;
    let start = text.find("id = \"live-epoll-slack\"").unwrap();
    let block = &text[text[..start].rfind("[[experiment]]").unwrap()..];
    let end = block[1..]
        .find("[[experiment]]")
        .map_or(block.len(), |e| e + 1);
    let block = &block[..end];
    for (from, to, message) in [
        (
            "waits = [\"pwait2\", \"timerfd\"]",
            "waits = [\"poll\"]",
            "`poll` is not one of",
        ),
        (
            "family = \"sparse\"",
            "family = \"nope\"",
            "no family `nope`",
        ),
        (
            "field = \"wake_p50_fraction_of_tick\"",
            "field = \"speed\"",
            "field `speed`",
        ),
    ] {
        assert!(block.contains(from), "{from}");
        let error = experiments::parse(&block.replace(from, to), "x.toml")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("x.toml: experiment live-epoll-slack: "),
            "{error}"
        );
        assert!(error.contains(message), "{error}");
    }
}
