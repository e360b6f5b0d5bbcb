//! The feeder: a thread that sends the workload's operations to the loop over a Unix
//! socket, each at its scheduled wall time, as packets arrive at a server.
//!
//! A record is one little-endian `u64`: the operation's index in
//! [`Schedule::arrivals`](crate::schedule::Schedule::arrivals), or [`END`] once the
//! workload's last tick is reached (or the run's limit). The operations due at one tick go
//! out in one write, a burst, and the feeder sleeps with `clock_nanosleep` (absolute) to
//! the next tick that has any. The loop measures how far behind their schedule it applies
//! them, which includes the feeder's own lateness: both are what a server would see.

use crate::event_loop::{Input, Received};
use crate::schedule::Schedule;
use crate::sys::{self, Epoll};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// The record that ends the workload.
pub const END: u64 = u64::MAX;

/// The epoll token of the loop's end of the socket.
const SOCKET_TOKEN: u64 = 1;

/// The most bytes of operations read in one pass: a server's read budget.
const READ_BUDGET: usize = 64 * 1024;

/// The longest the feeder sleeps before it looks at the stop flag again.
const POLL_STOP_NS: u64 = 50_000_000;

/// What the feeder is to send, and when.
pub struct Feed {
    /// The operations.
    pub schedule: Arc<Schedule>,
    /// How many of them (a run cut by its limit sends fewer).
    pub count: usize,
    /// Tick 0 on CLOCK_MONOTONIC.
    pub origin_ns: u64,
    /// Nanoseconds per tick.
    pub tick_ns: u64,
    /// When to send [`END`], absolute.
    pub end_ns: u64,
    /// The CPU to run on, if pinned.
    pub cpu: Option<usize>,
}

/// Starts the feeder on its own thread; it stops when done, when `stop` is set, or when
/// the loop closes its end of the socket.
pub fn spawn(feed: Feed, mut socket: UnixStream, stop: Arc<AtomicBool>) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name("timerbench-feeder".into())
        .spawn(move || {
            if let Some(cpu) = feed.cpu {
                // A failed pin only moves the feeder; the loop's pin is what is recorded.
                let _ = sys::pin_to(cpu);
            }
            // A thread inherits its creator's policy: the feeder stands for the network,
            // not for the loop, so it runs under normal scheduling even when the loop is
            // real-time (a failure leaves it as it was, which is no worse).
            let _ = sys::set_scheduler(libc::SCHED_OTHER, 0);
            let mut burst = Vec::with_capacity(4096);
            let mut next = 0;
            while next < feed.count {
                let tick = feed.schedule.arrivals[next].tick;
                if !sleep_until(feed.origin_ns + tick * feed.tick_ns, &stop) {
                    return;
                }
                burst.clear();
                while next < feed.count && feed.schedule.arrivals[next].tick == tick {
                    burst.extend_from_slice(&(next as u64).to_le_bytes());
                    next += 1;
                }
                if socket.write_all(&burst).is_err() {
                    return;
                }
            }
            if sleep_until(feed.end_ns, &stop) {
                let _ = socket.write_all(&END.to_le_bytes());
            }
        })
        .expect("spawning the feeder thread")
}

/// Sleeps until `deadline_ns`, in pieces short enough to see `stop`; false if stopped.
fn sleep_until(deadline_ns: u64, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = sys::now_ns();
        if now >= deadline_ns {
            return true;
        }
        sys::sleep_until(deadline_ns.min(now + POLL_STOP_NS));
    }
}

/// The loop's end of the feeder's socket, as the loop's [`Input`].
pub struct FeederInput {
    socket: UnixStream,
    /// A record cut between two reads.
    unread: Vec<u8>,
}

impl FeederInput {
    /// The loop's end of the socket pair.
    pub fn new(socket: UnixStream) -> FeederInput {
        FeederInput {
            socket,
            unread: Vec::new(),
        }
    }
}

impl Input for FeederInput {
    fn watch(&mut self, epoll: &Epoll) -> io::Result<()> {
        self.socket.set_nonblocking(true)?;
        epoll.add(self.socket.as_raw_fd(), SOCKET_TOKEN)
    }

    fn read(&mut self, _: &Epoll, _: &[u64], into: &mut Vec<Received>) -> io::Result<()> {
        let mut chunk = [0u8; 8192];
        let mut read = 0;
        while read < READ_BUDGET {
            let count = match self.socket.read(&mut chunk) {
                Ok(0) => {
                    into.push(Received::Cut(
                        "the feeder closed its socket before the end".into(),
                    ));
                    return Ok(());
                }
                Ok(count) => count,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            read += count;
            self.unread.extend_from_slice(&chunk[..count]);
            let whole = self.unread.len() / 8 * 8;
            for bytes in self.unread[..whole].chunks_exact(8) {
                let record = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
                if record == END {
                    into.push(Received::End);
                    return Ok(());
                }
                into.push(Received::Arrival(record as usize));
            }
            self.unread.drain(..whole);
        }
        Ok(())
    }

    fn unwatch(&mut self, epoll: &Epoll) -> io::Result<()> {
        epoll.delete(self.socket.as_raw_fd())
    }
}
