//! The results schema as the harness uses it: the format crate's record types
//! (`timerbench-results`, shared with the report), and the one message that is the
//! harness's own, the [`CellSpec`] a run hands each cell's child process.
//!
//! The spec stays here rather than in the format crate because it is not part of a
//! results folder and carries the workloads crate's reference summary; the format crate
//! (and so the report) depends on neither the workloads nor the implementations.

pub use timerbench_results::schema::*;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use timerbench_workloads::families::GenSpec;
use timerbench_workloads::reference::Summary;

/// What the run hands a cell's child process (`timerbench cell`), as JSON on its standard
/// input. The child answers with one [`CellRecord`] as JSON on its standard output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSpec {
    /// Which cell, its workload and the reference model's outcome, as its record will say
    /// them ([`identity`]).
    pub cell: CellIdentity,
    /// The workload file (v1 format), already generated and checked by the parent.
    pub workload_path: std::path::PathBuf,
    /// The reference model's summary of that workload, computed once by the parent.
    pub reference: Summary,
    /// Timed samples.
    pub repeat: u32,
    /// The least time a sample runs, nanoseconds: it repeats the replay until then.
    pub min_sample_ns: u64,
    /// For the harness's own tests: panic in the middle of the measurement.
    #[serde(default)]
    pub inject_panic: bool,
    /// What the process does: every pass (`full`), or only verify and take samples.
    #[serde(default)]
    pub mode: CellMode,
}

/// What a cell process does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CellMode {
    /// Verify, memory, throughput samples, latency: answers with a [`CellRecord`].
    #[default]
    Full,
    /// Verify, then throughput samples only: answers with a [`SampleSet`].
    Samples,
    /// Verify, then replay the lines after the fill once inside the counted function, for
    /// Callgrind to count (`timerbench run --counts`): answers with a [`CountedReplay`].
    Counted,
}

impl CellMode {
    /// `full` or `samples`, as [`Conditions::role`] says it.
    pub fn name(self) -> &'static str {
        match self {
            CellMode::Full => "full",
            CellMode::Samples => "samples",
            CellMode::Counted => "counted",
        }
    }
}

/// What a `counted` cell process answers: the lines its counted replay replayed, or why
/// its counts must not be recorded (it did not verify, or the counted replay disagreed
/// with the reference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountedReplay {
    /// The lines after the fill: what the counts are divided by.
    pub lines: u64,
    /// Why the counts are not a verified replay's.
    pub problem: Option<String>,
    /// The digest of its verified replay's firings, or of the replay that did not verify.
    pub digest: Option<String>,
}

/// What a `samples` cell process answers: its samples, or why it has none, and the
/// conditions it ran under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleSet {
    /// The samples, when it verified and every replay agreed.
    pub throughput: Option<Throughput>,
    /// Why there are none.
    pub problem: Option<String>,
    /// Under what conditions it ran (filled in by the protocol, last).
    pub conditions: Option<Conditions>,
}

impl SampleSet {
    /// A set without samples, for `why`.
    pub fn problem(why: String) -> Self {
        SampleSet {
            throughput: None,
            problem: Some(why),
            conditions: None,
        }
    }
}

/// A spec names its cell for [`CellRecord::for_spec`], with the reference outcome the
/// child checks against (`reference`), so that a record names what it was verified by.
impl From<&CellSpec> for CellIdentity {
    fn from(spec: &CellSpec) -> Self {
        CellIdentity {
            operations: spec.reference.operations,
            fired: spec.reference.fired,
            reference_digest: spec.reference.digest.clone(),
            ..spec.cell.clone()
        }
    }
}

/// A cell's identity: the cell `key`, its workload (the `family` generated from `generated`
/// by the command `generator`) and the implementation's declared `precision` as the parent
/// planned them; whether the implementation is a peer, its base name and parameters from
/// the registry; the reference model's outcome from `reference`.
pub fn identity(
    key: CellKey,
    family: &str,
    generated: &GenSpec,
    generator: String,
    precision: String,
    reference: &Summary,
) -> CellIdentity {
    CellIdentity {
        peer: timerbench_impls::registry::is_peer(&key.implementation),
        implementation_base: base_name(&key.implementation).to_string(),
        implementation_parameters: parameters_of(&key.implementation),
        key,
        family: family.to_string(),
        params: generated.params.iter().cloned().collect(),
        ops: generated.ops,
        seed: generated.seed,
        generator,
        precision,
        operations: reference.operations,
        fired: reference.fired,
        reference_digest: reference.digest.clone(),
    }
}

/// What makes two cells the same measurement, whichever run planned them: the workload's
/// whole definition (its name, family, parameters, `--ops` and seed), the number of timers,
/// and the implementation: its label (as records name it) and every parameter's value,
/// defaults included. `timerbench reproduce` measures a cell of one definition once and
/// copies its record into every later experiment that plans it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CellDefinition {
    /// The workload's name, the size and the implementation's label.
    pub key: CellKey,
    pub family: String,
    pub params: BTreeMap<String, String>,
    pub ops: Option<u64>,
    pub seed: u64,
    pub implementation_parameters: BTreeMap<String, u64>,
}

impl CellDefinition {
    /// The definition of the cell `record` measured (the run's plan makes the same from
    /// the cell itself).
    pub fn of(record: &CellRecord) -> Self {
        CellDefinition {
            key: record.key.clone(),
            family: record.family.clone(),
            params: record.params.clone(),
            ops: record.ops,
            seed: record.seed,
            implementation_parameters: parameters_of(&record.key.implementation),
        }
    }
}

/// The registry name in a variant label: `hashed-wheel` of `hashed-wheel:slots=65536`.
pub fn base_name(label: &str) -> &str {
    label.split(':').next().unwrap_or(label)
}

/// Every parameter of the variant `label` with its value, defaults included; empty when
/// the label does not parse (a spec the child refuses anyway).
pub fn parameters_of(label: &str) -> BTreeMap<String, u64> {
    timerbench_impls::Variant::parse(label)
        .map(|variant| {
            variant
                .parameters
                .iter()
                .map(|(name, value)| (name.to_string(), value))
                .collect()
        })
        .unwrap_or_default()
}
