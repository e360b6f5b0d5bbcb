//! The crate's face: what a caller outside it (the harness's `live`, `engine --micro
//! lateness` and `reproduce`) uses, and all it uses.
//!
//! A caller fills [`Settings`] (or an [`EngineConfig`]) with plain values from its flags;
//! [`Config::new`] checks them and builds the run's configuration, naming the flag at
//! fault; [`preflight`] refuses what the machine would refuse; [`run`], [`run_engine`]
//! and [`run_tcp_client`] run; the runs come back as `live.jsonl` records
//! (`timerbench_results::live::LiveRecord`). Behind this face the modules (the loop, the
//! waits, the servers, the client) stay free to change shape without touching a caller;
//! `harness/tests/layering.rs` fails when a harness file reaches past it.

use crate::tcp;
use crate::wait::Strategy;
use crate::{DESCRIPTORS_NEEDED, natural_period_ns, record, sys};
use std::sync::Arc;
use timerbench_impls::Variant;
use timerbench_results::live::LiveRecord;

pub use crate::Config;
pub use crate::engine_server::EngineConfig;
pub use crate::knobs::Policy;
pub use crate::preflight;
pub use crate::record::{Machine, clock_source, kernel};
pub use crate::schedule::Schedule;
pub use crate::tcp::TcpSettings;
pub use crate::tcp::client::{ClientArgs, EXIT_AFTER_ENV};
pub use crate::wait::NO_PWAIT2;

/// One run of a structure, as the flags give it: plain values, checked by
/// [`Config::new`].
#[derive(Debug, Clone)]
pub struct Settings {
    /// The implementation variant.
    pub variant: Variant,
    /// The wait strategy's name (`--wait`): `pwait2`, `wait`, `timerfd` or `tick`.
    pub wait: String,
    /// The period of `tick` (`--period`); `None`: the structure's natural period at
    /// `tick_ns` per tick.
    pub period_ns: Option<u64>,
    /// The workload's name, for the record.
    pub workload: String,
    /// Its most pending timers at once.
    pub peak_pending: u64,
    /// Nanoseconds per workload tick.
    pub tick_ns: u64,
    /// The longest the workload phase may last.
    pub duration_ns: u64,
    /// The idle phase's length.
    pub idle_ns: u64,
    /// How far behind schedule an operation may be applied before the run stops.
    pub max_behind_ns: u64,
    /// Timer slack to set on the loop thread (`None`: leave it).
    pub slack_ns: Option<u64>,
    /// Scheduling policy of the loop thread.
    pub policy: Policy,
    /// CPU to pin the loop to (`--pin`).
    pub loop_cpu: Option<usize>,
    /// CPU to pin the feeder (or the TCP client) to (`--feeder-cpu`); `None` with
    /// `loop_cpu` set: another CPU than the loop's, if any, so that the two do not share.
    pub feeder_cpu: Option<usize>,
    /// The TCP mode's settings (`--tcp`); `None`: the feeder's socket.
    pub tcp: Option<TcpSettings>,
    /// How the TCP server holds its connections (`--tcp-io`: `auto`, `epoll`,
    /// `io-uring`); read only with `tcp`.
    pub tcp_io: String,
}

impl Config {
    /// The configuration `settings` describe, or why not, naming the flag (`--wait`,
    /// `--tcp-io`).
    pub fn new(settings: &Settings) -> Result<Config, String> {
        let strategy = strategy(settings)?;
        let feeder_cpu = settings.feeder_cpu.or_else(|| {
            let loop_cpu = settings.loop_cpu?;
            sys::available_cpus().into_iter().find(|&c| c != loop_cpu)
        });
        let tcp = match &settings.tcp {
            Some(tcp) => Some(tcp.with_io(tcp::ring::plan(
                settings.peak_pending,
                DESCRIPTORS_NEEDED,
                &settings.tcp_io,
            )?)),
            None => None,
        };
        Ok(Config {
            variant: settings.variant.clone(),
            workload: settings.workload.clone(),
            peak_pending: settings.peak_pending,
            tick_ns: settings.tick_ns,
            strategy,
            duration_ns: settings.duration_ns,
            idle_ns: settings.idle_ns,
            max_behind_ns: settings.max_behind_ns,
            slack_ns: settings.slack_ns,
            policy: settings.policy,
            loop_cpu: settings.loop_cpu,
            feeder_cpu,
            pwait2: sys::epoll_pwait2,
            tcp,
        })
    }
}

/// The wait strategy `settings.wait` names.
fn strategy(settings: &Settings) -> Result<Strategy, String> {
    Ok(match settings.wait.as_str() {
        "pwait2" => Strategy::Pwait2,
        "wait" => Strategy::Wait,
        "timerfd" => Strategy::Timerfd,
        "tick" => Strategy::Tick {
            period_ns: settings
                .period_ns
                .unwrap_or_else(|| natural_period_ns(&settings.variant, settings.tick_ns)),
        },
        other => {
            return Err(format!(
                "--wait {other}: the strategies are pwait2, wait, timerfd and tick"
            ));
        }
    })
}

/// Refuses, before a workload of `connections` is generated, a `--tcp-io` choice the
/// descriptor limit cannot meet (raising the limit where it can, as the run would).
pub fn check_tcp_io(connections: u64, tcp_io: &str) -> Result<(), String> {
    tcp::ring::plan(connections, DESCRIPTORS_NEEDED, tcp_io).map(|_| ())
}

/// Whether this process may hold `wanted` descriptors, raising its limit as the kernel
/// lets it (the hard one too, as root): `Err` with the hard limit that stops it.
pub fn descriptor_room(wanted: u64) -> Result<(), u64> {
    crate::knobs::ensure_descriptors(wanted)
        .map_err(|_| sys::descriptor_limit().map_or(0, |(_, hard)| hard))
}

/// Runs `config` over `schedule` (in process, or with `config.tcp` over TCP with the
/// client process): its record, or why the run could not be made.
pub fn run(
    config: &Config,
    schedule: &Arc<Schedule>,
    machine: &Machine,
) -> Result<LiveRecord, String> {
    let run = crate::run(config, Arc::clone(schedule))?;
    Ok(record::record(machine, config, schedule, &run))
}

/// Runs engine `config.name`'s server (`config.server`) over `schedule`: its record,
/// `failed` with why when the run breaks, so that a caller's other runs go on.
pub fn run_engine(config: &EngineConfig, schedule: &Schedule, machine: &Machine) -> LiveRecord {
    crate::engine_server::run(config, schedule)
        .and_then(|run| crate::engine_record::record(machine, config, schedule, &run))
        .unwrap_or_else(|why| engine_not_run(config, schedule, machine, "failed", &why))
}

/// The record of an engine that did not run: `status` (`unsupported`, `failed`) and why.
pub fn engine_not_run(
    config: &EngineConfig,
    schedule: &Schedule,
    machine: &Machine,
    status: &str,
    why: &str,
) -> LiveRecord {
    crate::engine_record::not_run(machine, config, schedule, status, why)
}

/// The TCP client process's whole life (the server starts it): a failure is also one
/// `error: ...` line on stdout, which the server reads and reports.
pub fn run_tcp_client(args: &ClientArgs) -> Result<(), String> {
    tcp::client::run(args).inspect_err(|why| {
        let _ = tcp::client::say(&format!("error: {why}"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(wait: &str) -> Settings {
        Settings {
            variant: Variant::parse("netty-wheel:tick=10").unwrap(),
            wait: wait.into(),
            period_ns: None,
            workload: "w".into(),
            peak_pending: 1,
            tick_ns: 1_000_000,
            duration_ns: 1,
            idle_ns: 1,
            max_behind_ns: 1,
            slack_ns: None,
            policy: Policy::Other,
            loop_cpu: None,
            feeder_cpu: None,
            tcp: None,
            tcp_io: "auto".into(),
        }
    }

    #[test]
    fn a_wait_name_becomes_its_strategy_and_tick_defaults_to_the_natural_period() {
        let config = Config::new(&settings("timerfd")).unwrap();
        assert_eq!(config.strategy, Strategy::Timerfd);
        let tick = Config::new(&settings("tick")).unwrap();
        let variant = Variant::parse("netty-wheel:tick=10").unwrap();
        assert_eq!(
            tick.strategy.period_ns(),
            Some(natural_period_ns(&variant, 1_000_000))
        );
        let mut given = settings("tick");
        given.period_ns = Some(7);
        assert_eq!(Config::new(&given).unwrap().strategy.period_ns(), Some(7));
    }

    #[test]
    fn an_unknown_wait_or_tcp_io_is_refused_naming_the_flag() {
        let error = Config::new(&settings("spin")).err().unwrap();
        assert!(error.starts_with("--wait spin:"), "{error}");
        let error = check_tcp_io(1, "kqueue").unwrap_err();
        assert!(error.starts_with("--tcp-io kqueue:"), "{error}");
    }

    #[test]
    fn a_pinned_loop_keeps_the_feeder_off_its_cpu() {
        let cpus = sys::available_cpus();
        let mut pinned = settings("pwait2");
        pinned.loop_cpu = cpus.first().copied();
        let config = Config::new(&pinned).unwrap();
        assert!(config.feeder_cpu.is_none() || config.feeder_cpu != config.loop_cpu);
        assert_eq!(config.feeder_cpu.is_some(), cpus.len() > 1);
    }
}
