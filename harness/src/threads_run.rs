//! The core of `timerbench threads` (its flags and its run): every sharing scheme around
//! each structure at each producer count, verified, with a table and `threads.jsonl`
//! (`docs/threads.md`). It lives beside `cmd/` because `threads` and `reproduce` both run it.

use anyhow::{Context, anyhow, bail};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use timerbench_impls::Variant;
use timerbench_impls::registry::is_peer;
use timerbench_results::threads::append_threads_record;
use timerbench_results::threads::{Latency, THREADS_FILE, THREADS_SCHEMA, ThreadsRecord};
use timerbench_threads::SchemeKind;
use timerbench_threads::driver::Outcome;
use timerbench_threads::streams::split;
use timerbench_workloads::families::{self, GenSpec};

use crate::table::Table;

/// Timers started and stopped from several threads: each sharing scheme around each
/// structure, at each producer count, measured and verified against the reference model.
#[derive(clap::Args)]
pub struct Args {
    /// Sharing schemes, comma-separated: global-lock, owner, per-thread, locked-shards.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "global-lock,owner,per-thread,locked-shards"
    )]
    scheme: Vec<String>,
    /// Structures (NAME or NAME:key=value), repeatable or comma-separated; outside peers
    /// are refused (they may hold thread-bound state).
    #[arg(
        long = "impl",
        value_delimiter = ',',
        default_value = "binary-heap,hierarchical-wheel,incremental-wheel,netty-wheel"
    )]
    implementations: Vec<String>,
    /// Producer thread counts, comma-separated; counts whose threads (with the ticker and
    /// owner) exceed the cores are run and labelled oversubscribed.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    threads: Vec<usize>,
    /// The workload family split across the producers (start-stop or keepalive suit it).
    #[arg(long, default_value = "start-stop")]
    family: String,
    /// The family's timers: the resident population for start-stop, connections for
    /// keepalive.
    #[arg(long, default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1..))]
    timers: u64,
    /// The family's operations (start/stop pairs for start-stop, ticks for keepalive).
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    ops: u64,
    /// A family parameter, KEY=VALUE (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
    /// The share of stops issued by another producer than the timer's starter, 0 to 1.
    #[arg(long, default_value_t = 0.5)]
    cross: f64,
    /// Queues of the locked-shards scheme.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    shards: u64,
    /// The seed of the workload and of the choice of crossing stops.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The folder to append threads.jsonl to (created if missing).
    #[arg(long, value_name = "DIR", default_value = "results/threads")]
    out: PathBuf,
}

/// What the command line asks for, checked.
struct Plan {
    schemes: Vec<SchemeKind>,
    variants: Vec<Variant>,
    threads: Vec<usize>,
    params: Vec<(String, String)>,
}

fn plan(args: &Args) -> anyhow::Result<Plan> {
    let schemes = args
        .scheme
        .iter()
        .map(|s| SchemeKind::parse(s.trim()).map_err(|e| anyhow!("--scheme: {e}")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let variants = args
        .implementations
        .iter()
        .map(|name| {
            let variant = Variant::parse(name.trim()).map_err(|e| anyhow!("--impl: {e}"))?;
            if is_peer(variant.label()) {
                bail!("--impl {name}: outside peers are not run from several threads (docs/threads.md)");
            }
            Ok(variant)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(bad) = args.threads.iter().find(|&&t| t == 0 || t > 1024) {
        bail!("--threads {bad}: a producer count is 1 to 1024");
    }
    if !(0.0..=1.0).contains(&args.cross) {
        bail!("--cross {}: a share is 0 to 1", args.cross);
    }
    let params = args
        .params
        .iter()
        .map(|text| match text.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
            _ => Err(anyhow!("--param {text}: not KEY=VALUE")),
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Plan {
        schemes,
        variants,
        threads: args.threads.clone(),
        params,
    })
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let plan = plan(args)?;
    let spec = GenSpec {
        timers: args.timers,
        ops: Some(args.ops),
        seed: args.seed,
        params: plan.params.clone(),
    };
    let workload = families::generate(&args.family, &spec).map_err(|e| anyhow!("--family: {e}"))?;
    let name = families::workload_name(&args.family, &spec);
    let splits = plan
        .threads
        .iter()
        .map(|&threads| split(&workload, threads, args.cross, args.seed).map(|s| (threads, s)))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| anyhow!("{name}: {e}"))?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let terminal = std::io::stderr().is_terminal();
    let total = plan.threads.len() * plan.variants.len() * plan.schemes.len();
    let (mut table, mut unverified, mut done) = (results_table(), 0, 0);
    for (threads, streams) in &splits {
        let threads = *threads;
        for variant in &plan.variants {
            for &scheme in &plan.schemes {
                done += 1;
                let helpers = scheme.helper_threads();
                let over = threads + helpers > cores;
                progress(
                    &format!(
                        "[{done}/{total}] {} x {} x {threads} threads{}",
                        scheme.name(),
                        variant.label(),
                        if over { " (oversubscribed)" } else { "" }
                    ),
                    terminal,
                );
                let outcome =
                    timerbench_threads::run(variant, scheme, args.shards as usize, streams);
                let shards = shards_of(scheme, args.shards as usize, threads);
                let record = ThreadsRecord {
                    schema: THREADS_SCHEMA,
                    scheme: scheme.name().to_string(),
                    shards,
                    implementation: variant.label().to_string(),
                    threads,
                    helper_threads: helpers,
                    cores,
                    oversubscribed: over,
                    workload: name.clone(),
                    seed: args.seed,
                    cross_share: args.cross,
                    operations: outcome.operations,
                    cross_stops: streams.cross_stops,
                    wall_ns: outcome.wall_ns,
                    ops_per_second: outcome.operations as f64
                        / (outcome.wall_ns.max(1) as f64 / 1e9),
                    latency: per_thread_latency(&outcome)?,
                    cross_stop: Latency::of(&outcome.cross_stop)?,
                    peak_queued: outcome.finished.peak_queued,
                    peak_queued_bytes: outcome.finished.peak_queued_bytes,
                    owner_cpu_share: outcome
                        .finished
                        .owner_cpu_ns
                        .map(|ns| ns as f64 / outcome.wall_ns.max(1) as f64),
                    verified: outcome.verdict.is_ok(),
                    offence: outcome.verdict.as_ref().err().map(|o| o.to_string()),
                };
                unverified += usize::from(!record.verified);
                table.row(table_row(&record, &outcome)?);
                append_threads_record(&args.out, &record)?;
            }
        }
    }
    if terminal {
        eprintln!();
    }
    println!(
        "{name}, {}% of stops from another thread; {cores} cores:",
        args.cross * 100.0
    );
    println!("{}", table.render("  "));
    println!(
        "(over): producers plus the ticker (and the owner) exceed the {cores} cores; \
         such figures measure the scheduler as much as the scheme (docs/threads.md)"
    );
    println!("records: {}", args.out.join(THREADS_FILE).display());
    if unverified > 0 {
        eprintln!(
            "timerbench: {unverified} runs unverified (their first offending timer is in the record)"
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The progress line: rewritten in place on a terminal, one line per run otherwise.
fn progress(line: &str, terminal: bool) {
    if terminal {
        eprint!("\r{line}\x1b[K");
    } else {
        eprintln!("{line}");
    }
}

fn shards_of(scheme: SchemeKind, shards: usize, threads: usize) -> usize {
    match scheme {
        SchemeKind::LockedShards => shards,
        SchemeKind::PerThread => threads,
        SchemeKind::GlobalLock | SchemeKind::Owner => 1,
    }
}

fn per_thread_latency(outcome: &Outcome) -> anyhow::Result<Vec<BTreeMap<String, Latency>>> {
    outcome
        .per_thread
        .iter()
        .map(|t| {
            Ok(BTreeMap::from([
                ("start".to_string(), Latency::of(&t.start)?),
                ("stop".to_string(), Latency::of(&t.stop)?),
                ("restart".to_string(), Latency::of(&t.restart)?),
            ]))
        })
        .collect()
}

fn results_table() -> Table {
    Table::new(&[
        "scheme",
        "structure",
        ">threads",
        ">Mops/s",
        ">start p99",
        ">stop p99",
        ">restart p99",
        ">xstop p50",
        ">xstop p99",
        ">owner cpu",
        "verified",
    ])
}

/// p99 of one call kind over all producers, in human units, or `-` when there was none.
fn p99_over_threads(
    outcome: &Outcome,
    kind: fn(&timerbench_threads::driver::ThreadLatency) -> &hdrhistogram::Histogram<u64>,
) -> String {
    let mut all = outcome.per_thread[0].start.clone();
    all.reset();
    for thread in &outcome.per_thread {
        let _ = all.add(kind(thread));
    }
    nanoseconds(&all, 0.99)
}

/// A quantile of a histogram of nanoseconds, in the harness's human units (ns, us, ms, s)
/// as every other table prints durations, or `-` when the histogram is empty.
fn nanoseconds(histogram: &hdrhistogram::Histogram<u64>, quantile: f64) -> String {
    if histogram.is_empty() {
        "-".to_string()
    } else {
        crate::table::duration(std::time::Duration::from_nanos(
            histogram.value_at_quantile(quantile),
        ))
    }
}

fn table_row(record: &ThreadsRecord, outcome: &Outcome) -> anyhow::Result<Vec<String>> {
    let threads = if record.oversubscribed {
        format!("{} (over)", record.threads)
    } else {
        record.threads.to_string()
    };
    Ok(vec![
        record.scheme.clone(),
        record.implementation.clone(),
        threads,
        format!("{:.2}", record.ops_per_second / 1e6),
        p99_over_threads(outcome, |t| &t.start),
        p99_over_threads(outcome, |t| &t.stop),
        p99_over_threads(outcome, |t| &t.restart),
        nanoseconds(&outcome.cross_stop, 0.5),
        nanoseconds(&outcome.cross_stop, 0.99),
        record
            .owner_cpu_share
            .map_or("-".to_string(), |share| format!("{:.0}%", share * 100.0)),
        match &record.offence {
            None => "yes".to_string(),
            Some(offence) => format!("NO: {offence}"),
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_print_in_human_units_not_raw_nanoseconds() {
        let mut histogram = hdrhistogram::Histogram::<u64>::new(3).expect("a histogram");
        histogram.record(19_611_647).expect("in range");
        let text = nanoseconds(&histogram, 0.99);
        assert!(text.ends_with(" ms"), "{text}");
        assert!(text.len() <= 8, "{text}");
        let empty = hdrhistogram::Histogram::<u64>::new(3).expect("a histogram");
        assert_eq!(nanoseconds(&empty, 0.99), "-");
    }
}
