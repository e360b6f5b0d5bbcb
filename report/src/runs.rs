//! The results folders of a report, read and checked, and the figures of one run at a
//! glance: a cell's record, the best speed at a size, a cell's ratio to it.

use crate::figures::{
    decode_histogram, describe, figure, measured_under_load, ns_per_op, process_spread,
};
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::PathBuf;
use timerbench_results::counts::Metric;
use timerbench_results::shards::RunGroup;
use timerbench_results::{
    CellKey, CellRecord, Environment, FLOOR, FileWorkload, RESULTS_FILE, RecordLine, is_floor,
    latest_by_cell, read_workload_files,
};

/// One results folder.
pub struct Run {
    /// Where it was read from.
    pub folder: PathBuf,
    /// `A`, `B`, ...: its short name in column headers.
    pub label: String,
    /// The folder's own name, `<date>-<host>-<git rev>` for a run's own folder.
    pub name: String,
    /// `environment.json`, when the folder has one.
    pub environment: Option<Environment>,
    /// The latest record of each cell.
    pub records: BTreeMap<CellKey, CellRecord>,
    /// The run's workload files (`workloads.json`), when it had any.
    pub files: Vec<FileWorkload>,
}

impl Run {
    /// The record of `workload` at `timers` for `implementation`.
    pub fn cell(&self, workload: &str, timers: u64, implementation: &str) -> Option<&CellRecord> {
        self.records.get(&CellKey {
            workload: workload.to_string(),
            timers,
            implementation: implementation.to_string(),
        })
    }

    /// The smallest figure in `metric` (ns/op, or a count per line) at a size, among the
    /// verified cells of Rust structures (the floor, which is never verified, is not among
    /// them, nor an engine, whose figure may be in another unit: results/FORMAT.md,
    /// `engine`).
    pub fn best_by(&self, workload: &str, timers: u64, metric: Metric) -> Option<f64> {
        self.records
            .values()
            .filter(|r| r.key.workload == workload && r.key.timers == timers)
            .filter(|r| !is_floor(&r.key.implementation) && !r.is_engine())
            .filter_map(|r| figure(r, metric))
            .min_by(f64::total_cmp)
    }

    /// The yardstick of the rankings at a size: the smallest ns/op among the verified
    /// exact cells, so that exact structures are ranked among themselves and an
    /// approximate one's ratio says what its slack buys against them; the smallest of any
    /// cell where no exact one verified.
    pub fn best_exact(&self, workload: &str, timers: u64) -> Option<f64> {
        self.best_exact_by(workload, timers, Metric::Ns)
    }

    /// [`Run::best_exact`] in `metric`: the fewest of a count per line, for a count.
    pub fn best_exact_by(&self, workload: &str, timers: u64, metric: Metric) -> Option<f64> {
        self.records
            .values()
            .filter(|r| r.key.workload == workload && r.key.timers == timers)
            .filter(|r| !is_floor(&r.key.implementation) && !r.is_approximate() && !r.is_engine())
            .filter_map(|r| figure(r, metric))
            .min_by(f64::total_cmp)
            .or_else(|| self.best_by(workload, timers, metric))
    }

    /// The floor's ns/op at a size, when the run has it (`timerbench run --floor`).
    pub fn floor(&self, workload: &str, timers: u64) -> Option<f64> {
        ns_per_op(self.cell(workload, timers, FLOOR)?)
    }

    /// A cell's ns/op as a multiple of the floor's at its size.
    pub fn ratio_to_floor(&self, record: &CellRecord) -> Option<f64> {
        if is_floor(&record.key.implementation) {
            return None;
        }
        Some(ns_per_op(record)? / self.floor(&record.key.workload, record.key.timers)?)
    }

    /// Whether the run measured the floor anywhere.
    pub fn has_floor(&self) -> bool {
        self.records.keys().any(|k| is_floor(&k.implementation))
    }

    /// The ratio of a cell to the best at its size: the fastest exact cell
    /// ([`Run::best_exact`]), the yardstick of the summary's rankings too, so that "best"
    /// means one thing on the whole page and an approximate cell's ratio says what its
    /// slack buys against it.
    pub fn ratio_to_best(&self, record: &CellRecord) -> Option<f64> {
        let ns = ns_per_op(record)?;
        Some(ns / self.best_exact(&record.key.workload, record.key.timers)?)
    }

    /// The processes that took each cell's samples: what `environment.json` says, else the
    /// most any record says, at least 1 (records older than the field had one).
    pub fn processes(&self) -> u32 {
        let recorded = self.environment.as_ref().map_or(0, |e| e.processes);
        if recorded > 0 {
            return recorded;
        }
        self.records
            .values()
            .filter_map(|r| r.throughput.as_ref())
            .map(|t| t.processes)
            .max()
            .unwrap_or(0)
            .max(1)
    }

    /// Whether any verified cell's samples came from more than one process: only then do
    /// the tables show the spread between processes.
    pub fn several_processes(&self) -> bool {
        self.records
            .values()
            .filter_map(process_spread)
            .any(|s| s.processes > 1)
    }

    /// The verified cells, and of them those measured under load.
    pub fn under_load(&self) -> (usize, usize) {
        let verified = self.records.values().filter(|r| ns_per_op(r).is_some());
        let loaded = verified.clone().filter(|r| measured_under_load(r)).count();
        (verified.count(), loaded)
    }

    /// `A (folder name)`.
    pub fn title(&self) -> String {
        format!("{} ({})", self.label, self.name)
    }
}

/// Reads the results folder `folder`, the `index`-th of the report ([`load_group`] of the
/// folder alone).
#[cfg(test)]
pub fn load_run(folder: &std::path::Path, index: usize) -> anyhow::Result<Run> {
    let group = RunGroup {
        folders: vec![folder.to_path_buf()],
        environment: None,
    };
    load_group(&group, index)
}

/// Reads the run `group`, the `index`-th of the report: one folder, or the shards of one
/// plan merged ([`RunGroup::read`]). Besides what the results crate checks (the folder,
/// every line, every version), the figures the report draws must make sense: a record
/// whose histogram does not decode is as malformed as a line that does not parse.
pub fn load_group(group: &RunGroup, index: usize) -> anyhow::Result<Run> {
    let merged = group.read()?;
    for (folder, RecordLine { line, record }) in &merged.records {
        let results = folder.join(RESULTS_FILE);
        for (kind, latency) in &record.latency {
            decode_histogram(&latency.histogram_v2).with_context(|| {
                format!(
                    "{}:{line}: {}: the `{kind}` latency histogram",
                    results.display(),
                    describe(&record.key)
                )
            })?;
        }
        if let Some(lateness) = &record.lateness {
            decode_histogram(&lateness.histogram_v2).with_context(|| {
                format!(
                    "{}:{line}: {}: the lateness histogram",
                    results.display(),
                    describe(&record.key)
                )
            })?;
        }
    }
    // A workload file is in the `workloads.json` of each shard that measured it: once here.
    let mut files_of_run: Vec<FileWorkload> = Vec::new();
    for folder in &group.folders {
        for file in read_workload_files(folder)? {
            if !files_of_run.iter().any(|f| f.name == file.name) {
                files_of_run.push(file);
            }
        }
    }
    let folder = group.first();
    let mut name = folder
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| folder.display().to_string());
    if group.folders.len() > 1 {
        name = format!("{name} and {} more shards", group.folders.len() - 1);
    }
    Ok(Run {
        folder: folder.to_path_buf(),
        label: run_label(index),
        name,
        environment: merged.environment,
        records: latest_by_cell(merged.records.into_iter().map(|(_, line)| line.record)),
        files: files_of_run,
    })
}

/// `A`, `B`, ..., `Z`, `AA`, ...
fn run_label(index: usize) -> String {
    let mut label = String::new();
    let mut n = index + 1;
    while n > 0 {
        let digit = (n - 1) % 26;
        label.insert(0, char::from(b'A' + digit as u8));
        n = (n - 1) / 26;
    }
    label
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_are_labelled_like_spreadsheet_columns() {
        let labels: Vec<String> = [0, 1, 25, 26, 27]
            .into_iter()
            .map(super::run_label)
            .collect();
        assert_eq!(labels, ["A", "B", "Z", "AA", "AB"]);
    }
}
