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
//! plus the timeout, or before its fill deadline ([`crate::tcp_peer`] keeps that count).
//!
//! Two servers hold the connections: this file's, a descriptor each watched by the loop's
//! epoll, and [`crate::tcp_ring`]'s, io_uring's registered files, for more connections
//! than the descriptor limit allows ([`TcpIo`]). [`Server`] is what the loop asks of both.

use crate::event_loop::{Input, Received};
use crate::net;
use crate::schedule::Schedule;
use crate::sys::{self, Epoll};
use crate::tcp_client::RECORD_BYTES;
use crate::tcp_peer::Peer;
use crate::tcp_ring::RingServer;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, Read};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

pub use crate::tcp_peer::live_until_ns;

/// The epoll token of the client's stdout.
pub const CONTROL_TOKEN: u64 = 2;
/// The epoll token of the listener.
const LISTENER_TOKEN: u64 = 3;
/// A connection's token is this plus its descriptor.
const CONNECTION_BASE: u64 = 16;
/// The most bytes read from one connection in one pass.
const CONNECTION_BUDGET: usize = 4096;

/// How the server holds its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpIo {
    /// A descriptor per connection, watched by the loop's epoll, read and closed by
    /// system calls: the ordinary server. Needs a descriptor limit above the connections.
    Epoll,
    /// io_uring's registered files, `rings` rings of `slots` each: each ring's table is
    /// bounded by the descriptor limit separately, so this holds more connections than
    /// the limit. The loop's epoll watches the rings.
    Ring { rings: u32, slots: u32 },
}

impl TcpIo {
    /// Its name in records and tables.
    pub fn name(self) -> String {
        match self {
            TcpIo::Epoll => "epoll".into(),
            TcpIo::Ring { rings, .. } => format!("io_uring x{rings}"),
        }
    }
}

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
    /// How the server holds its connections.
    pub io: TcpIo,
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
    /// How the server held the connections ([`TcpIo::name`]).
    pub io: String,
}

/// What the loop asks of a TCP server besides its input.
pub trait Server: Input {
    /// Accepts every connection and reads its hello, within `ramp_ns`.
    fn ramp(&mut self, epoll: &Epoll, ramp_ns: u64) -> Result<(), String>;
    /// Tells the client tick 0 and the tick to stop at.
    fn begin(&mut self, origin_ns: u64, end_tick: u64) -> Result<(), String>;
    /// Lets the client go and gives the counts.
    fn finish(self) -> TcpOutcome;
}

/// Either server, as `config.io` says.
pub enum AnyServer {
    Epoll(TcpServer),
    Ring(RingServer),
}

/// Listens on the configured port (`--port` taken is named).
fn listen(config: &TcpConfig) -> Result<(TcpListener, u16), String> {
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
    Ok((listener, port))
}

/// Listens, starts the client (pinned to `client_cpu` if given) and hands it the
/// schedule's messages; the server holds its connections as `config.io` says.
pub fn start(
    config: &TcpConfig,
    schedule: Arc<Schedule>,
    tick_ns: u64,
    client_cpu: Option<usize>,
) -> Result<AnyServer, String> {
    let (listener, port) = listen(config)?;
    // The rings are made before the client starts, so that a kernel that refuses them
    // stops the run before any connection is opened.
    let rings = match config.io {
        TcpIo::Epoll => None,
        TcpIo::Ring { rings, slots } => Some(crate::tcp_ring::Rings::new(rings, slots)?),
    };
    let mut peer = Peer::start(config, schedule, tick_ns, client_cpu, port)?;
    peer.outcome.io = config.io.name();
    Ok(match rings {
        None => AnyServer::Epoll(TcpServer {
            peer,
            listener: Some(listener),
            connections: Vec::new(),
            slot_of_fd: HashMap::new(),
            unidentified: HashMap::new(),
            partial: HashMap::new(),
        }),
        Some(rings) => AnyServer::Ring(RingServer::new(peer, listener, rings)),
    })
}

/// The epoll server: a descriptor per connection. See the module documentation.
pub struct TcpServer {
    peer: Peer,
    listener: Option<TcpListener>,
    connections: Vec<Option<TcpStream>>,
    slot_of_fd: HashMap<RawFd, u32>,
    unidentified: HashMap<RawFd, TcpStream>,
    partial: HashMap<RawFd, Vec<u8>>,
}

impl Server for TcpServer {
    fn ramp(&mut self, epoll: &Epoll, ramp_ns: u64) -> Result<(), String> {
        let failed = |e: io::Error| format!("the ramp: {e}");
        self.connections = (0..self.peer.outcome.connections).map(|_| None).collect();
        let listener = self
            .listener
            .as_ref()
            .expect("listening until the ramp ends");
        listener.set_nonblocking(true).map_err(failed)?;
        epoll
            .add(listener.as_raw_fd(), LISTENER_TOKEN)
            .map_err(failed)?;
        let control = self.peer.control_fd().map_err(failed)?;
        epoll.add(control, CONTROL_TOKEN).map_err(failed)?;
        let started = sys::now_ns();
        let mut events = vec![sys::empty_event(); 256];
        while (self.slot_of_fd.len() as u64) < self.peer.outcome.connections {
            if sys::now_ns() > started + ramp_ns {
                return Err(ramp_too_long(
                    self.slot_of_fd.len() as u64,
                    self.peer.outcome.connections,
                    ramp_ns,
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
                        if let Some(Received::Cut(why)) = self.peer.read_control()? {
                            return Err(why);
                        }
                    }
                    _ => self.hello((token - CONNECTION_BASE) as RawFd)?,
                }
            }
        }
        self.peer.outcome.ramp_ns = sys::now_ns() - started;
        if let Some(listener) = self.listener.take() {
            epoll.delete(listener.as_raw_fd()).map_err(failed)?;
        }
        Ok(())
    }

    fn begin(&mut self, origin_ns: u64, end_tick: u64) -> Result<(), String> {
        self.peer.begin(origin_ns, end_tick)
    }

    fn finish(mut self) -> TcpOutcome {
        self.peer.finish()
    }
}

/// The message for a ramp that took longer than `ramp_ns`.
pub fn ramp_too_long(identified: u64, connections: u64, ramp_ns: u64) -> String {
    format!(
        "the client opened {identified} of {connections} connections within --ramp {} s; \
         raise --ramp, or use fewer --connections",
        ramp_ns / sys::NANOS_PER_SECOND
    )
}

impl TcpServer {
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
        match stream.read(&mut bytes) {
            Ok(RECORD_BYTES) => {}
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
        let index = self.peer.hello(&bytes)?;
        self.slot_of_fd.insert(fd, index);
        self.connections[index as usize] = Some(stream);
        Ok(())
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
        let read = self.peer.keepalives(slot, &bytes[..whole], into)?;
        if whole < bytes.len() {
            self.partial.insert(fd, bytes[whole..].to_vec());
        }
        if closed {
            self.connections[slot as usize] = None;
            self.slot_of_fd.remove(&fd);
            self.partial.remove(&fd);
            self.peer.outcome.closed_by_client += 1;
        }
        Ok(read)
    }

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
        match self.peer.read_control() {
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
                self.peer.outcome.rearmed += 1;
                return;
            }
            Err(why) => return into.push(Received::Cut(why)),
        }
        let Some(stream) = self.connections[slot as usize].take() else {
            return;
        };
        self.slot_of_fd.remove(&stream.as_raw_fd());
        drop(stream);
        self.peer.closed(slot, deadline_ns);
    }

    fn unwatch(&mut self, epoll: &Epoll) -> io::Result<()> {
        for connection in &mut self.connections {
            if connection.take().is_some() {
                self.peer.outcome.open_at_end += 1;
            }
        }
        self.slot_of_fd.clear();
        self.peer.stop_unless_done();
        epoll.delete(self.peer.control_fd()?)
    }
}
