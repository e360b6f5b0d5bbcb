//! `timerbench gen`: writes a workload of a standard family.

use anyhow::{Context, anyhow};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use timerbench_workloads::families::{self, FAMILIES, GenSpec};
use timerbench_workloads::{compile, writer};

/// Generate a workload of a standard family (see `timerbench list`).
#[derive(clap::Args)]
pub struct Args {
    /// The family, e.g. `hold` or `keepalive`.
    #[arg(value_name = "FAMILY")]
    family: String,
    /// The number of timers (resident timers, connections, requests: see `timerbench list`).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    timers: u64,
    /// The number of operations or steps, as the family defines it (default: the family's).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    ops: Option<u64>,
    /// The seed of the generator's random numbers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A family parameter, KEY=VALUE (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = parse_param)]
    params: Vec<(String, String)>,
    /// The file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
}

fn parse_param(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if families::find(&args.family).is_none() {
        let known: Vec<_> = FAMILIES.iter().map(|f| f.info().name).collect();
        return Err(anyhow!(
            "unknown family `{}` (known: {})",
            args.family,
            known.join(", ")
        ));
    }
    let spec = GenSpec {
        timers: args.timers,
        ops: args.ops,
        seed: args.seed,
        params: args.params.clone(),
    };
    let started = Instant::now();
    let workload = families::generate(&args.family, &spec)?;
    // A generator bug must not reach a file: the reference model checks it first.
    let program = compile(&workload, &args.output)
        .map_err(|e| anyhow!("the generated workload is invalid (a bug in the family): {e}"))?;
    writer::write_file(&args.output, &workload)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    let s = &program.summary;
    println!(
        "{}: {} operations: {} starts, {} firings, {} stops, {} pending at the end \
         (generated in {:.2} s)",
        args.output.display(),
        workload.ops.len(),
        s.started,
        s.fired,
        s.stopped,
        s.pending,
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
