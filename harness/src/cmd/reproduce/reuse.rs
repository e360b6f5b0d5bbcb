//! Each distinct cell measured once per `timerbench reproduce`: experiments share cells
//! (go-quad-heap, go-quad-heap-stop and survey-slopes all time the two heaps on start-stop;
//! keepalive-100k-memory reads keepalive-100k's cells), and measuring one again would only
//! cost time and give a second, different sample of the same thing.
//!
//! The invariant: a cell (its [`CellDefinition`]: the workload's whole definition, the size,
//! the implementation with its parameters) that an earlier experiment of this invocation
//! recorded `ok` is not measured again; its record is copied, unchanged, into the later
//! experiment's folder, so that each folder holds every record its finding reads and its
//! report renders on its own. Only what this invocation measured is reused: with `--only`,
//! nothing from experiments not run; a cell that failed is measured again.

use crate::schema::{CellDefinition, CellRecord, Status};
use std::collections::BTreeMap;
use timerbench_results::ReusedCells;

/// The `ok` records of the experiments run so far, by definition, with the experiment that
/// measured each.
#[derive(Default)]
pub(super) struct Earlier {
    cells: BTreeMap<CellDefinition, (String, CellRecord)>,
}

impl Earlier {
    /// Of the cells `definitions` (an experiment's plan), the records already measured, and
    /// how many came from each experiment (in the order first met).
    pub fn find(&self, definitions: &[CellDefinition]) -> (Vec<CellRecord>, Vec<ReusedCells>) {
        let mut records = Vec::new();
        let mut from: Vec<ReusedCells> = Vec::new();
        for definition in definitions {
            let Some((experiment, record)) = self.cells.get(definition) else {
                continue;
            };
            records.push(record.clone());
            match from.iter_mut().find(|r| &r.experiment == experiment) {
                Some(reused) => reused.cells += 1,
                None => from.push(ReusedCells {
                    experiment: experiment.clone(),
                    cells: 1,
                }),
            }
        }
        (records, from)
    }

    /// Keeps the `ok` records of `experiment`'s folder for the experiments after it; a
    /// record copied from an earlier one stays that one's.
    pub fn keep<'a>(
        &mut self,
        experiment: &str,
        records: impl IntoIterator<Item = &'a CellRecord>,
    ) {
        for record in records {
            if record.status == Status::Ok {
                self.cells
                    .entry(CellDefinition::of(record))
                    .or_insert_with(|| (experiment.to_string(), record.clone()));
            }
        }
    }
}

/// `2 cells measured in go-quad-heap, 1 in keepalive-100k`, for the progress and the
/// findings table.
pub fn words(reused: &[ReusedCells]) -> String {
    reused
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let cells = match i {
                0 => count(r.cells),
                _ => r.cells.to_string(),
            };
            format!("{cells} measured in {}", r.experiment)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1 cell`, `4 cells`.
pub fn count(cells: u64) -> String {
    match cells {
        1 => "1 cell".to_string(),
        n => format!("{n} cells"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{CellIdentity, CellKey};

    fn record(workload: &str, timers: u64, implementation: &str, status: Status) -> CellRecord {
        CellRecord::for_spec(
            CellIdentity {
                key: CellKey {
                    workload: workload.to_string(),
                    timers,
                    implementation: implementation.to_string(),
                },
                family: "start-stop".to_string(),
                params: BTreeMap::new(),
                ops: None,
                seed: 7,
                generator: String::new(),
                peer: false,
                implementation_base: implementation.to_string(),
                implementation_parameters: BTreeMap::new(),
                precision: "exact".to_string(),
                operations: 10,
                fired: 1,
                reference_digest: String::new(),
            },
            status,
            None,
        )
    }

    #[test]
    fn only_ok_records_are_reused_and_each_stays_its_first_experiments() {
        let mut earlier = Earlier::default();
        let quad = record("start-stop", 1000, "quad-heap", Status::Ok);
        let failed = record("start-stop", 1000, "binary-heap", Status::Failed);
        earlier.keep("a", [&quad, &failed]);
        // b copied quad-heap from a and measured btree itself.
        let btree = record("start-stop", 1000, "btree", Status::Ok);
        earlier.keep("b", [&quad, &btree]);
        let mut other_seed = quad.clone();
        other_seed.seed = 8;
        let wanted: Vec<CellDefinition> = [&quad, &failed, &btree, &other_seed]
            .into_iter()
            .map(CellDefinition::of)
            .collect();
        let (records, from) = earlier.find(&wanted);
        assert_eq!(records, [quad, btree]);
        let from: Vec<(&str, u64)> = from
            .iter()
            .map(|r| (r.experiment.as_str(), r.cells))
            .collect();
        assert_eq!(from, [("a", 1), ("b", 1)]);
    }

    #[test]
    fn the_words_name_the_experiments() {
        let reused = |experiment: &str, cells| ReusedCells {
            experiment: experiment.to_string(),
            cells,
        };
        assert_eq!(words(&[reused("a", 1)]), "1 cell measured in a");
        assert_eq!(
            words(&[reused("a", 2), reused("b", 1)]),
            "2 cells measured in a, 1 measured in b"
        );
    }
}
