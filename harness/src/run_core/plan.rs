//! The plan of a run: its cells (workload, size, implementation), each with what it is
//! measured from and what runs it (a structure, with what it declares, or an engine),
//! checked against every filter before anything runs; and each cell's definition, by which
//! `timerbench reproduce` knows a cell another experiment already measured.

use super::cache::case_id;
use super::{Args, cell_name, files, suite_word, with_suite};
use crate::engines::{Engine, select};
use crate::schema::{CellDefinition, CellKey, parameters_of};
use anyhow::{anyhow, bail};
use std::collections::{BTreeMap, BTreeSet};
use timerbench_impls::{Range, Variant};
use timerbench_workloads::suite::{Case, SuiteFile};

/// One planned cell: its case (what to generate, or a file) and what runs it, a Rust
/// structure's variant or another runtime's engine. Both are planned, keyed and defined
/// alike; only their measuring differs (`group` for structures, `engines` for engines).
pub(super) struct Cell {
    pub case: Case,
    /// What its records say regenerates the workload.
    pub generator: String,
    pub subject: Subject,
}

/// What runs a cell's workload.
pub(super) enum Subject {
    Structure(Structure),
    Engine(&'static Engine),
}

/// A structure's cell: its variant, what the variant declares, and whether it runs.
pub(super) struct Structure {
    pub variant: Variant,
    pub declared: Declared,
    /// Why the cell is not run, when the suite chose a size above the implementation's
    /// suite limit ([`timerbench_impls::SuiteLimit`]).
    pub skip: Option<String>,
}

/// A structure's cell borrowed from the plan with its structure, as the groups measure it.
#[derive(Clone, Copy)]
pub(super) struct StructureCell<'a> {
    pub cell: &'a Cell,
    pub structure: &'a Structure,
}

impl Cell {
    /// The cell with its structure, when a structure runs it.
    pub fn structure(&self) -> Option<StructureCell<'_>> {
        match &self.subject {
            Subject::Structure(structure) => Some(StructureCell {
                cell: self,
                structure,
            }),
            Subject::Engine(_) => None,
        }
    }

    /// The engine that runs it, when an engine does.
    pub fn engine(&self) -> Option<&'static Engine> {
        match self.subject {
            Subject::Engine(engine) => Some(engine),
            Subject::Structure(_) => None,
        }
    }

    pub fn key(&self) -> CellKey {
        let implementation = match &self.subject {
            Subject::Structure(structure) => structure.variant.label().to_string(),
            Subject::Engine(engine) => engine.name.to_string(),
        };
        CellKey {
            workload: self.case.workload.clone(),
            timers: self.case.spec.timers,
            implementation,
        }
    }

    /// What makes it the same measurement as a cell of another run: from the same fields
    /// its spec hands the child, which its record keeps
    /// ([`CellDefinition::of`](crate::schema::CellDefinition::of)). An engine has no
    /// parameters.
    pub fn definition(&self) -> CellDefinition {
        CellDefinition {
            key: self.key(),
            family: self.case.family.clone(),
            params: self.case.spec.params.iter().cloned().collect(),
            ops: self.case.spec.ops,
            seed: self.case.spec.seed,
            implementation_parameters: match &self.subject {
                Subject::Structure(structure) => parameters_of(structure.variant.label()),
                Subject::Engine(_) => BTreeMap::new(),
            },
        }
    }
}

/// What a variant declares of itself, read once from an empty queue of it.
#[derive(Clone)]
pub(super) struct Declared {
    /// `exact`, or `approximate: ` and the bound.
    pub precision: String,
    /// The delays and ticks it holds.
    pub range: Range,
}

impl Declared {
    /// What `variant` declares ([`Variant::declarations`]).
    pub fn of(variant: &Variant) -> Self {
        let declared = variant.declarations();
        Declared {
            precision: if crate::schema::is_floor(variant.label()) {
                crate::schema::FLOOR_PRECISION.to_string()
            } else {
                declared.precision.describe()
            },
            range: declared.range,
        }
    }
}

/// The cells of the selected suite and of the files, checked against every filter: each
/// case's structures, in the suite's then the files' order, then the engine cells.
pub(super) fn plan(
    args: &Args,
    suite: &SuiteFile,
    inputs: &[files::FileInput],
) -> anyhow::Result<Vec<Cell>> {
    let known: BTreeSet<&str> = suite.workloads.iter().map(|w| w.name.as_str()).collect();
    for name in &args.workloads {
        if !known.contains(name.as_str()) {
            bail!(
                "--workload {name}: no such workload in the suite (workloads: {})",
                known.iter().copied().collect::<Vec<_>>().join(", ")
            );
        }
    }
    if !with_suite(args) && !args.timers.is_empty() {
        bail!(
            "--timers does not apply to --file: a file's size is its own (its peak of \
             pending timers); give --suite or --workload to run suite workloads at that size"
        );
    }
    let mut cases = if with_suite(args) {
        suite.cases(&suite_word(args)).map_err(|e| anyhow!(e))?
    } else {
        Vec::new()
    };
    cases.retain(|c| args.workloads.is_empty() || args.workloads.contains(&c.workload));
    for input in inputs {
        if cases.iter().any(|c| c.workload == input.workload.name) {
            bail!(
                "--file {}: its workload name `{}` is a suite workload's in this run: give \
                 the file another @name",
                input.workload.path,
                input.workload.name
            );
        }
    }
    if !args.timers.is_empty() {
        // Replace each selected workload's sizes by the ones asked for.
        let mut resized = Vec::new();
        let mut seen = BTreeSet::new();
        for case in cases {
            if seen.insert(case.workload.clone()) {
                for &timers in &args.timers {
                    let mut case = case.clone();
                    case.spec.timers = timers;
                    resized.push(case);
                }
            }
        }
        cases = resized;
    }
    let mut chosen = args.selection.variants_or(suite.variants());
    // The suite's own floor goes with the suite's own implementations: with `--impl` the
    // user chose what to measure, and `--floor` adds it.
    if args.floor || (suite.floor && with_suite(args) && !args.selection.names_any()) {
        chosen.push(Variant::parse(timerbench_results::FLOOR).map_err(|e| anyhow!(e))?);
    }
    let variants: Vec<(Variant, Declared)> = chosen
        .into_iter()
        .map(|variant| {
            let declared = Declared::of(&variant);
            (variant, declared)
        })
        .collect();
    let sizes_given = !args.timers.is_empty();
    let mut cells: Vec<Cell> = cases
        .iter()
        .flat_map(|case| {
            variants.iter().map(move |(variant, declared)| Cell {
                case: case.clone(),
                generator: case_id(case),
                subject: Subject::Structure(Structure {
                    variant: variant.clone(),
                    declared: declared.clone(),
                    skip: if sizes_given {
                        None
                    } else {
                        above_suite_limit(variant, case.spec.timers)
                    },
                }),
            })
        })
        .collect();
    for input in inputs {
        let case = input.case();
        for (variant, declared) in &variants {
            cells.push(Cell {
                case: case.clone(),
                generator: input.generator(),
                subject: Subject::Structure(Structure {
                    variant: variant.clone(),
                    declared: declared.clone(),
                    skip: files::above_limit(
                        variant,
                        &input.workload,
                        args.selection.named(variant),
                    ),
                }),
            });
        }
    }
    if let Some(target) = &args.inject_panic
        && !cells.iter().any(|cell| cell_name(&cell.key()) == *target)
    {
        bail!("--inject-panic {target}: no such cell in this run");
    }
    let engine_cells = engine_cells(args, &cases_of(&cells))?;
    cells.extend(engine_cells);
    Ok(cells)
}

/// The distinct cases of `cells`, in the plan's order: where the engine cells go.
fn cases_of(cells: &[Cell]) -> Vec<Case> {
    let mut seen = BTreeSet::new();
    cells
        .iter()
        .filter(|cell| seen.insert(case_id(&cell.case)))
        .map(|cell| cell.case.clone())
        .collect()
}

/// The engine cells of `cases` for the engines `--engine` names (an unknown name is an
/// error naming the flag): each case's engines, in the order of the cases.
fn engine_cells(args: &Args, cases: &[Case]) -> anyhow::Result<Vec<Cell>> {
    if args.engines.is_empty() {
        return Ok(Vec::new());
    }
    let engines = select(&args.engines)?;
    Ok(cases
        .iter()
        .flat_map(|case| {
            engines.iter().map(move |engine| Cell {
                case: case.clone(),
                generator: case_id(case),
                subject: Subject::Engine(engine),
            })
        })
        .collect())
}

/// Why `variant` is not run at `timers` when a suite chose the size: the size is above
/// its declared suite limit.
fn above_suite_limit(variant: &Variant, timers: u64) -> Option<String> {
    let limit = variant.implementation.suite_limit?;
    (timers > limit.max_timers).then(|| {
        format!(
            "{} runs at most {} timers in a suite ({}); --timers {timers} runs it",
            variant.implementation.name, limit.max_timers, limit.why
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerbench_impls::{Implementation, SuiteLimit};

    static SCANNER: Implementation = Implementation {
        name: "scanner",
        summary: "a structure that scans every timer per move",
        peer: false,
        parameters: &[],
        suite_limit: Some(SuiteLimit {
            max_timers: 100_000,
            why: "scans every pending timer per clock move",
        }),
    };

    #[test]
    fn a_suite_size_above_the_limit_is_skipped_with_its_reason() {
        let variant = Variant::of(&SCANNER);
        assert_eq!(above_suite_limit(&variant, 100_000), None);
        assert_eq!(
            above_suite_limit(&variant, 1_000_000).as_deref(),
            Some(
                "scanner runs at most 100000 timers in a suite (scans every pending timer per \
                 clock move); --timers 1000000 runs it"
            )
        );
        let unlimited = Variant::parse("binary-heap").unwrap();
        assert_eq!(above_suite_limit(&unlimited, 10_000_000), None);
    }
}
