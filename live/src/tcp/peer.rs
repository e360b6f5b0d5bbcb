//! What both TCP servers share, whichever way they hold their connections (epoll and a
//! descriptor each, [`crate::tcp::server`]; io_uring's registered files,
//! [`crate::tcp::ring`]): the client process and the keepalives' bookkeeping.
//!
//! - **The client process**: started with the listener's port, handed the schedule, told
//!   tick 0, read for its `connected`/`done`/`error:` lines, waited for (killed after a
//!   while) at the end, and never left behind by a run that fails half-way.
//! - **The records**: a connection's bytes become keepalives (each a 16-byte record of
//!   its arrival index and the client's CLOCK_MONOTONIC time of sending), checked against
//!   the schedule, each moving the earliest wall time at which closing that connection is
//!   right ([`live_until_ns`]); and each close is counted, with its lateness, as on time
//!   or wrong.

use super::shared::{self, HELLO, RECORD_BYTES, TcpConfig, TcpOutcome, live_until_ns};
use crate::event_loop::Received;
use crate::schedule::{Arrival, Schedule};
use crate::sys;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

/// How long the client has to exit once the server is done, before it is killed.
const CLIENT_EXIT_NS: u64 = 5_000_000_000;

/// The client process and the keepalives' bookkeeping. See the module documentation.
pub struct Peer {
    pub schedule: Arc<Schedule>,
    tick_ns: u64,
    origin_ns: u64,
    child: Child,
    stdin: Option<ChildStdin>,
    control: ChildStdout,
    control_text: Vec<u8>,
    /// Per connection: the earliest wall time at which closing it is right.
    live_until_ns: Vec<u64>,
    /// Whether the client said `done`.
    pub done: bool,
    /// Whether the server stopped the client before its end (the workload phase was cut).
    stopped: bool,
    pub outcome: TcpOutcome,
}

impl Peer {
    /// Starts the client (pinned to `client_cpu` if given) towards `port` and hands it the
    /// schedule's messages.
    pub fn start(
        config: &TcpConfig,
        schedule: Arc<Schedule>,
        tick_ns: u64,
        client_cpu: Option<usize>,
        port: u16,
    ) -> Result<Peer, String> {
        let messages = shared::messages(&schedule)?;
        let connections = schedule.slots as u64;
        let sources = crate::net::sources_for(connections);
        let (program, leading) = config
            .client
            .split_first()
            .ok_or("no client program given")?;
        let mut command = Command::new(program);
        command.args(leading).args([
            "--port".to_string(),
            port.to_string(),
            "--connections".into(),
            connections.to_string(),
            "--sources".into(),
            sources.to_string(),
            "--tick-ns".into(),
            tick_ns.to_string(),
        ]);
        if let Some(cpu) = client_cpu {
            command.args(["--cpu".to_string(), cpu.to_string()]);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the TCP client process ({}): {e}",
                    program.to_string_lossy()
                )
            })?;
        let mut stdin = child.stdin.take().expect("stdin was piped");
        let control = child.stdout.take().expect("stdout was piped");
        let mut peer = Peer {
            live_until_ns: vec![0; schedule.slots],
            schedule,
            tick_ns,
            origin_ns: 0,
            child,
            stdin: None,
            control,
            control_text: Vec::new(),
            done: false,
            stopped: false,
            outcome: TcpOutcome {
                connections,
                sources,
                ..TcpOutcome::default()
            },
        };
        if let Err(e) = shared::write_messages(&mut stdin, &messages) {
            return Err(peer.died(&format!("before it read its schedule ({e})")));
        }
        peer.stdin = Some(stdin);
        Ok(peer)
    }

    /// The client's output, to watch on the loop's epoll (made non-blocking here).
    pub fn control_fd(&self) -> io::Result<RawFd> {
        let fd = self.control.as_raw_fd();
        sys::set_nonblocking(fd)?;
        Ok(fd)
    }

    /// The connection a hello names, or why the record is not a hello.
    pub fn hello(&self, record: &[u8]) -> Result<u32, String> {
        let word = u64::from_le_bytes(record[..8].try_into().expect("8 bytes"));
        let index = word & !HELLO;
        if word & HELLO == 0 || index >= self.outcome.connections {
            return Err(format!(
                "a connection's first record is {word:#x}, not a hello of one of {} connections",
                self.outcome.connections
            ));
        }
        Ok(index as u32)
    }

    /// Tells the client tick 0 (`origin_ns`) and the tick to stop at; arms each
    /// connection's fill deadline as the earliest right close.
    pub fn begin(&mut self, origin_ns: u64, end_tick: u64) -> Result<(), String> {
        self.origin_ns = origin_ns;
        for &(slot, delay) in &self.schedule.fill {
            self.live_until_ns[slot as usize] = origin_ns + delay * self.tick_ns;
        }
        let mut words = origin_ns.to_le_bytes().to_vec();
        words.extend_from_slice(&end_tick.to_le_bytes());
        let stdin = self.stdin.as_mut().expect("the client's stdin is open");
        if let Err(e) = stdin.write_all(&words).and_then(|()| stdin.flush()) {
            return Err(self.died(&format!("before tick 0 ({e})")));
        }
        Ok(())
    }

    /// The whole records at the front of `bytes`, sent on connection `slot`: each
    /// keepalive goes to `into` and moves the connection's earliest right close. The
    /// number read, or the protocol error that cuts the run.
    pub fn keepalives(
        &mut self,
        slot: u32,
        bytes: &[u8],
        into: &mut Vec<Received>,
    ) -> Result<u64, String> {
        let mut read = 0;
        for record in bytes.chunks_exact(RECORD_BYTES) {
            let index = u64::from_le_bytes(record[..8].try_into().expect("8 bytes"));
            let sent_ns = u64::from_le_bytes(record[8..].try_into().expect("8 bytes"));
            let arrival = self
                .schedule
                .arrivals
                .get(index as usize)
                .map(|t| t.arrival);
            let delay =
                match arrival {
                    Some(
                        Arrival::Start { slot: s, delay } | Arrival::Restart { slot: s, delay },
                    ) if s == slot => delay,
                    _ => {
                        self.outcome.received += read;
                        return Err(format!(
                            "connection {slot} sent a record for operation {index}, not one of \
                         its keepalives (a protocol error)"
                        ));
                    }
                };
            let until = live_until_ns(self.origin_ns, self.tick_ns, sent_ns, delay);
            let live_until = &mut self.live_until_ns[slot as usize];
            *live_until = (*live_until).max(until);
            into.push(Received::Arrival(index as usize));
            read += 1;
        }
        self.outcome.received += read;
        Ok(read)
    }

    /// Counts the close of connection `slot`, just done, whose timer's deadline was
    /// `deadline_ns`.
    pub fn closed(&mut self, slot: u32, deadline_ns: u64) {
        let closed_ns = sys::now_ns();
        self.outcome
            .close_lateness
            .push(closed_ns.saturating_sub(deadline_ns));
        self.outcome.closed += 1;
        if closed_ns < self.live_until_ns[slot as usize] {
            self.outcome.closed_wrongly += 1;
        }
    }

    /// The workload phase is over: a client that has not said `done` (the phase was cut,
    /// too dense or by its limit) would send on to its last tick for nobody, so it stops.
    pub fn stop_unless_done(&mut self) {
        if !self.done {
            let _ = self.child.kill();
            self.stopped = true;
        }
    }

    /// Closes the client's stdin (it exits), waits for it (killing it after a while) and
    /// gives the counts.
    pub fn finish(&mut self) -> TcpOutcome {
        self.stdin = None;
        let until = sys::now_ns() + CLIENT_EXIT_NS;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if sys::now_ns() < until => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                _ => {
                    let _ = self.child.kill();
                    break self.child.wait().ok();
                }
            }
        };
        if self.outcome.client_exit.is_none() && !self.stopped {
            self.outcome.client_exit = match status {
                Some(status) if status.success() => None,
                Some(status) => Some(format!("the TCP client process ended with {status}")),
                None => Some("the TCP client process could not be waited for".into()),
            };
        }
        std::mem::take(&mut self.outcome)
    }

    /// The message for a client that died `when`, with its exit status.
    pub fn died(&mut self, when: &str) -> String {
        let until = sys::now_ns() + 1_000_000_000;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if sys::now_ns() < until => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                _ => break "no exit status yet".to_string(),
            }
        };
        let message = format!("the TCP client process died {when}: {status}");
        self.outcome.client_exit = Some(message.clone());
        message
    }

    /// Reads the client's lines: `done` is the end, `error:` or its death a cut.
    pub fn read_control(&mut self) -> Result<Option<Received>, String> {
        let mut chunk = [0u8; 1024];
        loop {
            match self.control.read(&mut chunk) {
                Ok(0) => {
                    let why = self.died("(it closed its output)");
                    return Ok(Some(Received::Cut(why)));
                }
                Ok(count) => self.control_text.extend_from_slice(&chunk[..count]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("reading the TCP client's output: {e}")),
            }
            while let Some(end) = self.control_text.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.control_text.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line).trim().to_string();
                if let Some(why) = line.strip_prefix("error: ") {
                    let why = format!("the TCP client failed: {why}");
                    self.outcome.client_exit = Some(why.clone());
                    return Ok(Some(Received::Cut(why)));
                }
                if let Some(counts) = line.strip_prefix("done ") {
                    let words: Vec<u64> = counts
                        .split_whitespace()
                        .filter_map(|w| w.parse().ok())
                        .collect();
                    self.done = true;
                    if let [sent, refused, rss] = words[..] {
                        self.outcome.client_sent = sent;
                        self.outcome.client_refused = refused;
                        self.outcome.client_peak_rss_bytes = rss;
                    }
                    return Ok(Some(Received::End));
                }
            }
        }
    }
}

impl Drop for Peer {
    /// A run that failed half-way leaves no client behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
