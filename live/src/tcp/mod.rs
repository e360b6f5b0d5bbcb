//! The TCP mode: the loop's [`Input`](crate::event_loop::Input) is a listener on 127.0.0.1
//! and one connection per timer, opened by the client process ([`client`]).
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
//! plus the timeout, or before its fill deadline ([`peer`] keeps that count).
//!
//! Two servers hold the connections: [`server`]'s, a descriptor each watched by the loop's
//! epoll, and [`ring`]'s, io_uring's registered files, for more connections than the
//! descriptor limit allows ([`TcpIo`]). [`Server`] is what the loop asks of both.
//!
//! The files: [`shared`] holds what the client and the servers agree on (the wire, the
//! configuration, the counts, the [`Server`] trait) and [`peer`] the servers' side of the
//! client process and the keepalives' bookkeeping; each server and the client import
//! from those two and from the crate's modules, never from one another. This file picks
//! a server ([`start`]).

pub mod client;
pub mod peer;
pub mod ring;
pub mod server;
pub mod shared;

pub use shared::{Server, TcpConfig, TcpIo, TcpOutcome, TcpSettings, live_until_ns};

use crate::net;
use crate::schedule::Schedule;
use peer::Peer;
use ring::RingServer;
use server::TcpServer;
use std::net::TcpListener;
use std::sync::Arc;

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
        TcpIo::Ring { rings, slots } => Some(ring::Rings::new(rings, slots)?),
    };
    let mut peer = Peer::start(config, schedule, tick_ns, client_cpu, port)?;
    peer.outcome.io = config.io.name();
    Ok(match rings {
        None => AnyServer::Epoll(TcpServer::new(peer, listener)),
        Some(rings) => AnyServer::Ring(RingServer::new(peer, listener, rings)),
    })
}
