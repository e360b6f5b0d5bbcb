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
//!
//! With `--metric` and a count (`instructions`, `est-cycles`, ...), each run contributes
//! its count per counted line instead: a deterministic replay's count is the same in every
//! run of the same binary, so the interval is 0 unless the runs counted different code.

use crate::runs::{NO_COUNTS, combined_cells, per_line_text, read_runs_by};
use crate::stats::Combined;
use crate::table::{Format, table};
use anyhow::bail;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use timerbench_results::CellKey;
use timerbench_results::counts::Metric;

/// Combine several results folders: each cell's mean ns/op over the runs with a 95%
/// confidence interval (Student's t over the runs' medians; runs are the top level).
#[derive(clap::Args)]
pub struct Args {
    /// The results folders (of `timerbench run`), one per run; the shards of a run
    /// (`run --shard K/N`) are read as that one run.
    #[arg(value_name = "RUN", required = true)]
    runs: Vec<PathBuf>,
    /// `text` (aligned columns) or `markdown` (a GitHub table).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// What each run's cell contributes: `ns` (its median ns/op) or a count per counted
    /// line of a `timerbench run --counts` run: `instructions`, `est-cycles`, `ll-misses`,
    /// `d1-misses`, `branch-mispredicts`. Runs counted on different simulated machines are
    /// refused.
    #[arg(long, default_value_t = Metric::Ns)]
    metric: Metric,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let runs = read_runs_by(&args.runs, args.metric)?;
    let cells = combined_cells(&runs);
    if cells.is_empty() {
        if args.metric.is_count() {
            bail!(
                "--metric {}: no cell with counts in any of the {} runs ({NO_COUNTS})",
                args.metric,
                runs.len()
            );
        }
        bail!("no cell with figures in any of the {} runs", runs.len());
    }
    print!("{}", render(&cells, runs.len(), args.format, args.metric));
    let without: usize = runs.iter().map(|r| r.without_counts).sum();
    if without > 0 {
        println!(
            "{without} verified cell{} of the runs without counts, left out ({NO_COUNTS}).",
            if without == 1 { "" } else { "s" }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The table: one row per cell, and a closing line on what the interval means.
fn render(
    cells: &BTreeMap<CellKey, Combined>,
    runs: usize,
    format: Format,
    metric: Metric,
) -> String {
    let mean = format!(">mean {}", metric.unit());
    let header = [
        "workload",
        ">timers",
        "implementation",
        ">runs",
        mean.as_str(),
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
                per_line_text(cell.mean, metric),
                interval,
            ]
        })
        .collect();
    let mut text = table(&header, rows, format);
    text.push_str(&if runs == 1 {
        "\nOne run: no interval (one run does not measure the variation between runs).\n"
            .to_string()
    } else {
        let figure = if metric.is_count() {
            format!(
                "count of {} per counted line (exact: runs of the same code agree to the \
                 last digit)",
                metric.name()
            )
        } else {
            "median ns/op".to_string()
        };
        format!(
            "\nThe mean over {runs} runs of each run's {figure}; the 95% interval is \
             Student's t over the runs.\n"
        )
    });
    text
}
