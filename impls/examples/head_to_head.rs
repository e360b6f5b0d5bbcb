//! A small head-to-head run of every registered implementation: the project's main job
//! until the `timerbench` harness exists.
//!
//! Two workloads, the same operations for every implementation:
//!
//! - `hold`: Jones's hold model. Fill to N timers with exponentially distributed delays,
//!   then repeatedly sleep to the next deadline, and for every timer that fires start a new
//!   one at `now + delay`.
//! - `start-stop`: N far-future resident timers, then pairs of start and stop of a short
//!   timer (the cancelled-timeout pattern of RPC deadlines).
//!
//! Every implementation's firings are verified before its time is printed: each timer fires
//! once, never before its deadline, never in a later call than the one that reached it, and
//! in non-decreasing deadline order; and every implementation must produce the same firing
//! digest. Times are wall-clock medians of a few runs on whatever machine this is: read them
//! as ratios within one run, not as absolute figures.
//!
//! `cargo run --release -p timerbench-impls --example head_to_head [-- N]`

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::process::ExitCode;
use std::time::Instant;
use timerbench_impls::registry::{IMPLEMENTATIONS, visit};
use timerbench_impls::{Implementation, QueueVisitor, Tick, TimerQueue};

const RUNS: usize = 3;
const MEAN_DELAY: f64 = 1_000.0;

/// Exponentially distributed delays of mean `MEAN_DELAY`, at least one tick.
struct Delays {
    random: SmallRng,
    exponential: Exp<f64>,
}

impl Delays {
    fn new(seed: u64) -> Self {
        Delays {
            random: SmallRng::seed_from_u64(seed),
            exponential: Exp::new(1.0 / MEAN_DELAY).expect("a positive rate"),
        }
    }

    fn next(&mut self) -> u64 {
        self.exponential.sample(&mut self.random) as u64 + 1
    }
}

/// Checks firings as they happen and digests them in a form every exact queue agrees on.
#[derive(Default)]
struct Verifier {
    /// Per advance: the fired `(deadline, value)` pairs, sorted before digesting, because
    /// the order among equal deadlines is unspecified.
    batch: Vec<(Tick, u64)>,
    digest: DefaultHasher,
    fired: u64,
    error: Option<String>,
}

impl Verifier {
    /// Records one firing by `advance(to)` issued when the clock was `from`.
    fn fire(&mut self, from: Tick, to: Tick, deadline: Tick, value: u64) {
        let in_order = self.batch.last().is_none_or(|&(last, _)| last <= deadline);
        // Due in this call: not after `to`, and not already due at `from` unless the timer
        // was started at or before `from` with a deadline in the past, which the workloads
        // here never do.
        let due_now = deadline <= to && (deadline > from || from == 0);
        if (!in_order || !due_now) && self.error.is_none() {
            self.error = Some(format!(
                "advance({to}) from {from} fired deadline {deadline} (value {value})"
            ));
        }
        self.batch.push((deadline, value));
        self.fired += 1;
    }

    fn end_advance(&mut self, to: Tick) {
        self.batch.sort_unstable();
        (to, &self.batch).hash(&mut self.digest);
        self.batch.clear();
    }
}

/// One workload run: operations done, the digest, the error if any.
struct Outcome {
    operations: u64,
    digest: u64,
    nanos: u128,
    error: Option<String>,
}

fn hold<Q: TimerQueue<u64>>(timers: u64) -> Outcome {
    let mut queue = Q::with_capacity(timers as usize);
    let mut delays = Delays::new(0x5eed);
    let mut verifier = Verifier::default();
    let mut restarts = Vec::new();
    let started = Instant::now();
    for value in 0..timers {
        queue.start(delays.next(), value);
    }
    let mut operations = timers;
    let mut next_value = timers;
    while operations < 10 * timers {
        let Some(bound) = queue.next_deadline() else {
            break;
        };
        let (from, to) = (queue.now(), bound.max(queue.now()));
        queue.advance(to, |_, value, deadline| {
            verifier.fire(from, to, deadline, value);
            restarts.push(value);
        });
        verifier.end_advance(to);
        operations += 1;
        for _ in restarts.drain(..) {
            queue.start(to + delays.next(), next_value);
            next_value += 1;
            operations += 1;
        }
    }
    let nanos = started.elapsed().as_nanos();
    if verifier.fired + queue.len() as u64 != next_value {
        verifier.error.get_or_insert(format!(
            "{} started, {} fired, {} pending",
            next_value,
            verifier.fired,
            queue.len()
        ));
    }
    Outcome {
        operations,
        digest: verifier.digest.finish(),
        nanos,
        error: verifier.error,
    }
}

fn start_stop<Q: TimerQueue<u64>>(timers: u64) -> Outcome {
    let mut queue = Q::with_capacity(timers as usize + 1);
    let mut random = SmallRng::seed_from_u64(0xcafe);
    let mut error = None;
    let started = Instant::now();
    for value in 0..timers {
        queue.start((1 << 30) | (random.next_u64() % (1 << 30)), value);
    }
    let pairs = 10 * timers;
    for value in 0..pairs {
        let deadline = queue.now() + 1 + random.next_u64() % 10_000;
        let id = queue.start(deadline, value);
        if queue.stop(id) != Some(value) && error.is_none() {
            error = Some(format!("stop of the timer just started ({value}) failed"));
        }
        if value % 1024 == 0 {
            let to = queue.now() + 1;
            queue.advance(to, |_, _, _| {
                error.get_or_insert_with(|| "a far-future timer fired".to_string());
            });
        }
    }
    let nanos = started.elapsed().as_nanos();
    if queue.len() as u64 != timers {
        error.get_or_insert(format!("{} pending, expected {timers}", queue.len()));
    }
    Outcome {
        operations: timers + 2 * pairs,
        digest: queue.len() as u64,
        nanos,
        error,
    }
}

/// The median of `RUNS` runs, after checking that every run agreed.
struct Measure {
    timers: u64,
    workload: &'static str,
}

impl QueueVisitor for &Measure {
    type Output = Result<(f64, u64), String>;

    fn visit<Q: TimerQueue<u64>>(self, _: &'static Implementation) -> Self::Output {
        let run = match self.workload {
            "hold" => hold::<Q>,
            _ => start_stop::<Q>,
        };
        let mut nanos_per_op = Vec::new();
        let mut digest = None;
        for _ in 0..RUNS {
            let outcome = run(self.timers);
            if let Some(error) = outcome.error {
                return Err(error);
            }
            if digest.is_some_and(|d| d != outcome.digest) {
                return Err("two runs of the same workload disagree".into());
            }
            digest = Some(outcome.digest);
            nanos_per_op.push(outcome.nanos as f64 / outcome.operations as f64);
        }
        nanos_per_op.sort_by(f64::total_cmp);
        Ok((nanos_per_op[RUNS / 2], digest.unwrap_or_default()))
    }
}

fn main() -> ExitCode {
    let timers = match std::env::args().nth(1).map(|a| a.parse::<u64>()) {
        None => 100_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("head_to_head: N must be a positive integer (timers resident)");
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for workload in ["hold", "start-stop"] {
        println!(
            "\n{workload}, {timers} timers resident (median of {RUNS} runs, ns per operation)"
        );
        let measure = Measure { timers, workload };
        let mut results = Vec::new();
        for implementation in IMPLEMENTATIONS {
            let result = visit(implementation.name, &measure).expect("registered");
            results.push((implementation.name, result));
        }
        let digests: Vec<u64> = results
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok())
            .map(|r| r.1)
            .collect();
        let best = results
            .iter()
            .filter_map(|(_, r)| r.as_ref().ok())
            .map(|r| r.0)
            .fold(f64::INFINITY, f64::min);
        for (name, result) in &results {
            match result {
                Ok((nanos, digest)) if digests.iter().all(|d| d == digest) => {
                    println!(
                        "  {name:<20} {nanos:>8.1} ns/op  {:>5.2}x the fastest",
                        nanos / best
                    )
                }
                Ok(_) => {
                    failed = true;
                    println!(
                        "  {name:<20} FAILED: its firings differ from another implementation's"
                    )
                }
                Err(error) => {
                    failed = true;
                    println!("  {name:<20} FAILED verification: {error}")
                }
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
