//! What the cell's unit tests share: generated workloads, compiled in memory or written
//! to disk with a cell spec for them.

use crate::schema::{CellKey, CellMode, CellSpec, identity};
use std::path::Path;
use timerbench_workloads::families::{self, GenSpec};
use timerbench_workloads::{Program, compile, load, writer};

/// The workload `family` generates at `timers` with `params`, compiled with the model.
pub(crate) fn generated(family: &str, timers: u64, params: &[(&str, &str)]) -> Program {
    let spec = GenSpec {
        timers,
        ops: None,
        seed: 5,
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let workload = families::generate(family, &spec).unwrap();
    compile(&workload, Path::new(family)).unwrap()
}

/// Writes a generated workload into `dir` and returns a spec for it, with the model's
/// summary as the reference.
pub(crate) fn spec_for(dir: &Path, family: &str, timers: u64, implementation: &str) -> CellSpec {
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
    let key = CellKey {
        workload: family.to_string(),
        timers,
        implementation: implementation.to_string(),
    };
    CellSpec {
        cell: identity(
            key,
            family,
            &gen_spec,
            format!("timerbench gen {family} --timers {timers} --seed 7"),
            "exact".to_string(),
            &reference,
        ),
        workload_path: path,
        reference,
        repeat: 3,
        min_sample_ns: 1_000_000,
        mode: CellMode::Full,
        inject_panic: false,
    }
}

/// The variant `label` (a name, or `NAME:key=value,...`).
pub(crate) fn variant(label: &str) -> timerbench_impls::Variant {
    timerbench_impls::Variant::parse(label).unwrap()
}
