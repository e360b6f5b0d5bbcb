//! The idle timer as a `tokio::time::Sleep` pinned in the connection's task and `reset`
//! to the read time plus the timeout on every keepalive (`tokio-current-thread`,
//! `tokio-multi-thread`): one entry of the runtime's timer wheel per connection, moved in
//! place, the task waiting in `tokio::select!` between the socket's readiness and the sleep.

use crate::{
    close, sys, try_take, Connection, Shared, CLOSED_AT_END, CLOSED_BY_CLIENT, CLOSED_BY_TIMER,
    STILL_OPEN,
};
use std::sync::atomic::Ordering;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

/// How the server waits and times out, for the record's `engine.server`.
pub const SERVER: &str = "a tokio task per connection in tokio::select! between the socket's \
    readiness and a tokio::time::Sleep pinned in the task, reset to the read time plus the \
    timeout on every keepalive: an entry of the runtime's timer wheel (millisecond slots)";

/// The connection's life from tick 0: its fill deadline, then keepalives read as they
/// come, each resetting the sleep, until the sleep fires with nothing more to read (the
/// idle timeout closes it), the client closes it, or the workload ends.
pub async fn serve(
    shared: &Shared,
    c: &mut Connection,
    stream: TcpStream,
    origin: i64,
    clock: sys::Clock,
    mut end: watch::Receiver<bool>,
    armed: mpsc::UnboundedSender<()>,
) {
    let sleep = tokio::time::sleep_until(clock.at(origin));
    tokio::pin!(sleep);
    let ticks = shared.fill_ticks[c.slot];
    if ticks >= 0 {
        c.deadline = origin + ticks * shared.tick_ns;
        sleep.as_mut().reset(clock.at(c.deadline));
    }
    let _ = armed.send(());
    loop {
        // Checked on every turn: the end's signal, sent after `ending`, is then either
        // seen here or wakes the select below.
        if shared.ending.load(Ordering::SeqCst) {
            let how = loop {
                match read_now(shared, c, &stream, &mut sleep, clock) {
                    (_, ended) if ended != STILL_OPEN => break ended,
                    (0, _) => break CLOSED_AT_END,
                    _ => {}
                }
            };
            return close(c, stream, how);
        }
        tokio::select! {
            biased;
            _ = end.changed() => {}
            ready = stream.readable() => {
                if ready.is_err() {
                    return close(c, stream, CLOSED_BY_CLIENT);
                }
                let (_, ended) = read_now(shared, c, &stream, &mut sleep, clock);
                if ended != STILL_OPEN {
                    return close(c, stream, ended);
                }
            }
            _ = &mut sleep, if c.deadline >= 0 => {
                // As the Rust server: one more read without waiting; a keepalive already
                // there (sent before the deadline, not yet read) re-arms it instead.
                match read_now(shared, c, &stream, &mut sleep, clock) {
                    (_, ended) if ended != STILL_OPEN => return close(c, stream, ended),
                    (0, _) => return close(c, stream, CLOSED_BY_TIMER),
                    _ => c.rearmed += 1,
                }
            }
        }
    }
}

/// [`try_take`], then the sleep reset to the deadline the keepalives taken moved.
fn read_now(
    shared: &Shared,
    c: &mut Connection,
    stream: &TcpStream,
    sleep: &mut std::pin::Pin<&mut tokio::time::Sleep>,
    clock: sys::Clock,
) -> (usize, i64) {
    let (taken, ended) = try_take(shared, c, stream);
    if taken > 0 {
        sleep.as_mut().reset(clock.at(c.deadline));
    }
    (taken, ended)
}
