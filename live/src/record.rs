//! A live run as a record of `live.jsonl` ([`timerbench_results::live`]), with the
//! conditions that move its figures: kernel, clock source, slack, policy, pins.

use crate::measure::spread;
use crate::schedule::Schedule;
use crate::tcp::TcpOutcome;
use crate::{Config, LiveRun};
use hdrhistogram::Histogram;
use timerbench_results::histogram::encode_v2;
use timerbench_results::live::{
    Arrivals, LIVE_SCHEMA, LatenessParts, LiveHistograms, LiveRecord, LoadedBaseline, Spread,
    TcpFigures,
};

/// Where the record was made, read once per command.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    /// When the command started, RFC 3339 in UTC.
    pub started: String,
    /// The build's git revision.
    pub git_revision: String,
    /// The host name.
    pub host: String,
}

fn first_line(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.lines().next().unwrap_or("").trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

/// The kernel release (`/proc/sys/kernel/osrelease`).
pub fn kernel() -> String {
    first_line("/proc/sys/kernel/osrelease")
}

/// The clock source behind CLOCK_MONOTONIC.
pub fn clock_source() -> String {
    first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource")
}

/// The record of `run`, made with `config` over `schedule`.
pub fn record(
    machine: &Machine,
    config: &Config,
    schedule: &Schedule,
    run: &LiveRun,
) -> LiveRecord {
    let outcome = &run.outcome;
    let lateness = &outcome.lateness;
    let mut reasons = Vec::new();
    let status = match &run.verification {
        Ok(()) => "verified",
        Err(why) => {
            reasons.push(format!("unverified: {why}"));
            "unverified"
        }
    };
    if let Some(tick) = run.cut_at_tick {
        reasons.push(format!(
            "cut by --duration at tick {tick} of {} (the rest of the workload was not sent)",
            schedule.end_tick
        ));
    }
    if let Some(cut) = &outcome.cut {
        reasons.push(cut.clone());
    }
    let behind = spread(&outcome.behind);
    reasons.extend(behind_reason(
        &behind,
        &spread(&lateness.wake),
        &spread(&lateness.dispatch),
        &spread(&run.baseline),
        config.tick_ns,
    ));
    let tcp = run.tcp.as_ref().map(|tcp| tcp_figures(config, run, tcp));
    if let Some(tcp) = &tcp {
        if tcp.closed_wrongly > 0 {
            reasons.push(format!(
                "{} connections closed wrongly: they had sent a keepalive within the timeout",
                tcp.closed_wrongly
            ));
        }
        if let Some(exit) = &tcp.client_exit {
            reasons.push(exit.clone());
        }
    }
    LiveRecord {
        schema: LIVE_SCHEMA,
        started: machine.started.clone(),
        git_revision: machine.git_revision.clone(),
        host: machine.host.clone(),
        kernel: kernel(),
        clock_source: clock_source(),
        implementation: config.variant.label().to_string(),
        precision: config.variant.declarations().precision.describe(),
        workload: config.workload.clone(),
        peak_pending: config.peak_pending,
        tick_ns: config.tick_ns,
        wait: config.strategy.name().to_string(),
        period_ns: config.strategy.period_ns(),
        timer_slack_ns: run.slack_ns,
        policy: config.policy.name().to_string(),
        priority: config.policy.priority(),
        loop_cpu: config.loop_cpu,
        feeder_cpu: config.feeder_cpu,
        duration_limit_ns: config.duration_ns,
        status: status.to_string(),
        reasons,
        end_tick: schedule.end_tick,
        cut_at_tick: run
            .cut_at_tick
            .or(outcome.cut.as_ref().map(|_| outcome.end_tick)),
        arrivals: Arrivals {
            fill: schedule.fill.len() as u64,
            scheduled: schedule.arrivals.len() as u64,
            sent: run.sent,
            applied: outcome.applied,
            starts_as_restarts: outcome.starts_as_restarts,
            behind,
        },
        firings: outcome.log.firings.len() as u64,
        lateness: LatenessParts {
            total: spread(&lateness.total),
            rounding: spread(&lateness.rounding),
            wake: spread(&lateness.wake),
            dispatch: spread(&lateness.dispatch),
            early: lateness.early,
            most_early_ns: lateness.most_early_ns,
        },
        baseline: spread(&run.baseline),
        loaded_baseline: run.loaded_baseline.as_ref().map(|loaded| LoadedBaseline {
            lateness: spread(&loaded.lateness),
            arrivals: loaded.arrivals,
        }),
        workload_phase: outcome.workload,
        idle_phase: outcome.idle,
        timerfd_rearms: run.rearms,
        missed_ticks: outcome.missed_ticks,
        tcp,
        histograms: histograms(&lateness.total, &run.baseline),
        engine: None,
        // Measured by the command around the run (harness/src/machine_load.rs).
        others_load: None,
    }
}

/// "Behind real time" when 1% of the operations were applied more than a tick late, with
/// which of two causes the record shows: the host waking the loop late (the wait's part of
/// the lateness, `wake`, is the larger at p99; the bare baseline, the same waits with no
/// structure, measures that delay alone), or the loop's own work falling behind (the
/// `dispatch` part, return to callback, is the larger). Without firings the baseline
/// decides: above a tick at p99, the host's wake-up delay alone explains the backlog.
fn behind_reason(
    behind: &Spread,
    wake: &Spread,
    dispatch: &Spread,
    baseline: &Spread,
    tick_ns: u64,
) -> Option<String> {
    if behind.p99_ns <= tick_ns {
        return None;
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    let host = if wake.count > 0 || dispatch.count > 0 {
        wake.p99_ns >= dispatch.p99_ns
    } else {
        baseline.p99_ns > tick_ns
    };
    let cause = if host {
        format!(
            "the host woke the loop late, not the loop's work: at p99 the waits returned \
             {:.3} ms late against {:.3} ms from a wait's return to the callback, and the bare \
             baseline (the same waits, no structure) was {:.3} ms late: the host's wake-up \
             delay (the kernel's and the scheduler's; on a virtual machine the hypervisor's \
             too), not operations too dense for the loop",
            ms(wake.p99_ns),
            ms(dispatch.p99_ns),
            ms(baseline.p99_ns)
        )
    } else {
        format!(
            "the loop could not keep up: at p99 its own work took {:.3} ms from a wait's \
             return to the callback against {:.3} ms of late wake-up (operations too dense \
             for real time at this --tick, a burst of firings, or a busy machine)",
            ms(dispatch.p99_ns),
            ms(wake.p99_ns)
        )
    };
    Some(format!(
        "behind real time: 1% of the operations were applied more than {:.3} ms after their \
         scheduled time (the most {:.3} ms), more than a tick; {cause}; the lateness includes \
         that backlog",
        ms(behind.p99_ns),
        ms(behind.max_ns)
    ))
}

/// Both lateness histograms encoded for the record; `None` (the record keeps its
/// percentiles) in the unlikely case that one cannot be serialised.
pub(crate) fn histograms(
    lateness: &Histogram<u64>,
    baseline: &Histogram<u64>,
) -> Option<LiveHistograms> {
    Some(LiveHistograms {
        lateness_v2: encode_v2(lateness).ok()?,
        baseline_v2: encode_v2(baseline).ok()?,
    })
}

/// The TCP figures: a close is on time within the declared lateness (the structure's
/// window, or a period for `tick` if longer) plus the baseline's p99.9.
fn tcp_figures(config: &Config, run: &LiveRun, tcp: &TcpOutcome) -> TcpFigures {
    // A tick-driven loop wakes at its period's boundaries, a walking structure fires at
    // its own: the later of the two bounds a firing, not their sum.
    let declared_ns =
        (run.declared_late_ticks * config.tick_ns).max(config.strategy.period_ns().unwrap_or(0));
    let allowance_ns = declared_ns + run.baseline.value_at_quantile(0.999);
    figures_of(tcp, allowance_ns, run.peak_rss_bytes)
}

/// The figures of `tcp`: a close is on time within `allowance_ns` after its deadline.
pub(crate) fn figures_of(
    tcp: &TcpOutcome,
    allowance_ns: u64,
    server_peak_rss_bytes: u64,
) -> TcpFigures {
    let mut lateness = crate::measure::histogram();
    for &late in &tcp.close_lateness {
        crate::measure::note(&mut lateness, late);
    }
    TcpFigures {
        connections: tcp.connections,
        sources: tcp.sources,
        ramp_ns: tcp.ramp_ns,
        client_sent: tcp.client_sent,
        client_refused: tcp.client_refused,
        received: tcp.received,
        closed: tcp.closed,
        closed_on_time: tcp
            .close_lateness
            .iter()
            .filter(|&&late| late <= allowance_ns)
            .count() as u64,
        on_time_allowance_ns: allowance_ns,
        closed_wrongly: tcp.closed_wrongly,
        rearmed: tcp.rearmed,
        closed_by_client: tcp.closed_by_client,
        open_at_end: tcp.open_at_end,
        close_lateness: spread(&lateness),
        server_peak_rss_bytes,
        client_peak_rss_bytes: tcp.client_peak_rss_bytes,
        client_exit: tcp.client_exit.clone(),
        io: tcp.io.clone(),
        // Why the run has that many is the caller's choice, which it records.
        connections_why: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_p99(count: u64, p99_ns: u64) -> Spread {
        Spread {
            count,
            p50_ns: p99_ns / 2,
            p99_ns,
            p999_ns: p99_ns,
            max_ns: p99_ns,
        }
    }

    const TICK: u64 = 1_000_000;

    #[test]
    fn late_wake_ups_are_the_hosts_and_slow_dispatch_the_loops() {
        let behind = at_p99(100, 3 * TICK);
        let quiet = at_p99(100, TICK / 100);
        let late = at_p99(100, 2 * TICK);
        let host = behind_reason(&behind, &late, &quiet, &late, TICK).expect("behind");
        assert!(host.contains("the host woke the loop late"), "{host}");
        assert!(!host.contains("could not keep up"), "{host}");
        let lagging = behind_reason(&behind, &quiet, &late, &quiet, TICK).expect("behind");
        assert!(lagging.contains("the loop could not keep up"), "{lagging}");
        assert!(!lagging.contains("host woke"), "{lagging}");
    }

    #[test]
    fn without_firings_the_baseline_decides_and_within_a_tick_nothing_is_said() {
        let behind = at_p99(100, 3 * TICK);
        let none = at_p99(0, 0);
        let late = at_p99(100, 2 * TICK);
        let quiet = at_p99(100, TICK / 100);
        let host = behind_reason(&behind, &none, &none, &late, TICK).expect("behind");
        assert!(host.contains("host woke"), "{host}");
        let lagging = behind_reason(&behind, &none, &none, &quiet, TICK).expect("behind");
        assert!(lagging.contains("could not keep up"), "{lagging}");
        assert_eq!(behind_reason(&quiet, &late, &late, &late, TICK), None);
    }
}
