//! What the cell's unit tests share: a cell spec for a generated workload on disk.

use crate::schema::{CellKey, CellSpec};
use std::collections::BTreeMap;
use std::path::Path;
use timerbench_workloads::families::{self, GenSpec};
use timerbench_workloads::{load, writer};

/// Writes a generated workload into `dir` and returns a spec for it, with the model's
/// summary as the reference.
pub(super) fn spec_for(dir: &Path, family: &str, timers: u64, implementation: &str) -> CellSpec {
    let gen_spec = GenSpec {
        timers,
        ops: None,
        seed: 7,
        params: Vec::new(),
    };
    let workload = families::generate(family, &gen_spec).unwrap();
    let path = dir.join(format!("{family}-{timers}.tw"));
    writer::write_file(&path, &workload).unwrap();
    let reference = load(&path).unwrap().summary;
    CellSpec {
        key: CellKey {
            workload: family.to_string(),
            timers,
            implementation: implementation.to_string(),
        },
        family: family.to_string(),
        params: BTreeMap::new(),
        ops: None,
        seed: 7,
        generator: format!("timerbench gen {family} --timers {timers} --seed 7"),
        workload_path: path,
        reference,
        repeat: 3,
        inject_panic: false,
    }
}
