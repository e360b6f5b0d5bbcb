//! The replay of an engine's reads and ends per connection, and the checks it makes (the
//! list is [`super`]'s).

use super::{EngineConfig, EngineResult, EngineRun};
use crate::schedule::{Arrival, Schedule};
use crate::tcp::{self, TcpOutcome};

/// An end of the engine's result: how a connection ended.
const CLOSED_BY_TIMER: u64 = 1;
const CLOSED_BY_CLIENT: u64 = 2;
const CLOSED_AT_END: u64 = 3;
const CLOSED_FOR_PROTOCOL: u64 = 4;

/// What the replay of the engine's reads and ends found.
#[derive(Default)]
pub struct Checked {
    /// The TCP mode's counts.
    pub tcp: TcpOutcome,
    /// Closes before their deadline, and the most ns one came early.
    pub early: u64,
    /// See `early`.
    pub most_early_ns: u64,
    /// How long after its scheduled time each keepalive was read.
    pub behind: Vec<u64>,
    /// Each timer close's deadline as an offset from tick 0, for the baseline.
    pub deadlines: Vec<u64>,
    /// What disagrees, in words (the run is unverified when any does).
    pub problems: Vec<String>,
}

/// One connection's state in the replay.
#[derive(Clone, Copy, Default)]
struct Connection {
    deadline: Option<u64>,
    live_until: u64,
    ended: bool,
}

/// Replays `result` over `schedule` (see the module documentation).
pub fn check(
    result: &EngineResult,
    schedule: &Schedule,
    config: &EngineConfig,
    run: &EngineRun,
) -> Checked {
    let (origin, tick) = (run.origin_ns, config.tick_ns);
    let mut checked = Checked::default();
    let mut connections = filled(schedule, origin, tick);
    replay_reads(
        result,
        schedule,
        origin,
        tick,
        &mut connections,
        &mut checked,
    );
    for &end in &result.ends {
        replay_end(end, config, run, &mut connections, &mut checked);
    }
    let never = connections.iter().filter(|c| !c.ended).count();
    if never > 0 {
        checked
            .problems
            .push(format!("{never} connections the server never reported"));
    }
    checked.problems.extend(result.problems.iter().cloned());
    count(&mut checked.tcp, result, schedule, run);
    checked
}

/// Every connection at tick 0: its fill's deadline, which is also the earliest time
/// closing it is right.
fn filled(schedule: &Schedule, origin: u64, tick: u64) -> Vec<Connection> {
    let mut connections = vec![Connection::default(); schedule.slots];
    for &(slot, delay) in &schedule.fill {
        let deadline = origin + delay * tick;
        connections[slot as usize] = Connection {
            deadline: Some(deadline),
            live_until: deadline,
            ended: false,
        };
    }
    connections
}

/// Replays the engine's reads: each keepalive moves its connection's deadline to its read
/// time plus its timeout and its earliest right close to its sending tick plus the
/// timeout; a record that is not one of its connection's keepalives is a problem. Each
/// read's time after its schedule goes to `behind`.
fn replay_reads(
    result: &EngineResult,
    schedule: &Schedule,
    origin: u64,
    tick: u64,
    connections: &mut [Connection],
    checked: &mut Checked,
) {
    for &[slot, index, sent_ns, read_ns] in &result.reads {
        let timed = schedule.arrivals.get(index as usize);
        let delay = match timed.map(|t| t.arrival) {
            Some(Arrival::Start { slot: s, delay } | Arrival::Restart { slot: s, delay })
                if u64::from(s) == slot =>
            {
                delay
            }
            _ => {
                checked.problems.push(format!(
                    "connection {slot} read a record for operation {index}, not one of its \
                     keepalives"
                ));
                continue;
            }
        };
        let connection = &mut connections[slot as usize];
        connection.deadline = Some(read_ns + delay * tick);
        let until = tcp::live_until_ns(origin, tick, sent_ns, delay);
        connection.live_until = connection.live_until.max(until);
        let scheduled = origin + timed.map_or(0, |t| t.tick) * tick;
        checked.behind.push(read_ns.saturating_sub(scheduled));
    }
}

/// Replays one end the engine reported, `[connection, how, closed ns, deadline ns]`: it
/// must name one of the connections, once, in one of the known ways.
fn replay_end(
    [slot, how, closed, deadline]: [i64; 4],
    config: &EngineConfig,
    run: &EngineRun,
    connections: &mut [Connection],
    checked: &mut Checked,
) {
    let Some(connection) = usize::try_from(slot)
        .ok()
        .and_then(|s| connections.get_mut(s))
    else {
        checked.problems.push(format!(
            "the server ended connection {slot}, not one of its own"
        ));
        return;
    };
    if std::mem::replace(&mut connection.ended, true) {
        checked
            .problems
            .push(format!("the server ended connection {slot} twice"));
    }
    let said = u64::try_from(deadline).ok();
    let closed = closed.max(0) as u64;
    match how as u64 {
        CLOSED_BY_TIMER => timer_close(slot, closed, said, connection, run.origin_ns, checked),
        CLOSED_BY_CLIENT | CLOSED_AT_END => {
            if how as u64 == CLOSED_BY_CLIENT {
                checked.tcp.closed_by_client += 1;
            } else {
                checked.tcp.open_at_end += 1;
            }
            let lost = connection
                .deadline
                .filter(|&d| d + config.max_behind_ns < run.ended_ns);
            if let Some(deadline) = lost {
                checked.problems.push(format!(
                    "connection {slot}'s timeout was due {:.0} ms before the workload's \
                     end and never closed it",
                    (run.ended_ns - deadline) as f64 / 1e6
                ));
            }
        }
        CLOSED_FOR_PROTOCOL => {}
        _ => checked.problems.push(format!(
            "connection {slot} ended as {how}, which means nothing"
        )),
    }
}

/// A close by the connection's timer at `closed`, the engine saying its deadline was
/// `said`: that deadline must be the one the reads set; a close before it is early, else
/// its lateness counts; a close before the connection's earliest right one is wrong.
fn timer_close(
    slot: i64,
    closed: u64,
    said: Option<u64>,
    connection: &Connection,
    origin: u64,
    checked: &mut Checked,
) {
    checked.tcp.closed += 1;
    if said != connection.deadline {
        checked.problems.push(format!(
            "the server closed connection {slot} at its deadline {said:?}, but its \
             keepalives set {:?}",
            connection.deadline
        ));
    }
    let deadline = said.unwrap_or(0);
    checked.deadlines.push(deadline.saturating_sub(origin));
    if closed < deadline {
        checked.early += 1;
        checked.most_early_ns = checked.most_early_ns.max(deadline - closed);
    } else {
        checked.tcp.close_lateness.push(closed - deadline);
    }
    if closed < connection.live_until {
        checked.tcp.closed_wrongly += 1;
    }
}

/// The TCP counts the engine's result and its run give as they are: connections,
/// sources, the ramp, keepalives read, re-arms and the client's own.
fn count(tcp: &mut TcpOutcome, result: &EngineResult, schedule: &Schedule, run: &EngineRun) {
    tcp.connections = schedule.slots as u64;
    tcp.sources = crate::net::sources_for(tcp.connections);
    tcp.ramp_ns = run.ramp_ns;
    tcp.received = result.reads.len() as u64;
    tcp.rearmed = result.rearmed;
    if let Some([sent, refused, rss]) = run.client_done {
        (
            tcp.client_sent,
            tcp.client_refused,
            tcp.client_peak_rss_bytes,
        ) = (sent, refused, rss);
    }
    tcp.client_exit = run.client_exit.clone();
}

#[cfg(test)]
mod tests {
    use super::super::Window;
    use super::*;
    use crate::schedule::Timed;
    use crate::tcp::TcpSettings;

    const ORIGIN: u64 = 1_000_000_000;
    const MS: u64 = 1_000_000;

    /// Two connections with a 10 ms fill; connection 0's keepalive (timeout 10 ms) is
    /// scheduled at tick 5.
    fn schedule() -> Schedule {
        Schedule {
            fill: vec![(0, 10), (1, 10)],
            arrivals: vec![Timed {
                tick: 5,
                arrival: Arrival::Restart { slot: 0, delay: 10 },
            }],
            end_tick: 30,
            slots: 2,
        }
    }

    fn config() -> EngineConfig {
        EngineConfig {
            name: "go-runtime".into(),
            server: Vec::new(),
            tcp: TcpSettings {
                client: Vec::new(),
                port: 0,
                ramp_ns: 0,
                baseline_limit_ns: 0,
            },
            workload: "keepalive-2".into(),
            peak_pending: 2,
            tick_ns: MS,
            duration_ns: 30 * MS,
            idle_ns: 0,
            max_behind_ns: 1_000 * MS,
            client_cpu: None,
        }
    }

    fn run() -> EngineRun {
        EngineRun {
            origin_ns: ORIGIN,
            ended_ns: ORIGIN + 30 * MS,
            ..EngineRun::default()
        }
    }

    fn window() -> Window {
        Window {
            wall_ns: 1,
            cpu_ns: 0,
            voluntary_switches: 0,
            involuntary_switches: 0,
        }
    }

    fn result(reads: Vec<[u64; 4]>, ends: Vec<[i64; 4]>) -> EngineResult {
        EngineResult {
            runtime: "go".into(),
            runtime_version: "go1.19.8".into(),
            runtime_flags: Vec::new(),
            reads,
            ends,
            rearmed: 0,
            problems: Vec::new(),
            workload: window(),
            idle: window(),
            gc_cycles: 0,
            gc_pause_ns: 0,
            peak_rss_bytes: 0,
            server: None,
            cpu_of: None,
            wakeups_of: None,
        }
    }

    /// `ns` after tick 0, as the engine writes an instant.
    fn at(ns: u64) -> i64 {
        (ORIGIN + ns) as i64
    }

    /// Connection 0's keepalive sent at 5 ms and read at 5.2 ms: its deadline is 15.2 ms.
    const READ: [u64; 4] = [0, 0, ORIGIN + 5 * MS, ORIGIN + 5 * MS + 200_000];

    #[test]
    fn closes_on_the_deadlines_the_reads_set_verify_with_their_lateness() {
        let ends = vec![
            [0, 1, at(16 * MS), at(15 * MS + 200_000)],
            [1, 1, at(10 * MS + 500_000), at(10 * MS)],
        ];
        let checked = check(&result(vec![READ], ends), &schedule(), &config(), &run());
        assert!(checked.problems.is_empty(), "{:?}", checked.problems);
        assert_eq!(
            (
                checked.tcp.closed,
                checked.tcp.closed_wrongly,
                checked.early
            ),
            (2, 0, 0)
        );
        assert_eq!(checked.tcp.close_lateness, vec![800_000, 500_000]);
        assert_eq!(checked.behind, vec![200_000]);
        assert_eq!(checked.deadlines, vec![15 * MS + 200_000, 10 * MS]);
        assert_eq!(checked.tcp.received, 1);
    }

    #[test]
    fn a_deadline_not_set_by_the_reads_an_early_close_and_a_wrong_close_are_caught() {
        // Closed at 14 ms, saying its deadline was 14 ms: not what the read set (15.2 ms),
        // and before the keepalive's send tick plus the timeout (15 ms): closed wrongly.
        let wrong = vec![
            [0, 1, at(14 * MS), at(14 * MS)],
            [1, 3, at(29 * MS), at(10 * MS)],
        ];
        let checked = check(&result(vec![READ], wrong), &schedule(), &config(), &run());
        assert!(
            checked.problems[0].contains("keepalives set"),
            "{:?}",
            checked.problems
        );
        assert_eq!(
            (checked.tcp.closed_wrongly, checked.tcp.open_at_end),
            (1, 1)
        );
        // Closed before the deadline it reports.
        let early = vec![
            [0, 1, at(15 * MS), at(15 * MS + 200_000)],
            [1, 2, at(5 * MS), -1],
        ];
        let checked = check(&result(vec![READ], early), &schedule(), &config(), &run());
        assert_eq!((checked.early, checked.most_early_ns), (1, 200_000));
        assert_eq!(checked.tcp.closed_by_client, 1);
    }

    #[test]
    fn a_lost_timeout_a_foreign_record_and_a_missing_connection_are_problems() {
        // Connection 1's deadline (10 ms) passed 1.99 s before the end and never closed it.
        let late_end = EngineRun {
            ended_ns: ORIGIN + 2_000 * MS,
            ..run()
        };
        let lost = vec![
            [0, 1, at(16 * MS), at(15 * MS + 200_000)],
            [1, 3, at(2_000 * MS), at(10 * MS)],
        ];
        let checked = check(&result(vec![READ], lost), &schedule(), &config(), &late_end);
        assert_eq!(checked.problems.len(), 1, "{:?}", checked.problems);
        assert!(checked.problems[0].contains("connection 1's timeout was due 1990 ms"));
        // Connection 1 read connection 0's keepalive; connection 0 never reported.
        let foreign = [1, 0, ORIGIN + 5 * MS, ORIGIN + 6 * MS];
        let ends = vec![[1, 1, at(11 * MS), at(10 * MS)]];
        let checked = check(&result(vec![foreign], ends), &schedule(), &config(), &run());
        assert!(checked.problems[0].contains("not one of its keepalives"));
        assert!(checked.problems[1].contains("1 connections the server never reported"));
    }
}
