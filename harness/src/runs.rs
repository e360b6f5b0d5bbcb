//! Reading a run's cells: a cell record's figures (its median ns/op and the σ from its
//! samples' MAD), and each run's cell medians for the subcommands that set several runs
//! side by side (`combine`, `compare --a/--b`, `layouts`).

use crate::stats::{Combined, combine};
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use timerbench_results::counts::{CacheGeometry, Metric};
use timerbench_results::shards::{RunGroup, group_runs};
use timerbench_results::{CellKey, CellRecord, Status, latest_by_cell, spread};

pub use timerbench_results::stats::MAD_TO_SIGMA;

/// A cell's figures: its median ns/op and the σ estimated from its samples' MAD (when it
/// has at least two samples); `None` for a cell that did not verify.
#[derive(Clone, Copy, Debug)]
pub struct Figures {
    pub median: f64,
    pub sigma: Option<f64>,
}

/// The figures of `record`, when it verified and has a usable median.
pub fn figures(record: &CellRecord) -> Option<Figures> {
    if record.status != Status::Ok {
        return None;
    }
    let ns = &record.throughput.as_ref()?.ns_per_op;
    if !(ns.median.is_finite() && ns.median > 0.0) {
        return None;
    }
    let sigma = (ns.samples.len() >= 2).then(|| MAD_TO_SIGMA * spread(ns.samples.clone()).mad);
    Some(Figures {
        median: ns.median,
        sigma,
    })
}

/// A cell's figures in `metric`: [`figures`] for the time; for a count, the count per
/// counted line ([`Metric::per_line`]) of a verified cell, with a σ of 0, since a count of
/// a deterministic replay does not move: any difference is a change. `None` for a cell
/// that did not verify or has no counts (a timed run's cells), which a reader shows as
/// missing, never as 0.
pub fn figures_by(record: &CellRecord, metric: Metric) -> Option<Figures> {
    if !metric.is_count() {
        return figures(record);
    }
    if record.status != Status::Ok {
        return None;
    }
    let value = metric.per_line(record)?;
    value.is_finite().then_some(Figures {
        median: value,
        sigma: Some(0.0),
    })
}

/// A figure in `metric` for a table: a time with two decimals as `combine` always showed
/// it; a count per line with four significant digits at least, since a count's small
/// change is exact and must show.
pub fn per_line_text(value: f64, metric: Metric) -> String {
    if !metric.is_count() || value >= 100.0 {
        format!("{value:.2}")
    } else if value >= 1.0 {
        format!("{value:.3}")
    } else {
        format!("{value:.4}")
    }
}

/// What a reader says of the cells without counts, after its table: where the counts
/// come from.
pub const NO_COUNTS: &str = "no counts: run `timerbench run --counts`";

/// Whether `record` verified but has no figure in `metric`: a count metric over a cell
/// that was timed, not counted.
pub fn lacks_counts(record: &CellRecord, metric: Metric) -> bool {
    metric.is_count() && record.status == Status::Ok && record.counts.is_none()
}

/// A simulated machine as a message names it: `I1 32768,8,64, D1 32768,8,64, LL
/// 8388608,16,64` (size in bytes, associativity, line bytes, as Valgrind's flags take them).
pub fn describe_geometry(geometry: &CacheGeometry) -> String {
    format!("I1 {}, D1 {}, LL {}", geometry.i1, geometry.d1, geometry.ll)
}

/// The simulated machine of the counted cells of `records` (of the folder `folder`),
/// `None` when none has counts. Counts of two machines are not comparable, so a folder
/// whose cells model different ones is refused, naming both.
pub fn run_geometry<'r>(
    folder: &Path,
    records: impl IntoIterator<Item = &'r CellRecord>,
) -> anyhow::Result<Option<CacheGeometry>> {
    let mut found: Option<(CacheGeometry, &CellKey)> = None;
    for record in records {
        let Some(counts) = &record.counts else {
            continue;
        };
        match found {
            None => found = Some((counts.cache, &record.key)),
            Some((geometry, key)) if geometry != counts.cache => anyhow::bail!(
                "{}: its counts are of two simulated machines, {} ({} {} {}) and {} ({} {} \
                 {}); counts of different machines are not compared",
                folder.display(),
                describe_geometry(&geometry),
                key.workload,
                key.timers,
                key.implementation,
                describe_geometry(&counts.cache),
                record.key.workload,
                record.key.timers,
                record.key.implementation,
            ),
            Some(_) => {}
        }
    }
    Ok(found.map(|(geometry, _)| geometry))
}

/// Refuses runs whose counts model different machines (for a count metric): one message
/// naming both runs and both geometries. Runs without counts are not in the way here;
/// their cells read as missing.
pub fn check_geometries(
    metric: Metric,
    runs: &[(&Path, Option<CacheGeometry>)],
) -> anyhow::Result<()> {
    if !metric.is_count() {
        return Ok(());
    }
    let mut counted = runs.iter().filter_map(|(f, g)| Some((f, (*g)?)));
    let Some((first, geometry)) = counted.next() else {
        return Ok(());
    };
    if let Some((other, different)) = counted.find(|(_, g)| *g != geometry) {
        anyhow::bail!(
            "--metric {metric}: {} and {} counted on different simulated machines: {} has \
             {}, {} has {}; counts of different machines are not compared (count both with \
             the same cache geometry)",
            first.display(),
            other.display(),
            first.display(),
            describe_geometry(&geometry),
            other.display(),
            describe_geometry(&different)
        );
    }
    Ok(())
}

/// One run's cells: the figure (median ns/op, or count per line) of each cell with one.
pub struct RunCells {
    pub folder: PathBuf,
    pub medians: BTreeMap<CellKey, f64>,
    /// The simulated machine of its counts, when it has any.
    pub geometry: Option<CacheGeometry>,
    /// Verified cells without a figure in the metric read: timed, not counted.
    pub without_counts: usize,
}

/// Reads the results folder `folder`: the latest record of each cell, its median ns/op
/// where it has figures.
pub fn read_cells(folder: &Path) -> anyhow::Result<RunCells> {
    read_cells_by(folder, Metric::Ns)
}

/// Reads the results folder `folder`: the latest record of each cell, its figure in
/// `metric` where it has one ([`figures_by`]).
pub fn read_cells_by(folder: &Path, metric: Metric) -> anyhow::Result<RunCells> {
    let group = RunGroup {
        folders: vec![folder.to_path_buf()],
        environment: None,
    };
    read_group_by(&group, metric)
}

/// Reads the run `group` (one folder, or the shards of one plan merged) as
/// [`read_cells_by`] reads a folder.
pub fn read_group_by(group: &RunGroup, metric: Metric) -> anyhow::Result<RunCells> {
    let folder = group.first();
    let merged = group
        .read()
        .with_context(|| format!("run {}", group.describe()))?;
    let latest = latest_by_cell(merged.records.into_iter().map(|(_, line)| line.record));
    let geometry = run_geometry(folder, latest.values())?;
    let without_counts = latest.values().filter(|r| lacks_counts(r, metric)).count();
    let medians = latest
        .into_iter()
        .filter_map(|(key, record)| figures_by(&record, metric).map(|f| (key, f.median)))
        .collect();
    Ok(RunCells {
        folder: folder.to_path_buf(),
        medians,
        geometry,
        without_counts,
    })
}

/// Reads the runs `folders` in `metric` (the shards of a plan as one run: [`group_runs`]),
/// refusing runs counted on different machines.
pub fn read_runs_by(folders: &[PathBuf], metric: Metric) -> anyhow::Result<Vec<RunCells>> {
    let runs = group_runs(folders)?
        .iter()
        .map(|group| read_group_by(group, metric))
        .collect::<anyhow::Result<Vec<_>>>()?;
    check_run_geometries(metric, &runs)?;
    Ok(runs)
}

/// [`check_geometries`] over read runs.
pub fn check_run_geometries<'r>(
    metric: Metric,
    runs: impl IntoIterator<Item = &'r RunCells>,
) -> anyhow::Result<()> {
    let geometries: Vec<(&Path, Option<CacheGeometry>)> = runs
        .into_iter()
        .map(|r| (r.folder.as_path(), r.geometry))
        .collect();
    check_geometries(metric, &geometries)
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
