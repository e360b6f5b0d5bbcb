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
//!
//! The connections are held by worker threads, each with a contiguous group of at most
//! one descriptor table's worth of them in a table of its own (`unshare(CLONE_FILES)`, its
//! first act): RLIMIT_NOFILE bounds the descriptor numbers of each table, not the
//! process's sockets, so a client whose hard limit is 20,000 can hold 100,000 connections
//! without root. A worker's sockets are numbers in its own table only: they never leave
//! its thread, and close with it. The main thread reads stdin, writes stdout and adds up
//! the workers' counts; each worker sends its group's keepalives, in schedule order.

use super::shared::{HELLO, Message, read_messages, read_word, record};
use crate::net::{self, SERVER_ADDRESS};
use crate::{knobs, sys};
use std::io::{self, BufReader, Write};
use std::net::{SocketAddrV4, TcpStream};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::{self, JoinHandle};

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

/// Opens connections `range` of `args.connections`, each from its source address, each
/// saying hello.
fn open_connections(args: &ClientArgs, range: Range<u64>) -> Result<Vec<TcpStream>, String> {
    let server = SocketAddrV4::new(SERVER_ADDRESS, args.port);
    let mut streams = Vec::with_capacity((range.end - range.start) as usize);
    for index in range {
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

/// The connections one worker's descriptor table may hold: the soft descriptor limit,
/// raised towards the hard one as far as `connections` need, less [`SPARE_DESCRIPTORS`].
fn table_capacity(connections: u64) -> Result<u64, String> {
    let limit = || sys::descriptor_limit().map_err(|e| format!("getrlimit(NOFILE): {e}"));
    let (_, hard) = limit()?;
    knobs::ensure_descriptors(connections.saturating_add(SPARE_DESCRIPTORS).min(hard))?;
    let (soft, _) = limit()?;
    soft.checked_sub(SPARE_DESCRIPTORS)
        .filter(|&capacity| capacity > 0)
        .ok_or_else(|| {
            format!(
                "the descriptor limit ({soft}) leaves no room for connections beside the \
                 {SPARE_DESCRIPTORS} descriptors the client keeps"
            )
        })
}

/// One worker's share: a contiguous range of connections and their messages, in schedule
/// order.
#[derive(Debug, PartialEq, Eq)]
struct Group {
    connections: Range<u64>,
    messages: Vec<Message>,
}

/// Splits `connections` into groups of at most `capacity` (at least 1) connections,
/// `[g * capacity, min((g + 1) * capacity, connections))`, each with the messages to its
/// connections (which are all below `connections`, as [`read_messages`] checks).
fn partition(messages: Vec<Message>, connections: u64, capacity: u64) -> Vec<Group> {
    let mut groups: Vec<Group> = (0..connections.div_ceil(capacity))
        .map(|g| Group {
            connections: g * capacity..(g + 1).saturating_mul(capacity).min(connections),
            messages: Vec::new(),
        })
        .collect();
    for message in messages {
        groups[(message.connection / capacity) as usize]
            .messages
            .push(message);
    }
    groups
}

/// What main hands each worker once every connection is identified.
#[derive(Debug, Clone, Copy)]
struct Start {
    /// Tick 0 on CLOCK_MONOTONIC.
    origin_ns: u64,
    /// The tick to stop at: messages from it on are not sent.
    end_tick: u64,
}

/// What a worker tells main.
#[derive(Debug)]
enum Event {
    /// Its connections are open, each has said hello.
    Connected,
    /// Its keepalives before the end tick are sent: written, or refused by a closed socket.
    Counted { sent: u64, refused: u64 },
    /// It could not go on.
    Failed(String),
}

/// One worker thread's state: its group, and what it shares with main and the others.
struct Worker {
    number: usize,
    args: ClientArgs,
    group: Group,
    events: Sender<Event>,
    /// Keepalives about to be sent by any worker, for [`EXIT_AFTER_ENV`].
    sends: Arc<AtomicU64>,
    exit_after: Option<u64>,
}

impl Worker {
    /// The thread's whole life: a table of its own, its connections, its keepalives once
    /// started; then it holds the connections until main drops `starts`, and they close
    /// with its table.
    fn run(&self, starts: Receiver<Start>) {
        let mut streams = match self.connect() {
            Ok(streams) => streams,
            Err(why) => {
                let _ = self.events.send(Event::Failed(why));
                return;
            }
        };
        if self.events.send(Event::Connected).is_err() {
            return;
        }
        if let Ok(start) = starts.recv() {
            let counts = self.send_keepalives(&mut streams, start);
            let _ = self.events.send(counts);
            // Only an error comes now: main dropped its sender, the time to exit.
            let _ = starts.recv();
        }
    }

    fn connect(&self) -> Result<Vec<TcpStream>, String> {
        // SAFETY: no pointers; it only gives this thread a private copy of its table.
        if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
            return Err(format!(
                "client worker {}: unshare(CLONE_FILES): {}",
                self.number,
                io::Error::last_os_error()
            ));
        }
        open_connections(&self.args, self.group.connections.clone())
    }

    fn send_keepalives(&self, streams: &mut [TcpStream], start: Start) -> Event {
        let (mut sent, mut refused) = (0u64, 0u64);
        let first = self.group.connections.start;
        for message in self.group.messages.iter() {
            if message.tick >= start.end_tick {
                break;
            }
            sys::sleep_until(deadline(start.origin_ns, message.tick, self.args.tick_ns));
            let previous = || self.sends.fetch_add(1, Ordering::Relaxed);
            if self.exit_after.is_some_and(|last| previous() == last) {
                std::process::exit(3);
            }
            // A write to a connection the server has closed fails (reset, broken pipe) or
            // lands in a closed socket: either way the keepalive came too late, counted
            // apart.
            let stream = &mut streams[(message.connection - first) as usize];
            match stream.write_all(&record(message.index)) {
                Ok(()) => sent += 1,
                Err(_) => refused += 1,
            }
        }
        Event::Counted { sent, refused }
    }
}

impl Drop for Worker {
    /// A worker that panics says so, so that main does not wait for it.
    fn drop(&mut self) {
        if thread::panicking() {
            let why = format!("client worker {} panicked", self.number);
            let _ = self.events.send(Event::Failed(why));
        }
    }
}

/// The worker threads, as main sees them.
struct Workers {
    starts: Vec<Sender<Start>>,
    events: Receiver<Event>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts a worker per group (`tcp-client-N`) and waits until each has connected, or
    /// returns the first failure (the others are left to the process's exit).
    fn connect(
        args: &ClientArgs,
        groups: Vec<Group>,
        exit_after: Option<u64>,
    ) -> Result<Workers, String> {
        let (events_sender, events) = mpsc::channel();
        let sends = Arc::new(AtomicU64::new(0));
        let mut workers = Workers {
            starts: Vec::with_capacity(groups.len()),
            events,
            threads: Vec::with_capacity(groups.len()),
        };
        for (number, group) in groups.into_iter().enumerate() {
            let (start_sender, starts) = mpsc::channel();
            let worker = Worker {
                number,
                args: *args,
                group,
                events: events_sender.clone(),
                sends: Arc::clone(&sends),
                exit_after,
            };
            let thread = thread::Builder::new()
                .name(format!("tcp-client-{number}"))
                .spawn(move || worker.run(starts))
                .map_err(|e| format!("starting client worker {number}: {e}"))?;
            workers.starts.push(start_sender);
            workers.threads.push(thread);
        }
        drop(events_sender);
        for _ in 0..workers.threads.len() {
            match workers.events.recv() {
                Ok(Event::Connected) => {}
                Ok(Event::Failed(why)) => return Err(why),
                Ok(Event::Counted { .. }) | Err(_) => {
                    return Err("a client worker stopped before connecting".into());
                }
            }
        }
        Ok(workers)
    }

    /// Starts every worker's keepalives and adds up their counts, `(sent, refused)`.
    fn send(&self, start: Start) -> Result<(u64, u64), String> {
        for starts in &self.starts {
            // A worker gone has said why on `events`.
            let _ = starts.send(start);
        }
        let (mut sent, mut refused) = (0u64, 0u64);
        for _ in 0..self.starts.len() {
            match self.events.recv() {
                Ok(Event::Counted {
                    sent: s,
                    refused: r,
                }) => (sent, refused) = (sent + s, refused + r),
                Ok(Event::Failed(why)) => return Err(why),
                Ok(Event::Connected) | Err(_) => {
                    return Err("a client worker stopped before its last keepalive".into());
                }
            }
        }
        Ok((sent, refused))
    }

    /// Tells the workers to exit and waits for them: their connections close with them.
    fn finish(self) {
        let Workers {
            starts, threads, ..
        } = self;
        drop(starts);
        for thread in threads {
            // A panic has been reported through `events` already.
            let _ = thread.join();
        }
    }
}

/// The time of `tick`, saturating rather than wrapping on a bad tick.
fn deadline(origin_ns: u64, tick: u64, tick_ns: u64) -> u64 {
    origin_ns.saturating_add(tick.saturating_mul(tick_ns))
}

/// The client's whole life; its outcome goes to stdout (`error: ...` on failure, which
/// the caller prints) and the exit status.
pub fn run(args: &ClientArgs) -> Result<(), String> {
    // Pinned here, before the workers start: they inherit the affinity.
    if let Some(cpu) = args.cpu {
        knobs::pin(cpu, "the client's --cpu")?;
    }
    let capacity = table_capacity(args.connections)?;
    let exit_after: Option<u64> = std::env::var(EXIT_AFTER_ENV)
        .ok()
        .and_then(|v| v.parse().ok());
    let mut stdin = BufReader::new(io::stdin().lock());
    let messages = read_messages(&mut stdin, args.connections)?;
    let groups = partition(messages, args.connections, capacity);
    let workers = Workers::connect(args, groups, exit_after)?;
    say(&format!("connected {}", args.connections))?;
    let (Ok(origin_ns), Ok(end_tick)) = (read_word(&mut stdin), read_word(&mut stdin)) else {
        // The server gave up before tick 0 (its ramp failed): nothing more to do.
        workers.finish();
        return Ok(());
    };
    let (sent, refused) = workers.send(Start {
        origin_ns,
        end_tick,
    })?;
    sys::sleep_until(deadline(origin_ns, end_tick, args.tick_ns));
    say(&format!("done {sent} {refused} {}", net::peak_rss_bytes()))?;
    // Hold the connections until the server is done with them (it closes stdin).
    let _ = io::copy(&mut stdin, &mut io::sink());
    workers.finish();
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
    use crate::tcp::shared::RECORD_BYTES;
    use std::io::Read;

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
        let error = open_connections(&args, 0..3).unwrap_err();
        let expected = format!("connection 0 of 3 from 127.0.0.2:10000 to 127.0.0.1:{port}");
        assert!(error.starts_with(&expected), "{error}");
        assert!(error.contains("refused"), "{error}");
    }

    #[test]
    fn connections_and_their_messages_split_into_groups_of_a_table_each() {
        let messages: Vec<Message> = [4, 0, 3, 1, 4, 2]
            .into_iter()
            .zip(0..)
            .map(|(connection, index)| Message {
                tick: index,
                index,
                connection,
            })
            .collect();
        // Each group's connections and its messages' indices, in schedule order.
        let shares = |groups: Vec<Group>| -> Vec<(Range<u64>, Vec<u64>)> {
            let indices = |g: &Group| g.messages.iter().map(|m| m.index).collect();
            groups
                .iter()
                .map(|g| (g.connections.clone(), indices(g)))
                .collect()
        };
        assert_eq!(
            shares(partition(messages.clone(), 5, 2)),
            vec![(0..2, vec![1, 3]), (2..4, vec![2, 5]), (4..5, vec![0, 4])]
        );
        // A table that holds them all: one group, the messages as they were.
        let one = partition(messages.clone(), 5, 19_936);
        assert_eq!(shares(one), vec![(0..5, vec![0, 1, 2, 3, 4, 5])]);
        assert_eq!(partition(Vec::new(), 0, 2), Vec::new());
    }

    #[test]
    fn workers_of_small_tables_open_every_connection_once_and_send_on_it() {
        let listener = net::listen(0).unwrap();
        let args = ClientArgs {
            port: listener.local_addr().unwrap().port(),
            connections: 5,
            sources: 2,
            tick_ns: 1_000_000,
            cpu: None,
        };
        // One keepalive per connection at tick 0, arrival `4 - connection`; one past the
        // end tick, not sent.
        let mut messages: Vec<Message> = (0..5)
            .map(|connection| Message {
                tick: 0,
                index: 4 - connection,
                connection,
            })
            .collect();
        messages.push(Message {
            tick: 1,
            index: 5,
            connection: 0,
        });
        let workers = Workers::connect(&args, partition(messages, 5, 2), None).unwrap();
        assert_eq!(workers.threads.len(), 3);
        let start = Start {
            origin_ns: sys::now_ns(),
            end_tick: 1,
        };
        assert_eq!(workers.send(start).unwrap(), (5, 0));
        let mut hellos = Vec::new();
        while hellos.len() < 5 {
            let Some(stream) = net::accept(&listener).unwrap() else {
                thread::yield_now();
                continue;
            };
            stream.set_nonblocking(false).unwrap();
            let mut records = [0u8; 2 * RECORD_BYTES];
            (&stream).read_exact(&mut records).unwrap();
            let word = |at: usize| u64::from_le_bytes(records[at..at + 8].try_into().unwrap());
            let connection = word(0) & !HELLO;
            assert_eq!(word(0), HELLO | connection);
            assert_eq!(word(RECORD_BYTES), 4 - connection, "its keepalive");
            hellos.push(connection);
        }
        workers.finish();
        hellos.sort_unstable();
        assert_eq!(hellos, vec![0, 1, 2, 3, 4]);
    }
}
