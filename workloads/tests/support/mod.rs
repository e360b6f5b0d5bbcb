//! What the import tests share.

use timerbench_workloads::import::Imported;

/// The imported workload's operations, one line each, as the v1 format writes them.
pub fn ops(imported: &Imported) -> String {
    imported
        .workload
        .ops
        .iter()
        .map(|op| format!("{op}\n"))
        .collect()
}
