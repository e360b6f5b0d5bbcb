//! `live.jsonl`: the records of `timerbench live`, one structure in a real event loop on
//! the monotonic clock (`docs/live.md`). A record kind of its own, with its own version
//! ([`LIVE_SCHEMA`]), in a folder of its own, so that nothing that reads `results.jsonl`
//! meets it. `FORMAT.md` ("`live.jsonl`") gives every field.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// The file a live run writes in its folder.
pub const LIVE_FILE: &str = "live.jsonl";

/// The version of the live record this build writes; it reads this one and the ones
/// before it ([`OLDEST_LIVE_SCHEMA`] on). Version 2 added `tcp`, absent from a version-1
/// record, which reads as `None`; version 3 added `histograms`, `None` in the older ones;
/// version 4 added `engine`, `None` in the older ones (every one a Rust structure's run);
/// version 5 added `loaded_baseline`, `None` in the older ones; version 6 added
/// `others_load`, `None` in the older ones.
pub const LIVE_SCHEMA: u32 = 6;

/// The oldest live record version this build reads.
pub const OLDEST_LIVE_SCHEMA: u32 = 1;

/// The loaded baseline: a loop with no structure that sleeps to the same deadlines while
/// the feeder sends it the run's operations, read and dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadedBaseline {
    /// Return minus requested end of each wait, as `baseline`.
    pub lateness: Spread,
    /// Operations it read (the feeder sent the run's `arrivals.sent`).
    pub arrivals: u64,
}

/// `p50`, `p99`, `p99.9` and `max` of a set of durations, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spread {
    /// How many values.
    pub count: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// The loop thread over one phase of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Length of the phase, wall clock.
    pub wall_ns: u64,
    /// Waits that returned.
    pub wakeups: u64,
    /// Waits that returned with no timer fired and no I/O.
    pub useless_wakeups: u64,
    /// `wakeups` per wall second.
    pub wakeups_per_second: f64,
    /// `useless_wakeups` per wall second.
    pub useless_per_second: f64,
    /// The loop thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
    pub cpu_ns: u64,
    /// CPU milliseconds per wall second.
    pub cpu_ms_per_second: f64,
    /// Voluntary context switches (RUSAGE_THREAD).
    pub voluntary_switches: u64,
    /// Involuntary context switches (RUSAGE_THREAD).
    pub involuntary_switches: u64,
}

/// How a run's lateness divides (`docs/live.md`): `total = rounding + wake + dispatch`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatenessParts {
    /// Callback minus deadline, wall clock.
    pub total: Spread,
    /// The wait's requested end minus the deadline: the structure's and strategy's part.
    pub rounding: Spread,
    /// The wait's return minus its requested end: the kernel's and scheduler's part.
    pub wake: Spread,
    /// The callback minus the wait's return.
    pub dispatch: Spread,
    /// Firings before their deadline (0 but for an approximate structure's clamp).
    pub early: u64,
    /// The most an early firing came before its deadline.
    pub most_early_ns: u64,
}

/// The operations as they arrived and were applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrivals {
    /// Leading starts applied before the clock started (the fill).
    pub fill: u64,
    /// Operations of the workload after the fill.
    pub scheduled: u64,
    /// Those sent by the feeder (fewer when the run was cut by its limit).
    pub sent: u64,
    /// Those the loop applied.
    pub applied: u64,
    /// Starts of a timer still pending in the structure, applied as restarts.
    pub starts_as_restarts: u64,
    /// How long after its scheduled time each operation was applied.
    pub behind: Spread,
}

/// The TCP mode's figures (`timerbench live --tcp`): keepalives on real connections from a
/// client process, each connection closed when its idle timer fires.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpFigures {
    /// Connections the client opened (one timer each).
    pub connections: u64,
    /// Loopback source addresses they came from (127.0.0.2 on).
    pub sources: u64,
    /// The ramp: from the client's start to the last connection identified.
    pub ramp_ns: u64,
    /// Keepalives the client sent.
    pub client_sent: u64,
    /// Keepalives the client could not send: the server had closed the connection.
    pub client_refused: u64,
    /// Keepalives the server read.
    pub received: u64,
    /// Connections closed because their timer fired.
    pub closed: u64,
    /// Of those, closed within `on_time_allowance_ns` after the deadline.
    pub closed_on_time: u64,
    /// The structure's declared lateness (its window, or a period for `tick` if longer)
    /// plus the baseline's p99.9.
    pub on_time_allowance_ns: u64,
    /// Closed although the connection had sent a keepalive within the timeout: 0.
    pub closed_wrongly: u64,
    /// Timers that fired with a keepalive unread on their connection: re-armed, not closed.
    pub rearmed: u64,
    /// Connections the client closed itself (it died).
    pub closed_by_client: u64,
    /// Connections still open when the workload phase ended (closed then).
    pub open_at_end: u64,
    /// Each close's time after its timer's deadline.
    pub close_lateness: Spread,
    /// The server process's peak resident set (VmHWM), bytes.
    pub server_peak_rss_bytes: u64,
    /// The client process's peak resident set (VmHWM), bytes; 0 if it never reported.
    pub client_peak_rss_bytes: u64,
    /// How the client process ended, when not cleanly.
    pub client_exit: Option<String>,
    /// How the server held its connections: `epoll`, or `io_uring xN` (N rings of
    /// registered files); empty in records from before it was recorded (epoll).
    #[serde(default)]
    pub io: String,
    /// Why the run has `connections` connections: `requested` (`--timers`), `the seed's`
    /// (the default, 100,000), `the smoke's`, or `the hard descriptor limit is 20,000`
    /// when an engine's server, holding a descriptor per connection, set the default
    /// (docs/live.md, *Sizes*); empty in records from before it was recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub connections_why: String,
}

/// One live run: one implementation, one wait strategy, one workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveRecord {
    /// [`LIVE_SCHEMA`].
    pub schema: u32,
    /// When the run started, RFC 3339 in UTC.
    pub started: String,
    /// The git revision of the build.
    pub git_revision: String,
    /// The host name.
    pub host: String,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: String,
    /// `/sys/devices/system/clocksource/clocksource0/current_clocksource`.
    pub clock_source: String,
    /// The variant's label, e.g. `netty-wheel:tick=100`.
    pub implementation: String,
    /// `exact`, or `approximate: ` and the bound.
    pub precision: String,
    /// The workload's name.
    pub workload: String,
    /// Its most pending timers at once (the model's).
    pub peak_pending: u64,
    /// Nanoseconds per workload tick.
    pub tick_ns: u64,
    /// `pwait2`, `wait`, `timerfd` or `tick`.
    pub wait: String,
    /// The period of `tick`, else `null`.
    pub period_ns: Option<u64>,
    /// The loop thread's timer slack, read back after setting it.
    pub timer_slack_ns: u64,
    /// `other`, `fifo` or `rr`.
    pub policy: String,
    /// The real-time priority (0 for `other`).
    pub priority: i32,
    /// The CPU the loop was pinned to, if any.
    pub loop_cpu: Option<usize>,
    /// The CPU the feeder was pinned to, if any.
    pub feeder_cpu: Option<usize>,
    /// The workload phase's limit (`--duration`).
    pub duration_limit_ns: u64,
    /// `verified`, `unverified` or `failed`.
    pub status: String,
    /// Why not verified, why cut, why too dense: every reason, in words.
    pub reasons: Vec<String>,
    /// The workload's last tick, and the tick at which the run was cut (if it was).
    pub end_tick: u64,
    /// The tick at which the workload phase stopped short of `end_tick`, if it did.
    pub cut_at_tick: Option<u64>,
    /// The operations.
    pub arrivals: Arrivals,
    /// Timers fired.
    pub firings: u64,
    /// Lateness of the firings and its parts.
    pub lateness: LatenessParts,
    /// The bare loop's lateness to the same deadlines with the same wait.
    pub baseline: Spread,
    /// The same waits while the same operations arrive, read and dropped; `None` with
    /// `--tcp`, for an engine, and in records before version 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loaded_baseline: Option<LoadedBaseline>,
    /// The other processes' CPU over the run (`crate::load`): whether another process
    /// competed for the cores (version 6; `None` in older records and where `/proc` could
    /// not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_load: Option<crate::load::OthersLoad>,
    /// The workload phase.
    pub workload_phase: Usage,
    /// The idle phase: no timer pending, nothing arriving.
    pub idle_phase: Usage,
    /// Re-arms of the timerfd (`timerfd` only).
    pub timerfd_rearms: u64,
    /// Periods the `tick` loop missed (expirations read beyond one per wakeup).
    pub missed_ticks: u64,
    /// The TCP mode's figures; `None` for a run fed over the socket pair (and in every
    /// version-1 record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpFigures>,
    /// The whole lateness distributions behind `lateness.total` and `baseline`, so that a
    /// reader can draw their CDFs; `None` in records before version 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<LiveHistograms>,
    /// The other runtime that made the record, `None` for a structure in timerbench's own
    /// loop (and in every record before version 4): its server (`timerbench live --tcp
    /// --engine`) or its `micro lateness` answer (docs/engines.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<LiveEngine>,
}

/// What ran a live record when it is another runtime's program (an engine of
/// `docs/engines.md`) rather than a structure in timerbench's loop: the server of
/// `timerbench live --tcp --engine`, or a `micro lateness` answer.
///
/// An engine measures on its own clock inside its process, so fields that only the live
/// loop has (the parts of the lateness; for a lateness answer also `baseline` and
/// `arrivals`) are empty, and its wakeups are what `wakeups_of` says. Each producer fills
/// the fields it has; the others read as their defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LiveEngine {
    /// The engine's name (`go-runtime`, `netty-hashed-wheel`), also the record's
    /// `implementation`.
    pub name: String,
    /// Its runtime (`go`, the JVM's name).
    pub runtime: String,
    /// The runtime's version (`go1.19.8`).
    pub runtime_version: String,
    /// The flags it ran with (GOMAXPROCS, GOGC), where the engine reports them.
    pub runtime_flags: Vec<String>,
    /// The engine protocol's version (a lateness answer; 0 for a server).
    pub protocol: u32,
    /// Timers scheduled (a lateness answer: `firings` of them fired within its bound).
    pub timers: u64,
    /// How the server waits for its connections and times them out, in words (a server).
    pub server: String,
    /// Whose CPU time the phases' `cpu_ns` is, in words.
    pub cpu_of: String,
    /// What the phases' wakeup counts are, in words; where the runtime counts none, they
    /// are 0 and this says so.
    pub wakeups_of: String,
    /// Garbage collections during the workload phase (a server).
    pub gc_cycles: u64,
    /// Their stop-the-world pauses, nanoseconds (a server).
    pub gc_pause_ns: u64,
}

impl LiveRecord {
    /// Whether another runtime made the record, not a structure in the live loop.
    pub fn is_engine(&self) -> bool {
        self.engine.is_some()
    }
}

/// A live run's lateness histograms, HdrHistogram V2 in base64 (as `histogram_v2` in
/// `results.jsonl`), in nanoseconds at three significant digits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveHistograms {
    /// Callback minus deadline of every firing (`lateness.total`).
    pub lateness_v2: String,
    /// The bare loop's lateness (`baseline`).
    pub baseline_v2: String,
}

/// Appends `record` as one line to `folder/live.jsonl`, creating both if needed.
pub fn append_live(folder: &Path, record: &LiveRecord) -> anyhow::Result<()> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let path = folder.join(LIVE_FILE);
    let mut line = serde_json::to_string(record).context("serialising a live record")?;
    line.push('\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.write_all(line.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Reads `live.jsonl`, refusing a line of another version with its line number.
pub fn read_live(path: &Path) -> anyhow::Result<Vec<LiveRecord>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut records = Vec::new();
    for (index, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = || format!("{}:{}", path.display(), index + 1);
        let value: serde_json::Value =
            serde_json::from_str(line).with_context(|| format!("{}: not JSON", at()))?;
        match value.get("schema").and_then(|s| s.as_u64()) {
            Some(v) if (u64::from(OLDEST_LIVE_SCHEMA)..=u64::from(LIVE_SCHEMA)).contains(&v) => {}
            Some(v) => anyhow::bail!(
                "{}: live schema version {v}; this timerbench reads {OLDEST_LIVE_SCHEMA} to \
                 {LIVE_SCHEMA}",
                at()
            ),
            None => anyhow::bail!("{}: no `schema`: not a timerbench live record", at()),
        }
        records.push(
            serde_json::from_value(value)
                .with_context(|| format!("{}: not a live record", at()))?,
        );
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> LiveRecord {
        LiveRecord {
            schema: LIVE_SCHEMA,
            started: "2026-01-01T00:00:00Z".into(),
            git_revision: "abc".into(),
            host: "h".into(),
            kernel: "6.18".into(),
            clock_source: "tsc".into(),
            implementation: "netty-wheel:tick=100".into(),
            precision: "approximate: less than one worker tick".into(),
            workload: "keepalive-200".into(),
            peak_pending: 200,
            tick_ns: 1_000_000,
            wait: "tick".into(),
            period_ns: Some(100_000_000),
            timer_slack_ns: 50_000,
            policy: "other".into(),
            priority: 0,
            loop_cpu: Some(1),
            feeder_cpu: None,
            duration_limit_ns: 10_000_000_000,
            status: "verified".into(),
            reasons: vec![],
            end_tick: 1000,
            cut_at_tick: None,
            arrivals: Arrivals::default(),
            firings: 3,
            lateness: LatenessParts::default(),
            baseline: Spread::default(),
            loaded_baseline: None,
            others_load: None,
            workload_phase: Usage::default(),
            idle_phase: Usage::default(),
            timerfd_rearms: 0,
            missed_ticks: 0,
            tcp: None,
            histograms: None,
            engine: None,
        }
    }

    #[test]
    fn records_read_back_and_another_version_is_refused_with_its_line() {
        let folder = tempfile::tempdir().unwrap();
        append_live(folder.path(), &record()).unwrap();
        append_live(folder.path(), &record()).unwrap();
        let path = folder.path().join(LIVE_FILE);
        assert_eq!(read_live(&path).unwrap(), vec![record(), record()]);
        let newer = serde_json::to_string(&LiveRecord {
            schema: LIVE_SCHEMA + 1,
            ..record()
        })
        .unwrap();
        std::fs::write(&path, format!("{newer}\n")).unwrap();
        let error = read_live(&path).unwrap_err().to_string();
        let expected = format!("live.jsonl:1: live schema version {}", LIVE_SCHEMA + 1);
        assert!(error.contains(&expected), "{error}");
    }

    #[test]
    fn a_version_1_record_reads_without_tcp_and_a_tcp_record_round_trips() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(LIVE_FILE);
        let mut old = serde_json::to_value(record()).unwrap();
        old["schema"] = 1.into();
        assert!(
            old.get("tcp").is_none(),
            "no `tcp` key for a run without it"
        );
        std::fs::write(&path, format!("{old}\n")).unwrap();
        let read = read_live(&path).unwrap();
        assert_eq!((read[0].schema, read[0].tcp.is_none()), (1, true));
        let tcp = LiveRecord {
            tcp: Some(TcpFigures {
                connections: 50,
                closed: 12,
                client_exit: Some("signal 9".into()),
                ..TcpFigures::default()
            }),
            ..record()
        };
        std::fs::remove_file(&path).unwrap();
        append_live(folder.path(), &tcp).unwrap();
        assert_eq!(read_live(&path).unwrap(), vec![tcp]);
    }

    #[test]
    fn an_engine_record_round_trips_and_an_older_record_reads_as_a_loop_run() {
        assert!(
            serde_json::to_value(record())
                .unwrap()
                .get("engine")
                .is_none()
        );
        let engine = LiveRecord {
            implementation: "netty-hashed-wheel".into(),
            status: "ok".into(),
            engine: Some(LiveEngine {
                name: "netty-hashed-wheel".into(),
                runtime: "OpenJDK 64-Bit Server VM".into(),
                runtime_version: "17.0.13+11-Debian-2".into(),
                protocol: 2,
                timers: 3,
                wakeups_of: "the worker thread's voluntary context switches".into(),
                cpu_of: "the worker thread".into(),
                ..LiveEngine::default()
            }),
            ..record()
        };
        assert!(engine.is_engine() && !record().is_engine());
        let go = LiveRecord {
            implementation: "go-runtime".into(),
            engine: Some(LiveEngine {
                name: "go-runtime".into(),
                runtime_version: "go1.19.8".into(),
                runtime_flags: vec!["GOMAXPROCS=2".into()],
                gc_cycles: 2,
                ..LiveEngine::default()
            }),
            ..record()
        };
        let folder = tempfile::tempdir().unwrap();
        append_live(folder.path(), &engine).unwrap();
        append_live(folder.path(), &go).unwrap();
        let mut older = serde_json::to_value(record()).unwrap();
        older["schema"] = 3.into();
        let path = folder.path().join(LIVE_FILE);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("{older}\n"));
        std::fs::write(&path, text).unwrap();
        let read = read_live(&path).unwrap();
        assert_eq!(read[..2], [engine, go]);
        assert_eq!((read[2].schema, read[2].is_engine()), (3, false));
    }

    #[test]
    fn histograms_round_trip_and_are_absent_from_a_record_without_them() {
        assert!(
            serde_json::to_value(record())
                .unwrap()
                .get("histograms")
                .is_none()
        );
        let with = LiveRecord {
            histograms: Some(LiveHistograms {
                lateness_v2: "HISTFAAAAB".into(),
                baseline_v2: "HISTFAAAAC".into(),
            }),
            ..record()
        };
        let folder = tempfile::tempdir().unwrap();
        append_live(folder.path(), &with).unwrap();
        assert_eq!(
            read_live(&folder.path().join(LIVE_FILE)).unwrap(),
            vec![with]
        );
    }
}
