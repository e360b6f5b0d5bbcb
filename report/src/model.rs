//! Everything the report shows, gathered once from the runs and the catalog: the
//! implementations (with their colours), the workloads (with their descriptions, sizes and
//! operation kinds), the cells that did not verify.
//!
//! Conventions:
//!
//! - A *cell* is one (workload, timers, implementation); a *size* of a workload is one
//!   (workload, timers), where the implementations compete. An implementation is a
//!   variant label (`hashed-wheel:slots=65536`): each label is a competitor of its own.
//! - Speed is the median nanoseconds per operation line of the timed replays. Only cells
//!   that verified (`ok`) have figures; the others are listed with their reason, the
//!   unsupported ones (beyond the implementation's declared range) apart from failures.
//! - An *operation family* is a workload family (`hold`, `keepalive`, ...): the workloads
//!   of one family exercise the same mix of operations.

use crate::catalog::Catalog;
use crate::figures::latency;
use crate::implementations::{Implementation, implementations};
use crate::runs::Run;
use anyhow::anyhow;
use std::collections::{BTreeMap, BTreeSet};
use timerbench_results::{CLOCK_KINDS, CellRecord, FILE_FAMILY, FileWorkload, KINDS, Status};

/// A workload parameter as the report shows it.
#[derive(Debug, Clone)]
pub struct Param {
    /// The key.
    pub name: String,
    /// The value the records carry, or the family's default.
    pub value: String,
    /// Whether that is the family's default.
    pub default: bool,
    /// What it means (empty when the family does not declare it).
    pub help: String,
}

/// A workload as the report shows it.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The suite workload's name.
    pub name: String,
    /// Its family.
    pub family: String,
    /// What real system it models (the family's description), when the family is known.
    pub models: Option<String>,
    /// The family's shape.
    pub shape: Option<String>,
    /// What one tick is.
    pub tick: Option<String>,
    /// The parameters: the family's, then any others the records carry.
    pub params: Vec<Param>,
    /// `--ops`, when set.
    pub ops: Option<u64>,
    /// Every size any run measured, ascending.
    pub sizes: Vec<u64>,
    /// The command that regenerates the workload, per size.
    pub generators: BTreeMap<u64, String>,
    /// The latency kinds any verified cell recorded, in [`KINDS`] order.
    pub kinds: Vec<String>,
    /// The advance-like kind of its tables: the first of [`CLOCK_KINDS`] it has.
    pub clock_kind: Option<String>,
    /// For a workload file (`timerbench run --file`): its metadata and shape, from the
    /// first run whose `workloads.json` has it.
    pub file: Option<FileWorkload>,
}

/// Everything the report shows.
pub struct Model {
    /// The results folders, the first being the baseline of the ratios between runs.
    pub runs: Vec<Run>,
    /// Every implementation (variant label) in any run: the registry's first, in its
    /// order, then the peers in theirs, then names the catalog does not know; each base's
    /// variants after it ([`crate::implementations`]).
    pub implementations: Vec<Implementation>,
    /// Every workload in any run: the standard suite's order, then the others by name.
    pub workloads: Vec<Workload>,
    /// The findings of `timerbench reproduce` about the first run, when it is an
    /// experiment's run (or a folder holding `findings.json`): the page's Findings section.
    pub findings: Option<timerbench_results::Findings>,
    /// The `live.jsonl` files given or found beside the runs: the page's Live section.
    pub live: Vec<crate::live::LiveSource>,
    /// The `threads.jsonl` files given or found beside the runs: the Threads section.
    pub threads: Vec<crate::threads::ThreadsSource>,
}

impl Model {
    /// Gathers the implementations and workloads of `runs`, described by `catalog`.
    pub fn new(runs: Vec<Run>, catalog: &Catalog) -> anyhow::Result<Model> {
        let records = || runs.iter().flat_map(|r| r.records.values());
        let implementations = implementations(records(), catalog);

        let mut present: BTreeMap<String, Vec<&CellRecord>> = BTreeMap::new();
        for record in records() {
            present
                .entry(record.key.workload.clone())
                .or_default()
                .push(record);
        }
        let mut order: Vec<String> = catalog
            .suite_order
            .iter()
            .filter(|name| present.contains_key(*name))
            .cloned()
            .collect();
        let others: Vec<String> = present
            .keys()
            .filter(|name| !order.contains(name))
            .cloned()
            .collect();
        order.extend(others);
        let mut workloads = order
            .iter()
            .map(|name| workload(name, &present[name], catalog))
            .collect::<anyhow::Result<Vec<_>>>()?;
        for workload in workloads.iter_mut().filter(|w| w.family == FILE_FAMILY) {
            workload.models = Some("workload files given to `timerbench run --file`".into());
            workload.file = runs
                .iter()
                .flat_map(|run| &run.files)
                .find(|file| file.name == workload.name)
                .cloned();
        }

        Ok(Model {
            runs,
            implementations,
            workloads,
            findings: None,
            live: Vec::new(),
            threads: Vec::new(),
        })
    }

    /// Whether the report puts several runs side by side.
    pub fn several(&self) -> bool {
        self.runs.len() > 1
    }

    /// The implementation called `name`.
    pub fn implementation(&self, name: &str) -> Option<&Implementation> {
        self.implementations.iter().find(|i| i.name == name)
    }

    /// The workload families in the report, in the order of their first workload.
    pub fn families(&self) -> Vec<String> {
        let mut families: Vec<String> = Vec::new();
        for workload in &self.workloads {
            if !families.contains(&workload.family) {
                families.push(workload.family.clone());
            }
        }
        families
    }

    /// Every record of every run that has no figures, with its run, in page order: the
    /// cells that did not verify (failed, timed out, unverified) and the unsupported ones
    /// (beyond the implementation's declared range, not run), which
    /// [`counts_against`] tells apart.
    pub fn without_figures(&self) -> Vec<(&Run, &CellRecord)> {
        let mut failures = Vec::new();
        for run in &self.runs {
            for workload in &self.workloads {
                for &timers in &workload.sizes {
                    for implementation in &self.implementations {
                        if let Some(record) = run.cell(&workload.name, timers, &implementation.name)
                            && record.status != Status::Ok
                        {
                            failures.push((run, record));
                        }
                    }
                }
            }
        }
        failures
    }

    /// Whether any implementation in the report declared itself approximate.
    pub fn any_approximate(&self) -> bool {
        self.implementations.iter().any(|i| i.is_approximate())
    }

    /// The size whose charts of per-operation detail (latency curves, the advance series)
    /// are drawn: the one where the most implementations verified with latency data, the
    /// largest on a tie.
    pub fn detail_size(&self, workload: &Workload) -> Option<u64> {
        workload
            .sizes
            .iter()
            .map(|&timers| {
                let verified = self
                    .runs
                    .iter()
                    .flat_map(|run| run.records.values())
                    .filter(|r| {
                        r.key.workload == workload.name
                            && r.key.timers == timers
                            && r.status == Status::Ok
                            && !r.latency.is_empty()
                    })
                    .count();
                (verified, timers)
            })
            .filter(|&(verified, _)| verified > 0)
            .max()
            .map(|(_, timers)| timers)
    }
}

/// Whether a cell without figures counts against its implementation: it failed, timed out
/// or did not verify. An unsupported cell does not: the workload reaches beyond the range
/// the implementation declares, so it was not run, which says nothing of its speed or
/// correctness.
pub fn counts_against(status: Status) -> bool {
    status != Status::Ok && !status.left_out()
}

/// The description of workload `name` from its records and its family.
fn workload(name: &str, records: &[&CellRecord], catalog: &Catalog) -> anyhow::Result<Workload> {
    let first = records
        .first()
        .ok_or_else(|| anyhow!("workload {name} has no records"))?;
    let family = catalog.family(&first.family);
    let mut params = Vec::new();
    for declared in family.iter().flat_map(|f| &f.params) {
        let given = first.params.get(&declared.name);
        params.push(Param {
            name: declared.name.clone(),
            value: given.cloned().unwrap_or_else(|| declared.default.clone()),
            default: given.is_none_or(|g| *g == declared.default),
            help: declared.help.clone(),
        });
    }
    for (key, value) in &first.params {
        if !params.iter().any(|p| p.name == *key) {
            params.push(Param {
                name: key.clone(),
                value: value.clone(),
                default: false,
                help: String::new(),
            });
        }
    }
    let sizes: BTreeSet<u64> = records.iter().map(|r| r.key.timers).collect();
    let generators = records
        .iter()
        .map(|r| (r.key.timers, r.generator.clone()))
        .collect();
    let kinds: Vec<String> = KINDS
        .iter()
        .filter(|kind| records.iter().any(|r| latency(r, kind).is_some()))
        .map(|kind| kind.to_string())
        .collect();
    let clock_kind = CLOCK_KINDS
        .iter()
        .find(|kind| kinds.iter().any(|k| k == *kind))
        .map(|kind| kind.to_string());
    Ok(Workload {
        name: name.to_string(),
        family: first.family.clone(),
        models: family.map(|f| f.models.clone()),
        shape: family.map(|f| f.shape.clone()),
        tick: family.map(|f| f.tick.clone()),
        params,
        ops: first.ops,
        sizes: sizes.into_iter().collect(),
        generators,
        kinds,
        clock_kind,
        file: None,
    })
}
