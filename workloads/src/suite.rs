//! The standard suite as data: which workloads `timerbench run` measures and at which sizes.
//!
//! The definitions live in `workloads/suites/standard.toml`, compiled into the binary so a
//! release build needs no data files beside it. Each workload names a family, its
//! parameters, and optionally its own sizes per suite level; the levels are cumulative in
//! spirit (`smoke` is a quick check, `default` the main job, `full` adds the largest sizes).

use crate::families::{self, GenSpec};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The standard suite's definitions.
pub const STANDARD: &str = include_str!("../suites/standard.toml");

/// The seconds each cell of a default run took, `workload,timers,implementation,seconds`
/// after `#` comments and a header: where `timerbench run`'s time left starts from, scaled
/// by the speed it finds (written by `timerbench suite-costs RESULTS_DIR`).
pub const STANDARD_COSTS: &str = include_str!("../suites/standard-costs.csv");

/// The suite levels, smallest first.
pub const LEVELS: &[&str] = &["smoke", "default", "full"];

/// A suite file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    /// The seed every workload is generated with unless it sets its own.
    pub seed: u64,
    /// Sizes per level for workloads that do not set their own.
    pub sizes: BTreeMap<String, Vec<u64>>,
    /// The implementations a run measures when no `--impl` is given, each a variant as
    /// `--impl` takes it (`hashed-wheel:slots=65536`); empty: every registered one.
    #[serde(default)]
    pub implementations: Vec<String>,
    /// Whether a run of this suite without `--impl` measures the floor beside the
    /// implementations (as `--floor` does), so that every figure reads as a multiple of it.
    #[serde(default)]
    pub floor: bool,
    /// The workloads.
    #[serde(rename = "workload")]
    pub workloads: Vec<WorkloadDefinition>,
}

/// One workload of the suite.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadDefinition {
    /// The name results and the report use, e.g. `hold-pareto`.
    pub name: String,
    /// The family that generates it.
    pub family: String,
    /// Family parameters.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// `--ops` for the family, if not its default.
    pub ops: Option<u64>,
    /// Its own seed, if not the suite's.
    pub seed: Option<u64>,
    /// Its own sizes per level, replacing the suite's for the levels it names.
    #[serde(default)]
    pub sizes: BTreeMap<String, Vec<u64>>,
    /// Sizes added at the `full` level (the 10M-timer runs).
    #[serde(default)]
    pub full_extra: Vec<u64>,
}

/// One workload at one size: what to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// The suite workload's name.
    pub workload: String,
    /// The family.
    pub family: String,
    /// What to generate.
    pub spec: GenSpec,
}

impl SuiteFile {
    /// Parses and checks a suite file: known families, declared parameters, known levels.
    pub fn parse(text: &str) -> Result<Self, String> {
        let suite: SuiteFile = toml::from_str(text).map_err(|e| e.to_string())?;
        for level in suite.sizes.keys() {
            check_level(level)?;
        }
        for implementation in &suite.implementations {
            timerbench_impls::Variant::parse(implementation)
                .map_err(|why| format!("implementations: {why}"))?;
        }
        let mut names = std::collections::BTreeSet::new();
        for workload in &suite.workloads {
            if !names.insert(&workload.name) {
                return Err(format!("workload `{}` is defined twice", workload.name));
            }
            let family = families::find(&workload.family).ok_or_else(|| {
                format!(
                    "workload `{}`: unknown family `{}`",
                    workload.name, workload.family
                )
            })?;
            for key in workload.params.keys() {
                if !family.info().params.iter().any(|p| p.name == key) {
                    return Err(format!(
                        "workload `{}`: family `{}` has no parameter `{key}`",
                        workload.name, workload.family
                    ));
                }
            }
            for level in workload.sizes.keys() {
                check_level(level)?;
            }
        }
        Ok(suite)
    }

    /// The variants of [`SuiteFile::implementations`], checked by [`SuiteFile::parse`].
    pub fn variants(&self) -> Vec<timerbench_impls::Variant> {
        self.implementations
            .iter()
            .map(|text| timerbench_impls::Variant::parse(text).expect("checked when parsed"))
            .collect()
    }

    /// The standard suite.
    pub fn standard() -> Self {
        Self::parse(STANDARD).expect("the standard suite is checked by the tests")
    }

    /// Every case of `level`, in file order, smallest size first within a workload.
    pub fn cases(&self, level: &str) -> Result<Vec<Case>, String> {
        check_level(level)?;
        let mut cases = Vec::new();
        for workload in &self.workloads {
            let mut sizes = workload
                .sizes
                .get(level)
                .or_else(|| self.sizes.get(level))
                .cloned()
                .unwrap_or_default();
            if level == "full" {
                sizes.extend(&workload.full_extra);
            }
            sizes.sort_unstable();
            sizes.dedup();
            for timers in sizes {
                cases.push(Case {
                    workload: workload.name.clone(),
                    family: workload.family.clone(),
                    spec: GenSpec {
                        timers,
                        ops: workload.ops,
                        seed: workload.seed.unwrap_or(self.seed),
                        params: workload
                            .params
                            .iter()
                            .map(|(k, v)| (k.clone(), value_text(v)))
                            .collect(),
                    },
                });
            }
        }
        Ok(cases)
    }
}

fn check_level(level: &str) -> Result<(), String> {
    if LEVELS.contains(&level) {
        Ok(())
    } else {
        Err(format!(
            "unknown suite `{level}` (suites: {})",
            LEVELS.join(", ")
        ))
    }
}

/// A TOML value as a parameter's text: strings unquoted, numbers as written.
fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
