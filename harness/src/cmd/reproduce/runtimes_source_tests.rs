use super::*;
use crate::cmd::reproduce::experiments::built_in;
use timerbench_results::Verdict;
use timerbench_results::live::{LiveEngine, TcpFigures};

/// A verified TCP run of `implementation` at 300 connections with its CPU per second.
fn run(implementation: &str, precision: &str, cpu: f64) -> LiveRecord {
    let mut record = LiveRecord {
        implementation: implementation.into(),
        precision: precision.into(),
        workload: "keepalive-300".into(),
        wait: "pwait2".into(),
        status: "verified".into(),
        tcp: Some(TcpFigures {
            connections: 300,
            connections_why: "requested".into(),
            server_peak_rss_bytes: 3_000_000,
            ..TcpFigures::default()
        }),
        ..LiveRecord::default()
    };
    record.workload_phase.cpu_ms_per_second = cpu;
    record
}

fn engine(name: &str, cpu: f64) -> LiveRecord {
    LiveRecord {
        wait: "runtime".into(),
        engine: Some(LiveEngine {
            name: name.into(),
            ..LiveEngine::default()
        }),
        ..run(name, "exact", cpu)
    }
}

fn unsupported(name: &str) -> LiveRecord {
    LiveRecord {
        implementation: name.into(),
        wait: "runtime".into(),
        status: "unsupported".into(),
        reasons: vec!["needs `cc` (apt-get install libuv1-dev pkg-config gcc)".into()],
        engine: Some(LiveEngine {
            name: name.into(),
            ..LiveEngine::default()
        }),
        ..LiveRecord::default()
    }
}

fn fixture() -> Vec<LiveRecord> {
    vec![
        run("ring-buckets", "approximate: a bucket", 2.0),
        run("binary-heap", "exact", 5.0),
        run("quad-heap", "exact", 4.0),
        engine("go-runtime", 12.0),
        engine("tokio-current-thread", 6.0),
        unsupported("libuv"),
    ]
}

fn value(finding: &Finding, label: &str) -> Option<f64> {
    let found = finding.values.iter().find(|v| v.label == label);
    found
        .unwrap_or_else(|| panic!("no {label} in {:?}", finding.values))
        .value
}

#[test]
fn every_server_closing_none_wrongly_holds_with_each_runtimes_cpu_ratio_computed() {
    let experiment = built_in("runtimes-idle-timeout");
    let finding = judge(&experiment, &[(300, fixture())]);
    assert_eq!(finding.verdict, Verdict::Holds, "{}", finding.reason);
    // Against quad-heap, the exact structure with the least CPU, and against the ring.
    let at = "at 300 connections";
    let of = |label: String| value(&finding, &label);
    assert_eq!(
        of(format!(
            "go-runtime {at}: CPU over timerbench's best exact structure"
        )),
        Some(3.0)
    );
    assert_eq!(
        of(format!(
            "tokio-current-thread {at}: CPU over timerbench's ring"
        )),
        Some(3.0)
    );
    assert_eq!(of(format!("quad-heap {at}: closed wrongly")), Some(0.0));
    assert!(
        finding
            .measured
            .contains("best exact at 300 connections: quad-heap")
    );
    assert!(
        finding.measured.contains("unsupported here: libuv"),
        "{}",
        finding.measured
    );
    let libuv = finding
        .cells
        .iter()
        .find(|c| c.implementation.starts_with("libuv"))
        .unwrap();
    assert_eq!((libuv.status.as_str(), libuv.value), ("unsupported", None));
}

#[test]
fn the_cpu_ratios_are_reported_as_measured_and_judged_by_nothing() {
    let experiment = built_in("runtimes-idle-timeout");
    assert_eq!(experiment.rule.reported, [CPU_RATIO]);
    // Go's server at a hundred times the loop's CPU, then at a hundredth: the verdict is
    // the wrong closes' alone, and each ratio keeps its value with no verdict of its own.
    for go_cpu in [400.0, 0.04] {
        let mut records = fixture();
        records[3].workload_phase.cpu_ms_per_second = go_cpu;
        let finding = judge(&experiment, &[(300, records)]);
        assert_eq!(finding.verdict, Verdict::Holds, "{}", finding.reason);
        assert!(!finding.reason.contains("CPU over"), "{}", finding.reason);
        let label = "go-runtime at 300 connections: CPU over timerbench's best exact structure";
        let ratio = finding.values.iter().find(|v| v.label == label).unwrap();
        assert_eq!(ratio.value, Some(go_cpu / 4.0));
        assert_eq!(ratio.verdict, Verdict::Reported);
        let cell = crate::cmd::reproduce::output::figure_cell(ratio);
        assert!(cell.ends_with("(reported, not judged)"), "{cell}");
        let ratios = finding
            .values
            .iter()
            .filter(|v| v.implementation.as_deref() == Some(CPU_RATIO));
        assert!(ratios.clone().count() >= 4);
        assert!(ratios.clone().all(|v| v.verdict == Verdict::Reported));
        let closes = finding
            .values
            .iter()
            .filter(|v| v.implementation.as_deref() == Some(WRONGLY));
        assert!(closes.clone().all(|v| v.verdict == Verdict::Holds));
    }
    let rule = crate::cmd::reproduce::output::rule_words(&experiment.rule);
    assert!(
        rule.contains("CPU over timerbench's loop: reported, not judged"),
        "{rule}"
    );
    assert!(!rule.contains("any value"), "{rule}");
}

#[test]
fn the_list_names_the_servers_the_workload_and_the_figures() {
    let experiment = built_in("runtimes-idle-timeout");
    let words = crate::cmd::reproduce::sources::list_words(&experiment).unwrap();
    assert!(
        words.contains(
            "around ring-buckets, binary-heap, quad-heap, hierarchical-wheel beside \
                        every engine's keepalive server on live --tcp keepalive"
        ),
        "{words}"
    );
    assert!(
        words.contains("figures: closed wrongly, CPU over timerbench's loop"),
        "{words}"
    );
}

#[test]
fn one_connection_closed_wrongly_does_not_hold() {
    let experiment = built_in("runtimes-idle-timeout");
    let mut records = fixture();
    records[3].tcp.as_mut().unwrap().closed_wrongly = 1;
    let finding = judge(&experiment, &[(300, records)]);
    assert_eq!(finding.verdict, Verdict::DoesNotHold);
    assert!(
        finding
            .reason
            .contains("go-runtime at 300 connections: closed wrongly = 1"),
        "{}",
        finding.reason
    );
}

#[test]
fn with_no_runtime_here_it_is_not_measured_and_the_machines_limit() {
    let experiment = built_in("runtimes-idle-timeout");
    let records = vec![
        run("ring-buckets", "approximate: a bucket", 2.0),
        run("quad-heap", "exact", 4.0),
        unsupported("go-runtime"),
        unsupported("libuv"),
    ];
    let finding = judge(&experiment, &[(300, records)]);
    assert_eq!(finding.verdict, Verdict::NotMeasured);
    assert!(
        finding.reason.contains("no runtime's server ran here"),
        "{}",
        finding.reason
    );
    assert!(crate::cmd::reproduce::sources::lacks_capability(&finding));
    // A runtime that ran but did not verify is a reason, not a figure.
    let mut records = fixture();
    records[3].status = "unverified".into();
    records[3].reasons = vec!["a close before its deadline".into()];
    let finding = judge(&experiment, &[(300, records)]);
    assert_eq!(finding.verdict, Verdict::NotMeasured);
    assert!(
        finding
            .reason
            .contains("unverified: a close before its deadline")
    );
}
