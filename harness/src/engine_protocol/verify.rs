//! Verifies an engine's replay against the reference model, as a Rust replay is verified:
//! the same firings at the same clock, in non-decreasing deadline order within a move, and
//! the same summary (counts, final clock, SHA-256 digest of the sorted log).

use super::protocol::ReplayAnswer;
use timerbench_workloads::Program;
use timerbench_workloads::reference::{Expiry, Summary, Tally};

/// The summary the engine's log and counts make, if it equals the model's; else what differs.
pub fn verify(program: &Program, answer: &ReplayAnswer) -> Result<Summary, String> {
    let text = std::fs::read_to_string(&answer.log)
        .map_err(|e| format!("cannot read its log {}: {e}", answer.log.display()))?;
    let mut got = parse_log(&text)?;
    check_order(&got)?;
    got.sort_unstable_by_key(|e| (e.now, e.deadline, e.id));
    let mut expected: Vec<Expiry> = program
        .expected
        .iter()
        .map(|f| Expiry {
            now: f.now,
            deadline: f.deadline,
            id: program.keys[f.slot as usize],
        })
        .collect();
    expected.sort_unstable_by_key(|e| (e.now, e.deadline, e.id));
    first_difference(&expected, &got)?;
    let mut tally = Tally::default();
    for &expiry in &got {
        tally.fired(expiry);
    }
    tally.summary.operations = answer.operations;
    tally.summary.started = answer.started;
    tally.summary.stopped = answer.stopped;
    tally.summary.misses = answer.misses;
    let summary = tally.finish(answer.pending, answer.final_clock);
    if answer.fired != summary.fired {
        return Err(format!(
            "it says {} fired but its log has {} lines",
            answer.fired, summary.fired
        ));
    }
    if summary != program.summary {
        return Err(format!(
            "summary differs: expected {:?}, got {:?}",
            program.summary, summary
        ));
    }
    Ok(summary)
}

/// The log's lines, `NOW ID DEADLINE`, in the order written.
fn parse_log(text: &str) -> Result<Vec<Expiry>, String> {
    text.lines()
        .enumerate()
        .map(|(index, line)| {
            let fields: Vec<u64> = line
                .split_ascii_whitespace()
                .map(str::parse)
                .collect::<Result<_, _>>()
                .map_err(|_| format!("log line {}: `{line}` is not NOW ID DEADLINE", index + 1))?;
            match fields[..] {
                [now, id, deadline] => Ok(Expiry { now, deadline, id }),
                _ => Err(format!(
                    "log line {}: `{line}` is not NOW ID DEADLINE",
                    index + 1
                )),
            }
        })
        .collect()
}

/// In the order fired, `(NOW, DEADLINE)` never decreases: the clock only moves forward, and
/// within a move (and across moves that leave the clock put) deadlines come in order.
fn check_order(log: &[Expiry]) -> Result<(), String> {
    match log
        .windows(2)
        .position(|w| (w[1].now, w[1].deadline) < (w[0].now, w[0].deadline))
    {
        Some(i) => Err(format!(
            "log line {}: `{}` fired after `{}`",
            i + 2,
            log[i + 1],
            log[i]
        )),
        None => Ok(()),
    }
}

/// The first line where the sorted logs part, as the model's and the engine's lines.
fn first_difference(expected: &[Expiry], got: &[Expiry]) -> Result<(), String> {
    let line = |e: Option<&Expiry>| e.map_or("no firing".to_string(), |e| e.to_string());
    let parted = (0..expected.len().max(got.len())).find(|&i| expected.get(i) != got.get(i));
    match parted {
        Some(i) => Err(format!(
            "sorted line {}: expected `{}`, got `{}`",
            i + 1,
            line(expected.get(i)),
            line(got.get(i))
        )),
        None => Ok(()),
    }
}
