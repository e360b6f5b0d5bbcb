//! What the TCP mode's server and client agree on, and what both servers share: the
//! wire (the schedule's messages on the client's stdin, the records on each connection),
//! the mode's configuration and counts, and what the loop asks of a server.

use crate::event_loop::Input;
use crate::schedule::{Arrival, Schedule};
use crate::sys::{self, Epoll};
use std::ffi::OsString;
use std::io::{self, Read, Write};

/// The tag of the first record on a connection: `HELLO | index`.
pub const HELLO: u64 = 1 << 63;

/// Bytes of one record on a connection.
pub const RECORD_BYTES: usize = 16;

/// One record: `word` (an arrival index, or [`HELLO`] with a connection) and the time now.
pub fn record(word: u64) -> [u8; RECORD_BYTES] {
    let mut bytes = [0u8; RECORD_BYTES];
    bytes[..8].copy_from_slice(&word.to_le_bytes());
    bytes[8..].copy_from_slice(&sys::now_ns().to_le_bytes());
    bytes
}

/// A message of the schedule: at `tick`, send arrival `index` on `connection`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Its scheduled tick.
    pub tick: u64,
    /// Its index in the schedule's arrivals.
    pub index: u64,
    /// The connection (the timer's slot).
    pub connection: u64,
}

/// The schedule's keepalives, or why the workload is not one the client can send.
pub fn messages(schedule: &Schedule) -> Result<Vec<Message>, String> {
    schedule
        .arrivals
        .iter()
        .enumerate()
        .map(|(index, timed)| match timed.arrival {
            Arrival::Start { slot, .. } | Arrival::Restart { slot, .. } => Ok(Message {
                tick: timed.tick,
                index: index as u64,
                connection: u64::from(slot),
            }),
            Arrival::Stop { slot } => Err(format!(
                "the TCP mode sends keepalives (starts and restarts); this workload stops \
                 timer {slot} at tick {}, which no message stands for: use the keepalive \
                 family",
                timed.tick
            )),
        })
        .collect()
}

/// Writes `messages` in the stdin format (the count, then three words each).
pub fn write_messages(out: &mut impl Write, messages: &[Message]) -> io::Result<()> {
    let mut bytes = Vec::with_capacity(8 + messages.len() * 24);
    bytes.extend_from_slice(&(messages.len() as u64).to_le_bytes());
    for m in messages {
        for word in [m.tick, m.index, m.connection] {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
    }
    out.write_all(&bytes)?;
    out.flush()
}

/// One `u64` little-endian word of the client's stdin.
pub fn read_word(input: &mut impl Read) -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    input.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

/// Reads the messages [`write_messages`] wrote, each checked to name one of
/// `connections`.
pub fn read_messages(input: &mut impl Read, connections: u64) -> Result<Vec<Message>, String> {
    let bad = |e: io::Error| format!("reading the schedule from the server: {e}");
    let count = read_word(input).map_err(bad)?;
    let mut messages = Vec::with_capacity(count.min(1 << 24) as usize);
    for _ in 0..count {
        let message = Message {
            tick: read_word(input).map_err(bad)?,
            index: read_word(input).map_err(bad)?,
            connection: read_word(input).map_err(bad)?,
        };
        if message.connection >= connections {
            return Err(format!(
                "the schedule names connection {} of {connections}",
                message.connection
            ));
        }
        messages.push(message);
    }
    Ok(messages)
}

/// The epoll token of the client's stdout.
pub const CONTROL_TOKEN: u64 = 2;
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

/// The TCP mode's settings that do not depend on the server: what a caller fills from its
/// flags, for the Rust server (with the [`TcpIo`] its connections need) and an engine's
/// (which holds its own connections, a descriptor each).
#[derive(Debug, Clone)]
pub struct TcpSettings {
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

impl TcpSettings {
    /// The Rust server's configuration, holding its connections as `io` says.
    pub fn with_io(&self, io: TcpIo) -> TcpConfig {
        TcpConfig {
            client: self.client.clone(),
            port: self.port,
            ramp_ns: self.ramp_ns,
            baseline_limit_ns: self.baseline_limit_ns,
            io,
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

/// The message for a ramp that took longer than `ramp_ns`.
pub fn ramp_too_long(identified: u64, connections: u64, ramp_ns: u64) -> String {
    format!(
        "the client opened {identified} of {connections} connections within --ramp {} s; \
         raise --ramp, or use fewer --connections",
        ramp_ns / sys::NANOS_PER_SECOND
    )
}

/// The earliest wall time at which closing a connection is right after a keepalive sent at
/// `sent_ns` (the client's clock) with a timeout of `delay` ticks: the tick of its sending
/// plus the timeout. Counted from the send, not the read, so that a server that reads late
/// still may not close early.
pub fn live_until_ns(origin_ns: u64, tick_ns: u64, sent_ns: u64, delay: u64) -> u64 {
    let sent_tick = sent_ns.saturating_sub(origin_ns) / tick_ns;
    origin_ns + (sent_tick + delay) * tick_ns
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Timed;

    #[test]
    fn the_schedule_reads_back_and_a_foreign_connection_is_refused() {
        let messages = vec![
            Message {
                tick: 5,
                index: 0,
                connection: 2,
            },
            Message {
                tick: 9,
                index: 1,
                connection: 0,
            },
        ];
        let mut bytes = Vec::new();
        write_messages(&mut bytes, &messages).unwrap();
        assert_eq!(read_messages(&mut &bytes[..], 3).unwrap(), messages);
        let error = read_messages(&mut &bytes[..], 2).unwrap_err();
        assert!(error.contains("connection 2 of 2"), "{error}");
        let cut = read_messages(&mut &bytes[..20], 3).unwrap_err();
        assert!(cut.contains("reading the schedule"), "{cut}");
    }

    #[test]
    fn keepalives_become_messages_and_a_stop_is_refused() {
        let mut schedule = Schedule {
            slots: 2,
            ..Schedule::default()
        };
        schedule.arrivals.push(Timed {
            tick: 4,
            arrival: Arrival::Restart { slot: 1, delay: 9 },
        });
        let sent = messages(&schedule).unwrap();
        assert_eq!(
            sent,
            vec![Message {
                tick: 4,
                index: 0,
                connection: 1
            }]
        );
        schedule.arrivals.push(Timed {
            tick: 6,
            arrival: Arrival::Stop { slot: 0 },
        });
        let refused = messages(&schedule).unwrap_err();
        assert!(refused.contains("stops timer 0 at tick 6"), "{refused}");
    }
}
