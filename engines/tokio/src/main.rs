//! The tokio engine's `live-tcp` mode (docs/live.md, "tokio's server"): the keepalive
//! server of `timerbench live --tcp --engine tokio-current-thread` (or
//! `tokio-multi-thread`), written as a tokio programmer writes one: a task per connection,
//! whose idle timer is a `tokio::time::Sleep` pinned in the task and `reset` to the read
//! time plus the timeout on every keepalive, the task waiting in `tokio::select!` between
//! the socket becoming readable and the sleep. All the waiting is tokio's: the task parks
//! in the I/O driver (epoll through mio) and the sleep is an entry of the runtime's timer
//! wheel (millisecond slots: a deadline is rounded up to the next millisecond, never down).
//! When the sleep fires, the task reads the connection once more without waiting, as the
//! Rust and Go servers do: a keepalive already there re-arms it instead of the close.
//!
//! It speaks the same protocol as the Go server (engines/go/keepalive.go): on stdin, u64
//! little-endian words: the fill's count and (connection, delay in ticks) pairs, the
//! arrivals' count and pairs, then once `ready` tick 0 on CLOCK_MONOTONIC, then the end
//! word; on stdout, lines `listening PORT`, `ready`, `result {JSON}` or `error: WHY`.
//!
//! A second form of the idle timer, `tokio-timeout-read` (current-thread), is the one most
//! tokio code takes: `tokio::time::timeout` around each read, a new timer per read
//! (`timeout_read`); the first is `sleep_reset`.
//!
//! Usage: tokio-keepalive ENGINE live-tcp connections=N tick-ns=T idle-ns=I [port=P],
//! ENGINE `tokio-current-thread` or `tokio-multi-thread` (the runtime's flavour, the
//! `Sleep` reset) or `tokio-timeout-read` (current-thread, `timeout` around each read).

mod json;
mod sleep_reset;
mod sys;
mod timeout_read;

use std::io::{BufReader, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// The tokio this server is built with: Cargo.toml pins it exactly (`=`).
const TOKIO_VERSION: &str = "1.54.1";
const RECORD_BYTES: usize = 16;
const HELLO_TAG: u64 = 1 << 63;
/// Sixteen records: a keepalive is one, and many idle connections keep small buffers.
const CONNECTION_BUFFER: usize = 16 * RECORD_BYTES;
/// The most entries a table from timerbench may have: a guard against a garbled count.
const MAX_TABLE_ENTRIES: u64 = 1 << 26;

/// How a connection ended (the result's `ends` say it with these numbers, as Go's do).
const STILL_OPEN: i64 = 0;
const CLOSED_BY_TIMER: i64 = 1;
const CLOSED_BY_CLIENT: i64 = 2;
const CLOSED_AT_END: i64 = 3;
const CLOSED_FOR_PROTOCOL: i64 = 4;

/// The schedule from timerbench and what the tasks share.
struct Shared {
    tick_ns: i64,
    /// Per connection: the fill's delay in ticks, or -1.
    fill_ticks: Vec<i64>,
    /// (connection, delay in ticks), in schedule order: a keepalive names its index.
    arrivals: Vec<(usize, i64)>,
    /// Per connection: its keepalives, to size its log up front.
    keepalives: Vec<usize>,
    /// Per connection: whether it said hello.
    seen: Mutex<Vec<bool>>,
    ending: AtomicBool,
    timer: IdleTimer,
}

/// What the greeting tasks tell the main one.
enum Event {
    Identified,
    Failed(String),
}

/// One connection's log, returned by its task.
struct Connection {
    slot: usize,
    have: usize,
    buf: [u8; CONNECTION_BUFFER],
    /// CLOCK_MONOTONIC ns of the idle timeout, -1 if none.
    deadline: i64,
    /// (connection, arrival index, sent, read).
    reads: Vec<[i64; 4]>,
    how: i64,
    close_ns: i64,
    rearmed: u64,
    problem: Option<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (flavour, timer) = match args.first().map(String::as_str) {
        Some("tokio-current-thread") => (Flavour::CurrentThread, IdleTimer::SleepReset),
        Some("tokio-multi-thread") => (Flavour::MultiThread, IdleTimer::SleepReset),
        Some("tokio-timeout-read") => (Flavour::CurrentThread, IdleTimer::TimeoutRead),
        _ => {
            println!("error: usage: tokio-keepalive tokio-current-thread|tokio-multi-thread|tokio-timeout-read live-tcp key=value...");
            std::process::exit(2);
        }
    };
    if args.get(1).map(String::as_str) != Some("live-tcp") {
        println!("error: the tokio engine has only the `live-tcp` mode (a live keepalive server)");
        std::process::exit(2);
    }
    std::process::exit(serve_keepalive(flavour, timer, &args[2..]));
}

#[derive(Clone, Copy)]
enum Flavour {
    CurrentThread,
    MultiThread,
}

/// How a connection's task keeps its idle timer.
#[derive(Clone, Copy)]
enum IdleTimer {
    /// One `Sleep` per connection, reset on every keepalive (`sleep_reset`).
    SleepReset,
    /// `tokio::time::timeout` around each read (`timeout_read`).
    TimeoutRead,
}

impl IdleTimer {
    /// Its label in the record's `runtime_flags`.
    fn flag(self) -> &'static str {
        match self {
            IdleTimer::SleepReset => "timer=sleep-reset",
            IdleTimer::TimeoutRead => "timer=timeout-read",
        }
    }

    /// Its words in the record's `engine.server`.
    fn server(self) -> &'static str {
        match self {
            IdleTimer::SleepReset => sleep_reset::SERVER,
            IdleTimer::TimeoutRead => timeout_read::SERVER,
        }
    }
}

/// The whole `live-tcp` mode; its exit status.
fn serve_keepalive(flavour: Flavour, timer: IdleTimer, args: &[String]) -> i32 {
    let mut stdin = BufReader::with_capacity(1 << 16, std::io::stdin());
    let (shared, port, idle_ns) = match set_up(args, timer, &mut stdin) {
        Ok(set) => set,
        Err(why) => {
            println!("error: {why}");
            return 1;
        }
    };
    let (runtime, mut flags) = match flavour {
        Flavour::CurrentThread => (
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build(),
            vec!["flavor=current_thread".to_string()],
        ),
        Flavour::MultiThread => {
            let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
            (
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(workers)
                    .enable_all()
                    .build(),
                vec![
                    "flavor=multi_thread".to_string(),
                    format!("worker_threads={workers}"),
                ],
            )
        }
    };
    flags.push(timer.flag().to_string());
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            println!("error: cannot build tokio's runtime: {e}");
            return 1;
        }
    };
    match runtime.block_on(run(Arc::new(shared), port, idle_ns, flags, stdin)) {
        Ok(()) => 0,
        Err(why) => {
            println!("error: {why}");
            1
        }
    }
}

fn set_up(
    args: &[String],
    timer: IdleTimer,
    stdin: &mut impl Read,
) -> Result<(Shared, u16, u64), String> {
    let mut connections = -1i64;
    let mut tick_ns = -1i64;
    let mut idle_ns = -1i64;
    let mut port = 0i64;
    let usage = "live-tcp needs connections>=1 tick-ns>=1 idle-ns>=0 [port=0..65535]";
    for arg in args {
        let (key, value) = arg.split_once('=').ok_or(format!("{arg}: not key=value"))?;
        let value: i64 = value.parse().map_err(|_| format!("{arg}: {usage}"))?;
        match key {
            "connections" => connections = value,
            "tick-ns" => tick_ns = value,
            "idle-ns" => idle_ns = value,
            "port" => port = value,
            _ => return Err(format!("{arg}: unknown parameter; {usage}")),
        }
    }
    if connections < 1 || tick_ns < 1 || idle_ns < 0 || !(0..=65535).contains(&port) {
        return Err(usage.into());
    }
    let n = connections as usize;
    let mut fill_ticks = vec![-1; n];
    for (slot, delay) in read_pairs(stdin, n, "fill")? {
        fill_ticks[slot] = delay;
    }
    let arrivals = read_pairs(stdin, n, "arrivals")?;
    let mut keepalives = vec![0; n];
    for &(slot, _) in &arrivals {
        keepalives[slot] += 1;
    }
    let shared = Shared {
        tick_ns,
        fill_ticks,
        arrivals,
        keepalives,
        seen: Mutex::new(vec![false; n]),
        ending: AtomicBool::new(false),
        timer,
    };
    Ok((shared, port as u16, idle_ns as u64))
}

fn read_pairs(
    stdin: &mut impl Read,
    connections: usize,
    what: &str,
) -> Result<Vec<(usize, i64)>, String> {
    let count = read_word(stdin)
        .ok()
        .filter(|&c| c <= MAX_TABLE_ENTRIES)
        .ok_or(format!(
            "reading the {what} from timerbench: a bad or missing count"
        ))?;
    let mut pairs = Vec::with_capacity(count as usize);
    for i in 0..count {
        match (read_word(stdin), read_word(stdin)) {
            (Ok(slot), Ok(delay)) if slot < connections as u64 && delay <= i32::MAX as u64 => {
                pairs.push((slot as usize, delay as i64))
            }
            _ => {
                return Err(format!(
                    "reading the {what} from timerbench: entry {i} is bad or cut"
                ))
            }
        }
    }
    Ok(pairs)
}

fn read_word(r: &mut impl Read) -> std::io::Result<u64> {
    let mut bytes = [0u8; 8];
    r.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

/// The run inside the runtime: accept and greet every connection, say `ready`, serve
/// them from tick 0 until the end word, then idle and answer.
async fn run(
    shared: Arc<Shared>,
    port: u16,
    idle_ns: u64,
    flags: Vec<String>,
    mut stdin: BufReader<std::io::Stdin>,
) -> Result<(), String> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
        format!(
            "cannot listen on 127.0.0.1:{port} ({e}); choose another --port, or 0 for any free one"
        )
    })?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?.port();
    println!("listening {bound}");
    let n = shared.fill_ticks.len();
    let (events, mut event) = mpsc::unbounded_channel();
    let (begin_tx, begin) = watch::channel(None::<(i64, sys::Clock)>);
    let (end_tx, end) = watch::channel(false);
    let (armed_tx, mut armed) = mpsc::unbounded_channel::<()>();
    let tasks: Arc<Mutex<Vec<JoinHandle<Option<Connection>>>>> = Arc::default();
    let accept = {
        let (shared, tasks) = (shared.clone(), tasks.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let task = tokio::spawn(greet(
                    shared.clone(),
                    stream,
                    events.clone(),
                    begin.clone(),
                    end.clone(),
                    armed_tx.clone(),
                ));
                tasks.lock().unwrap().push(task);
            }
        })
    };
    let mut identified = 0;
    while identified < n {
        match event.recv().await {
            Some(Event::Identified) => identified += 1,
            Some(Event::Failed(why)) => return Err(why),
            None => return Err("the server stopped accepting".into()),
        }
    }
    accept.abort();
    println!("ready");
    // The origin and the end word, read on a thread of their own: a blocking read of stdin
    // must not hold a runtime thread.
    let (words_tx, mut words) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        while let Ok(word) = read_word(&mut stdin) {
            if words_tx.send(word).is_err() {
                return;
            }
        }
    });
    let Some(origin) = words.recv().await else {
        return Ok(()); // timerbench gave up before tick 0: nothing more to do
    };
    let clock = sys::Clock::calibrate();
    let origin = origin as i64;
    let _ = begin_tx.send(Some((origin, clock)));
    for _ in 0..n {
        let _ = armed.recv().await;
    }
    tokio::time::sleep_until(clock.at(origin)).await;
    let workload = sys::Window::begin();
    // The end word, or end of input (timerbench stopped the run): either ends the phase.
    let _ = words.recv().await;
    shared.ending.store(true, Ordering::SeqCst);
    let _ = end_tx.send(true);
    let handles: Vec<_> = std::mem::take(&mut *tasks.lock().unwrap());
    let mut connections = Vec::with_capacity(n);
    for handle in handles {
        match handle.await {
            Ok(Some(c)) => connections.push(c),
            Ok(None) => {}
            Err(e) => return Err(format!("a connection's task failed: {e}")),
        }
    }
    let workload = workload.end();
    let idle = sys::Window::begin();
    tokio::time::sleep(std::time::Duration::from_nanos(idle_ns)).await;
    let idle = idle.end();
    connections.sort_by_key(|c| c.slot);
    println!(
        "result {}",
        json::result(
            &connections,
            &flags,
            shared.timer.server(),
            TOKIO_VERSION,
            workload,
            idle,
            clock
        )
    );
    Ok(())
}

/// Reads a connection's hello, files it under its index, and serves it from tick 0.
async fn greet(
    shared: Arc<Shared>,
    stream: TcpStream,
    events: mpsc::UnboundedSender<Event>,
    mut begin: watch::Receiver<Option<(i64, sys::Clock)>>,
    end: watch::Receiver<bool>,
    armed: mpsc::UnboundedSender<()>,
) -> Option<Connection> {
    let fail = |why: String| {
        let _ = events.send(Event::Failed(why));
        None
    };
    let mut hello = [0u8; RECORD_BYTES];
    let mut got = 0;
    while got < RECORD_BYTES {
        if let Err(e) = stream.readable().await {
            return fail(format!("reading a connection's hello: {e}"));
        }
        match stream.try_read(&mut hello[got..]) {
            Ok(0) => return fail("reading a connection's hello: end of stream".into()),
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return fail(format!("reading a connection's hello: {e}")),
        }
    }
    let word = u64::from_le_bytes(hello[..8].try_into().unwrap());
    let index = word & !HELLO_TAG;
    let n = shared.fill_ticks.len();
    if word & HELLO_TAG == 0 || index >= n as u64 {
        return fail(format!(
            "a connection's first record is {word:#x}, not a hello of one of {n} connections"
        ));
    }
    let slot = index as usize;
    let duplicate = std::mem::replace(&mut shared.seen.lock().unwrap()[slot], true);
    if duplicate {
        return fail(format!("two connections said hello as connection {slot}"));
    }
    let _ = events.send(Event::Identified);
    let (origin, clock) = loop {
        if let Some(begun) = *begin.borrow_and_update() {
            break begun;
        }
        begin.changed().await.ok()?;
    };
    let mut c = Connection {
        slot,
        have: 0,
        buf: [0; CONNECTION_BUFFER],
        deadline: -1,
        // Sized up front: the workload phase allocates nothing but what tokio does.
        reads: Vec::with_capacity(shared.keepalives[slot]),
        how: STILL_OPEN,
        close_ns: 0,
        rearmed: 0,
        problem: None,
    };
    match shared.timer {
        IdleTimer::SleepReset => {
            sleep_reset::serve(&shared, &mut c, stream, origin, clock, end, armed).await
        }
        IdleTimer::TimeoutRead => {
            timeout_read::serve(&shared, &mut c, stream, origin, end, armed).await
        }
    }
    Some(c)
}

/// Reads once without waiting: the keepalives taken (0 if no whole one was there), and
/// how the connection ended if that read ended it, else `STILL_OPEN`.
fn try_take(shared: &Shared, c: &mut Connection, stream: &TcpStream) -> (usize, i64) {
    match stream.try_read(&mut c.buf[c.have..]) {
        Ok(0) => (0, CLOSED_BY_CLIENT),
        Ok(n) => {
            let before = c.reads.len();
            match take(shared, c, n, sys::mono_now()) {
                true => (c.reads.len() - before, STILL_OPEN),
                false => (0, CLOSED_FOR_PROTOCOL),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => (0, STILL_OPEN),
        Err(_) => (0, CLOSED_BY_CLIENT),
    }
}

/// Files the whole records among the `n` bytes just read at `now`: each keepalive moves
/// the deadline to now plus its timeout. False on a record that is not one of this
/// connection's keepalives.
fn take(shared: &Shared, c: &mut Connection, n: usize, now: i64) -> bool {
    c.have += n;
    let whole = c.have / RECORD_BYTES * RECORD_BYTES;
    for at in (0..whole).step_by(RECORD_BYTES) {
        let index = u64::from_le_bytes(c.buf[at..at + 8].try_into().unwrap());
        let sent = u64::from_le_bytes(c.buf[at + 8..at + 16].try_into().unwrap()) as i64;
        match shared.arrivals.get(index as usize) {
            Some(&(slot, delay)) if slot == c.slot => {
                c.deadline = now + delay * shared.tick_ns;
                c.reads.push([c.slot as i64, index as i64, sent, now]);
            }
            _ => {
                c.problem = Some(format!(
                    "connection {} sent a record for operation {index}, not one of its \
                     keepalives (a protocol error)",
                    c.slot
                ));
                return false;
            }
        }
    }
    c.buf.copy_within(whole..c.have, 0);
    c.have -= whole;
    true
}

fn close(c: &mut Connection, stream: TcpStream, how: i64) {
    drop(stream);
    c.close_ns = sys::mono_now();
    c.how = how;
}
