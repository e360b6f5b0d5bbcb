//! A workload split into one operation stream per producer thread and the ticker's clock
//! moves.
//!
//! Timer `k` is started (and restarted) by producer `k % threads`; a stop goes to another
//! producer with probability `cross` (drawn from a seeded generator, so the split is the
//! same on every run), else to the starter. The leading starts of the workload (before any
//! other operation) are its resident population, started before the measured part, as
//! Go's timer benchmarks seed 2^15 timers per P first. Each clock move (`a N`, each tick of
//! `t N`) becomes a ticker step, taken once the producers together have done the
//! operations that precede it in the workload; `n` is left out (a producer cannot know the
//! shards' earliest deadline without asking them all).

use crate::log::Key;
use timerbench_impls::Tick;
use timerbench_workloads::{Op, Workload};

/// One producer operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamOp {
    Start {
        key: Key,
        delay: Tick,
    },
    Restart {
        key: Key,
        delay: Tick,
    },
    /// A stop of a timer started by producer `starter`, issued once that producer has made
    /// `after` starts or restarts of the timer (the caller has its handle only then).
    Stop {
        key: Key,
        starter: u32,
        after: u32,
    },
}

/// The split workload.
#[derive(Debug, Clone, Default)]
pub struct Streams {
    /// Per producer: the resident starts, applied before the measured part.
    pub fill: Vec<Vec<StreamOp>>,
    /// Per producer: the measured operations.
    pub ops: Vec<Vec<StreamOp>>,
    /// Ticker steps: (producer operations done before it, clock to move to).
    pub moves: Vec<(u64, Tick)>,
    /// One past the largest key.
    pub keys: usize,
    /// The clock after the last move.
    pub final_clock: Tick,
    /// Stops given to a producer other than the timer's starter.
    pub cross_stops: u64,
}

/// The most distinct keys a split accepts (its tables are indexed by key).
pub const MAX_KEYS: u64 = 1 << 26;

/// Splits `workload` over `threads` producers, a share `cross` of the stops issued by
/// another producer than the starter (none with one producer).
pub fn split(
    workload: &Workload,
    threads: usize,
    cross: f64,
    seed: u64,
) -> Result<Streams, String> {
    let threads = threads.max(1);
    let mut streams = Streams {
        fill: vec![Vec::new(); threads],
        ops: vec![Vec::new(); threads],
        ..Streams::default()
    };
    let mut starts: Vec<u32> = Vec::new();
    let mut random = seed ^ 0x9e37_79b9_7f4a_7c15;
    let (mut clock, mut done, mut filling) = (0u64, 0u64, true);
    for op in &workload.ops {
        let key = match *op {
            Op::Start { id, .. } | Op::Restart { id, .. } | Op::Stop { id } => Some(id),
            _ => None,
        };
        if let Some(key) = key {
            if key >= MAX_KEYS {
                return Err(format!(
                    "timer key {key} is past the threads study's limit of {MAX_KEYS} keys"
                ));
            }
            if starts.len() <= key as usize {
                starts.resize(key as usize + 1, 0);
            }
        }
        let starter = |key: Key| (key % threads as u64) as usize;
        match *op {
            Op::Start { id, delay } => {
                starts[id as usize] += 1;
                let target = if filling {
                    &mut streams.fill
                } else {
                    &mut streams.ops
                };
                target[starter(id)].push(StreamOp::Start { key: id, delay });
                done += u64::from(!filling);
            }
            Op::Restart { id, delay } => {
                filling = false;
                starts[id as usize] += 1;
                streams.ops[starter(id)].push(StreamOp::Restart { key: id, delay });
                done += 1;
            }
            Op::Stop { id } => {
                filling = false;
                let owner = starter(id);
                let mut issuer = owner;
                if threads > 1 && uniform(&mut random) < cross {
                    issuer =
                        (owner + 1 + (next(&mut random) % (threads as u64 - 1)) as usize) % threads;
                    streams.cross_stops += 1;
                }
                streams.ops[issuer].push(StreamOp::Stop {
                    key: id,
                    starter: owner as u32,
                    after: starts[id as usize],
                });
                done += 1;
            }
            Op::Advance { ticks } => {
                filling = false;
                clock = clock.saturating_add(ticks);
                streams.moves.push((done, clock));
            }
            Op::Tick { ticks } => {
                filling = false;
                for _ in 0..ticks {
                    clock = clock.saturating_add(1);
                    streams.moves.push((done, clock));
                }
            }
            Op::Next => filling = false,
        }
    }
    streams.keys = starts.len();
    streams.final_clock = clock;
    Ok(streams)
}

/// splitmix64: a seeded, dependency-free generator, enough to pick which stops cross.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn uniform(state: &mut u64) -> f64 {
    (next(state) >> 11) as f64 / (1u64 << 53) as f64
}
