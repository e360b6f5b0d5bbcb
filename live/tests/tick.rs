//! Under `--wait tick` the structure's clock moves only on the period's wakeups, and an
//! arrival in between is stamped with the real tick it arrived at (docs/live.md, "Arrivals
//! under a tick"). Runs of about half a second that assert what holds under any load: the
//! structure moves at most once per period however many keepalives arrive, every deadline
//! counts from the arrival and not from the lagging clock, and the run verifies. No timing
//! figure is asserted.

use std::path::Path;
use std::sync::Arc;
use timerbench_impls::Variant;
use timerbench_live::LiveRun;
use timerbench_live::api::{Config, Policy, Settings};
use timerbench_live::schedule::{Arrival, Schedule};
use timerbench_live::verify::Applied;
use timerbench_workloads::Workload;
use timerbench_workloads::op::Op;

/// Connections in the workload.
const CONNECTIONS: u64 = 40;
/// Keepalives, one every two ticks.
const KEEPALIVES: u64 = 200;
/// The tick period: 50 ms at 1 ms ticks, against a keepalive every 2 ms.
const PERIOD_NS: u64 = 50_000_000;

/// `CONNECTIONS` idle timers of 100 to 139 ticks; then a keepalive every two ticks, each
/// restarting one connection's 100-tick timeout in turn; then 200 quiet ticks, where the
/// last of them time out.
fn keepalive() -> Workload {
    let mut ops: Vec<Op> = (0..CONNECTIONS)
        .map(|id| Op::Start {
            id,
            delay: 100 + id,
        })
        .collect();
    for round in 0..KEEPALIVES {
        ops.push(Op::Advance { ticks: 2 });
        ops.push(Op::Restart {
            id: round % CONNECTIONS,
            delay: 100,
        });
    }
    ops.push(Op::Advance { ticks: 200 });
    Workload {
        ops,
        ..Workload::default()
    }
}

fn ticking_run(variant: &str) -> (LiveRun, Arc<Schedule>) {
    let program = timerbench_workloads::compile(&keepalive(), Path::new("tick")).unwrap();
    let schedule = Arc::new(Schedule::of(&program));
    assert_eq!(schedule.arrivals.len() as u64, KEEPALIVES);
    let config = Config::new(&Settings {
        variant: Variant::parse(variant).unwrap(),
        wait: "tick".into(),
        period_ns: Some(PERIOD_NS),
        workload: "tick".into(),
        peak_pending: program.peak_pending,
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
    .unwrap();
    let run = timerbench_live::run(&config, Arc::clone(&schedule)).unwrap();
    (run, schedule)
}

/// The structure's clock moves at most once per period elapsed (plus tick 0), not once
/// per keepalive.
fn assert_moves_follow_the_period(run: &LiveRun) {
    let outcome = &run.outcome;
    let moves = outcome
        .log
        .ops
        .iter()
        .filter(|op| matches!(op, Applied::Move { .. }))
        .count() as u64;
    let elapsed_ns = outcome.workload.wall_ns + outcome.idle.wall_ns;
    let periods = elapsed_ns / PERIOD_NS + 1;
    assert!(
        moves <= periods + 1,
        "{moves} clock moves in {periods} periods ({} keepalives applied)",
        outcome.applied
    );
    assert!(moves > 0, "the period moved the clock");
}

/// Each keepalive's deadline counts from the tick it arrived at, which is no earlier than
/// its scheduled tick (the feeder sends it then), and never from a clock behind that.
fn assert_deadlines_count_from_the_arrival(run: &LiveRun, schedule: &Schedule) {
    let mut clock = 0;
    let mut arrivals = schedule.arrivals.iter();
    let mut lagging = 0;
    for op in run.outcome.log.ops.iter().skip(schedule.fill.len()) {
        let deadline = match *op {
            Applied::Move { to } => {
                clock = to;
                continue;
            }
            Applied::Start { deadline, .. } | Applied::Restart { deadline, .. } => deadline,
            // The workload stops nothing: these are the end's, after every arrival.
            Applied::Stop { .. } => continue,
        };
        let timed = arrivals.next().expect("one applied operation per arrival");
        let (Arrival::Restart { delay, .. } | Arrival::Start { delay, .. }) = timed.arrival else {
            unreachable!("the workload's arrivals are restarts")
        };
        assert!(
            deadline >= timed.tick + delay,
            "the keepalive scheduled at tick {} got deadline {deadline}, before it plus {delay}",
            timed.tick
        );
        lagging += u64::from(deadline > clock + delay);
    }
    assert!(arrivals.next().is_none(), "every keepalive was applied");
    assert!(
        lagging > 0,
        "no keepalive arrived while the structure's clock lagged behind it"
    );
}

#[test]
fn a_scan_under_a_tick_scans_once_a_period_and_verifies() {
    let (run, schedule) = ticking_run("polling-scan");
    assert_eq!(run.verification, Ok(()));
    assert_eq!(run.outcome.lateness.early, 0);
    assert_eq!(run.outcome.cut, None);
    assert_eq!(run.outcome.applied, KEEPALIVES);
    assert_moves_follow_the_period(&run);
    assert_deadlines_count_from_the_arrival(&run, &schedule);
    assert!(
        !run.outcome.log.firings.is_empty(),
        "the connections silent at the end time out"
    );
}

#[test]
fn a_ring_whose_hand_is_the_period_verifies_within_its_bound() {
    let (run, schedule) = ticking_run("ring-buckets:width=50");
    assert_eq!(run.verification, Ok(()));
    assert_eq!(run.outcome.lateness.early, 0);
    assert_eq!(run.outcome.applied, KEEPALIVES);
    assert_moves_follow_the_period(&run);
    assert_deadlines_count_from_the_arrival(&run, &schedule);
}
