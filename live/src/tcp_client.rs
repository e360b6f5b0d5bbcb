//! The client process of the TCP mode: it opens the connections to the server loop and
//! sends each keepalive at its scheduled wall time.
//!
//! It is a process of its own (`timerbench live-tcp-client`, started by `timerbench live
//! --tcp`), so that its sockets, its memory and its CPU are not the server's, as a
//! server's peers are not. It talks to its parent through its standard streams:
//!
//! - **stdin, from the server:** the messages as `u64` little-endian words (their count,
//!   then `tick, arrival index, connection` for each, in schedule order); once every
//!   connection is identified, tick 0 on CLOCK_MONOTONIC and the tick to stop at; then
//!   nothing until the server closes it, when the client exits.
//! - **stdout, to the server:** one line per event: `connected N` after the ramp, `done
//!   SENT REFUSED PEAK_RSS_BYTES` after the last tick, or `error: WHY`.
//!
//! On each connection a record is 16 bytes, two `u64` little-endian words: the arrival
//! index of the keepalive (or [`HELLO`] with the connection's index, once, first) and the
//! CLOCK_MONOTONIC time it was written, which the server needs to tell a connection closed
//! wrongly (it had sent a message within the timeout) from one closed on time.

use crate::net::{self, SERVER_ADDRESS};
use crate::schedule::{Arrival, Schedule};
use crate::{knobs, sys};
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddrV4, TcpStream};

/// The tag of the first record on a connection: `HELLO | index`.
pub const HELLO: u64 = 1 << 63;

/// Bytes of one record on a connection.
pub const RECORD_BYTES: usize = 16;

/// Descriptors the client needs beside its connections.
const SPARE_DESCRIPTORS: u64 = 64;

/// The environment variable that makes the client exit abruptly (status 3, no word) after
/// sending that many keepalives: how the tests stand for a client that dies.
pub const EXIT_AFTER_ENV: &str = "TIMERBENCH_TCP_CLIENT_EXIT_AFTER";

/// What the client is told on its command line.
#[derive(Debug, Clone, Copy)]
pub struct ClientArgs {
    /// The server's port on 127.0.0.1.
    pub port: u16,
    /// Connections to open.
    pub connections: u64,
    /// Loopback source addresses to spread them over (127.0.0.2 on).
    pub sources: u64,
    /// Nanoseconds per workload tick.
    pub tick_ns: u64,
    /// The CPU to run on, if pinned.
    pub cpu: Option<usize>,
}

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

fn read_word(input: &mut impl Read) -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    input.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

fn read_messages(input: &mut impl Read, connections: u64) -> Result<Vec<Message>, String> {
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

/// Opens `args.connections` connections, each from its source address, each saying hello.
fn open_connections(args: &ClientArgs) -> Result<Vec<TcpStream>, String> {
    let server = SocketAddrV4::new(SERVER_ADDRESS, args.port);
    let mut streams = Vec::with_capacity(args.connections as usize);
    for index in 0..args.connections {
        let source = SocketAddrV4::new(
            net::source_of(index, args.sources),
            net::source_port(index, args.sources),
        );
        let mut stream = net::connect_from(source, server).map_err(|e| {
            format!(
                "connection {index} of {} from {source} to {server}: {e}",
                args.connections
            )
        })?;
        stream
            .write_all(&record(HELLO | index))
            .map_err(|e| format!("connection {index}: sending its hello: {e}"))?;
        streams.push(stream);
    }
    Ok(streams)
}

/// The client's whole life; its outcome goes to stdout (`error: ...` on failure, which
/// the caller prints) and the exit status.
pub fn run(args: &ClientArgs) -> Result<(), String> {
    if let Some(cpu) = args.cpu {
        knobs::pin(cpu, "the client's --cpu")?;
    }
    knobs::ensure_descriptors(args.connections + SPARE_DESCRIPTORS)?;
    let exit_after: Option<u64> = std::env::var(EXIT_AFTER_ENV)
        .ok()
        .and_then(|v| v.parse().ok());
    let mut stdin = BufReader::new(io::stdin().lock());
    let messages = read_messages(&mut stdin, args.connections)?;
    let mut streams = open_connections(args)?;
    say(&format!("connected {}", streams.len()))?;
    let (Ok(origin_ns), Ok(end_tick)) = (read_word(&mut stdin), read_word(&mut stdin)) else {
        // The server gave up before tick 0 (its ramp failed): nothing more to do.
        return Ok(());
    };
    let (mut sent, mut refused) = (0u64, 0u64);
    for message in messages.iter().take_while(|m| m.tick < end_tick) {
        sys::sleep_until(origin_ns + message.tick * args.tick_ns);
        if exit_after == Some(sent) {
            std::process::exit(3);
        }
        // A write to a connection the server has closed fails (reset, broken pipe) or
        // lands in a closed socket: either way the keepalive came too late, counted apart.
        match streams[message.connection as usize].write_all(&record(message.index)) {
            Ok(()) => sent += 1,
            Err(_) => refused += 1,
        }
    }
    sys::sleep_until(origin_ns + end_tick * args.tick_ns);
    say(&format!("done {sent} {refused} {}", net::peak_rss_bytes()))?;
    // Hold the connections until the server is done with them (it closes stdin).
    let _ = io::copy(&mut stdin, &mut io::sink());
    Ok(())
}

/// One line to the server.
pub fn say(line: &str) -> Result<(), String> {
    let mut out = io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| format!("writing to the server: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Timed;

    #[test]
    fn a_connection_that_cannot_be_opened_names_itself_its_source_and_the_error() {
        // A port just freed: nothing listens there, so the connect is refused.
        let port = net::listen(0).unwrap().local_addr().unwrap().port();
        let args = ClientArgs {
            port,
            connections: 3,
            sources: 2,
            tick_ns: 1_000_000,
            cpu: None,
        };
        let error = open_connections(&args).unwrap_err();
        let expected = format!("connection 0 of 3 from 127.0.0.2:10000 to 127.0.0.1:{port}");
        assert!(error.starts_with(&expected), "{error}");
        assert!(error.contains("refused"), "{error}");
    }

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
