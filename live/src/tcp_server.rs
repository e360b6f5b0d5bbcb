//! The server side of the TCP mode: the loop's [`Input`] is a listener on 127.0.0.1 and
//! one connection per timer, opened by the client process ([`crate::tcp_client`]).
//!
//! A run goes: listen, start the client and hand it the schedule's messages; the **ramp**
//! (accept every connection, each identified by its hello, within `--ramp`); tick 0, when
//! the loop starts each connection's idle timer with the workload's fill; then each
//! keepalive that arrives restarts its connection's timer, and a timer that fires closes
//! its connection. Just before closing, the server reads the connection once more: a
//! keepalive already there (sent before the close, not yet read) re-arms the timer
//! instead, as a server that checks its last read time before closing does (counted as
//! `rearmed`). The client's `done` line ends the workload phase; then every connection
//! still open is closed.
//!
//! A close is **on time** when it comes within the declared lateness (the structure's
//! window, or a period for `tick` if longer) and the baseline's p99.9 after the deadline, and
//! **wrong** when the connection had sent a keepalive within the timeout: the close came
//! before the tick of its last send (on the client's clock, the same CLOCK_MONOTONIC)
//! plus the timeout, or before its fill deadline.

use crate::event_loop::{Input, Received};
use crate::net;
use crate::schedule::{Arrival, Schedule};
use crate::sys::{self, Epoll};
use crate::tcp_client::{self, HELLO, RECORD_BYTES};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

/// The epoll token of the client's stdout.
const CONTROL_TOKEN: u64 = 2;
/// The epoll token of the listener.
const LISTENER_TOKEN: u64 = 3;
/// A connection's token is this plus its descriptor.
const CONNECTION_BASE: u64 = 16;
/// The most bytes read from one connection in one pass.
const CONNECTION_BUDGET: usize = 4096;
/// How long the client has to exit once the server is done, before it is killed.
const CLIENT_EXIT_NS: u64 = 5_000_000_000;

/// What the TCP mode is told.
#[derive(Debug, Clone)]
pub struct TcpConfig {
    /// The client process: its program and leading arguments (`timerbench
    /// live-tcp-client`); the server adds `--port`, `--connections`, `--sources`,
    /// `--tick-ns` and, if pinned, `--cpu`.
    pub client: Vec<OsString>,
    /// The port on 127.0.0.1 (0: any free one).
    pub port: u16,
    /// The longest the ramp may take.
    pub ramp_ns: u64,
    /// The longest the baseline may last.
    pub baseline_limit_ns: u64,
}

/// What the TCP side of a run counted.
#[derive(Debug, Clone, Default)]
pub struct TcpOutcome {
    /// Connections opened.
    pub connections: u64,
    /// Loopback source addresses they came from.
    pub sources: u64,
    /// The ramp: from the client's start to the last connection identified.
    pub ramp_ns: u64,
    /// Keepalives read by the server.
    pub received: u64,
    /// Connections closed because their timer fired.
    pub closed: u64,
    /// Of those, closed before the timeout since their last keepalive had passed.
    pub closed_wrongly: u64,
    /// Timers that fired with a keepalive unread on their connection: re-armed.
    pub rearmed: u64,
    /// Connections the client closed (it died, or gave up).
    pub closed_by_client: u64,
    /// Connections still open at the end of the workload phase.
    pub open_at_end: u64,
    /// Each close's time after its timer's deadline, in nanoseconds.
    pub close_lateness: Vec<u64>,
    /// Keepalives the client sent, and those refused by a closed connection (its `done`).
    pub client_sent: u64,
    /// See `client_sent`.
    pub client_refused: u64,
    /// The client process's peak resident set, in bytes (its `done`; 0 if it never said).
    pub client_peak_rss_bytes: u64,
    /// How the client process ended, in words, when not with status 0.
    pub client_exit: Option<String>,
}

/// The server's side of the TCP mode. See the module documentation.
pub struct TcpServer {
    schedule: Arc<Schedule>,
    tick_ns: u64,
    origin_ns: u64,
    child: Child,
    stdin: Option<ChildStdin>,
    control: ChildStdout,
    control_text: Vec<u8>,
    listener: Option<TcpListener>,
    connections: Vec<Option<TcpStream>>,
    slot_of_fd: HashMap<RawFd, u32>,
    unidentified: HashMap<RawFd, TcpStream>,
    partial: HashMap<RawFd, Vec<u8>>,
    /// Per connection: the earliest wall time at which closing it is right.
    live_until_ns: Vec<u64>,
    /// Whether the client said `done`.
    done: bool,
    /// Whether the server stopped the client before its end (the workload phase was cut).
    stopped: bool,
    outcome: TcpOutcome,
}

fn control_fd(control: &ChildStdout) -> RawFd {
    control.as_raw_fd()
}

impl TcpServer {
    /// Listens, starts the client (pinned to `client_cpu` if given) and hands it the
    /// schedule's messages.
    pub fn start(
        config: &TcpConfig,
        schedule: Arc<Schedule>,
        tick_ns: u64,
        client_cpu: Option<usize>,
    ) -> Result<TcpServer, String> {
        let messages = tcp_client::messages(&schedule)?;
        let listener = net::listen(config.port).map_err(|e| {
            format!(
                "cannot listen on {}:{} ({e}); choose another --port, or 0 for any free one",
                net::SERVER_ADDRESS,
                config.port
            )
        })?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("the listener's address: {e}"))?
            .port();
        let connections = schedule.slots as u64;
        let sources = net::sources_for(connections);
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
        let mut server = TcpServer {
            live_until_ns: vec![0; schedule.slots],
            connections: (0..schedule.slots).map(|_| None).collect(),
            schedule,
            tick_ns,
            origin_ns: 0,
            child,
            stdin: None,
            control,
            control_text: Vec::new(),
            listener: Some(listener),
            slot_of_fd: HashMap::new(),
            unidentified: HashMap::new(),
            partial: HashMap::new(),
            done: false,
            stopped: false,
            outcome: TcpOutcome {
                connections,
                sources,
                ..TcpOutcome::default()
            },
        };
        if let Err(e) = tcp_client::write_messages(&mut stdin, &messages) {
            return Err(server.died(&format!("before it read its schedule ({e})")));
        }
        server.stdin = Some(stdin);
        Ok(server)
    }

    /// Accepts every connection and reads its hello, within `ramp_ns`.
    pub fn ramp(&mut self, epoll: &Epoll, ramp_ns: u64) -> Result<(), String> {
        let failed = |e: io::Error| format!("the ramp: {e}");
        let listener = self
            .listener
            .as_ref()
            .expect("listening until the ramp ends");
        listener.set_nonblocking(true).map_err(failed)?;
        epoll
            .add(listener.as_raw_fd(), LISTENER_TOKEN)
            .map_err(failed)?;
        let control = control_fd(&self.control);
        sys::set_nonblocking(control).map_err(failed)?;
        epoll.add(control, CONTROL_TOKEN).map_err(failed)?;
        let started = sys::now_ns();
        let mut events = vec![sys::empty_event(); 256];
        while (self.slot_of_fd.len() as u64) < self.outcome.connections {
            if sys::now_ns() > started + ramp_ns {
                return Err(format!(
                    "the client opened {} of {} connections within --ramp {} s; raise --ramp, \
                     or use fewer --connections",
                    self.slot_of_fd.len(),
                    self.outcome.connections,
                    ramp_ns / sys::NANOS_PER_SECOND
                ));
            }
            let ready = match epoll.wait_ms(&mut events, 100) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => other.map_err(failed)?,
            };
            let tokens: Vec<u64> = events[..ready].iter().map(|event| event.u64).collect();
            for token in tokens {
                match token {
                    LISTENER_TOKEN => self.accept_all(epoll).map_err(failed)?,
                    CONTROL_TOKEN => {
                        if let Some(Received::Cut(why)) = self.read_control()? {
                            return Err(why);
                        }
                    }
                    _ => self.hello((token - CONNECTION_BASE) as RawFd)?,
                }
            }
        }
        self.outcome.ramp_ns = sys::now_ns() - started;
        if let Some(listener) = self.listener.take() {
            epoll.delete(listener.as_raw_fd()).map_err(failed)?;
        }
        Ok(())
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

    /// Closes the client's stdin (it exits), waits for it (killing it after a while) and
    /// gives the counts.
    pub fn finish(mut self) -> TcpOutcome {
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
    fn died(&mut self, when: &str) -> String {
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

    fn accept_all(&mut self, epoll: &Epoll) -> io::Result<()> {
        let listener = self.listener.as_ref().expect("listening during the ramp");
        while let Some(stream) = net::accept(listener)? {
            let fd = stream.as_raw_fd();
            epoll.add(fd, CONNECTION_BASE + fd as u64)?;
            self.unidentified.insert(fd, stream);
        }
        Ok(())
    }

    /// Reads a new connection's hello and files it under its index.
    fn hello(&mut self, fd: RawFd) -> Result<(), String> {
        let Some(mut stream) = self.unidentified.remove(&fd) else {
            return Ok(());
        };
        let mut bytes = [0u8; RECORD_BYTES];
        let word = match stream.read(&mut bytes) {
            Ok(RECORD_BYTES) => u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.unidentified.insert(fd, stream);
                return Ok(());
            }
            Ok(count) => {
                return Err(format!(
                    "a connection sent {count} bytes for its hello instead of {RECORD_BYTES}"
                ));
            }
            Err(e) => return Err(format!("reading a connection's hello: {e}")),
        };
        let index = word & !HELLO;
        if word & HELLO == 0 || index >= self.outcome.connections {
            return Err(format!(
                "a connection's first record is {word:#x}, not a hello of one of {} connections",
                self.outcome.connections
            ));
        }
        self.slot_of_fd.insert(fd, index as u32);
        self.connections[index as usize] = Some(stream);
        Ok(())
    }

    /// Reads the client's lines: `done` is the end, `error:` or its death a cut.
    fn read_control(&mut self) -> Result<Option<Received>, String> {
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

    /// Reads what connection `slot` holds (within the budget) into `into`; closes it on
    /// end of stream. The number of keepalives read.
    fn drain(&mut self, slot: u32, into: &mut Vec<Received>) -> Result<u64, String> {
        let Some(stream) = self.connections[slot as usize].as_mut() else {
            return Ok(0);
        };
        let fd = stream.as_raw_fd();
        let mut bytes = self.partial.remove(&fd).unwrap_or_default();
        let mut chunk = [0u8; CONNECTION_BUDGET];
        let mut closed = false;
        match stream.read(&mut chunk) {
            Ok(0) => closed = true,
            Ok(count) => bytes.extend_from_slice(&chunk[..count]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A reset is the client going away, as an end of stream is.
            Err(_) => closed = true,
        }
        let whole = bytes.len() / RECORD_BYTES * RECORD_BYTES;
        let mut read = 0;
        for record in bytes[..whole].chunks_exact(RECORD_BYTES) {
            let index = u64::from_le_bytes(record[..8].try_into().expect("8 bytes"));
            let sent_ns = u64::from_le_bytes(record[8..].try_into().expect("8 bytes"));
            let delay =
                match self
                    .schedule
                    .arrivals
                    .get(index as usize)
                    .map(|t| t.arrival)
                {
                    Some(
                        Arrival::Start { slot: s, delay } | Arrival::Restart { slot: s, delay },
                    ) if s == slot => delay,
                    _ => {
                        into.push(Received::Cut(format!(
                            "connection {slot} sent a record for operation {index}, not one of \
                         its keepalives (a protocol error)"
                        )));
                        return Ok(read);
                    }
                };
            let until = live_until_ns(self.origin_ns, self.tick_ns, sent_ns, delay);
            let live_until = &mut self.live_until_ns[slot as usize];
            *live_until = (*live_until).max(until);
            into.push(Received::Arrival(index as usize));
            read += 1;
        }
        if whole < bytes.len() {
            self.partial.insert(fd, bytes[whole..].to_vec());
        }
        self.outcome.received += read;
        if closed {
            self.connections[slot as usize] = None;
            self.slot_of_fd.remove(&fd);
            self.partial.remove(&fd);
            self.outcome.closed_by_client += 1;
        }
        Ok(read)
    }
}

/// The earliest wall time at which closing a connection is right after a keepalive sent at
/// `sent_ns` (the client's clock) with a timeout of `delay` ticks: the tick of its sending
/// plus the timeout. Counted from the send, not the read, so that a server that reads late
/// still may not close early.
pub fn live_until_ns(origin_ns: u64, tick_ns: u64, sent_ns: u64, delay: u64) -> u64 {
    let sent_tick = sent_ns.saturating_sub(origin_ns) / tick_ns;
    origin_ns + (sent_tick + delay) * tick_ns
}

impl TcpServer {
    /// Reads the connection of epoll `token`, if it is still open.
    fn read_connection(&mut self, token: u64, into: &mut Vec<Received>) {
        let fd = (token - CONNECTION_BASE) as RawFd;
        if let Some(&slot) = self.slot_of_fd.get(&fd)
            && let Err(why) = self.drain(slot, into)
        {
            into.push(Received::Cut(why));
        }
    }
}

impl Input for TcpServer {
    fn watch(&mut self, _epoll: &Epoll) -> io::Result<()> {
        // The connections and the client's output are watched since the ramp.
        Ok(())
    }

    fn read(&mut self, epoll: &Epoll, ready: &[u64], into: &mut Vec<Received>) -> io::Result<()> {
        for &token in ready.iter().filter(|&&t| t >= CONNECTION_BASE) {
            self.read_connection(token, into);
        }
        if !ready.contains(&CONTROL_TOKEN) {
            return Ok(());
        }
        match self.read_control() {
            Ok(Some(Received::End)) => {
                // The client wrote its last keepalives before `done`: read every one
                // still waiting (epoll knows which connections hold some), then end.
                let mut events = vec![sys::empty_event(); 256];
                loop {
                    let ready = epoll.wait_ms(&mut events, 0)?;
                    let tokens: Vec<u64> = events[..ready]
                        .iter()
                        .map(|event| event.u64)
                        .filter(|&token| (CONNECTION_BASE..u64::MAX).contains(&token))
                        .collect();
                    if tokens.is_empty() {
                        break;
                    }
                    for token in tokens {
                        self.read_connection(token, into);
                    }
                }
                into.push(Received::End);
            }
            Ok(line) => into.extend(line),
            Err(why) => into.push(Received::Cut(why)),
        }
        Ok(())
    }

    fn fired(&mut self, slot: u32, deadline_ns: u64, into: &mut Vec<Received>) {
        match self.drain(slot, into) {
            Ok(0) => {}
            Ok(_) => {
                self.outcome.rearmed += 1;
                return;
            }
            Err(why) => return into.push(Received::Cut(why)),
        }
        let Some(stream) = self.connections[slot as usize].take() else {
            return;
        };
        self.slot_of_fd.remove(&stream.as_raw_fd());
        drop(stream);
        let closed_ns = sys::now_ns();
        self.outcome
            .close_lateness
            .push(closed_ns.saturating_sub(deadline_ns));
        self.outcome.closed += 1;
        if closed_ns < self.live_until_ns[slot as usize] {
            self.outcome.closed_wrongly += 1;
        }
    }

    fn unwatch(&mut self, epoll: &Epoll) -> io::Result<()> {
        for connection in &mut self.connections {
            if connection.take().is_some() {
                self.outcome.open_at_end += 1;
            }
        }
        self.slot_of_fd.clear();
        if !self.done {
            // The workload phase was cut (too dense, or by its limit): the client would
            // send on to its last tick for nobody.
            let _ = self.child.kill();
            self.stopped = true;
        }
        epoll.delete(control_fd(&self.control))
    }
}

impl Drop for TcpServer {
    /// A run that failed half-way leaves no client behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
