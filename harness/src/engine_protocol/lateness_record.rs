//! An engine's `micro lateness` answer as a live record (`live.jsonl`, results/FORMAT.md):
//! the lateness cells of the results, read beside the live port's records and marked by
//! their `engine` field, so that Netty's own wheel and its port share one table.
//!
//! The engine measures on its own clock inside its process: the record carries what the
//! answer gives (lateness percentiles, fired and early, each phase's wall time, wake-ups
//! and CPU) and leaves empty what only the live loop measures (the bare loop, the parts of
//! the lateness, the arrivals, the useless wake-ups).

use super::lateness::{LatenessAnswer, LatenessRequest, Phase};
use super::protocol::{self, Answer, PROTOCOL, Request, Sampling};
use crate::engines::Engine;
use crate::engines::build::{Builder, NotBuilt};
use std::path::Path;
use std::time::Duration;
use timerbench_results::live::{LIVE_SCHEMA, LatenessParts, LiveEngine, LiveRecord, Spread, Usage};

/// An engine record's `status` when every timer fired and the answer passed the checks.
pub const ENGINE_OK: &str = "ok";

/// An engine record's `status` when timers were left unfired or wake-ups uncounted.
pub const ENGINE_INCOMPLETE: &str = "incomplete";

/// Why an engine gave no record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoRecord {
    /// Its toolchain is missing, or it does not run the request: why (with the package).
    Unsupported(String),
    /// It failed to build, crashed, hung or answered malformed: how, and its stderr's end.
    Failed(String),
}

/// The sampling words every request carries; `micro lateness` does not apply them.
const SAMPLING: Sampling = Sampling {
    samples: 10,
    min_sample_ms: 100,
    warmup: 5,
    max_warmup: 50,
};

/// Runs `request` on `engine` and makes its record, `workload` the name its live
/// counterpart's records carry (the lateness workload's path).
pub fn measure(
    engine: &Engine,
    builder: &mut Builder<'_>,
    request: &LatenessRequest,
    scratch: &Path,
    workload: &str,
) -> Result<LiveRecord, NoRecord> {
    let argv = match builder.build(engine) {
        Ok(argv) => argv,
        Err(NotBuilt::Unsupported(install)) => return Err(NoRecord::Unsupported(install)),
        Err(NotBuilt::BuildFailed(tail)) => {
            return Err(NoRecord::Failed(format!("build failed; stderr:\n{tail}")));
        }
    };
    let exchange = protocol::exchange(
        &argv,
        &Request::Lateness(*request),
        &SAMPLING,
        limit(request),
        scratch,
    );
    let failed =
        |what: String| NoRecord::Failed(format!("{what}; stderr:\n{}", exchange.stderr_tail));
    let answer = exchange.answer.clone().map_err(|f| failed(f.to_string()))?;
    if answer.status == "unsupported" {
        return Err(NoRecord::Unsupported(answer.reason.unwrap_or_default()));
    }
    let lateness = answer
        .lateness
        .clone()
        .ok_or_else(|| failed("a lateness answer without `lateness`".into()))?;
    super::lateness::check(request, &lateness).map_err(failed)?;
    Ok(record(&answer, &lateness, workload))
}

/// How long an engine may take: its own bound on the busy phase (the spread, 20 ticks and
/// 5 s, docs/engines.md), the idle phase, and a minute for the runtime's start.
fn limit(request: &LatenessRequest) -> Duration {
    let tick = request.tick_ms.unwrap_or(0);
    Duration::from_millis(request.spread_ms + 20 * tick + request.idle_ms + 65_000)
}

/// The live record of an engine's checked lateness answer.
pub fn record(answer: &Answer, lateness: &LatenessAnswer, workload: &str) -> LiveRecord {
    let mut reasons = Vec::new();
    if lateness.fired < lateness.timers {
        reasons.push(format!(
            "{} of {} timers fired within the engine's bound",
            lateness.fired, lateness.timers
        ));
    }
    if lateness.busy.wakeups_per_s.is_none() || lateness.idle.wakeups_per_s.is_none() {
        reasons.push("the engine did not count its wake-ups".to_string());
    }
    let status = if reasons.is_empty() {
        ENGINE_OK
    } else {
        ENGINE_INCOMPLETE
    };
    LiveRecord {
        schema: LIVE_SCHEMA,
        started: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        git_revision: crate::environment::git_revision(),
        host: crate::environment::host(),
        kernel: timerbench_live::api::kernel(),
        clock_source: timerbench_live::api::clock_source(),
        implementation: answer.engine.clone(),
        precision: "engine: on the real clock, not verified against the model".to_string(),
        workload: workload.to_string(),
        peak_pending: lateness.timers,
        // The delays are whole milliseconds, as the live workload's ticks.
        tick_ns: 1_000_000,
        wait: if lateness.tick_ms.is_some() {
            "tick"
        } else {
            "deadline"
        }
        .to_string(),
        period_ns: lateness.tick_ms.map(|t| t * 1_000_000),
        timer_slack_ns: 0,
        policy: "other".to_string(),
        priority: 0,
        loop_cpu: None,
        feeder_cpu: None,
        duration_limit_ns: 0,
        status: status.to_string(),
        reasons,
        end_tick: lateness.spread_ms,
        cut_at_tick: None,
        arrivals: Default::default(),
        firings: lateness.fired,
        lateness: LatenessParts {
            total: spread(lateness),
            early: lateness.early,
            ..LatenessParts::default()
        },
        baseline: Spread::default(),
        loaded_baseline: None,
        others_load: None,
        workload_phase: usage(&lateness.busy),
        idle_phase: usage(&lateness.idle),
        timerfd_rearms: 0,
        missed_ticks: 0,
        tcp: None,
        histograms: None,
        engine: Some(LiveEngine {
            name: answer.engine.clone(),
            runtime: answer.runtime.clone(),
            runtime_version: answer.runtime_version.clone(),
            protocol: PROTOCOL,
            timers: lateness.timers,
            wakeups_of: lateness.wakeups_of.clone(),
            cpu_of: lateness.cpu_of.clone(),
            ..LiveEngine::default()
        }),
    }
}

/// The answer's percentiles (µs) as a spread in ns; an early firing's negative lateness
/// counts as 0, as the live loop floors its parts (`early` keeps the count).
fn spread(lateness: &LatenessAnswer) -> Spread {
    let ns = |us: Option<f64>| (us.unwrap_or(0.0) * 1e3).round().max(0.0) as u64;
    let p = &lateness.lateness_us;
    Spread {
        count: lateness.fired,
        p50_ns: ns(p.p50),
        p99_ns: ns(p.p99),
        p999_ns: ns(p.p999),
        max_ns: ns(p.max),
    }
}

/// A phase as a live usage: its wake-ups are what the answer's `wakeups_of` counts (the
/// worker's voluntary switches, or the process's), so they are its voluntary switches too;
/// the useless wake-ups and involuntary switches are not counted (0).
fn usage(phase: &Phase) -> Usage {
    let per_second = phase.wakeups_per_s.unwrap_or(0.0);
    let wakeups = (per_second * phase.seconds).round() as u64;
    Usage {
        wall_ns: (phase.seconds * 1e9).round() as u64,
        wakeups,
        useless_wakeups: 0,
        wakeups_per_second: per_second,
        useless_per_second: 0.0,
        cpu_ns: (phase.cpu_ms_per_s * phase.seconds * 1e6).round() as u64,
        cpu_ms_per_second: phase.cpu_ms_per_s,
        voluntary_switches: wakeups,
        involuntary_switches: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine_protocol::lateness::Percentiles;

    fn answer() -> Answer {
        serde_json::from_value(serde_json::json!({
            "protocol": 2, "engine": "netty-hashed-wheel", "runtime": "OpenJDK",
            "runtime_version": "17.0.13", "status": "ok", "unit": "lateness",
        }))
        .unwrap()
    }

    fn lateness(fired: u64, wakeups: Option<f64>) -> LatenessAnswer {
        let phase = |seconds: f64| Phase {
            seconds,
            wakeups_per_s: wakeups,
            cpu_ms_per_s: 2.0,
            process_cpu_ms_per_s: None,
        };
        LatenessAnswer {
            timers: 100,
            fired,
            early: 0,
            tick_ms: Some(100),
            spread_ms: 1000,
            lateness_us: Percentiles {
                p50: Some(49_999.6),
                p99: Some(99_000.0),
                p999: Some(99_900.0),
                max: Some(101_234.5),
            },
            busy: phase(1.2),
            idle: phase(2.0),
            wakeups_of: "the worker thread's voluntary context switches".into(),
            cpu_of: "the worker thread".into(),
        }
    }

    #[test]
    fn an_answer_becomes_a_record_of_the_engine_that_reads_back() {
        let made = record(&answer(), &lateness(100, Some(10.0)), "w.tw");
        assert_eq!(made.status, ENGINE_OK);
        assert_eq!(
            (made.wait.as_str(), made.period_ns),
            ("tick", Some(100_000_000))
        );
        assert_eq!(made.lateness.total.p50_ns, 49_999_600);
        assert_eq!(made.lateness.total.max_ns, 101_234_500);
        assert_eq!(made.lateness.total.count, 100);
        assert_eq!(made.idle_phase.wakeups, 20);
        assert_eq!(made.idle_phase.wall_ns, 2_000_000_000);
        assert_eq!(made.workload_phase.cpu_ns, 2_400_000);
        let engine = made.engine.as_ref().unwrap();
        assert_eq!(
            (engine.name.as_str(), engine.timers),
            ("netty-hashed-wheel", 100)
        );
        let folder = tempfile::tempdir().unwrap();
        timerbench_results::live::append_live(folder.path(), &made).unwrap();
        let path = folder.path().join(timerbench_results::live::LIVE_FILE);
        let read = timerbench_results::live::read_live(&path).unwrap();
        assert_eq!(read, vec![made]);
    }

    #[test]
    fn timers_left_unfired_or_wakeups_uncounted_make_an_incomplete_record() {
        let short = record(&answer(), &lateness(90, Some(10.0)), "w.tw");
        assert_eq!(short.status, ENGINE_INCOMPLETE);
        assert!(
            short.reasons[0].starts_with("90 of 100 timers"),
            "{:?}",
            short.reasons
        );
        let uncounted = record(&answer(), &lateness(100, None), "w.tw");
        assert_eq!(uncounted.status, ENGINE_INCOMPLETE);
        assert!(
            uncounted.reasons[0].contains("wake-ups"),
            "{:?}",
            uncounted.reasons
        );
    }
}
