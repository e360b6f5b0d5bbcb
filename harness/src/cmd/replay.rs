//! `timerbench replay`: replays workload files through implementations and verifies every
//! firing against the reference model.

use crate::selection::Selection;
use crate::table::{Table, duration};
use anyhow::{Context, bail};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use timerbench_impls::registry;
use timerbench_impls::{QueueVisitor, TimerQueue, Variant};
use timerbench_workloads::program::Firing;
use timerbench_workloads::reach::first_beyond;
use timerbench_workloads::reference::Summary;
use timerbench_workloads::replay::{BoundedReplay, Replay, expiry, replay, replay_within_bound};
use timerbench_workloads::{Program, load, writer};

/// Replay workload files through the implementations and verify them against the
/// reference model.
#[derive(clap::Args)]
pub struct Args {
    /// Workload files in the v1 format.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    selection: Selection,
    /// Write the expiry log (`NOW ID DEADLINE` lines, sorted) to PATH; needs one FILE and
    /// one --impl. Written only if the replay verifies.
    #[arg(long, value_name = "PATH")]
    expiries: Option<PathBuf>,
}

/// What one implementation made of one workload.
enum Outcome {
    /// Exact, and its log equals the model's.
    Exact(Replay),
    /// Approximate, and within its declared bound.
    Bounded(BoundedReplay),
    /// The workload reaches beyond its declared range: not run.
    Refused(String),
    /// It disagreed with the model, or broke its bound, or panicked.
    Failed(String),
}

/// Replays one program through the visited implementation: the range check, then the
/// exact or the bounded verification, as the queue declares.
struct ReplayThrough<'a> {
    program: &'a Program,
    log: &'a mut Vec<Firing>,
}

impl QueueVisitor for ReplayThrough<'_> {
    type Output = Outcome;

    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Outcome {
        let program = self.program;
        let log = self.log;
        let capacity = program.peak_pending as usize;
        let (precision, range) = match catch_panic(|| variant.declarations()) {
            Ok(declared) => (declared.precision, declared.range),
            Err(panic) => return Outcome::Failed(panic),
        };
        if !program.reach.within(&range)
            && let Some(beyond) = first_beyond(program, &range)
        {
            return Outcome::Refused(format!(
                "not run: line {} asks for {}",
                beyond.line, beyond.what
            ));
        }
        let result = catch_panic(|| {
            if precision.is_exact() {
                replay(variant.build::<Q>(capacity), program, log)
                    .map(Outcome::Exact)
                    .unwrap_or_else(|e| Outcome::Failed(e.to_string()))
            } else {
                replay_within_bound(variant.build::<Q>(capacity), program, log)
                    .map(Outcome::Bounded)
                    .unwrap_or_else(|e| Outcome::Failed(format!("beyond its declared bound: {e}")))
            }
        });
        result.unwrap_or_else(Outcome::Failed)
    }
}

/// Runs `f`, turning a panic into its message (no backtrace on standard error).
fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    result.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        format!("panicked: {message}")
    })
}

/// A summary as a table row: `name`, the counts, the digest's start, the time, `verdict`.
fn summary_row(name: &str, s: &Summary, elapsed: Option<Duration>, verdict: &str) -> Vec<String> {
    vec![
        name.into(),
        s.operations.to_string(),
        s.started.to_string(),
        s.fired.to_string(),
        s.stopped.to_string(),
        s.misses.to_string(),
        s.pending.to_string(),
        s.final_clock.to_string(),
        s.digest[..16].to_string(),
        elapsed.map(duration).unwrap_or_default(),
        verdict.into(),
    ]
}

/// A row with no figures: the name and the verdict.
fn verdict_only(name: &str, verdict: &str) -> Vec<String> {
    let mut row = vec![name.to_string()];
    row.extend(std::iter::repeat_n(String::new(), 9));
    row.push(verdict.into());
    row
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let chosen = args.selection.variants();
    if args.expiries.is_some() && (chosen.len() != 1 || args.files.len() != 1) {
        bail!("--expiries needs exactly one FILE and one --impl (the log of which replay?)");
    }
    let mut failures = 0;
    let mut log = Vec::new();
    for path in &args.files {
        let loading = Instant::now();
        let program = load(path)?;
        let loaded = loading.elapsed();
        let name = program.metadata.get("name").unwrap_or("(unnamed)");
        println!(
            "{}: {name}: {} operations, {} timer IDs, {} firings (read and checked in {})",
            path.display(),
            program.steps.len(),
            program.keys.len(),
            program.expected.len(),
            duration(loaded),
        );
        for (key, value) in program.metadata.unknown() {
            println!("  @{key} {value}");
        }
        let expected = &program.summary;
        let mut table = Table::new(&[
            "implementation",
            ">operations",
            ">started",
            ">fired",
            ">stopped",
            ">misses",
            ">pending",
            ">final clock",
            "digest",
            ">replay",
            "verified",
        ]);
        let mut errors = Vec::new();
        let mut refusals = Vec::new();
        let mut lateness = Vec::new();
        for variant in &chosen {
            let label = variant.label();
            let visitor = ReplayThrough {
                program: &program,
                log: &mut log,
            };
            match registry::visit(variant, visitor) {
                Outcome::Exact(replay) => {
                    table.row(summary_row(
                        label,
                        &replay.summary,
                        Some(replay.elapsed),
                        "ok",
                    ));
                }
                Outcome::Bounded(replay) => {
                    let row = summary_row(label, &replay.summary, Some(replay.elapsed), "in bound");
                    table.row(row);
                    lateness.push(format!("{label}: {}", replay.lateness.describe()));
                }
                Outcome::Refused(why) => {
                    table.row(verdict_only(label, "UNSUPPORTED"));
                    refusals.push(format!("{label}: {why}"));
                }
                Outcome::Failed(error) => {
                    table.row(verdict_only(label, "FAILED"));
                    errors.push(format!("{label}: {error}"));
                }
            }
        }
        let mut reference = summary_row("(reference)", expected, None, "");
        reference.truncate(9);
        table.row(reference);
        println!("{}", table.render("  "));
        println!("  digest: sha256 {}", expected.digest);
        for line in &lateness {
            println!("  lateness, {line}");
        }
        for refusal in &refusals {
            eprintln!("timerbench: {}: {refusal}", path.display());
        }
        for error in &errors {
            eprintln!("timerbench: {}: {error}", path.display());
        }
        failures += errors.len() + refusals.len();
        if let (true, true, Some(target)) = (errors.is_empty(), refusals.is_empty(), &args.expiries)
        {
            write_expiries(target, &program, &log)?;
            println!("  expiry log written to {}", target.display());
        }
    }
    if failures > 0 {
        eprintln!(
            "timerbench: {failures} replay(s) disagreed with the reference model, broke their \
             declared bound, or were refused"
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the verified, sorted log: one `NOW ID DEADLINE` line per firing.
fn write_expiries(
    target: &std::path::Path,
    program: &Program,
    log: &[Firing],
) -> anyhow::Result<()> {
    writer::write_atomically(target, |file| {
        let mut out = BufWriter::new(file);
        // Each operation's firings are sorted; an `n` that stays put can add firings at the
        // clock of the operation before it, so the whole log is put in the format's order.
        let mut sorted: Vec<_> = log.iter().map(|firing| expiry(program, firing)).collect();
        sorted.sort_unstable_by_key(|e| (e.now, e.deadline, e.id));
        for line in sorted {
            writeln!(out, "{line}")?;
        }
        out.flush()
    })
    .with_context(|| format!("cannot write the expiry log {}", target.display()))
}
