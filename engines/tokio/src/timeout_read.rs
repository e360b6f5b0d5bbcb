//! The idle timer in the form most tokio code takes (`tokio-timeout-read`): every read is
//! `tokio::time::timeout(left, stream.read(..))`, `left` the time to the connection's
//! deadline (the timeout itself right after a keepalive). Each call makes a new `Sleep`, an
//! entry inserted into the runtime's timer wheel, and a read that completes first drops it,
//! removing the entry: an insertion and a removal per read where the `Sleep` reset of
//! `sleep_reset` moves one entry. `timeout` polls the read before its timer, so a keepalive
//! already signalled wins over a timer due in the same turn.

use crate::{
    close, sys, take, try_take, Connection, Shared, CLOSED_AT_END, CLOSED_BY_CLIENT,
    CLOSED_BY_TIMER, CLOSED_FOR_PROTOCOL, STILL_OPEN,
};
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

/// How the server waits and times out, for the record's `engine.server`.
pub const SERVER: &str = "a tokio task per connection, each read \
    tokio::time::timeout(left, stream.read(..)) with left the time to the read time plus the \
    timeout of the last keepalive (or to the fill's deadline): a new Sleep per read, an entry \
    inserted into the runtime's timer wheel (millisecond slots) and removed when the read \
    completes first; tokio::select! with the end of the workload around it";

/// What one timed read came to.
enum Read {
    /// The end of the workload was signalled.
    End,
    /// The read returned (bytes, or how it failed).
    Done(std::io::Result<usize>),
    /// The timeout elapsed first.
    Elapsed,
}

/// The connection's life from tick 0: timed reads, each up to the connection's deadline
/// (its fill's, then its last keepalive's read time plus the timeout), until one times out
/// with nothing more to read (the idle timeout closes it), the client closes it, or the
/// workload ends. The time left is measured on CLOCK_MONOTONIC before `timeout` reads
/// tokio's clock (the same clock, read later), so its deadline never falls before the
/// connection's.
pub async fn serve(
    shared: &Shared,
    c: &mut Connection,
    mut stream: TcpStream,
    origin: i64,
    mut end: watch::Receiver<bool>,
    armed: mpsc::UnboundedSender<()>,
) {
    let ticks = shared.fill_ticks[c.slot];
    if ticks >= 0 {
        c.deadline = origin + ticks * shared.tick_ns;
    }
    let _ = armed.send(());
    loop {
        // Checked on every turn, as in `sleep_reset`: the end's signal, sent after
        // `ending`, is then either seen here or wakes the select below.
        if shared.ending.load(Ordering::SeqCst) {
            let how = loop {
                match try_take(shared, c, &stream) {
                    (_, ended) if ended != STILL_OPEN => break ended,
                    (0, _) => break CLOSED_AT_END,
                    _ => {}
                }
            };
            return close(c, stream, how);
        }
        let deadline = c.deadline;
        let read = {
            let buf = &mut c.buf[c.have..];
            let read = stream.read(buf);
            tokio::select! {
                biased;
                _ = end.changed() => Read::End,
                done = async {
                    if deadline < 0 {
                        return Read::Done(read.await);
                    }
                    let left = Duration::from_nanos((deadline - sys::mono_now()).max(0) as u64);
                    match tokio::time::timeout(left, read).await {
                        Ok(done) => Read::Done(done),
                        Err(_) => Read::Elapsed,
                    }
                } => done,
            }
        };
        match read {
            Read::End => {}
            Read::Done(Ok(0)) | Read::Done(Err(_)) => return close(c, stream, CLOSED_BY_CLIENT),
            Read::Done(Ok(n)) => {
                if !take(shared, c, n, sys::mono_now()) {
                    return close(c, stream, CLOSED_FOR_PROTOCOL);
                }
            }
            // As the Rust server: one more read without waiting; a keepalive already there
            // (sent before the deadline, not yet signalled) re-arms it instead.
            Read::Elapsed => match try_take(shared, c, &stream) {
                (_, ended) if ended != STILL_OPEN => return close(c, stream, ended),
                (0, _) => return close(c, stream, CLOSED_BY_TIMER),
                _ => c.rearmed += 1,
            },
        }
    }
}
