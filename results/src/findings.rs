//! `findings.json`: what `timerbench reproduce` concluded, experiment by experiment, in this
//! crate so that the writer (the harness) and the readers (the findings page, the report)
//! share one definition and neither imports the other.
//!
//! Every verdict is traceable: a finding holds the rule it applied (as data and in words),
//! every figure it computed, and every record it read (workload, size, implementation,
//! status, the value of the field it read), so a reader can recompute the verdict by hand.
//! The fields are written down in `harness/EXPERIMENTS.md`.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The findings of one `timerbench reproduce`, in the folder it wrote.
pub const FINDINGS_FILE: &str = "findings.json";

/// The version of the findings form this build writes and reads. Version 2 added the
/// combined runs (`runs` of the file and of a finding, `runs` and `implementation` of a
/// figure); version 3 added the figure verdict `reported` (a figure the rule reports and
/// does not judge), which an older reader would not know. A version-1 or version-2 file
/// reads as it was written.
pub const FINDINGS_SCHEMA: u32 = 3;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Findings {
    /// [`FINDINGS_SCHEMA`].
    pub schema: u32,
    /// Whether the sizes were the reduced `--quick` ones (then the figures are a smoke
    /// test of the method, not the quoted result).
    pub quick: bool,
    /// When the reproduction started, RFC 3339 in UTC.
    pub started: String,
    /// The command line, words joined by spaces.
    pub command: String,
    /// The git revision of the build, as `environment.json` gives it.
    pub git_revision: String,
    /// One per experiment, in the order of the experiments file.
    pub experiments: Vec<Finding>,
    /// The runs combined, when these findings combine several (`reproduce --runs N` or
    /// `--from DIR...`): each a findings folder of one run. Empty for one run's findings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunOfFindings>,
}

/// One run of combined findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOfFindings {
    /// Its findings folder: relative to the combined findings' folder when inside it, else
    /// as given.
    pub folder: String,
    /// When it started, RFC 3339 in UTC.
    pub started: String,
}

/// What one experiment found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The experiment's id (`--only ID`).
    pub id: String,
    pub title: String,
    /// The claim, in words.
    pub claim: String,
    /// Where it was published.
    pub source: String,
    /// The published figures, as the source gives them.
    pub published: Vec<PublishedFigure>,
    /// What was measured, in words (workloads, sizes, implementations).
    pub measured: String,
    /// The record field read from each cell, a dotted path
    /// (`throughput.ns_per_unit_after_fill.median`).
    pub field: String,
    /// The figure computed from the cells, in words.
    pub figure: String,
    /// The rule that decides the verdict, in words.
    pub rule: String,
    /// The same rule as the experiments file gives it.
    pub rule_data: serde_json::Value,
    /// The results folder of the experiment's run, relative to the findings' folder.
    pub folder: String,
    /// Cells of this experiment that an earlier experiment of the same reproduction
    /// measured, by experiment: their records were copied into `folder` rather than
    /// measured again (empty in findings written before cells were shared).
    #[serde(default)]
    pub reused: Vec<ReusedCells>,
    /// The records file read, relative to the findings' folder, when it is not
    /// `FOLDER/results.jsonl`: a live experiment's `FOLDER/live.jsonl`, a threads
    /// experiment's `FOLDER/threads.jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<String>,
    /// What a cell's `timers` counts when it is not timers (a tick in ms, producer threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<String>,
    /// Every cell the experiment planned, with the value read from it.
    pub cells: Vec<CellReading>,
    /// The computed figures, each judged by the rule.
    pub values: Vec<FigureValue>,
    pub verdict: Verdict,
    /// Why the verdict: which values decided it, or why nothing could be decided.
    pub reason: String,
    /// How the runs combined into this finding; absent for one run's finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<FindingRuns>,
}

/// A finding over several runs: each run's verdict, and what the verdict on them means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingRuns {
    /// The runs that measured the experiment (their folders, as the findings' `runs` name
    /// them).
    pub folders: Vec<String>,
    /// Each run's own verdict, in the order of `folders`.
    pub verdicts: Vec<Verdict>,
    pub method: CombinedBy,
    /// The verdicts the experiment takes within its figures' 95% intervals (`mean`) or in
    /// its runs (`per_run`), best first: more than one when the verdict is not settled.
    pub within: Vec<Verdict>,
    /// The verdict's qualification in words: that the intervals straddle a boundary of the
    /// rule and where, or in how many runs it holds.
    pub note: String,
}

/// How a finding's verdict comes from its runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CombinedBy {
    /// Numeric figures: each the mean over the runs, judged by the rule.
    Mean,
    /// Figures without a mean (orderings): each run judged on its own, the verdict the
    /// median of the runs' (the worse of the two middle ones for an even count).
    PerRun,
}

/// How many of an experiment's cells another experiment measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReusedCells {
    /// The experiment that measured them (its id).
    pub experiment: String,
    /// How many.
    pub cells: u64,
}

/// A figure as the source published it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedFigure {
    pub label: String,
    pub value: f64,
    pub unit: String,
}

/// One cell read back: its key, status and the value of the experiment's field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellReading {
    pub workload: String,
    pub timers: u64,
    pub implementation: String,
    /// The record's status (`ok`, `failed`, ...), or `missing` when no record came back.
    pub status: String,
    /// The field's value, when the cell is `ok` and has it.
    pub value: Option<f64>,
    /// Why there is no value.
    pub reason: Option<String>,
}

/// One computed figure and what the rule made of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureValue {
    /// What it is of, e.g. `start-stop at 1000000` or `start-stop, hierarchical-wheel`.
    pub label: String,
    /// The number, when the figure is a number.
    pub value: Option<f64>,
    /// The figure in words, when it is not only a number (an ordering).
    pub text: Option<String>,
    /// The band the rule put it in; `reported` for a figure the rule does not judge.
    pub verdict: Verdict,
    /// The implementation it is of, when the rule may have one of its own for it (a value,
    /// a slope); absent in version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// Over several runs: each run's figure and the interval of their mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<FigureRuns>,
}

/// One figure over several runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureRuns {
    /// Each run's figure (`null` for an ordering), in the order of the finding's runs.
    pub values: Vec<Option<f64>>,
    /// Each run's verdict of the figure.
    pub verdicts: Vec<Verdict>,
    /// The 95% interval of the mean, Student's t over the runs: absent with one run or
    /// for an ordering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    /// The verdicts the rule gives within the interval (or in the runs, for an
    /// ordering), best first.
    pub within: Vec<Verdict>,
    /// Where the verdicts other than the mean's lie (`does not hold at the low end`);
    /// empty when there are none.
    pub straddle: String,
}

/// A verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Holds,
    HoldsWithCaveat,
    DoesNotHold,
    /// The data cannot decide: a cell failed or is missing.
    NotMeasured,
    /// A figure's only: the rule lists it as reported (`rule.reported`), shown as measured
    /// and judged by no band, so it has no part in the experiment's verdict. Never the
    /// verdict of a finding. Last, so that no derived order makes it better than a
    /// judged figure; the judging code leaves it out by name, not by order.
    Reported,
}

impl Verdict {
    /// As the findings table writes it.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::HoldsWithCaveat => "holds with a caveat",
            Verdict::DoesNotHold => "does not hold",
            Verdict::NotMeasured => "not measured",
            Verdict::Reported => "reported, not judged",
        }
    }
}

/// Reads `findings.json` of `folder`; one message naming the file when it is malformed or
/// of a newer form.
pub fn read_findings(folder: &Path) -> anyhow::Result<Findings> {
    let path = folder.join(FINDINGS_FILE);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let findings: Findings = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a findings file", path.display()))?;
    if findings.schema > FINDINGS_SCHEMA {
        anyhow::bail!(
            "{}: findings version {} is newer than this timerbench reads ({FINDINGS_SCHEMA})",
            path.display(),
            findings.schema
        );
    }
    Ok(findings)
}

/// Writes `findings.json` into `folder`, atomically.
pub fn write_findings(folder: &Path, findings: &Findings) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(findings)?;
    text.push('\n');
    crate::write_atomically(&folder.join(FINDINGS_FILE), text.as_bytes())
}
