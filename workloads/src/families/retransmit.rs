//! `retransmit`: TCP retransmission timers (RFC 6298; Linux `tcp_rearm_rto`, with
//! `TCP_RTO_MIN` = 200 ms and `TCP_RTO_MAX` = 120 s from `include/net/tcp.h`). An RTO timer
//! is armed for every segment in flight and is almost always stopped or re-armed by an ACK
//! before it expires; it fires only on loss, and then the segment is retransmitted with the
//! RTO doubled (exponential backoff, capped at the maximum).
//!
//! **Shape.** Each connection (timer ID = its index) sends one segment at a time and is
//! simulated event by event at 1 ms ticks; `a` jumps from one event tick to the next, and
//! simultaneous events run in a fixed order. A connection has a round-trip time RTT,
//! log-uniform in [1, 300] ms, and a base RTO of RTT + `rto-min` (Linux's
//! srtt + max(4·rttvar, `TCP_RTO_MIN`) for a steady RTT), at most `rto-max`. When it sends a
//! segment it arms its RTO timer (`s ID RTO`). The segment is then:
//! - acknowledged, with probability `ack`, one RTT later (before the RTO). The backoff
//!   resets. With probability `more` the connection has more data and sends the next
//!   segment at once, re-arming the timer (`r ID RTO`); otherwise it stops the timer
//!   (`x ID`) and sends its next segment after an idle gap (exponential, mean `idle` ms).
//! - lost, otherwise: the timer fires at its deadline, the backoff doubles the RTO (capped
//!   at `rto-max`) and the segment is sent again (`s ID RTO`).
//!
//! Each connection's first segment goes out after an idle gap from clock 0. When the budget
//! of segments is spent, connections finish what is in flight (ACKs still stop their timers;
//! a loss fires and is not retransmitted), so nothing is pending at the end.
//! `@expected-timeouts` is the number of timers that fire.
//!
//! **Parameters.**
//! - `ack` (default 0.995): the probability that a segment is acknowledged, [0, 1].
//! - `more` (default 0.5): the probability that an ACK finds more data to send, so the
//!   timer is re-armed rather than stopped, [0, 1].
//! - `idle` (default 1000): the mean idle gap before a connection's next segment, ms,
//!   [0, 10^9].
//! - `rto-min` (default 200) and `rto-max` (default 120000): the RTO bounds, ms.
//!
//! **Sizes.** `--timers` is the number of connections. `--ops` is the total number of
//! segments sent, retransmissions included (default 4 × connections, so that 10M
//! connections make about 60M operations).
//!
//! **Figures.** The Linux timer wheel's comment: "the vast majority of timeout timers
//! (networking, disk I/O ...) are canceled before expiry"; with the default `ack`, 0.5% of
//! RTO timers fire.

use super::common::{
    MonotoneQueue, emitter, guard, ops_or, probability, real_in, seeded, timers, whole_in, workload,
};
use super::{Family, FamilyInfo, GenError, GenSpec, Param, Params};
use crate::Workload;
use rand::RngExt;
use rand::rngs::SmallRng;

/// TCP retransmission timers.
pub struct Retransmit;

/// The range of round-trip times, ms (log-uniform).
const RTT_MIN: f64 = 1.0;
const RTT_MAX: f64 = 300.0;

/// What a connection does at its next event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Send,
    Ack,
    Timeout,
}

static INFO: FamilyInfo = FamilyInfo {
    name: "retransmit",
    models: "TCP retransmission timers (RTO between 200 ms and 120 s, exponential backoff)",
    shape: "per connection, an RTO timer per segment: stopped (`x`) or re-armed (`r`) by an ACK \
            one RTT later, or fired by a loss and restarted with the RTO doubled",
    ops: "segments sent in total, retransmissions included; default 4 × timers",
    tick: "1ms",
    params: &[
        Param {
            name: "ack",
            default: "0.995",
            help: "probability that a segment is acknowledged (else its timer fires)",
        },
        Param {
            name: "more",
            default: "0.5",
            help: "probability that an ACK re-arms the timer for the next segment (else stops it)",
        },
        Param {
            name: "idle",
            default: "1000",
            help: "mean idle gap before a connection's next segment, ms (exponential)",
        },
        Param {
            name: "rto-min",
            default: "200",
            help: "minimum RTO, ms (added to the RTT)",
        },
        Param {
            name: "rto-max",
            default: "120000",
            help: "maximum RTO, ms (the backoff cap)",
        },
    ],
};

/// One connection.
struct Connection {
    base_rto: u64,
    rtt: u64,
    backoffs: u32,
    next: Next,
}

impl Family for Retransmit {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }

    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError> {
        let count = timers(spec, params)?;
        let budget = ops_or(spec, params, count.saturating_mul(4))?;
        let ack = probability(params, "ack")?;
        let more = probability(params, "more")?;
        let idle = real_in(params, "idle", 0.0, 1e9)?;
        let rto_min = whole_in(params, "rto-min", 1, 1 << 40)?;
        let rto_max = whole_in(params, "rto-max", 1, 1 << 40)?;
        if rto_max < rto_min {
            return Err(params.bad("rto-max", format!("must be at least rto-min ({rto_min})")));
        }
        let mut rng = seeded(spec);
        let idle_gap = |rng: &mut SmallRng| (-(1.0 - rng.random::<f64>()).ln() * idle) as u64;
        let mut out = emitter(params, budget.saturating_mul(2).saturating_add(count))?;

        let mut connections = Vec::with_capacity(count as usize);
        let mut events = MonotoneQueue::new();
        for id in 0..count {
            let rtt = (RTT_MIN * (RTT_MAX / RTT_MIN).powf(rng.random::<f64>())) as u64;
            connections.push(Connection {
                base_rto: (rtt + rto_min).min(rto_max),
                rtt,
                backoffs: 0,
                next: Next::Send,
            });
            events.push(idle_gap(&mut rng), id);
        }

        let mut sent = 0u64;
        let mut fired = 0u64;
        while let Some((time, id)) = events.pop() {
            out.advance_to(guard(params, time)?);
            let connection = &mut connections[id as usize];
            let send = match connection.next {
                Next::Send => {
                    if sent < budget {
                        Some(false)
                    } else {
                        None
                    }
                }
                Next::Ack => {
                    connection.backoffs = 0;
                    if sent < budget && rng.random::<f64>() < more {
                        Some(true)
                    } else {
                        out.stop(id);
                        if sent < budget {
                            connection.next = Next::Send;
                            events.push(time + idle_gap(&mut rng), id);
                        }
                        None
                    }
                }
                Next::Timeout => {
                    // The advance to `time` fired the timer.
                    fired += 1;
                    if connection.base_rto << connection.backoffs < rto_max {
                        connection.backoffs += 1;
                    }
                    if sent < budget { Some(false) } else { None }
                }
            };
            if let Some(rearm) = send {
                sent += 1;
                let rto = (connection.base_rto << connection.backoffs).min(rto_max);
                let deadline = guard(params, time + rto)?;
                if rearm {
                    out.restart_at(id, deadline);
                } else {
                    out.start_at(id, deadline);
                }
                if rng.random::<f64>() < ack {
                    connection.next = Next::Ack;
                    events.push(time + connection.rtt, id);
                } else {
                    connection.next = Next::Timeout;
                    events.push(deadline, id);
                }
            }
        }

        Ok(workload(
            format!(
                "TCP retransmission timers: {count} connections, {sent} segments, ack {ack}, \
                 more {more}, idle {idle} ms, RTO = RTT + {rto_min} ms doubling to {rto_max} ms: \
                 {fired} fire"
            ),
            vec![
                ("connections", count.to_string()),
                ("segments", sent.to_string()),
                ("expected-timeouts", fired.to_string()),
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
    fn timeouts_match_the_model_and_restart_doubled() {
        for ack in ["0.995", "0.8", "0"] {
            let workload = make("retransmit", &spec(2_000, Some(20_000), 2, &[("ack", ack)]));
            let mut last_delay = vec![0u64; 2_000];
            let mut just_fired = vec![false; 2_000];
            let summary = replay_with(&workload, |_, op, model, fired| {
                for expiry in fired {
                    just_fired[expiry.id as usize] = true;
                }
                match op {
                    Op::Start { id, delay } => {
                        let slot = id as usize;
                        if just_fired[slot] {
                            // A retransmission: the RTO doubled, up to the cap.
                            assert_eq!(delay, (2 * last_delay[slot]).min(120_000), "id {id}");
                        }
                        assert!((201..=120_000).contains(&delay));
                        just_fired[slot] = false;
                        last_delay[slot] = delay;
                    }
                    Op::Restart { id, delay } => {
                        assert!(model.deadline(id).is_some());
                        assert!((201..=500).contains(&delay));
                        last_delay[id as usize] = delay;
                    }
                    Op::Stop { id } => just_fired[id as usize] = false,
                    Op::Advance { .. } => {}
                    other => panic!("unexpected {other}"),
                }
            });
            assert_eq!(
                summary.fired,
                number(&workload, "expected-timeouts"),
                "ack {ack}"
            );
            assert_eq!(summary.started, 20_000);
            assert_eq!(summary.misses, 0);
            assert_eq!(summary.pending, 0);
            let share = summary.fired as f64 / 20_000.0;
            let expected = 1.0 - ack.parse::<f64>().unwrap();
            assert!(
                (share - expected).abs() < 0.01 + expected * 0.1,
                "ack {ack}: {share}"
            );
        }
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = make("retransmit", &spec(1_000, None, 5, &[]));
        let b = make("retransmit", &spec(1_000, None, 5, &[]));
        let c = make("retransmit", &spec(1_000, None, 6, &[]));
        assert_eq!(a, b);
        assert_ne!(a.ops, c.ops);
        replay(&c);
    }

    #[test]
    fn rejects_bad_parameters() {
        for (key, value) in [
            ("ack", "1.01"),
            ("more", "-0.5"),
            ("idle", "-1"),
            ("rto-min", "0"),
            ("rto-max", "100"),
        ] {
            refuse("retransmit", &spec(100, None, 1, &[(key, value)]));
        }
    }
}
