//! `timerbench compare A B`: two results folders side by side, cell by cell, in the
//! terminal or as a Markdown table to paste into an issue (after rebar's `cmp`).
//!
//! A row is a cell (workload, timers, implementation label) that has figures (status `ok`)
//! in both folders: A's median ns/op, B's, and B/A; and, when the records have it, the
//! ratio of the cell's memory probe in B over A (`run/memory_probe.rs`): far from 1, the
//! machine's memory answered the two runs differently, and the column says so beside the
//! ratio (near 1 does not clear a 1M cell: the probe does not see how much of a shared
//! cache a run kept). Nothing is dropped silently: the cells
//! only in A, only in B, or without figures in either are counted and named after the
//! table, and the last line says how many of the rows are within ±5%.
//!
//! **Beyond noise.** A fixed percentage would call a noisy cell's wobble a change and miss
//! a steady cell's real one, so a row is marked when its difference exceeds the noise of
//! its own two cells, estimated from their samples:
//!
//! `|median B − median A| > K × √(σA² + σB²)`, with `K` = [`K`] = 3 and
//! `σ = 1.4826 × MAD` ([`MAD_TO_SIGMA`]) of the cell's `throughput.ns_per_op.samples`
//! (the median absolute deviation, scaled to estimate a standard deviation while ignoring
//! outliers). `√(σA² + σB²)` is the spread of the difference of one sample of each, so a
//! marked difference stands three of those apart: the two cells' samples barely overlap.
//! The medians are steadier than single samples, which makes the rule conservative: what
//! it marks is a change, not luck. A cell with fewer than two samples has no spread to
//! judge by: its row is marked `?`, never as a change.
//!
//! **Counts** (`--metric instructions`, `est-cycles`, ...: a `timerbench run --counts`
//! run's counts per counted line). A count of a deterministic replay does not move from
//! run to run, so the noise rule, which is about time, does not apply: a row states B/A
//! and B − A per line exactly, and any difference is a change (`more`, `fewer`). A cell
//! without counts reads as without figures, with where counts come from; two runs counted
//! on different simulated machines are refused.

use anyhow::{Context, bail};
use machine::cell_memory_probe;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use timerbench_report::thousands;
use timerbench_results::shards::{RunGroup, group_runs};
use timerbench_results::{CellKey, CellRecord, Status, latest_by_cell};

pub use crate::runs::{Figures, MAD_TO_SIGMA, figures};
use crate::runs::{check_geometries, figures_by, lacks_counts, run_geometry};
pub use crate::table::{Format, markdown_table};
use timerbench_results::counts::{CacheGeometry, Metric};

mod lists;
mod machine;
mod render;
mod runs;

/// How many combined standard deviations apart two medians must be to be beyond noise.
pub const K: f64 = timerbench_results::stats::NOISE_K;
/// The band of the last line's count: `K of N cells within ±5%`.
const WITHIN: f64 = 0.05;

/// Compare two results folders cell by cell: median ns/op in each and the ratio B/A.
///
/// A row is a cell (workload, timers, implementation) with figures in both folders. It is
/// marked `slower` or `faster` (and coloured on a terminal) when the difference is beyond
/// the noise of its two cells: |median B − median A| > 3 × √(σA² + σB²), where σ = 1.4826 ×
/// the MAD of the cell's ns/op samples; `?` when a cell has fewer than two samples. Cells
/// only in A, only in B, or without figures (status not ok) are listed after the table;
/// the last line counts the rows within ±5%. Exits 1 when the folders share no cell.
#[derive(clap::Args)]
pub struct Args {
    /// The baseline results folder (of `timerbench run`).
    #[arg(value_name = "A", required_unless_present = "runs_a")]
    a: Option<PathBuf>,
    /// The results folder compared with it.
    #[arg(value_name = "B", required_unless_present = "runs_a")]
    b: Option<PathBuf>,
    /// Several runs of the baseline (with `--b`): each cell's mean over runs, and
    /// "differs" only where the runs' 95% interval of B/A excludes 1 (`compare/runs.rs`).
    /// The shards of one plan are one run; with one run a side, of which one in shards,
    /// the two are compared cell by cell as A B are.
    #[arg(long = "a", value_name = "RUN", num_args = 1.., requires = "runs_b", conflicts_with_all = ["a", "b"])]
    runs_a: Vec<PathBuf>,
    /// Several runs compared with the `--a` runs.
    #[arg(long = "b", value_name = "RUN", num_args = 1.., requires = "runs_a")]
    runs_b: Vec<PathBuf>,
    /// `text` (aligned columns) or `markdown` (a GitHub table, for an issue).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Only this workload, or this workload family (repeatable).
    #[arg(long = "workload", value_name = "NAME")]
    workloads: Vec<String>,
    /// Only this implementation: a variant label (`hashed-wheel:slots=65536`) or a
    /// registry name, which takes all its variants (repeatable).
    #[arg(long = "impl", value_name = "NAME")]
    implementations: Vec<String>,
    /// Colour the rows beyond noise (text format): red slower, green faster.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
    /// What a cell is compared by: `ns` (its median ns/op, judged against its noise) or a
    /// count per counted line of `timerbench run --counts` runs: `instructions`,
    /// `est-cycles`, `ll-misses`, `d1-misses`, `branch-mispredicts` (exact: any change is
    /// a change). Runs counted on different simulated machines are refused.
    #[arg(long, default_value_t = Metric::Ns)]
    metric: Metric,
    /// With a count metric: a change of at most this many percent is not marked (the
    /// test command's regression check reads counts against its baseline with 1, so that
    /// a library's code path that differs by machine, say glibc's memcpy, is not read as
    /// the structure's change). Default 0: any change is marked.
    #[arg(long, default_value_t = 0.0, value_name = "PERCENT")]
    tolerance: f64,
}

/// When to colour.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When standard output is a terminal and NO_COLOR is not set.
    Auto,
    /// Always, e.g. through `less -R`.
    Always,
    /// Never.
    Never,
}

/// One folder: its cells (the latest record of each) in the order first measured.
struct Side {
    folder: PathBuf,
    records: BTreeMap<CellKey, CellRecord>,
    order: Vec<CellKey>,
    /// The simulated machine of its counts, when it has any.
    geometry: Option<CacheGeometry>,
}

/// Reads one side: a folder, or the shards of one plan merged into one run.
fn load(folders: &[PathBuf], side: &str) -> anyhow::Result<Side> {
    let groups = group_runs(folders).with_context(|| side.to_string())?;
    let [group] = groups.as_slice() else {
        bail!(
            "{side}: {} runs given where one run is compared (give the shards of one plan,              or compare several runs with --a RUN... --b RUN...)",
            groups.len()
        );
    };
    load_group(group)
}

fn load_group(group: &RunGroup) -> anyhow::Result<Side> {
    let folder = group.first();
    let lines: Vec<_> = group
        .read()?
        .records
        .into_iter()
        .map(|(_, line)| line)
        .collect();
    let mut order: Vec<CellKey> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for line in &lines {
        if seen.insert(line.record.key.clone()) {
            order.push(line.record.key.clone());
        }
    }
    let records = latest_by_cell(lines.into_iter().map(|line| line.record));
    let geometry = run_geometry(folder, records.values())?;
    Ok(Side {
        folder: folder.to_path_buf(),
        records,
        order,
        geometry,
    })
}

/// What a row says of its difference.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Within the noise of the two cells.
    Within,
    /// B is slower, beyond noise.
    Slower,
    /// B is faster, beyond noise.
    Faster,
    /// A cell has fewer than two samples: no spread to judge by.
    Unknown,
}

/// A cell's status for the list of cells without figures: its status word, or that an
/// `ok` record holds no usable median, or no counts for a count metric.
fn figures_word(record: &CellRecord, metric: Metric) -> &'static str {
    match (record.status, figures_by(record, metric)) {
        (Status::Ok, None) if lacks_counts(record, metric) => "ok but without counts",
        (Status::Ok, None) if metric.is_count() => "ok but without a count per line",
        (Status::Ok, None) => "ok but without a median ns/op",
        (status, _) => status.as_str(),
    }
}

/// The module's rule: whether B's median differs from A's beyond their noise.
pub fn judge(a: Figures, b: Figures) -> Verdict {
    let (Some(sa), Some(sb)) = (a.sigma, b.sigma) else {
        return Verdict::Unknown;
    };
    let noise = K * (sa * sa + sb * sb).sqrt();
    let difference = b.median - a.median;
    if difference.abs() <= noise {
        Verdict::Within
    } else if difference > 0.0 {
        Verdict::Slower
    } else {
        Verdict::Faster
    }
}

/// A count's rule: exact, so any change beyond `tolerance` (a fraction) is one.
fn judge_count(a: f64, b: f64, tolerance: f64) -> Verdict {
    if (b / a - 1.0).abs() <= tolerance || a == b {
        Verdict::Within
    } else if b > a {
        Verdict::Slower
    } else {
        Verdict::Faster
    }
}

/// One row of the table.
struct Row {
    key: CellKey,
    a: f64,
    b: f64,
    verdict: Verdict,
    /// B's memory probe over A's, each the median over the cell's processes, when both
    /// records have one: how differently the machine's shared cache answered the cell.
    memory: Option<f64>,
    /// Whether the cell is an engine's (another runtime's timers), in either run.
    engine: bool,
}

impl Row {
    /// B/A; 1 for two equal figures, so that two counts of 0 read as the same.
    fn ratio(&self) -> f64 {
        if self.a == self.b {
            1.0
        } else {
            self.b / self.a
        }
    }
}

/// Everything the output shows.
struct Comparison {
    rows: Vec<Row>,
    only_a: Vec<CellKey>,
    only_b: Vec<CellKey>,
    /// In both, without figures in one or both: with what A and B hold.
    without: Vec<(CellKey, &'static str, &'static str)>,
    /// What the figures are.
    metric: Metric,
    /// With a count metric, the change (a fraction) up to which a row is not marked.
    tolerance: f64,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if !args.runs_a.is_empty() {
        let a = group_runs(&args.runs_a).context("--a")?;
        let b = group_runs(&args.runs_b).context("--b")?;
        // The shards of one run a side: those two runs cell by cell, as `compare A B`.
        if let ([a], [b]) = (a.as_slice(), b.as_slice())
            && (a.is_merged() || b.is_merged())
        {
            return compare_sides(args, load_group(a)?, load_group(b)?);
        }
        return runs::run(&args.runs_a, &args.runs_b, args.format, args.metric);
    }
    let (Some(a), Some(b)) = (&args.a, &args.b) else {
        bail!("give two results folders A B, or several runs with --a RUN... --b RUN...");
    };
    let a = load(std::slice::from_ref(a), "A")?;
    let b = load(std::slice::from_ref(b), "B")?;
    compare_sides(args, a, b)
}

/// Compares the runs `a` and `b` cell by cell (the module's rule).
fn compare_sides(args: &Args, a: Side, b: Side) -> anyhow::Result<ExitCode> {
    check_geometries(
        args.metric,
        &[(&a.folder, a.geometry), (&b.folder, b.geometry)],
    )?;
    let metric = args.metric;
    let selected = |key: &CellKey, record: &CellRecord| {
        (args.workloads.is_empty()
            || args
                .workloads
                .iter()
                .any(|w| *w == key.workload || *w == record.family))
            && (args.implementations.is_empty()
                || args
                    .implementations
                    .iter()
                    .any(|i| *i == key.implementation || i == record.base_implementation()))
    };
    check_filters(args, &a, &b)?;

    let mut comparison = Comparison {
        rows: Vec::new(),
        only_a: Vec::new(),
        only_b: Vec::new(),
        without: Vec::new(),
        metric,
        tolerance: args.tolerance / 100.0,
    };
    for key in &a.order {
        let record_a = &a.records[key];
        if !selected(key, record_a) {
            continue;
        }
        let Some(record_b) = b.records.get(key) else {
            comparison.only_a.push(key.clone());
            continue;
        };
        match (figures_by(record_a, metric), figures_by(record_b, metric)) {
            (Some(fa), Some(fb)) => comparison.rows.push(Row {
                key: key.clone(),
                a: fa.median,
                b: fb.median,
                verdict: if metric.is_count() {
                    judge_count(fa.median, fb.median, comparison.tolerance)
                } else {
                    judge(fa, fb)
                },
                // The memory probe explains a time, not a count.
                memory: cell_memory_probe(record_a)
                    .zip(cell_memory_probe(record_b))
                    .map(|(a, b)| b / a)
                    .filter(|_| !metric.is_count()),
                engine: record_a.is_engine() || record_b.is_engine(),
            }),
            _ => comparison.without.push((
                key.clone(),
                figures_word(record_a, metric),
                figures_word(record_b, metric),
            )),
        }
    }
    comparison.only_b = b
        .order
        .iter()
        .filter(|key| !a.records.contains_key(*key) && selected(key, &b.records[*key]))
        .cloned()
        .collect();

    let shared = comparison.rows.len() + comparison.without.len();
    if metric.is_count() && comparison.rows.is_empty() && shared > 0 {
        bail!(
            "--metric {metric}: {} and {} share {}, none with counts in both ({})",
            a.folder.display(),
            b.folder.display(),
            lists::count(shared),
            crate::runs::NO_COUNTS
        );
    }
    if shared == 0 {
        let filtered = if args.workloads.is_empty() && args.implementations.is_empty() {
            ""
        } else {
            " of those selected by --workload and --impl"
        };
        bail!(
            "{} and {} share no cell (workload, timers, implementation){filtered}: A has {}, B \
             has {}, none in both; compare runs of the same workloads and sizes",
            a.folder.display(),
            b.folder.display(),
            comparison.only_a.len(),
            comparison.only_b.len()
        );
    }
    let colour = args.format == Format::Text
        && match args.color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        };
    print!(
        "{}",
        render::render(&comparison, &a, &b, args.format, colour)
    );
    Ok(ExitCode::SUCCESS)
}

/// A `--workload` or `--impl` that names nothing in either folder is a typo, not an empty
/// comparison: one message naming the flag.
fn check_filters(args: &Args, a: &Side, b: &Side) -> anyhow::Result<()> {
    let records = || a.records.values().chain(b.records.values());
    for name in &args.workloads {
        if !records().any(|r| r.key.workload == *name || r.family == *name) {
            bail!(
                "--workload {name}: no cell of {} or {} is of that workload or family",
                a.folder.display(),
                b.folder.display()
            );
        }
    }
    for name in &args.implementations {
        if !records().any(|r| r.key.implementation == *name || r.base_implementation() == name) {
            bail!(
                "--impl {name}: no cell of {} or {} is of that implementation",
                a.folder.display(),
                b.folder.display()
            );
        }
    }
    Ok(())
}
/// Nanoseconds per operation, about four significant digits: `12.35`, `123.5`, `12,386`.
pub fn ns(value: f64) -> String {
    if value >= 10_000.0 {
        thousands(value.round() as u64)
    } else if value >= 1000.0 {
        format!("{value:.0}")
    } else if value >= 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(median: f64, sigma: Option<f64>) -> Figures {
        Figures { median, sigma }
    }

    #[test]
    fn a_difference_is_judged_against_the_two_cells_noise() {
        // Noise 3 x sqrt(0.3^2 + 0.4^2) = 1.5.
        assert_eq!(
            judge(cell(10.0, Some(0.3)), cell(11.4, Some(0.4))),
            Verdict::Within
        );
        assert_eq!(
            judge(cell(10.0, Some(0.3)), cell(11.6, Some(0.4))),
            Verdict::Slower
        );
        assert_eq!(
            judge(cell(10.0, Some(0.3)), cell(8.4, Some(0.4))),
            Verdict::Faster
        );
        assert_eq!(
            judge(cell(10.0, None), cell(20.0, Some(0.1))),
            Verdict::Unknown
        );
        assert_eq!(
            judge(cell(10.0, Some(0.0)), cell(10.0, Some(0.0))),
            Verdict::Within
        );
    }

    #[test]
    fn a_count_change_is_marked_beyond_the_tolerance_only() {
        assert_eq!(judge_count(100.0, 100.0, 0.0), Verdict::Within);
        assert_eq!(judge_count(100.0, 100.5, 0.0), Verdict::Slower);
        assert_eq!(judge_count(100.0, 100.5, 0.01), Verdict::Within);
        assert_eq!(judge_count(100.0, 98.0, 0.01), Verdict::Faster);
    }

    #[test]
    fn numbers_read_at_a_glance() {
        assert_eq!(ns(7.3731), "7.37");
        assert_eq!(ns(117.7355), "117.7");
        assert_eq!(ns(1234.4), "1234");
        assert_eq!(ns(1_910_387.7), "1,910,388");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn markdown_tables_escape_pipes_and_align_numbers() {
        let table = markdown_table(&["name", ">n"], &[vec!["a|b".into(), "1".into()]]);
        assert_eq!(table, "| name | n |\n| --- | ---: |\n| a\\|b | 1 |\n");
    }
}
