//! The live driver: one timer structure inside a real event-loop thread on
//! CLOCK_MONOTONIC, replaying a workload with its ticks mapped to wall time.
//!
//! A run ([`run`]) takes one implementation variant, one workload and one wait strategy:
//!
//! - [`schedule`]: the workload laid out on its clock (each operation's scheduled tick);
//! - [`feeder`]: a thread that sends the operations over a Unix socket at their times;
//! - [`event_loop`]: the loop thread, epoll on the socket, the structure, the wait;
//! - [`wait`]: the wait strategies (`epoll_pwait2`, `epoll_wait`, timerfd, fixed tick);
//! - [`measure`]: lateness and its parts, wakeups, CPU, context switches;
//! - [`baseline`]: the same waits with no structure and no I/O (cyclictest's method), and
//!   with the same operations arriving, read and dropped;
//! - [`verify`]: the firings against the reference model for the operations applied;
//! - [`knobs`]: timer slack, scheduling policy, pinning, the descriptor limit;
//! - [`record`]: the run as a `live.jsonl` record (`timerbench-results`' `live` module);
//! - [`tcp`], [`net`]: the TCP mode, the keepalives arriving on real connections on
//!   loopback from a client process, a timer per connection that closes it;
//! - [`engine_server`], [`engine_record`]: the TCP mode with another runtime's server (Go's
//!   netpoller and timers) in place of the loop, checked the same way.
//!
//! Callers outside the crate use its face, [`api`]: settings of plain values, the runs,
//! their records. `docs/live.md` says how to run it and how to read it.

pub mod api;
mod baseline;
mod engine_record;
mod engine_server;
mod event_loop;
mod feeder;
mod knobs;
mod measure;
mod net;
mod record;
// Public for the crate's own tests (live/tests), which build schedules, read the applied
// operations and inject a missing `epoll_pwait2`; every other caller uses [`api`].
pub mod schedule;
pub mod sys;
mod tcp;
pub mod verify;
mod wait;

use knobs::Policy;
use schedule::Schedule;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tcp::{AnyServer, Server, TcpConfig, TcpIo, TcpOutcome};
use timerbench_impls::{QueueVisitor, TimerQueue, Variant};
use wait::{Strategy, Waiter};

/// How long before tick 0 the feeder and the loop are set up: the loop applies the fill,
/// then sleeps to tick 0.
const LEAD_NS: u64 = 20_000_000;

/// Descriptors a run holds: epoll, the socket pair, a timerfd, the baseline's epoll and
/// timerfd, with room for the standard ones and the test harness.
pub(crate) const DESCRIPTORS_NEEDED: u64 = 64;

/// Everything one live run is told.
#[derive(Clone)]
pub struct Config {
    /// The implementation variant.
    pub variant: Variant,
    /// The workload's name, for the record.
    pub workload: String,
    /// Its most pending timers at once (the structure is built with that capacity).
    pub peak_pending: u64,
    /// Nanoseconds per workload tick.
    pub tick_ns: u64,
    /// The wait strategy.
    pub strategy: Strategy,
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
    /// CPU to pin the loop to.
    pub loop_cpu: Option<usize>,
    /// CPU to pin the feeder to.
    pub feeder_cpu: Option<usize>,
    /// The `epoll_pwait2` call ([`sys::epoll_pwait2`]; a test injects another).
    pub pwait2: sys::Pwait2,
    /// The TCP mode: keepalives on real connections from a client process, instead of
    /// the feeder's socket.
    pub tcp: Option<TcpConfig>,
}

/// What one live run found.
pub struct LiveRun {
    /// What the loop measured.
    pub outcome: event_loop::Outcome,
    /// The bare loop's lateness.
    pub baseline: hdrhistogram::Histogram<u64>,
    /// The loaded baseline's (the feeder's operations read and dropped); none with `--tcp`.
    pub loaded_baseline: Option<baseline::Loaded>,
    /// `Ok` if the firings verified, else why not.
    pub verification: Result<(), String>,
    /// The loop's timer slack in force.
    pub slack_ns: u64,
    /// Operations the feeder was to send.
    pub sent: u64,
    /// The tick at which the workload was cut by `--duration`, if it was.
    pub cut_at_tick: Option<u64>,
    /// Re-arms of the timerfd.
    pub rearms: u64,
    /// The TCP mode's counts.
    pub tcp: Option<TcpOutcome>,
    /// The ticks the structure may fire a timer after its deadline, as declared (its
    /// window; 0 for an exact one).
    pub declared_late_ticks: u64,
    /// The server process's peak resident set, in bytes, after the run.
    pub peak_rss_bytes: u64,
}

/// The natural period of the structure, for `--wait tick` without `--period`: as the
/// structure declares it ([`timerbench_impls::NaturalPeriod`]), at `tick_ns` per tick.
pub(crate) fn natural_period_ns(variant: &Variant, tick_ns: u64) -> u64 {
    variant.declarations().natural_period.ns(tick_ns)
}

/// Checks, before any run, what can be refused: the policy (in a throwaway thread, so
/// this one keeps its own), the pins, the slack and the descriptor limit.
pub fn preflight(config: &Config) -> Result<(), String> {
    if let Some(TcpConfig {
        io: TcpIo::Epoll, ..
    }) = &config.tcp
    {
        knobs::ensure_descriptors(DESCRIPTORS_NEEDED + config.peak_pending)?;
    }
    if config.slack_ns == Some(0) {
        return Err(
            "--slack 0: the kernel reads 0 as \"reset to the default\"; the least \
                    slack is 1 ns"
                .into(),
        );
    }
    let probe = config.clone();
    std::thread::spawn(move || -> Result<(), String> {
        if let Some(cpu) = probe.loop_cpu {
            knobs::pin(cpu, "--pin")?;
        }
        if let Some(cpu) = probe.feeder_cpu {
            knobs::pin(cpu, "--feeder-cpu")?;
        }
        knobs::apply_slack(probe.slack_ns)?;
        probe.policy.apply()
    })
    .join()
    .map_err(|_| "the knob probe panicked".to_string())?
}

/// Runs `config` over `schedule`: the loop on a thread of its own with the knobs set,
/// the feeder beside it, the baseline after, and the verification.
pub fn run(config: &Config, schedule: Arc<Schedule>) -> Result<LiveRun, String> {
    let config = config.clone();
    std::thread::Builder::new()
        .name("timerbench-live".into())
        .spawn(move || {
            let variant = config.variant.clone();
            timerbench_impls::registry::visit(&variant, LoopThread { config, schedule })
        })
        .map_err(|e| format!("cannot start the loop thread: {e}"))?
        .join()
        .map_err(|_| "the loop thread panicked".to_string())?
}

/// The loop thread's work, with the structure's concrete type.
struct LoopThread {
    config: Config,
    schedule: Arc<Schedule>,
}

impl QueueVisitor for LoopThread {
    type Output = Result<LiveRun, String>;

    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output {
        let LoopThread { config, schedule } = self;
        // Started before the knobs, so that the client inherits neither the loop's pin
        // nor its policy.
        let server = match &config.tcp {
            Some(tcp) => Some(tcp::start(
                tcp,
                schedule.clone(),
                config.tick_ns,
                config.feeder_cpu,
            )?),
            None => None,
        };
        if let Some(cpu) = config.loop_cpu {
            knobs::pin(cpu, "--pin")?;
        }
        let slack_ns = knobs::apply_slack(config.slack_ns)?;
        config.policy.apply()?;
        let epoll = sys::Epoll::new().map_err(|e| format!("epoll_create1: {e}"))?;
        let limit_tick = config.duration_ns / config.tick_ns;
        let cut_at_tick = (schedule.end_tick > limit_tick).then_some(limit_tick);
        let end_tick = schedule.end_tick.min(limit_tick);
        let count = schedule.arrivals_before(end_tick + u64::from(cut_at_tick.is_none()));
        let queue: Q = variant.build(config.peak_pending as usize);
        let ramp_ns = config.tcp.as_ref().map_or(0, |tcp| tcp.ramp_ns);
        let (outcome, tcp, rearms) = match server {
            Some(AnyServer::Epoll(server)) => {
                serve_tcp(queue, &config, &schedule, server, &epoll, ramp_ns, end_tick)?
            }
            Some(AnyServer::Ring(server)) => {
                serve_tcp(queue, &config, &schedule, server, &epoll, ramp_ns, end_tick)?
            }
            None => feed_socket(queue, &config, &schedule, &epoll, count, end_tick)?,
        };
        let span_ns = outcome.workload.wall_ns;
        let baseline_span = config
            .tcp
            .as_ref()
            .map_or(span_ns, |tcp| span_ns.min(tcp.baseline_limit_ns));
        let baseline = baseline::run(
            config.strategy,
            &outcome.wake_targets,
            baseline_span,
            config.pwait2,
        )?;
        // The TCP mode has no loaded baseline: its input is the client process's
        // connections, which a loop without a structure cannot serve the same way.
        let loaded_baseline = match config.tcp {
            Some(_) => None,
            None => Some(baseline::run_loaded(
                config.strategy,
                &outcome.wake_targets,
                baseline_span,
                config.pwait2,
                baseline::Load {
                    schedule: schedule.clone(),
                    count,
                    tick_ns: config.tick_ns,
                    cpu: config.feeder_cpu,
                    lead_ns: LEAD_NS,
                },
            )?),
        };
        let verification = verify::verify::<Q>(variant, &outcome.log);
        let declared_late_ticks = declared_late_ticks::<Q>(variant);
        Ok(LiveRun {
            rearms,
            outcome,
            baseline,
            loaded_baseline,
            verification,
            slack_ns,
            sent: count as u64,
            cut_at_tick,
            tcp,
            declared_late_ticks,
            peak_rss_bytes: net::peak_rss_bytes(),
        })
    }
}

/// Deadlines probed for [`declared_late_ticks`]: a ring's one-second hand at 1 ms ticks
/// (1,000) and Netty's tick many times over.
const LATE_PROBE_TICKS: u64 = 16_384;

/// The most ticks after its deadline the structure declares it may fire a timer (its
/// window's `late`, the most over the deadlines of the first [`LATE_PROBE_TICKS`] from a
/// fresh structure); 0 for an exact one.
fn declared_late_ticks<Q: TimerQueue<u64>>(variant: &Variant) -> u64 {
    if variant.declarations().precision.is_exact() {
        return 0;
    }
    let probe: Q = variant.build(0);
    (1..=LATE_PROBE_TICKS)
        .map(|deadline| probe.window(deadline).late)
        .max()
        .unwrap_or(0)
}

type Served = (event_loop::Outcome, Option<TcpOutcome>, u64);

/// The loop fed by the feeder thread over a Unix socket pair.
fn feed_socket<Q: TimerQueue<u64>>(
    queue: Q,
    config: &Config,
    schedule: &Arc<Schedule>,
    epoll: &sys::Epoll,
    count: usize,
    end_tick: u64,
) -> Result<Served, String> {
    let origin_ns = sys::now_ns() + LEAD_NS;
    let mut waiter = Waiter::new(config.strategy, epoll, origin_ns, config.pwait2)?;
    let (loop_end, feeder_end) = UnixStream::pair().map_err(|e| format!("socketpair: {e}"))?;
    let end_ns = origin_ns + end_tick * config.tick_ns;
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = feeder::spawn(
        feeder::Feed {
            schedule: schedule.clone(),
            count,
            origin_ns,
            tick_ns: config.tick_ns,
            end_ns,
            cpu: config.feeder_cpu,
        },
        feeder_end,
        stop.clone(),
    );
    let setup = setup(config, schedule, origin_ns, end_ns);
    let input = feeder::FeederInput::new(loop_end);
    let outcome = event_loop::run(queue, &setup, input, epoll, &mut waiter);
    stop.store(true, Ordering::Relaxed);
    // The loop's end of the socket is closed by now (the input was dropped with the
    // outcome's error, or is dropped here), so a feeder blocked on a full socket gets
    // EPIPE and returns.
    let outcome = outcome.map(|(outcome, input)| {
        drop(input);
        outcome
    });
    let _ = feeder.join();
    let outcome = outcome.map_err(|e| format!("the event loop failed: {e}"))?;
    Ok((outcome, None, waiter.rearms))
}

/// The loop serving the client process's connections: the ramp, then the workload.
fn serve_tcp<Q: TimerQueue<u64>, S: Server>(
    queue: Q,
    config: &Config,
    schedule: &Schedule,
    mut server: S,
    epoll: &sys::Epoll,
    ramp_ns: u64,
    end_tick: u64,
) -> Result<Served, String> {
    // Refused here, before the ramp, on a kernel without epoll_pwait2.
    Waiter::new(
        config.strategy,
        &sys::Epoll::new().map_err(|e| e.to_string())?,
        0,
        config.pwait2,
    )?;
    // On failure the server is dropped, which stops the client.
    server.ramp(epoll, ramp_ns)?;
    let origin_ns = sys::now_ns() + LEAD_NS;
    let mut waiter = Waiter::new(config.strategy, epoll, origin_ns, config.pwait2)?;
    server.begin(origin_ns, end_tick)?;
    let end_ns = origin_ns + end_tick * config.tick_ns;
    let setup = setup(config, schedule, origin_ns, end_ns);
    let (outcome, server) = event_loop::run(queue, &setup, server, epoll, &mut waiter)
        .map_err(|e| format!("the event loop failed: {e}"))?;
    Ok((outcome, Some(server.finish()), waiter.rearms))
}

fn setup<'a>(
    config: &Config,
    schedule: &'a Schedule,
    origin_ns: u64,
    end_ns: u64,
) -> event_loop::Setup<'a> {
    event_loop::Setup {
        schedule,
        origin_ns,
        tick_ns: config.tick_ns,
        workload_limit_ns: end_ns + config.max_behind_ns,
        idle_ns: config.idle_ns,
        max_behind_ns: config.max_behind_ns,
    }
}
