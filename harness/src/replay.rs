//! `timerbench replay`: replays workload files through implementations and verifies every
//! firing against the reference model.

use crate::selection::Selection;
use crate::table::{Table, duration};
use anyhow::{Context, bail};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use timerbench_impls::registry;
use timerbench_impls::{Implementation, QueueVisitor, TimerQueue};
use timerbench_workloads::program::Firing;
use timerbench_workloads::replay::{Replay, ReplayError, expiry, replay};
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

/// Replays one program through the visited implementation.
struct ReplayThrough<'a> {
    program: &'a Program,
    log: &'a mut Vec<Firing>,
}

impl QueueVisitor for ReplayThrough<'_> {
    type Output = Result<Replay, ReplayError>;

    fn visit<Q: TimerQueue<u64>>(self, _: &'static Implementation) -> Self::Output {
        replay::<Q>(self.program, self.log)
    }
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let chosen = args.selection.names();
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
        for &name in &chosen {
            let visitor = ReplayThrough {
                program: &program,
                log: &mut log,
            };
            match registry::visit(name, visitor).expect("names are checked by clap") {
                Ok(replay) => {
                    let s = &replay.summary;
                    table.row(vec![
                        name.into(),
                        s.operations.to_string(),
                        s.started.to_string(),
                        s.fired.to_string(),
                        s.stopped.to_string(),
                        s.misses.to_string(),
                        s.pending.to_string(),
                        s.final_clock.to_string(),
                        s.digest[..16].to_string(),
                        duration(replay.elapsed),
                        "ok".into(),
                    ]);
                }
                Err(error) => {
                    table.row(vec![
                        name.into(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        "FAILED".into(),
                    ]);
                    errors.push(format!("{name}: {error}"));
                }
            }
        }
        table.row(vec![
            "(reference)".into(),
            expected.operations.to_string(),
            expected.started.to_string(),
            expected.fired.to_string(),
            expected.stopped.to_string(),
            expected.misses.to_string(),
            expected.pending.to_string(),
            expected.final_clock.to_string(),
            expected.digest[..16].to_string(),
        ]);
        println!("{}", table.render("  "));
        println!("  digest: sha256 {}", expected.digest);
        for error in &errors {
            eprintln!("timerbench: {}: {error}", path.display());
        }
        failures += errors.len();
        if let (true, Some(target)) = (errors.is_empty(), &args.expiries) {
            write_expiries(target, &program, &log)?;
            println!("  expiry log written to {}", target.display());
        }
    }
    if failures > 0 {
        eprintln!("timerbench: {failures} replay(s) disagreed with the reference model");
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
        for firing in log {
            writeln!(out, "{}", expiry(program, firing))?;
        }
        out.flush()
    })
    .with_context(|| format!("cannot write the expiry log {}", target.display()))
}
