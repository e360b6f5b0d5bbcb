//! `timerbench report`: one self-contained HTML file comparing the implementations, from
//! one or several results folders of `timerbench run`.
//!
//! The file opens from disk in any browser: the charts are inline SVG drawn with plotters,
//! the style is inline CSS, and nothing (script, font, image) is fetched from anywhere.
//! `--png DIR` also writes each chart as a PNG, drawn with plotters' bitmap backend and the
//! DejaVu font embedded in the binary, so no system font library is needed.
//!
//! The pieces:
//!
//! - [`data`]: reading the folders (with a clear error naming the file and line of anything
//!   malformed) and the figures computed from the records: the best per cell, the rankings
//!   by geometric mean, the ratios between runs, the latency percentile curves;
//! - [`charts`]: the charts, one description drawn on either backend;
//! - [`html`]: the page.
//!
//! The report is built in memory and written through a temporary file renamed into place,
//! so a failure never leaves a half-written report.

mod charts;
mod data;
mod html;
#[cfg(test)]
mod tests;

use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Write the HTML comparison report of one or several results folders.
#[derive(clap::Args)]
pub struct Args {
    /// Results folders of `timerbench run` (default: the newest folder under results/).
    /// With several, the report puts them side by side and gives the ratios to the first.
    #[arg(value_name = "RESULTS_DIR")]
    folders: Vec<PathBuf>,
    /// The HTML file to write (default: report.html in the first folder).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also write each chart as a PNG into DIR.
    #[arg(long, value_name = "DIR")]
    png: Option<PathBuf>,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let folders = if args.folders.is_empty() {
        vec![newest_results_folder(Path::new("results"))?]
    } else {
        args.folders.clone()
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| folders[0].join("report.html"));
    let written = write(&folders, &output, args.png.as_deref())?;
    println!(
        "report: {} ({} run{}, {} cells, {} charts)",
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

/// What [`write_report`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Results folders in the report.
    pub runs: usize,
    /// Cell records in them (the latest of each cell).
    pub cells: usize,
    /// Charts drawn.
    pub charts: usize,
}

/// Reads the results `folders` and writes their report to `output` (atomically), and each
/// chart as a PNG into `png` when given. The first folder is the baseline of the ratios
/// between runs.
///
/// Fails, writing nothing, when a folder is missing, has no `results.jsonl`, or holds a
/// malformed record (the error names the file and line).
pub fn write_report(folders: &[PathBuf], output: &Path, png: Option<&Path>) -> anyhow::Result<()> {
    write(folders, output, png).map(drop)
}

/// [`write_report`], saying what it wrote.
pub fn write(folders: &[PathBuf], output: &Path, png: Option<&Path>) -> anyhow::Result<Written> {
    if folders.is_empty() {
        bail!("no results folder to report on");
    }
    charts::register_fonts()?;
    let runs = folders
        .iter()
        .enumerate()
        .map(|(index, folder)| data::load_run(folder, index))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let model = data::Model::new(runs)?;
    let page = html::render(&model)?;
    if let Some(dir) = png {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the PNG folder {}", dir.display()))?;
        for chart in &page.charts {
            let path = dir.join(format!("{}.png", chart.id));
            chart
                .png(&path)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the folder {}", parent.display()))?;
    }
    timerbench_workloads::writer::write_atomically(output, |file| {
        file.write_all(page.html.as_bytes())
    })
    .with_context(|| format!("cannot write {}", output.display()))?;
    Ok(Written {
        runs: model.runs.len(),
        cells: model.runs.iter().map(|r| r.records.len()).sum(),
        charts: page.charts.len(),
    })
}

/// The newest run folder under `root`: the one whose results changed last (by name when
/// that ties), skipping hidden folders such as the workload cache `.cache`.
pub fn newest_results_folder(root: &Path) -> anyhow::Result<PathBuf> {
    let entries = std::fs::read_dir(root).with_context(|| {
        format!(
            "no results folder given and cannot read {} (run `timerbench run` first, or name a folder)",
            root.display()
        )
    })?;
    let mut newest: Option<(std::time::SystemTime, String, PathBuf)> = None;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", root.display()))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !path.is_dir() {
            continue;
        }
        let results = path.join("results.jsonl");
        let modified = std::fs::metadata(&results)
            .or_else(|_| std::fs::metadata(&path))
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        let candidate = (modified, name, path);
        if newest
            .as_ref()
            .is_none_or(|best| (&candidate.0, &candidate.1) > (&best.0, &best.1))
        {
            newest = Some(candidate);
        }
    }
    match newest {
        Some((_, _, path)) => Ok(path),
        None => bail!(
            "no results folder given and none under {} (run `timerbench run` first, or name a folder)",
            root.display()
        ),
    }
}
