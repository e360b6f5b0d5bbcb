//! `keepalive`: idle-connection timeouts, the case of a server holding many TCP connections
//! with an idle timeout that every packet refreshes (a keepalive, Netty's
//! `IdleStateHandler`, nginx's `keepalive_timeout`). The seed scenario: 100,000
//! connections, a 30 s idle timeout, about 3,000 packets per second in total, 1 ms ticks.
//!
//! **Shape.** Each connection has one timer, its ID the connection's index. At clock 0
//! every connection starts its timer (`s ID D`); the run starts in steady state, so `D` is
//! the timeout minus the time since the connection's last packet, drawn from the packet
//! gap distribution conditioned on the connection still being open (a gap shorter than the
//! timeout). Then, for each 1 ms tick: the packets that arrive during the tick refresh their
//! connections' timers (`r ID T`), and `a 1` moves the clock, firing the timers of the
//! connections that have been silent for T. A connection whose timer fires is closed: it
//! sends nothing more and is not replaced, so each connection times out at most once.
//!
//! Each connection sends packets as a Poisson process of rate R / C per second (so the
//! whole server sees R per second while all are open). A fraction `idle` of the connections,
//! drawn at random, sends nothing during the run: each of them times out at its initial
//! deadline, within the first T.
//!
//! The generator runs this simulation itself and writes what it predicts: `@timeouts`, the
//! number of timers that fire (connections closed), and `@timeout-fraction`, that number
//! over C. Replaying the workload fires exactly `@timeouts` timers.
//!
//! **Parameters.**
//! - `timeout` (default 30000): the idle timeout T, in ms (ticks), 1 to 2^30.
//! - `rate` (default `auto` = 3000 × C / 100,000): packets per second over all connections,
//!   0 to 10^9.
//! - `idle` (default 0): the fraction of connections that send nothing, in [0, 1].
//!
//! **Sizes.** `--timers` is C, the number of connections. `--ops` is the number of 1 ms
//! ticks simulated (default 2T, at most 2^30). The workload has C starts, one `a 1` per
//! tick and one `r` per packet (at most 2^32 packets expected).
//!
//! **Figures.** With the seed scenario's numbers each connection sends a packet every
//! 100,000 / 3,000 ≈ 33.3 s on average, longer than the 30 s timeout: any one gap exceeds
//! the timeout with probability e^(-30/33.3) ≈ 41%, so this is a heavy-expiry workload, not
//! one where refreshes almost always win. Starting from steady state, 61.6% of the
//! connections time out within the first T and 87.0% within the default 2T (an independent
//! Monte Carlo of the same model; the generator's `@timeout-fraction` at 100k connections
//! is 0.870). Raise `rate` to make refreshes dominate.

use super::common::{
    emitter, guard, ops_or, probability, real_in, seeded, timers, whole_in, workload,
};
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;
use rand::RngExt;
use std::collections::VecDeque;

/// The idle-connection keepalive model.
pub struct Keepalive;

/// The seed scenario's packet rate per connection: 3,000 packets/s per 100,000 connections.
const DEFAULT_RATE_PER_CONNECTION: f64 = 3_000.0 / 100_000.0;

/// The most packets a workload may hold: 2^32 operations already take 100 GB in memory.
const MAX_PACKETS: f64 = (1u64 << 32) as f64;

/// The most ticks simulated (and the longest timeout): 2^30 ticks, about 12 days at 1 ms,
/// is already 2^30 `a 1` operations.
const MAX_TICKS: u64 = 1 << 30;

/// The deadline of a closed connection (no timer pending).
const CLOSED: u64 = u64::MAX;

static INFO: FamilyInfo = FamilyInfo {
    name: "keepalive",
    models: "idle-connection timeouts refreshed by keepalive packets (100k TCP connections, \
             30 s idle timeout, ~3000 packets/s)",
    shape: "C connection timers; per 1 ms tick, Poisson packets refresh their connection's \
            timer (`r ID T`), then `a 1`; a connection silent for T times out and closes",
    ops: "1 ms ticks simulated, default 2 × timeout",
    tick: "1ms",
    params: &[
        Param {
            name: "timeout",
            default: "30000",
            help: "idle timeout T, ms",
        },
        Param {
            name: "rate",
            default: "auto",
            help: "packets per second over all connections (Poisson); auto = 3000 per 100k \
                   connections",
        },
        Param {
            name: "idle",
            default: "0",
            help: "fraction of connections that send nothing and time out, [0, 1]",
        },
    ],
};

impl Family for Keepalive {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let connections = timers(spec, params)?;
        let timeout = whole_in(params, "timeout", 1, MAX_TICKS)?;
        let ticks = ops_or(spec, params, 2 * timeout)?;
        if ticks > MAX_TICKS {
            return Err(params.invalid(format!(
                "{ticks} ticks: at most {MAX_TICKS} (one `a 1` operation each)"
            )));
        }
        let rate = match params.text("rate") {
            "auto" => DEFAULT_RATE_PER_CONNECTION * connections as f64,
            text if text.parse::<f64>().is_err() => {
                return Err(params.bad("rate", "must be `auto` or packets per second"));
            }
            _ => real_in(params, "rate", 0.0, 1e9)?,
        };
        let idle_share = probability(params, "idle")?;
        let packets_expected = rate * ticks as f64 / 1000.0;
        if packets_expected > MAX_PACKETS {
            return Err(params.invalid(format!(
                "{packets_expected:.0} packets expected: lower rate or --ops"
            )));
        }
        guard(params, ticks + timeout)?;

        let mut rng = seeded(spec);
        let mut out = emitter(
            params,
            connections + ticks + packets_expected as u64 + packets_expected as u64 / 8,
        )?;
        // Packets per tick: over all connections, and for one connection.
        let total_per_tick = rate / 1000.0;
        let per_connection = total_per_tick / connections as f64;

        let mut deadline = Vec::with_capacity(connections as usize);
        let mut idle = Vec::with_capacity(connections as usize);
        let mut initial = Vec::with_capacity(connections as usize);
        // P(a gap < T), for drawing the age of an open connection's last packet.
        let open_probability = 1.0 - (-per_connection * timeout as f64).exp();
        for id in 0..connections {
            idle.push(rng.random::<f64>() < idle_share);
            let u: f64 = rng.random();
            let age = if per_connection > 0.0 && open_probability > 0.0 {
                -(1.0 - u * open_probability).ln() / per_connection
            } else {
                u * timeout as f64
            };
            let age = (age as u64).min(timeout - 1);
            let first = timeout - age;
            out.start_at(id, first);
            deadline.push(first);
            initial.push((first, id));
        }
        // Every later deadline is a refresh's `t + T`, which only grows with t and is at
        // least T, so a FIFO of (deadline, connection) in push order stays sorted; entries
        // made stale by a later refresh are skipped when they reach the front.
        initial.sort_unstable();
        let mut expiries: VecDeque<(u64, u64)> = initial.into();

        // Packets as one Poisson process over all connections, each given to a connection
        // at random: the superposition of C independent processes of the per-connection
        // rate. A packet drawn for a closed or idle connection is not sent.
        let gap =
            |rng: &mut rand::rngs::SmallRng| -(1.0 - rng.random::<f64>()).ln() / total_per_tick;
        let mut next_packet = if total_per_tick > 0.0 {
            gap(&mut rng)
        } else {
            f64::INFINITY
        };
        let mut refreshes = 0u64;
        let mut timeouts = 0u64;
        for tick in 0..ticks {
            let end = (tick + 1) as f64;
            while next_packet < end {
                let id = rng.random_range(0..connections);
                let slot = id as usize;
                if deadline[slot] != CLOSED && !idle[slot] {
                    let refreshed = tick + timeout;
                    out.restart_at(id, refreshed);
                    deadline[slot] = refreshed;
                    expiries.push_back((refreshed, id));
                    refreshes += 1;
                }
                next_packet += gap(&mut rng);
            }
            out.advance_to(tick + 1);
            while let Some(&(due, id)) = expiries.front() {
                if due > tick + 1 {
                    break;
                }
                expiries.pop_front();
                if deadline[id as usize] == due {
                    deadline[id as usize] = CLOSED;
                    timeouts += 1;
                }
            }
        }

        let fraction = timeouts as f64 / connections as f64;
        Ok(workload(
            format!(
                "idle-connection keepalive: {connections} connections, {timeout} ms timeout, \
                 {rate} packets/s (Poisson), {idle_share} idle, {ticks} ticks of 1 ms: \
                 {timeouts} time out ({:.1}%)",
                fraction * 100.0
            ),
            vec![
                ("connections", connections.to_string()),
                ("timeout", timeout.to_string()),
                ("refresh-rate", rate.to_string()),
                ("refreshes", refreshes.to_string()),
                ("timeouts", timeouts.to_string()),
                ("timeout-fraction", format!("{fraction:.6}")),
            ],
            out.into_ops(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::common::testing::{make, number, refuse, replay, replay_with, spec};
    use crate::op::Op;

    #[test]
    fn predicted_timeouts_match_the_model() {
        for (connections, params) in [
            (10_000, vec![("timeout", "3000")]),
            (10_000, vec![("timeout", "3000"), ("idle", "0.2")]),
            (5_000, vec![("timeout", "2000"), ("rate", "20000")]),
            (5_000, vec![("timeout", "1000"), ("rate", "0")]),
            (1, vec![("timeout", "10"), ("rate", "1000")]),
        ] {
            let workload = make("keepalive", &spec(connections, None, 9, &params));
            let mut ticks = 0;
            let summary = replay_with(&workload, |_, op, _, _| match op {
                Op::Advance { ticks: 1 } => ticks += 1,
                Op::Start { .. } | Op::Restart { .. } => {}
                other => panic!("unexpected {other}"),
            });
            assert_eq!(summary.fired, number(&workload, "timeouts"), "{params:?}");
            assert_eq!(
                summary.started,
                connections + number(&workload, "refreshes")
            );
            let timeout = number(&workload, "timeout");
            assert_eq!(ticks, 2 * timeout);
            assert_eq!(summary.final_clock, 2 * timeout);
        }
    }

    #[test]
    fn idle_connections_all_time_out() {
        let workload = make(
            "keepalive",
            &spec(10_000, None, 2, &[("timeout", "1000"), ("idle", "1")]),
        );
        let summary = replay(&workload);
        assert_eq!(summary.fired, 10_000);
        assert_eq!(number(&workload, "refreshes"), 0);
    }

    #[test]
    fn the_default_rate_gives_the_seed_scenario_expiry() {
        // 3,000 packets/s per 100k connections against a 30 s timeout: from steady state,
        // 61.6% of connections time out within T (a Monte Carlo of the same model, done
        // apart from this generator).
        let workload = make("keepalive", &spec(20_000, Some(30_000), 4, &[]));
        let fraction = number(&workload, "timeouts") as f64 / 20_000.0;
        assert!((fraction - 0.616).abs() < 0.02, "{fraction}");
        assert_eq!(replay(&workload).fired, number(&workload, "timeouts"));
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = make("keepalive", &spec(1_000, None, 5, &[("timeout", "500")]));
        let b = make("keepalive", &spec(1_000, None, 5, &[("timeout", "500")]));
        let c = make("keepalive", &spec(1_000, None, 6, &[("timeout", "500")]));
        assert_eq!(a, b);
        assert_ne!(a.ops, c.ops);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [
            ("timeout", "0"),
            ("timeout", "-3"),
            ("rate", "-1"),
            ("rate", "fast"),
            ("rate", "nan"),
            ("idle", "1.5"),
            ("idle", "-0.1"),
        ] {
            refuse("keepalive", &spec(100, None, 1, &[(key, value)]));
        }
        refuse("keepalive", &spec(100, Some(0), 1, &[]));
        refuse("keepalive", &spec(100, Some(1 << 41), 1, &[]));
        refuse(
            "keepalive",
            &spec(100, Some(1 << 39), 1, &[("rate", "1e9")]),
        );
    }
}
