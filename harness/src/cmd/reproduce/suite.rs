//! The suite of one experiment's run: its workloads (the standard suite's by name, or its
//! own definitions) at its sizes, as `timerbench run` takes a suite, checked by the suite
//! file's own rules (known families, declared parameters).

use super::experiments::{Experiment, WorkloadRef};
use anyhow::Context;
use serde::Serialize;
use std::collections::BTreeMap;
use timerbench_workloads::suite::SuiteFile;

impl Experiment {
    /// The suite the experiment's run measures: its workloads, each at `sizes`.
    pub fn suite(&self, sizes: &[u64]) -> anyhow::Result<SuiteFile> {
        let standard = SuiteFile::standard();
        let mut workloads = Vec::new();
        for workload in &self.workloads {
            let mut definition = match workload {
                WorkloadRef::Suite(name) => standard
                    .workloads
                    .iter()
                    .find(|w| &w.name == name)
                    .cloned()
                    .with_context(|| {
                        format!(
                            "experiment {}: no workload `{name}` in the standard suite",
                            self.id
                        )
                    })?,
                WorkloadRef::Defined(definition) => definition.clone(),
            };
            definition.sizes = BTreeMap::new();
            definition.full_extra = Vec::new();
            workloads.push(definition);
        }
        let suite = SuiteFile {
            seed: standard.seed,
            sizes: BTreeMap::from([("full".to_string(), sizes.to_vec())]),
            implementations: Vec::new(),
            floor: false,
            workloads,
        };
        // The suite's own checks: families and their parameters.
        let text = toml::to_string(&SuiteText::of(&suite))?;
        SuiteFile::parse(&text).map_err(|e| anyhow::anyhow!("experiment {}: {e}", self.id))
    }
}

/// A suite file as text, for [`SuiteFile::parse`]'s checks of a suite built here.
#[derive(Serialize)]
struct SuiteText {
    seed: u64,
    sizes: BTreeMap<String, Vec<u64>>,
    workload: Vec<WorkloadText>,
}

#[derive(Serialize)]
struct WorkloadText {
    name: String,
    family: String,
    params: BTreeMap<String, toml::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
}

impl SuiteText {
    fn of(suite: &SuiteFile) -> Self {
        SuiteText {
            seed: suite.seed,
            sizes: suite.sizes.clone(),
            workload: suite
                .workloads
                .iter()
                .map(|w| WorkloadText {
                    name: w.name.clone(),
                    family: w.family.clone(),
                    params: w.params.clone(),
                    ops: w.ops,
                    seed: w.seed,
                })
                .collect(),
        }
    }
}
