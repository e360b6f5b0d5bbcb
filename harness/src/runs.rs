//! Reading a run's cells: a cell record's figures (its median ns/op and the σ from its
//! samples' MAD), and each run's cell medians for the subcommands that set several runs
//! side by side (`combine`, `compare --a/--b`, `layouts`).

use crate::stats::{Combined, combine};
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use timerbench_results::{CellKey, CellRecord, Status, latest_by_cell, read_run, spread};

/// The MAD of normally distributed samples times this estimates their standard deviation.
pub const MAD_TO_SIGMA: f64 = 1.4826;

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
