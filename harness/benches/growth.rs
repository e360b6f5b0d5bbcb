//! `cargo bench --bench growth`: the latency of every `start` while a queue grows from
//! nothing to a million timers, for the seven original structures and `dense-wheel`.
//!
//! Storage that grows by doubling one `Vec` stalls the `start` that doubles it, copying
//! everything held (milliseconds at a million timers); storage in segments
//! (`timerbench_impls::segmented`) should not, nor should `dense-wheel`, whose entries and
//! slot arrays grow by blocks that are never moved in its default build. For each structure this fills a queue built
//! with capacity 0 with `N` timers (default 1,000,000) of pseudo-random deadlines, uniform
//! in `1..=2^24` ticks from a fixed seed, timing every `start` on its own with
//! `std::time::Instant` into an HdrHistogram, and then does the same with a queue built
//! with capacity `N` (`presized`), so that what growth itself costs is the difference
//! between the two lines. Nothing else runs between the starts (no `advance`).
//!
//! Per structure and phase it prints p50, p99, p99.9, p99.99 and max of `start`, in
//! nanoseconds (the clock's own cost, some 20 ns, included), the number of starts over
//! 2 µs, and the fill's total time (the timed starts, clock reads included). Rounds (default 3) run
//! the structures in rotating order (A B C, B C A, ...), so that the machine's drift
//! spreads over all of them, and each figure printed is the median of the rounds' figures.
//!
//! Names are `growth/1M/NAME` (`1M` being `N`): the first argument that is not a flag is a
//! regex over them (`cargo bench --bench growth -- 'growth/1M/(binary|quad)-heap'`), and
//! when nothing matches it says so and runs nothing: `cargo bench -- ARGS` hands every
//! bench target the same arguments, criterion's flags included, which this ignores.
//! `--timers N` and `--rounds R` are its own flags; `--list` lists the names.

#[path = "support/filter.rs"]
mod filter;

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::hint::black_box;
use std::time::{Duration, Instant};
use timerbench_impls::registry::{self, QueueVisitor};
use timerbench_impls::{TimerQueue, Variant};

/// The seven original structures, and `dense-wheel`, built to grow without copying.
const STRUCTURES: &[&str] = &[
    "btree",
    "binary-heap",
    "quad-heap",
    "skiplist",
    "hashed-wheel",
    "hierarchical-wheel",
    "kafka-wheel",
    "dense-wheel",
];

/// Deadlines are uniform in `1..=MAX_DEADLINE` ticks, the clock at 0.
const MAX_DEADLINE: u64 = 1 << 24;

/// The seed of the deadlines.
const SEED: u64 = 15;

/// Latency figures of one fill, in nanoseconds.
#[derive(Clone, Copy, Default)]
struct Figures {
    p50: u64,
    p99: u64,
    p999: u64,
    p9999: u64,
    max: u64,
    over_2us: u64,
    fill: Duration,
}

/// Fills a queue of the visited type, built with `capacity`, with one timer per deadline.
struct Fill<'a> {
    deadlines: &'a [u64],
    capacity: usize,
}

impl QueueVisitor for Fill<'_> {
    type Output = Figures;

    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Figures {
        let mut histogram =
            Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
        let mut queue: Q = variant.build(self.capacity);
        let mut over_2us = 0;
        let filling = Instant::now();
        for (value, &deadline) in self.deadlines.iter().enumerate() {
            let started = Instant::now();
            let id = queue.start(deadline, value as u64);
            let nanos = started.elapsed().as_nanos() as u64;
            black_box(id);
            histogram.saturating_record(nanos.max(1));
            over_2us += u64::from(nanos > 2_000);
        }
        let fill = filling.elapsed();
        assert_eq!(queue.len(), self.deadlines.len());
        drop(queue);
        let at = |q: f64| histogram.value_at_quantile(q);
        Figures {
            p50: at(0.5),
            p99: at(0.99),
            p999: at(0.999),
            p9999: at(0.9999),
            max: histogram.max(),
            over_2us,
            fill,
        }
    }
}

/// The command line: the shared filter, and this bench's own `--timers` and `--rounds`.
struct Options {
    filter: filter::Filter,
    timers: usize,
    rounds: usize,
}

impl Options {
    fn from_args() -> Self {
        const OWN: &[&str] = &["--timers", "--rounds"];
        let mut options = Options {
            filter: filter::Filter::from_args(OWN),
            timers: 1_000_000,
            rounds: 3,
        };
        let args: Vec<String> = std::env::args().skip(1).collect();
        for pair in args.windows(2) {
            let number = || -> usize {
                pair[1].replace('_', "").parse().unwrap_or_else(|_| {
                    panic!("{} takes a whole number, got `{}`", pair[0], pair[1])
                })
            };
            match pair[0].as_str() {
                "--timers" => options.timers = number(),
                "--rounds" => options.rounds = number().max(1),
                _ => {}
            }
        }
        options
    }
}

/// `1M`, `100k`, `1k`, or the number itself.
fn size_label(timers: usize) -> String {
    match timers {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// The median of the rounds' values of one figure.
fn median<T: Ord + Copy>(mut values: Vec<T>) -> T {
    values.sort_unstable();
    values[values.len() / 2]
}

fn main() {
    let options = Options::from_args();
    let size = size_label(options.timers);
    let chosen: Vec<(String, Variant)> = STRUCTURES
        .iter()
        .map(|name| {
            let implementation = registry::find(name).expect("a registered structure");
            (format!("growth/{size}/{name}"), Variant::of(implementation))
        })
        .filter(|(name, _)| options.filter.matches(name))
        .collect();
    if options.filter.list {
        for (name, _) in &chosen {
            println!("{name}: benchmark");
        }
        return;
    }
    if chosen.is_empty() {
        println!("growth: no benchmark matches the filter, nothing run");
        return;
    }
    let mut rng = SmallRng::seed_from_u64(SEED);
    let deadlines: Vec<u64> = (0..options.timers)
        .map(|_| rng.random_range(1..=MAX_DEADLINE))
        .collect();
    println!(
        "growth: {} starts per fill, deadlines uniform in 1..=2^24 (seed {SEED}), {} rounds in \
         rotating order; `start` latency in ns, median over rounds",
        options.timers, options.rounds
    );
    // results[structure][phase][round]; phase 0 grows from capacity 0, phase 1 is presized.
    let mut results = vec![[Vec::new(), Vec::new()]; chosen.len()];
    for round in 0..options.rounds {
        for turn in 0..chosen.len() {
            let which = (turn + round) % chosen.len();
            let variant = &chosen[which].1;
            for (phase, capacity) in [0, options.timers].into_iter().enumerate() {
                let fill = Fill {
                    deadlines: &deadlines,
                    capacity,
                };
                results[which][phase].push(registry::visit(variant, fill));
            }
        }
        eprintln!("growth: round {} of {} done", round + 1, options.rounds);
    }
    println!(
        "{:<30} {:<9} {:>7} {:>7} {:>7} {:>8} {:>10} {:>8} {:>9}",
        "name", "phase", "p50", "p99", "p99.9", "p99.99", "max", ">2us", "fill ms"
    );
    for ((name, _), phases) in chosen.iter().zip(&results) {
        for (phase, rounds) in ["grown", "presized"].iter().zip(phases) {
            let figure = |f: fn(&Figures) -> u64| median(rounds.iter().map(f).collect());
            let fill = median(rounds.iter().map(|r| r.fill).collect());
            println!(
                "{:<30} {:<9} {:>7} {:>7} {:>7} {:>8} {:>10} {:>8} {:>9.1}",
                name,
                phase,
                figure(|r| r.p50),
                figure(|r| r.p99),
                figure(|r| r.p999),
                figure(|r| r.p9999),
                figure(|r| r.max),
                figure(|r| r.over_2us),
                fill.as_secs_f64() * 1e3
            );
        }
    }
}
