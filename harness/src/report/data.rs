//! The report's data: the results folders read and checked, and the figures computed from
//! their records.
//!
//! Conventions:
//!
//! - A *cell* is one (workload, timers, implementation); a *size* of a workload is one
//!   (workload, timers), where the implementations compete.
//! - Speed is the median nanoseconds per operation line of the timed replays. Only cells
//!   that verified (`ok`) have figures; the others are listed with their reason.
//! - The *ratio to the best* of a cell is its ns/op over the smallest ns/op any
//!   implementation reached at the same size in the same run: 1.00 is the best, 2.00 twice
//!   as slow.
//! - An *operation family* is a workload family (`hold`, `keepalive`, ...): the workloads
//!   of one family exercise the same mix of operations. A family's ranking is the geometric
//!   mean of each implementation's ratios to the best over the sizes of the family's
//!   workloads that it verified.

use crate::run::read_records;
use crate::schema::{CellKey, CellRecord, Environment, Latency, SCHEMA_VERSION, Status};
use anyhow::{Context, anyhow, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use timerbench_impls::{IMPLEMENTATIONS, PEERS};
use timerbench_workloads::families;
use timerbench_workloads::suite::SuiteFile;

/// The operation kinds, in the order the report shows them.
pub const KINDS: &[&str] = &["start", "stop", "restart", "advance", "tick", "next"];

/// The kinds that move the clock, where cascades and expiry work show; the first one a
/// workload has is its "advance-like" kind in the tables.
pub const CLOCK_KINDS: &[&str] = &["advance", "next", "tick"];

/// One results folder.
pub struct Run {
    /// Where it was read from.
    pub folder: PathBuf,
    /// `A`, `B`, ...: its short name in column headers.
    pub label: String,
    /// The folder's own name, e.g. `2026-11-22-host-abc1234`.
    pub name: String,
    /// `environment.json`, when the folder has one.
    pub environment: Option<Environment>,
    /// The latest record of each cell.
    pub records: BTreeMap<CellKey, CellRecord>,
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

    /// The smallest ns/op at a size, among the verified cells.
    pub fn best(&self, workload: &str, timers: u64) -> Option<f64> {
        self.records
            .values()
            .filter(|r| r.key.workload == workload && r.key.timers == timers)
            .filter_map(ns_per_op)
            .min_by(f64::total_cmp)
    }

    /// The ratio of a cell to the best at its size.
    pub fn ratio_to_best(&self, record: &CellRecord) -> Option<f64> {
        let ns = ns_per_op(record)?;
        Some(ns / self.best(&record.key.workload, record.key.timers)?)
    }

    /// `A (folder name)`.
    pub fn title(&self) -> String {
        format!("{} ({})", self.label, self.name)
    }
}

/// Reads a results folder: `results.jsonl` (required, every line a record) and
/// `environment.json` (optional, but well-formed when present).
pub fn load_run(folder: &Path, index: usize) -> anyhow::Result<Run> {
    if !folder.exists() {
        bail!("results folder {} does not exist", folder.display());
    }
    if !folder.is_dir() {
        bail!(
            "{} is not a results folder (not a directory)",
            folder.display()
        );
    }
    let results = folder.join("results.jsonl");
    if !results.is_file() {
        bail!(
            "{} has no results.jsonl: not a results folder of `timerbench run`",
            folder.display()
        );
    }
    let mut records = BTreeMap::new();
    for (number, record) in read_records(&results)?.into_iter().enumerate() {
        if record.schema > SCHEMA_VERSION {
            bail!(
                "{}: record {} ({}) has schema version {}, newer than this timerbench reads ({})",
                results.display(),
                number + 1,
                describe(&record.key),
                record.schema,
                SCHEMA_VERSION
            );
        }
        check_figures(&record).with_context(|| {
            format!(
                "{}: record {} ({})",
                results.display(),
                number + 1,
                describe(&record.key)
            )
        })?;
        // A resumed run may hold a cell twice; the later record is the one that counts.
        records.insert(record.key.clone(), record);
    }
    let environment_path = folder.join("environment.json");
    let environment = if environment_path.exists() {
        let text = std::fs::read_to_string(&environment_path)
            .with_context(|| format!("cannot read {}", environment_path.display()))?;
        Some(serde_json::from_str::<Environment>(&text).with_context(|| {
            format!("{}: not an environment record", environment_path.display())
        })?)
    } else {
        None
    };
    let name = folder
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| folder.display().to_string());
    Ok(Run {
        folder: folder.to_path_buf(),
        label: run_label(index),
        name,
        environment,
        records,
    })
}

/// The figures the report draws must make sense: a record whose histogram does not decode
/// is as malformed as a line that does not parse.
fn check_figures(record: &CellRecord) -> anyhow::Result<()> {
    for (kind, latency) in &record.latency {
        decode_histogram(latency).with_context(|| format!("the `{kind}` latency histogram"))?;
    }
    Ok(())
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

/// `workload at N timers, implementation`.
pub fn describe(key: &CellKey) -> String {
    format!(
        "{} at {} timers, {}",
        key.workload,
        thousands(key.timers),
        key.implementation
    )
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The median ns/op of a verified cell.
pub fn ns_per_op(record: &CellRecord) -> Option<f64> {
    if record.status != Status::Ok {
        return None;
    }
    let median = record.throughput.as_ref()?.ns_per_op.median;
    (median.is_finite() && median > 0.0).then_some(median)
}

/// The latency of the advance-like `kind` of a verified cell.
pub fn latency<'r>(record: &'r CellRecord, kind: &str) -> Option<&'r Latency> {
    (record.status == Status::Ok)
        .then(|| record.latency.get(kind))
        .flatten()
        .filter(|l| l.count > 0)
}

/// The bytes per pending timer of a verified cell.
pub fn bytes_per_timer(record: &CellRecord) -> Option<f64> {
    if record.status != Status::Ok {
        return None;
    }
    let bytes = record.memory.as_ref()?.bytes_per_pending_timer;
    bytes.is_finite().then_some(bytes)
}

/// A latency histogram decoded.
pub fn decode_histogram(latency: &Latency) -> anyhow::Result<hdrhistogram::Histogram<u64>> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(latency.histogram_v2.trim())
        .map_err(|e| anyhow!("not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| anyhow!("not an HdrHistogram V2 serialization: {e:?}"))
}

/// The HdrHistogram percentile curve: points (1 / (1 - p), latency ns), from the median
/// out to the largest value, 20 points per decade of `1 / (1 - p)`.
pub fn percentile_curve(latency: &Latency) -> anyhow::Result<Vec<(f64, f64)>> {
    let histogram = decode_histogram(latency)?;
    let count = histogram.len();
    if count == 0 {
        return Ok(Vec::new());
    }
    const STEPS_PER_DECADE: u32 = 20;
    let decades = (count as f64).log10();
    let steps = (decades * f64::from(STEPS_PER_DECADE)).floor() as u32;
    let mut points = Vec::with_capacity(steps as usize + 2);
    for step in 0..=steps {
        let x = 10f64.powf(f64::from(step) / f64::from(STEPS_PER_DECADE));
        let quantile = 1.0 - 1.0 / x;
        points.push((x, histogram.value_at_quantile(quantile).max(1) as f64));
    }
    // The largest value, at the last percentile the count resolves.
    let last = (count as f64).max(1.0);
    if points.last().is_some_and(|&(x, _)| x >= last) {
        points.pop();
    }
    points.push((last.max(1.0), histogram.max().max(1) as f64));
    Ok(points)
}

/// An implementation as the report shows it.
#[derive(Debug, Clone)]
pub struct Implementation {
    /// Its name in the results.
    pub name: String,
    /// What it is, for the project's own implementations.
    pub summary: Option<&'static str>,
    /// An outside crate behind an adapter (a record says so).
    pub peer: bool,
    /// Its colour in every chart.
    pub color: (u8, u8, u8),
}

/// The project's implementations, by registry order (Tableau 10 and friends).
const PALETTE: &[(u8, u8, u8)] = &[
    (0x1f, 0x77, 0xb4), // blue
    (0xff, 0x7f, 0x0e), // orange
    (0x2c, 0xa0, 0x2c), // green
    (0xd6, 0x27, 0x28), // red
    (0x94, 0x67, 0xbd), // purple
    (0x8c, 0x56, 0x4b), // brown
    (0xe3, 0x77, 0xc2), // pink
    (0x17, 0xbe, 0xcf), // cyan
    (0x39, 0x3b, 0x79), // dark blue
];

/// Peers and anything not in the registry, by name.
const OTHER_PALETTE: &[(u8, u8, u8)] = &[
    (0x7f, 0x7f, 0x7f), // grey
    (0xbc, 0xbd, 0x22), // olive
    (0x00, 0x00, 0x00), // black
    (0xad, 0x49, 0x4a), // brick
    (0x63, 0x79, 0x39), // moss
    (0x8c, 0x6d, 0x31), // ochre
    (0x7b, 0x41, 0x73), // plum
];

/// A workload as the report shows it.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The suite workload's name.
    pub name: String,
    /// Its family.
    pub family: String,
    /// What real system it models (the family's description), when the family is known.
    pub models: Option<&'static str>,
    /// The family's shape.
    pub shape: Option<&'static str>,
    /// What one tick is.
    pub tick: Option<&'static str>,
    /// The parameters: name, value, whether it is the family's default, what it means.
    pub params: Vec<(String, String, bool, String)>,
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
}

/// Everything the report shows.
pub struct Model {
    /// The results folders, the first being the baseline of the ratios between runs.
    pub runs: Vec<Run>,
    /// Every implementation in any run: the registry's first, in its order, then the
    /// others by name.
    pub implementations: Vec<Implementation>,
    /// Every workload in any run: the standard suite's order, then the others by name.
    pub workloads: Vec<Workload>,
}

impl Model {
    /// Gathers the implementations and workloads of `runs`.
    pub fn new(runs: Vec<Run>) -> anyhow::Result<Model> {
        let records = || runs.iter().flat_map(|r| r.records.values());

        let mut peers = BTreeSet::new();
        let mut names = BTreeSet::new();
        for record in records() {
            names.insert(record.key.implementation.clone());
            if record.peer {
                peers.insert(record.key.implementation.clone());
            }
        }
        let mut implementations = Vec::new();
        for (index, registered) in IMPLEMENTATIONS.iter().enumerate() {
            if names.remove(registered.name) {
                implementations.push(Implementation {
                    name: registered.name.to_string(),
                    summary: Some(registered.summary),
                    peer: peers.contains(registered.name),
                    color: PALETTE[index % PALETTE.len()],
                });
            }
        }
        // Then the peers, in their registry's order, then names this build does not know
        // (the project's own from another revision first).
        let mut others: Vec<String> = names.into_iter().collect();
        let peer_order = |name: &str| PEERS.iter().position(|p| p.name == name);
        others.sort_by_key(|name| {
            (
                peers.contains(name),
                peer_order(name).is_none(),
                peer_order(name),
                name.clone(),
            )
        });
        for (index, name) in others.into_iter().enumerate() {
            implementations.push(Implementation {
                peer: peers.contains(&name),
                summary: PEERS.iter().find(|p| p.name == name).map(|p| p.summary),
                color: OTHER_PALETTE[index % OTHER_PALETTE.len()],
                name,
            });
        }

        let suite = SuiteFile::standard();
        let mut present: BTreeMap<String, Vec<&CellRecord>> = BTreeMap::new();
        for record in records() {
            present
                .entry(record.key.workload.clone())
                .or_default()
                .push(record);
        }
        let mut order: Vec<String> = suite
            .workloads
            .iter()
            .map(|w| w.name.clone())
            .filter(|name| present.contains_key(name))
            .collect();
        order.extend(
            present
                .keys()
                .filter(|name| !order.contains(name))
                .cloned()
                .collect::<Vec<_>>(),
        );
        let workloads = order
            .iter()
            .map(|name| workload(name, &present[name]))
            .collect::<anyhow::Result<Vec<_>>>()?;

        Ok(Model {
            runs,
            implementations,
            workloads,
        })
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

    /// Every record of every run that did not verify, with its run.
    pub fn failures(&self) -> Vec<(&Run, &CellRecord)> {
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

    /// The ranking of `run` over the workloads for which `include` holds.
    pub fn ranking(&self, run: &Run, include: impl Fn(&Workload) -> bool) -> Ranking {
        let sizes: Vec<(&Workload, u64)> = self
            .workloads
            .iter()
            .filter(|w| include(w))
            .flat_map(|w| w.sizes.iter().map(move |&t| (w, t)))
            .filter(|(w, t)| run.best(&w.name, *t).is_some())
            .collect();
        let mut entries: Vec<RankEntry> = self
            .implementations
            .iter()
            .map(|implementation| {
                let mut ratios = Vec::new();
                let mut worst: Option<(f64, String)> = None;
                for &(workload, timers) in &sizes {
                    let Some(record) = run.cell(&workload.name, timers, &implementation.name)
                    else {
                        continue;
                    };
                    if let Some(ratio) = run.ratio_to_best(record) {
                        ratios.push(ratio);
                        if worst.as_ref().is_none_or(|(w, _)| ratio > *w) {
                            worst = Some((
                                ratio,
                                format!("{} at {}", workload.name, thousands(timers)),
                            ));
                        }
                    }
                }
                RankEntry {
                    implementation: implementation.name.clone(),
                    geomean: geometric_mean(&ratios),
                    worst,
                    covered: ratios.len(),
                }
            })
            .filter(|e| {
                // Only the implementations this part of the run tried.
                sizes
                    .iter()
                    .any(|(w, t)| run.cell(&w.name, *t, &e.implementation).is_some())
            })
            .collect();
        entries.sort_by(|a, b| match (a.geomean, b.geomean) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        Ranking {
            cells: sizes.len(),
            entries,
        }
    }

    /// The geometric mean of `run`'s ns/op over the baseline's (the first run's), over the
    /// cells of `implementation` in the workloads for which `include` holds that verified
    /// in both, with how many there were.
    pub fn run_ratio(
        &self,
        run: &Run,
        implementation: &str,
        include: impl Fn(&Workload) -> bool,
    ) -> Option<(f64, usize)> {
        let baseline = &self.runs[0];
        let mut ratios = Vec::new();
        for workload in self.workloads.iter().filter(|w| include(w)) {
            for &timers in &workload.sizes {
                let base = baseline
                    .cell(&workload.name, timers, implementation)
                    .and_then(ns_per_op);
                let other = run
                    .cell(&workload.name, timers, implementation)
                    .and_then(ns_per_op);
                if let (Some(base), Some(other)) = (base, other) {
                    ratios.push(other / base);
                }
            }
        }
        geometric_mean(&ratios).map(|g| (g, ratios.len()))
    }
}

/// The description of workload `name` from its records and its family.
fn workload(name: &str, records: &[&CellRecord]) -> anyhow::Result<Workload> {
    let first = records
        .first()
        .ok_or_else(|| anyhow!("workload {name} has no records"))?;
    let family = first.family.clone();
    let info = families::find(&family).map(|f| f.info());
    let mut params = Vec::new();
    if let Some(info) = info {
        for param in info.params {
            let given = first.params.get(param.name);
            params.push((
                param.name.to_string(),
                given.cloned().unwrap_or_else(|| param.default.to_string()),
                given.is_none_or(|g| g == param.default),
                param.help.to_string(),
            ));
        }
    }
    for (key, value) in &first.params {
        if !params.iter().any(|(name, ..)| name == key) {
            params.push((key.clone(), value.clone(), false, String::new()));
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
        family,
        models: info.map(|i| i.models),
        shape: info.map(|i| i.shape),
        tick: info.map(|i| i.tick),
        params,
        ops: first.ops,
        sizes: sizes.into_iter().collect(),
        generators,
        kinds,
        clock_kind,
    })
}

/// The ranking of the implementations over some cells of one run.
pub struct Ranking {
    /// Cells (workload, timers) where at least one implementation verified.
    pub cells: usize,
    /// Best first; those with no verified cell last.
    pub entries: Vec<RankEntry>,
}

/// One implementation in a [`Ranking`].
pub struct RankEntry {
    /// The implementation.
    pub implementation: String,
    /// The geometric mean of its ratios to the best, when it verified any cell.
    pub geomean: Option<f64>,
    /// Its largest ratio to the best, and where.
    pub worst: Option<(f64, String)>,
    /// The cells it verified (of [`Ranking::cells`]).
    pub covered: usize,
}

/// The geometric mean of positive `values`, or `None` when there are none.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    let values: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if values.is_empty() {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// The size whose charts of per-operation detail (latency curves, the advance series) are
/// drawn: the one where the most implementations verified with latency data, the largest
/// on a tie.
pub fn detail_size(model: &Model, workload: &Workload) -> Option<u64> {
    workload
        .sizes
        .iter()
        .map(|&timers| {
            let verified = model
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
