//! The timerbench report: one self-contained HTML file comparing the implementations, from
//! one or several results folders of `timerbench run`.
//!
//! The file opens from disk in any browser: the charts are inline SVG drawn with plotters,
//! the style is inline CSS, and nothing (script, font, image) is fetched from anywhere.
//! Each chart can also be written as a PNG, drawn with plotters' bitmap backend and the
//! DejaVu font embedded in the binary, so no system font library is needed.
//!
//! This crate reads results through `timerbench-results` only: it knows nothing of the
//! harness, the implementations or the workload generators. What it says about them
//! beyond the records (descriptions, orders) arrives as a [`Catalog`].
//!
//! The pieces:
//!
//! - `runs`: reading the folders (any error names the file and line) and one run's
//!   figures; `figures`: what the report reads off one record; `implementations`: one
//!   per variant label, ordered and coloured by its base (`style`: the colours, dashes and
//!   markers that tell 15 and more lines apart); `model`: everything the page
//!   shows, gathered once; `ranking`: the rankings by geometric mean and the ratios
//!   between runs; `hosts`: runs of one plan on several hosts, each ranked, and the
//!   pairs whose order flips between them;
//! - `charts`: the charts, one description drawn on either backend;
//! - `page`: the page, one module per section;
//! - `findings`: the findings of `timerbench reproduce` (`findings.html`, and the report's
//!   "Findings" section when a folder holds `findings.json`);
//! - `extras`: the records besides the runs' (`live.jsonl`, `threads.jsonl`), found from
//!   the folders given and the runs' own; `live` and `threads`: those records read, for
//!   the "Live runs" and "Threads" sections; `runtimes`: the rows of the deployed
//!   runtimes' servers beside timerbench's loop, which `timerbench live --tcp` and
//!   `reproduce` read too.
//!
//! **Templates.** The page is written with maud, not askama. Both compile templates and
//! escape what they splice in; maud's templates are Rust (`html!`), so a section is a
//! function over the model that the compiler checks whole (types, borrows, exhaustive
//! matches), with no template files to keep in step with the structs they read, and the
//! page stays one self-contained file without a build step. askama's Jinja-like files
//! would suit markup edited by people who do not write Rust, which this page does not
//! have. Text goes in escaped by default; the two exceptions, the style sheet and the
//! charts' SVG, are each inserted in one place with the reason it is safe.
//!
//! The report is built in memory and written through a temporary file renamed into place,
//! so a failure never leaves a half-written report.

pub mod catalog;
mod charts;
mod extras;
mod figures;
mod findings;
mod hosts;
mod implementations;
mod live;
mod model;
mod page;
mod ranking;
mod runs;
pub mod runtimes;
mod style;
#[cfg(test)]
mod tests;
mod threads;

pub use catalog::{Catalog, Described, FamilyInfo, ParamInfo};
pub use charts::register_fonts;
pub use extras::Extras;
pub use figures::thousands;
pub use findings::write_findings_page;
pub use hosts::{Flip, HostRankings, HostsView, flips, rank_hosts_by};
pub use page::SECTIONS;

/// What the engine badge means: the legend line under a table that shows one.
pub const ENGINE_LEGEND: &str = "engine: another runtime's timers run through the engine \
     protocol (docs/engines.md), not a Rust structure. A replay engine's log is verified \
     like a Rust cell's; a micro-only engine (go-runtime, jdk-scheduled-executor, \
     netty-hashed-wheel) runs its own start+stop pairs on the real clock, unverified, its \
     figure ns per pair / 2: per line after the fill, the fill not timed \
     (results/FORMAT.md, `engine`)";

pub use ranking::{
    FamilyRanking, LatenessFigures, RankEntry, Ranking, RunRankings, SlowestCall, rank_group_by,
    rank_run, rank_run_by,
};

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use timerbench_results::live::LIVE_FILE;
use timerbench_results::threads::THREADS_FILE;

/// What [`write_report`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// Results folders in the report.
    pub runs: usize,
    /// Cell records in them (the latest of each cell).
    pub cells: usize,
    /// Charts drawn.
    pub charts: usize,
    /// Live runs shown (records of the `live.jsonl` files).
    pub live: usize,
    /// Threads runs shown (records of the `threads.jsonl` files).
    pub threads: usize,
}

/// Reads the results `folders` and writes their report to `output` (atomically), and each
/// chart as a PNG into `png` when given. The first folder is the baseline of the ratios
/// between runs; `catalog` describes the implementations and workloads.
///
/// Fails, writing nothing, when a folder is missing, has no `results.jsonl`, or holds a
/// malformed record or one of a schema version this build does not read (the error names
/// the file and line).
///
/// A `live.jsonl` or `threads.jsonl` in a results folder is shown too, as with
/// [`write_report_with`].
pub fn write_report(
    folders: &[PathBuf],
    output: &Path,
    png: Option<&Path>,
    catalog: &Catalog,
) -> anyhow::Result<Written> {
    write_report_with(folders, &Extras::default(), output, png, catalog)
}

/// [`write_report`], with the live and threads records of `extras` and of any results
/// folder that holds them in sections of their own ("Live runs", "Threads").
///
/// Fails, writing nothing, as [`write_report`] does, and also when a folder of `extras`
/// is missing or lacks its file, or a record in one is malformed (the error names the file
/// and line).
pub fn write_report_with(
    folders: &[PathBuf],
    extras: &Extras,
    output: &Path,
    png: Option<&Path>,
    catalog: &Catalog,
) -> anyhow::Result<Written> {
    if folders.is_empty() {
        bail!("no results folder to report on");
    }
    charts::register_fonts()?;
    // The shards of one plan are one run; each host's its own ([`timerbench_results::shards`]).
    let runs = timerbench_results::shards::group_runs(folders)?
        .iter()
        .enumerate()
        .map(|(index, group)| runs::load_group(group, index))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut model = model::Model::new(runs, catalog)?;
    model.findings = findings::for_folder(&folders[0])?;
    let live_files = extras::files(&extras.live, folders, LIVE_FILE, "timerbench live")?;
    model.live = live_files
        .iter()
        .map(|file| live::load(file))
        .collect::<anyhow::Result<_>>()?;
    let threads_files =
        extras::files(&extras.threads, folders, THREADS_FILE, "timerbench threads")?;
    model.threads = threads_files
        .iter()
        .map(|file| threads::load(file))
        .collect::<anyhow::Result<_>>()?;
    let page = page::render(&model)?;
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
    timerbench_results::write_atomically(output, page.html.as_bytes())?;
    Ok(Written {
        runs: model.runs.len(),
        cells: model.runs.iter().map(|r| r.records.len()).sum(),
        charts: page.charts.len(),
        live: model.live.iter().map(|s| s.records.len()).sum(),
        threads: model.threads.iter().map(|s| s.runs.len()).sum(),
    })
}
