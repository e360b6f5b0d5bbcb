//! The epoll server of the TCP mode: a descriptor per connection, each watched by the
//! loop's epoll, read and closed by system calls (the mode itself: [`crate::tcp`]).

use super::peer::Peer;
use super::shared::{CONTROL_TOKEN, RECORD_BYTES, Server, TcpOutcome, ramp_too_long};
use crate::event_loop::{Input, Received};
use crate::net;
use crate::sys::{self, Epoll};
use std::collections::HashMap;
use std::io::{self, Read};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};

/// The epoll token of the listener.
const LISTENER_TOKEN: u64 = 3;
/// A connection's token is this plus its descriptor.
const CONNECTION_BASE: u64 = 16;
/// The most bytes read from one connection in one pass.
const CONNECTION_BUDGET: usize = 4096;

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

impl TcpServer {
    /// The server for `peer`'s connections, arriving on `listener`.
    pub fn new(peer: Peer, listener: TcpListener) -> TcpServer {
        TcpServer {
            peer,
            listener: Some(listener),
            connections: Vec::new(),
            slot_of_fd: HashMap::new(),
            unidentified: HashMap::new(),
            partial: HashMap::new(),
        }
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
