//! `timerbench combine RUN...`: several runs of the suite as one result, each cell's
//! figure the mean over the runs with a run-level 95% confidence interval.
//!
//! On this machine a whole run at 1M timers moves by 10–20% with the host's memory state
//! while a cell's processes agree within a few percent (METHODOLOGY.md, *A/B comparisons
//! and combined runs*): the processes within a run do not see the variation between runs,
//! so a single run's spread says nothing about it. Following Kalibera and Jones
//! (*Rigorous benchmarking in reasonable time*, ISMM 2013), the run is the top level of
//! the repetition: each run contributes one number per cell (its median ns/op over its
//! processes), and the interval is Student's t over those numbers, `mean ± t(0.975, n−1) ×
//! s / √n`. One run gives no interval, and the output says so rather than show a spread
//! that does not measure what varies.

use crate::runs::{combined_cells, read_cells};
use crate::stats::Combined;
use crate::table::{Format, table};
use anyhow::bail;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use timerbench_results::CellKey;

/// Combine several results folders: each cell's mean ns/op over the runs with a 95%
/// confidence interval (Student's t over the runs' medians; runs are the top level).
#[derive(clap::Args)]
pub struct Args {
    /// The results folders (of `timerbench run`), one per run.
    #[arg(value_name = "RUN", required = true)]
    runs: Vec<PathBuf>,
    /// `text` (aligned columns) or `markdown` (a GitHub table).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let runs = args
        .runs
        .iter()
        .map(|folder| read_cells(folder))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cells = combined_cells(&runs);
    if cells.is_empty() {
        bail!("no cell with figures in any of the {} runs", runs.len());
    }
    print!("{}", render(&cells, runs.len(), args.format));
    Ok(ExitCode::SUCCESS)
}

/// The table: one row per cell, and a closing line on what the interval means.
fn render(cells: &BTreeMap<CellKey, Combined>, runs: usize, format: Format) -> String {
    let header = [
        "workload",
        ">timers",
        "implementation",
        ">runs",
        ">mean ns/op",
        ">95% interval",
    ];
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|(key, cell)| {
            let interval = match cell.half_width {
                Some(half) => format!("±{half:.2} (±{:.1}%)", 100.0 * half / cell.mean),
                None => "none: one run".to_string(),
            };
            vec![
                key.workload.clone(),
                key.timers.to_string(),
                key.implementation.clone(),
                format!("{}/{runs}", cell.runs),
                format!("{:.2}", cell.mean),
                interval,
            ]
        })
        .collect();
    let mut text = table(&header, rows, format);
    text.push_str(&if runs == 1 {
        "\nOne run: no interval (one run does not measure the variation between runs).\n"
            .to_string()
    } else {
        format!(
            "\nThe mean over {runs} runs of each run's median ns/op; the 95% interval is \
             Student's t over the runs.\n"
        )
    });
    text
}
