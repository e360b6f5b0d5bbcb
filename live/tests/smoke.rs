//! A live run of about a second: an exact structure in the loop with `epoll_pwait2`, a
//! fill and operations arriving over the socket. It asserts what holds on any machine
//! under any load (the run verifies, nothing fires early, the untouched timers fire, the
//! idle phase is reached), never a timing figure.

use std::path::Path;
use std::sync::Arc;
use timerbench_impls::Variant;
use timerbench_live::api::{self, Config, Policy, Schedule, Settings};
use timerbench_live::sys;
use timerbench_workloads::Workload;
use timerbench_workloads::op::Op;

/// Twenty resident timers (deadlines 40 to 420 ticks); from tick 100, every 20 ticks a
/// new timer starts and timer 0..9 is restarted; at the end two are stopped.
fn workload() -> Workload {
    let mut ops: Vec<Op> = (0..20)
        .map(|id| Op::Start {
            id,
            delay: 40 + 20 * id,
        })
        .collect();
    ops.push(Op::Advance { ticks: 100 });
    for round in 0..10 {
        ops.push(Op::Start {
            id: 100 + round,
            delay: 30,
        });
        ops.push(Op::Restart {
            id: round,
            delay: 50,
        });
        ops.push(Op::Advance { ticks: 20 });
    }
    ops.push(Op::Stop { id: 105 });
    ops.push(Op::Stop { id: 19 });
    ops.push(Op::Advance { ticks: 100 });
    Workload {
        ops,
        ..Workload::default()
    }
}

/// The configuration of a run with wait `wait` (`period_ns` for `tick`), built by the
/// crate's face as the harness builds it.
fn config(wait: &str, period_ns: Option<u64>, variant: &str, peak_pending: u64) -> Config {
    Config::new(&Settings {
        variant: Variant::parse(variant).unwrap(),
        wait: wait.into(),
        period_ns,
        workload: "smoke".into(),
        peak_pending,
        tick_ns: 1_000_000,
        duration_ns: 2_000_000_000,
        idle_ns: 100_000_000,
        max_behind_ns: 2_000_000_000,
        slack_ns: None,
        policy: Policy::Other,
        loop_cpu: None,
        feeder_cpu: None,
        tcp: None,
        tcp_io: "auto".into(),
    })
    .unwrap()
}

#[test]
fn a_live_run_of_an_exact_structure_verifies_with_no_early_firing() {
    let program = timerbench_workloads::compile(&workload(), Path::new("smoke")).unwrap();
    let schedule = Arc::new(Schedule::of(&program));
    assert_eq!(schedule.fill.len(), 20);
    assert_eq!(schedule.arrivals.len(), 22);
    let config = config("pwait2", None, "hierarchical-wheel", program.peak_pending);
    api::preflight(&config).unwrap();
    let run = timerbench_live::run(&config, schedule).unwrap();
    assert_eq!(run.verification, Ok(()));
    let outcome = &run.outcome;
    assert_eq!(outcome.lateness.early, 0);
    assert_eq!(
        outcome.cut, None,
        "the run must reach the feeder's end record"
    );
    assert_eq!(outcome.applied, 22);
    // Timers 10..19 are never restarted; all but the stopped 19 fire whenever the
    // operations land.
    let fired: Vec<u32> = outcome.log.firings.iter().map(|f| f.slot).collect();
    assert!(fired.len() >= 9, "{fired:?}");
    assert_eq!(outcome.lateness.total.len(), fired.len() as u64);
    assert!(outcome.idle.wall_ns > 0);
    assert!(
        !run.baseline.is_empty(),
        "the baseline slept to the same deadlines"
    );
    let loaded = run
        .loaded_baseline
        .as_ref()
        .expect("a fed run has a loaded baseline");
    assert_eq!(
        loaded.arrivals, 22,
        "the loaded baseline read every operation the run was sent"
    );
    assert_eq!(
        loaded.lateness.len(),
        run.baseline.len(),
        "the loaded baseline slept to the same deadlines as the bare one"
    );
}

#[test]
fn a_ticking_approximate_structure_verifies_within_its_bound() {
    let program = timerbench_workloads::compile(&workload(), Path::new("smoke")).unwrap();
    let schedule = Arc::new(Schedule::of(&program));
    let config = config(
        "tick",
        Some(10_000_000),
        "netty-wheel:tick=10",
        program.peak_pending,
    );
    let run = timerbench_live::run(&config, schedule).unwrap();
    assert_eq!(run.verification, Ok(()));
    assert!(!run.outcome.log.firings.is_empty());
    // Ticking, both baselines wake every period over the same span.
    let loaded = run
        .loaded_baseline
        .as_ref()
        .expect("a fed run has a loaded baseline");
    assert_eq!(loaded.arrivals, 22);
    assert!(!loaded.lateness.is_empty());
}

#[test]
fn a_workload_too_dense_for_real_time_stops_with_the_reason_and_still_verifies() {
    let program = timerbench_workloads::compile(&workload(), Path::new("smoke")).unwrap();
    let schedule = Arc::new(Schedule::of(&program));
    let mut config = config("wait", None, "binary-heap", program.peak_pending);
    // No operation can be applied within a nanosecond of its time: the first one cuts.
    config.max_behind_ns = 1;
    let run = timerbench_live::run(&config, schedule).unwrap();
    let cut = run.outcome.cut.as_deref().unwrap_or_default();
    assert!(cut.starts_with("too dense for real time"), "{cut}");
    assert_eq!(run.outcome.applied, 1);
    assert_eq!(run.verification, Ok(()));
}

#[test]
fn a_workload_longer_than_the_duration_is_cut_there() {
    let program = timerbench_workloads::compile(&workload(), Path::new("smoke")).unwrap();
    let schedule = Arc::new(Schedule::of(&program));
    let mut config = config("timerfd", None, "quad-heap", program.peak_pending);
    config.duration_ns = 130_000_000;
    let run = timerbench_live::run(&config, schedule).unwrap();
    assert_eq!(run.cut_at_tick, Some(130));
    // The operations at ticks 100 and 120 were sent, not those after.
    assert_eq!(run.sent, 4);
    assert_eq!(run.verification, Ok(()));
    // The loaded baseline is sent what the run was sent, no more.
    assert_eq!(run.loaded_baseline.as_ref().map(|l| l.arrivals), Some(4));
}

#[test]
fn a_kernel_without_epoll_pwait2_is_one_message_before_anything_runs() {
    fn missing(_: i32, _: &mut [sys::Event], _: Option<u64>) -> std::io::Result<usize> {
        Err(std::io::Error::from_raw_os_error(libc::ENOSYS))
    }
    let program = timerbench_workloads::compile(&workload(), Path::new("smoke")).unwrap();
    let mut config = config("pwait2", None, "btree", program.peak_pending);
    config.pwait2 = missing;
    let error = timerbench_live::run(&config, Arc::new(Schedule::of(&program)))
        .err()
        .expect("ENOSYS must refuse the run");
    assert_eq!(error, api::NO_PWAIT2);
}
