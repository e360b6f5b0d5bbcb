//! The TCP mode with another runtime's server (`timerbench live --tcp --engine`): the same
//! client process and the same keepalives, but the connections are accepted, read and
//! timed out by an engine's program (`engines/go/keepalive.go`: Go's netpoller and timers)
//! instead of a structure in timerbench's loop.
//!
//! timerbench stays in charge of the run: it hands the engine the schedule's timeouts,
//! starts the client against the engine's port with the schedule's messages, tells both
//! tick 0, and tells the engine when the client is done. The engine answers with every
//! keepalive it read and every connection it closed, with its own CLOCK_MONOTONIC times;
//! [`crate::engine_check`] checks them against the client's send times exactly as the
//! Rust server's closes are checked, and makes the record.
//!
//! The engine speaks lines on stdout (`listening PORT`, `ready`, `result {JSON}`, `error:
//! WHY`) and reads `u64` little-endian words on stdin: the fill's count then `(connection,
//! delay)` each, the arrivals' count then `(connection, delay)` each; later tick 0; later
//! the word 1, the end of the workload.

use crate::schedule::{Arrival, Schedule};
use crate::sys;
use crate::tcp::TcpSettings;
use crate::tcp::shared::{self, Message};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Tick 0 this long after the engine is told it: its goroutines arm the fill's timeouts
/// meanwhile (a goroutine per connection, 100,000 of them at the seed's size).
pub const ENGINE_LEAD_NS: u64 = 500_000_000;
/// How long the engine may take to start listening (its runtime starting, its tables read).
const START_NS: u64 = 30_000_000_000;
/// How long past the workload's end the client may take to say `done`.
const DONE_GRACE_NS: u64 = 10_000_000_000;
/// How long past the idle phase the engine may take to close everything and answer.
const RESULT_GRACE_NS: u64 = 60_000_000_000;
/// How long a process has to exit once it is done, before it is killed.
const EXIT_NS: u64 = 5_000_000_000;
/// The most bytes of an engine's standard error kept for a failure's message.
const STDERR_KEPT: usize = 4096;

/// A TCP run with an engine's server.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The engine's name (`go-runtime`), the record's implementation.
    pub name: String,
    /// Its server: program and leading arguments (`.../go-runtime live-tcp`).
    pub server: Vec<OsString>,
    /// The client, port, ramp and baseline limit, as for the Rust server.
    pub tcp: TcpSettings,
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
    /// How long after its deadline a timeout may still be pending at the end before the
    /// run counts it as lost.
    pub max_behind_ns: u64,
    /// The CPU to pin the client to.
    pub client_cpu: Option<usize>,
}

/// Which process a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Server,
    Client,
}

/// A line of a process's stdout; `None` when it closed it.
struct Line {
    who: Who,
    text: Option<String>,
}

/// A child process whose stdout lines arrive on a channel.
struct Peer {
    child: Child,
    stdin: Option<ChildStdin>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Peer {
    /// Starts `argv` with `extra` arguments; its stderr kept (the server's) or shown.
    fn spawn(
        who: Who,
        argv: &[OsString],
        extra: &[String],
        lines: Sender<Line>,
    ) -> Result<Peer, String> {
        let (program, leading) = argv.split_first().ok_or("no program given")?;
        let mut command = Command::new(program);
        command
            .args(leading)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        command.stderr(match who {
            Who::Server => Stdio::piped(),
            Who::Client => Stdio::inherit(),
        });
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.to_string_lossy()))?;
        let stdout = BufReader::new(child.stdout.take().expect("stdout was piped"));
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(text) = line else { break };
                if lines
                    .send(Line {
                        who,
                        text: Some(text),
                    })
                    .is_err()
                {
                    return;
                }
            }
            let _ = lines.send(Line { who, text: None });
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut pipe) = child.stderr.take() {
            let kept = stderr.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 1024];
                while let Ok(count @ 1..) = pipe.read(&mut chunk) {
                    let mut kept = kept.lock().expect("only this thread writes");
                    kept.extend_from_slice(&chunk[..count]);
                    let excess = kept.len().saturating_sub(STDERR_KEPT);
                    kept.drain(..excess);
                }
            });
        }
        let stdin = child.stdin.take();
        Ok(Peer {
            child,
            stdin,
            stderr,
        })
    }

    fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self.stdin.as_mut().ok_or(std::io::ErrorKind::BrokenPipe)?;
        stdin.write_all(bytes).and_then(|()| stdin.flush())
    }

    /// Closes its stdin and waits for it to exit (killing it after [`EXIT_NS`]); how it
    /// ended, in words, when not with status 0.
    fn finish(&mut self) -> Option<String> {
        self.stdin = None;
        let until = sys::now_ns() + EXIT_NS;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return None,
                Ok(Some(status)) => return Some(format!("ended with {status}")),
                Ok(None) if sys::now_ns() < until => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Some("did not exit, killed".into());
                }
            }
        }
    }

    /// The last lines of its standard error, if it wrote any.
    fn stderr_tail(&self) -> String {
        let kept = self.stderr.lock().map(|k| k.clone()).unwrap_or_default();
        let text = String::from_utf8_lossy(&kept);
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(8)..].join(" | ");
        if tail.is_empty() {
            String::new()
        } else {
            format!("; its stderr: {tail}")
        }
    }
}

impl Drop for Peer {
    /// A run that failed half-way leaves no process behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What a run with an engine's server saw, for [`crate::engine_check`].
#[derive(Debug, Clone, Default)]
pub struct EngineRun {
    /// The engine's `result` line, JSON.
    pub result: String,
    /// Tick 0 on CLOCK_MONOTONIC.
    pub origin_ns: u64,
    /// When the engine was told the workload's end.
    pub ended_ns: u64,
    /// From the client's start to the engine's `ready`.
    pub ramp_ns: u64,
    /// The tick the workload phase was cut at by `--duration`, if it was.
    pub cut_at_tick: Option<u64>,
    /// Messages the client was to send.
    pub sent: u64,
    /// The client's `done`: keepalives sent, refused, its peak RSS.
    pub client_done: Option<[u64; 3]>,
    /// How the client ended, in words, when not cleanly (it died, or said `error:`).
    pub client_exit: Option<String>,
    /// The timer slack the engine's threads inherited.
    pub slack_ns: u64,
}

/// The schedule's tables for the engine: the fill and the arrivals as `(connection,
/// delay)` pairs, each table after its count.
fn tables(schedule: &Schedule) -> Result<Vec<u8>, String> {
    let mut words = vec![schedule.fill.len() as u64];
    for &(slot, delay) in &schedule.fill {
        words.extend([u64::from(slot), delay]);
    }
    words.push(schedule.arrivals.len() as u64);
    for timed in &schedule.arrivals {
        match timed.arrival {
            Arrival::Start { slot, delay } | Arrival::Restart { slot, delay } => {
                words.extend([u64::from(slot), delay])
            }
            Arrival::Stop { slot } => {
                return Err(format!(
                    "the TCP mode sends keepalives; this workload stops timer {slot}"
                ));
            }
        }
    }
    Ok(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

/// The next line within `until_ns` (absolute), or why there is none.
fn next(lines: &Receiver<Line>, until_ns: u64, waiting: &str) -> Result<Line, String> {
    let left = until_ns.saturating_sub(sys::now_ns());
    match lines.recv_timeout(Duration::from_nanos(left)) {
        Ok(line) => Ok(line),
        Err(RecvTimeoutError::Timeout) => Err(format!(
            "no {waiting} within {} s",
            left.div_ceil(sys::NANOS_PER_SECOND)
        )),
        Err(RecvTimeoutError::Disconnected) => Err(format!("both processes gone before {waiting}")),
    }
}

/// Runs `config` over `schedule`; the raw outcome for [`crate::engine_check`].
pub fn run(config: &EngineConfig, schedule: &Schedule) -> Result<EngineRun, String> {
    let messages: Vec<Message> = shared::messages(schedule)?;
    let name = &config.name;
    let limit_tick = config.duration_ns / config.tick_ns;
    let end_tick = schedule.end_tick.min(limit_tick);
    let cut_at_tick = (schedule.end_tick > limit_tick).then_some(limit_tick);
    let (sender, lines) = channel();
    let connections = schedule.slots as u64;
    let server_args = [
        format!("connections={connections}"),
        format!("tick-ns={}", config.tick_ns),
        format!("idle-ns={}", config.idle_ns),
        format!("port={}", config.tcp.port),
    ];
    let mut server = Peer::spawn(Who::Server, &config.server, &server_args, sender.clone())?;
    let server_failed =
        |server: &Peer, why: String| format!("the {name} server: {why}{}", server.stderr_tail());
    if let Err(e) = server.write(&tables(schedule)?) {
        return Err(server_failed(
            &server,
            format!("died before it read its tables ({e})"),
        ));
    }
    let port = loop {
        let line = next(
            &lines,
            sys::now_ns() + START_NS,
            "`listening` from the server",
        )
        .map_err(|why| server_failed(&server, why))?;
        let Some(text) = line.text.as_deref().map(str::trim) else {
            return Err(server_failed(&server, "exited before it listened".into()));
        };
        if let Some(port) = text.strip_prefix("listening ") {
            break port
                .parse::<u16>()
                .map_err(|_| server_failed(&server, format!("said `{text}`")))?;
        }
        if let Some(why) = text.strip_prefix("error: ") {
            return Err(server_failed(&server, why.to_string()));
        }
    };
    let mut client_args = vec![
        "--port".to_string(),
        port.to_string(),
        "--connections".into(),
        connections.to_string(),
        "--sources".into(),
        crate::net::sources_for(connections).to_string(),
        "--tick-ns".into(),
        config.tick_ns.to_string(),
    ];
    if let Some(cpu) = config.client_cpu {
        client_args.extend(["--cpu".to_string(), cpu.to_string()]);
    }
    let started = sys::now_ns();
    let mut client = Peer::spawn(Who::Client, &config.tcp.client, &client_args, sender)?;
    let mut schedule_bytes = Vec::new();
    shared::write_messages(&mut schedule_bytes, &messages).map_err(|e| e.to_string())?;
    client
        .write(&schedule_bytes)
        .map_err(|e| format!("the TCP client process died before it read its schedule ({e})"))?;
    wait_ready(&lines, started + config.tcp.ramp_ns, config, &server)?;
    let ramp_ns = sys::now_ns() - started;
    let origin_ns = sys::now_ns() + ENGINE_LEAD_NS;
    let mut words = origin_ns.to_le_bytes().to_vec();
    if let Err(e) = server.write(&words) {
        return Err(server_failed(&server, format!("died before tick 0 ({e})")));
    }
    words.extend_from_slice(&end_tick.to_le_bytes());
    client
        .write(&words)
        .map_err(|e| format!("the TCP client process died before tick 0 ({e})"))?;
    let done_by = origin_ns + end_tick * config.tick_ns + DONE_GRACE_NS;
    let (client_done, mut client_exit) = wait_done(&lines, done_by, &server)?;
    let ended_ns = sys::now_ns();
    if let Err(e) = server.write(&1u64.to_le_bytes()) {
        return Err(server_failed(
            &server,
            format!("died in the workload phase ({e})"),
        ));
    }
    let result = wait_result(&lines, ended_ns + config.idle_ns + RESULT_GRACE_NS, &server)
        .map_err(|why| server_failed(&server, why))?;
    if client_done.is_some() {
        client_exit = client_exit.or(client
            .finish()
            .map(|how| format!("the TCP client process {how}")));
    }
    let _ = server.finish();
    Ok(EngineRun {
        result,
        origin_ns,
        ended_ns,
        ramp_ns,
        cut_at_tick,
        sent: schedule.arrivals_before(end_tick + u64::from(cut_at_tick.is_none())) as u64,
        client_done,
        client_exit,
        slack_ns: sys::timer_slack(),
    })
}

/// Waits for the server's `ready` (every connection identified) within the ramp.
fn wait_ready(
    lines: &Receiver<Line>,
    until_ns: u64,
    config: &EngineConfig,
    server: &Peer,
) -> Result<(), String> {
    loop {
        let line = next(lines, until_ns, "`ready` from the server").map_err(|why| {
            format!(
                "the client's connections were not all identified by the {} server within \
                 --ramp {} s ({why}); raise --ramp, or use fewer --connections",
                config.name,
                config.tcp.ramp_ns / sys::NANOS_PER_SECOND
            )
        })?;
        let error = line.text.as_deref().and_then(|t| t.strip_prefix("error: "));
        match (line.who, line.text.as_deref(), error) {
            (Who::Server, Some("ready"), _) => return Ok(()),
            (Who::Server, _, Some(why)) => {
                return Err(format!(
                    "the {} server: {why}{}",
                    config.name,
                    server.stderr_tail()
                ));
            }
            (Who::Client, _, Some(why)) => return Err(format!("the TCP client failed: {why}")),
            (Who::Server, None, _) => {
                return Err(format!(
                    "the {} server exited during the ramp{}",
                    config.name,
                    server.stderr_tail()
                ));
            }
            (Who::Client, None, _) => {
                return Err("the TCP client process died during the ramp".into());
            }
            _ => {}
        }
    }
}

type Done = (Option<[u64; 3]>, Option<String>);

/// Waits for the client's `done SENT REFUSED PEAK_RSS`; a client that fails or dies cuts
/// the workload phase there (its reason recorded), as with the Rust server.
fn wait_done(lines: &Receiver<Line>, until_ns: u64, server: &Peer) -> Result<Done, String> {
    loop {
        let line = next(lines, until_ns, "`done` from the TCP client")?;
        match (line.who, line.text.as_deref()) {
            (Who::Client, Some(text)) => {
                if let Some(counts) = text.strip_prefix("done ") {
                    let words: Vec<u64> = counts
                        .split_whitespace()
                        .filter_map(|w| w.parse().ok())
                        .collect();
                    return Ok((words.try_into().ok(), None));
                }
                if let Some(why) = text.strip_prefix("error: ") {
                    return Ok((None, Some(format!("the TCP client failed: {why}"))));
                }
            }
            (Who::Client, None) => {
                return Ok((
                    None,
                    Some("the TCP client process died (it closed its output)".into()),
                ));
            }
            (Who::Server, None) => {
                return Err(format!(
                    "the server exited in the workload phase{}",
                    server.stderr_tail()
                ));
            }
            (Who::Server, Some(_)) => {}
        }
    }
}

/// Waits for the server's `result {JSON}`.
fn wait_result(lines: &Receiver<Line>, until_ns: u64, server: &Peer) -> Result<String, String> {
    loop {
        let line = next(lines, until_ns, "`result` from the server")?;
        match (line.who, line.text) {
            (Who::Server, Some(text)) => {
                if let Some(result) = text.strip_prefix("result ") {
                    return Ok(result.to_string());
                }
                if text.starts_with("error: ") {
                    return Err(text);
                }
            }
            (Who::Server, None) => {
                return Err(format!("exited without its result{}", server.stderr_tail()));
            }
            (Who::Client, _) => {}
        }
    }
}
