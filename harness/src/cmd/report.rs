//! `timerbench report`: the command line of the report crate (`timerbench-report`), and
//! the catalog it needs from this build's registries (what each implementation is, what
//! each workload family models, the suite's order), which that crate does not depend on.

use crate::catalog::catalog;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use timerbench_report::Extras;
use timerbench_results::{FINDINGS_FILE, REPORT_FILE, RESULTS_FILE, newest_run, read_findings};

/// Write the HTML comparison report of one or several results folders.
#[derive(clap::Args)]
pub struct Args {
    /// Results folders of `timerbench run` (default: the newest folder under results/).
    /// With several, the report puts them side by side and gives the ratios to the first.
    /// A findings folder of `timerbench reproduce` gets its findings page
    /// (findings.html); an experiment's run in it, a report with its Findings section.
    #[arg(value_name = "RESULTS_DIR")]
    folders: Vec<PathBuf>,
    /// The HTML file to write (default: report.html in the first folder).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also write each chart as a PNG into DIR.
    #[arg(long, value_name = "DIR")]
    png: Option<PathBuf>,
    /// A folder of `timerbench live` (or its live.jsonl) for the "Live runs" section;
    /// repeatable. A live.jsonl inside a RESULTS_DIR is shown without it.
    #[arg(long = "live", value_name = "DIR")]
    live: Vec<PathBuf>,
    /// A folder of `timerbench threads` (or its threads.jsonl) for the "Threads" section;
    /// repeatable. A threads.jsonl inside a RESULTS_DIR is shown without it.
    #[arg(long = "threads", value_name = "DIR")]
    threads: Vec<PathBuf>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let folders = if args.folders.is_empty() {
        vec![newest_run(Path::new("results")).map_err(|e| {
            anyhow::anyhow!(
                "no results folder given, and {e:#} (run `timerbench run` first, or name a folder)"
            )
        })?]
    } else {
        args.folders.clone()
    };
    // A findings folder of `timerbench reproduce` (findings.json, its runs in folders of
    // their own): its findings page again.
    if let [folder] = folders.as_slice()
        && folder.join(FINDINGS_FILE).is_file()
        && !folder.join(RESULTS_FILE).exists()
    {
        let output = args
            .output
            .clone()
            .unwrap_or_else(|| folder.join("findings.html"));
        timerbench_report::write_findings_page(&read_findings(folder)?, &output)?;
        println!("findings: {}", output.display());
        return Ok(ExitCode::SUCCESS);
    }
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| folders[0].join(REPORT_FILE));
    let extras = Extras {
        live: args.live.clone(),
        threads: args.threads.clone(),
    };
    let written = timerbench_report::write_report_with(
        &folders,
        &extras,
        &output,
        args.png.as_deref(),
        &catalog(),
    )?;
    let mut besides = String::new();
    if written.live > 0 {
        besides.push_str(&format!(", {} live runs", written.live));
    }
    if written.threads > 0 {
        besides.push_str(&format!(", {} threads runs", written.threads));
    }
    println!(
        "report: {} ({} run{}, {} cells{besides}, {} charts)",
        output.display(),
        written.runs,
        if written.runs == 1 { "" } else { "s" },
        written.cells,
        written.charts
    );
    if let Some(png) = &args.png {
        println!("charts as PNG in {}", png.display());
    }
    Ok(ExitCode::SUCCESS)
}
