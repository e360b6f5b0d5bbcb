//! `timerbench suite-costs RESULTS_DIR` (hidden): the seconds each cell of a run took,
//! as the table `workloads/suites/standard-costs.csv` that `run`'s time left starts from.
//!
//! A suite's cells differ in cost by four orders of magnitude and by workload as much as
//! by size (at 1M, keepalive took twelve times purgatory's time over as many lines), so
//! nothing read off the first cells of a run predicts the rest. A run of the suite does:
//! the cells' costs relative to one another hold from one run to the next, while the
//! machine's speed moves them all together, and that factor `run` learns as it goes
//! (`run_core/estimate.rs`). Regenerate the table after a change that moves the costs (a
//! structure added, a suite size changed) from a default run:
//! `timerbench suite-costs results/<run> > workloads/suites/standard-costs.csv`.

use anyhow::Context;
use std::path::PathBuf;
use std::process::ExitCode;
use timerbench_results::{latest_by_cell, read_run};

/// Print the seconds each cell of a run took, as `workload,timers,implementation,seconds`.
#[derive(clap::Args)]
pub struct Args {
    /// A results folder of `timerbench run`.
    #[arg(value_name = "RESULTS_DIR")]
    folder: PathBuf,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let files = read_run(&args.folder).with_context(|| format!("run {}", args.folder.display()))?;
    let revision = files
        .environment
        .as_ref()
        .map_or_else(|| "unknown".to_string(), |e| e.git_revision.clone());
    let cells = latest_by_cell(files.records.into_iter().map(|line| line.record));
    println!(
        "# The seconds each cell of the default suite took (every process included), from the \
         run of revision {revision}: `timerbench suite-costs RESULTS_DIR` writes this table."
    );
    println!("workload,timers,implementation,seconds");
    for (key, record) in cells {
        if record.engine.is_some() {
            continue;
        }
        println!(
            "{},{},{},{:.2}",
            key.workload, key.timers, key.implementation, record.elapsed_seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}
