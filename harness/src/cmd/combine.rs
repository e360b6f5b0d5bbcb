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

use crate::cmd::compare::{Format, figures};
use crate::stats::t_975;
use crate::table::Table;
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use timerbench_results::{CellKey, latest_by_cell, read_run};

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

/// One run's cells: the median ns/op of each cell with figures.
pub struct RunCells {
    pub folder: PathBuf,
    pub medians: BTreeMap<CellKey, f64>,
}

/// Reads the results folder `folder`: the latest record of each cell, its median ns/op
/// where it has figures.
pub fn read_cells(folder: &Path) -> anyhow::Result<RunCells> {
    let files = read_run(folder).with_context(|| format!("run {}", folder.display()))?;
    let latest = latest_by_cell(files.records.into_iter().map(|line| line.record));
    let medians = latest
        .into_iter()
        .filter_map(|(key, record)| figures(&record).map(|f| (key, f.median)))
        .collect();
    Ok(RunCells {
        folder: folder.to_path_buf(),
        medians,
    })
}

/// The mean of the runs' figures for one cell and its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Combined {
    /// Runs with figures for the cell.
    pub runs: usize,
    pub mean: f64,
    /// The sample standard deviation over the runs (`None` with one run).
    pub deviation: Option<f64>,
    /// Half the width of the 95% interval of the mean (`None` with one run).
    pub half_width: Option<f64>,
}

/// The mean of `values` (one per run) and its Student's t 95% interval.
pub fn combine(values: &[f64]) -> Combined {
    let runs = values.len();
    let mean = values.iter().sum::<f64>() / runs as f64;
    if runs < 2 {
        return Combined {
            runs,
            mean,
            deviation: None,
            half_width: None,
        };
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (runs - 1) as f64;
    let deviation = variance.sqrt();
    Combined {
        runs,
        mean,
        deviation: Some(deviation),
        half_width: Some(t_975(runs as f64 - 1.0) * deviation / (runs as f64).sqrt()),
    }
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

/// Every cell with figures in at least one run, combined over the runs that have it.
pub fn combined_cells(runs: &[RunCells]) -> BTreeMap<CellKey, Combined> {
    let mut values: BTreeMap<CellKey, Vec<f64>> = BTreeMap::new();
    for run in runs {
        for (key, &median) in &run.medians {
            values.entry(key.clone()).or_default().push(median);
        }
    }
    values
        .into_iter()
        .map(|(key, values)| (key, combine(&values)))
        .collect()
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

/// `rows` under `header` (a column named `>...` is right-aligned) as aligned text or a
/// GitHub Markdown table.
pub fn table(header: &[&str], rows: Vec<Vec<String>>, format: Format) -> String {
    match format {
        Format::Text => {
            let mut table = Table::new(header);
            for row in rows {
                table.row(row);
            }
            table.render("") + "\n"
        }
        Format::Markdown => {
            let names: Vec<&str> = header.iter().map(|h| h.trim_start_matches('>')).collect();
            let rule: Vec<&str> = header
                .iter()
                .map(|h| if h.starts_with('>') { "---:" } else { "---" })
                .collect();
            let mut text = format!("| {} |\n| {} |\n", names.join(" | "), rule.join(" | "));
            for row in rows {
                text.push_str(&format!("| {} |\n", row.join(" | ")));
            }
            text
        }
    }
}
