//! What `compare` reads of the machine from the records' conditions: the CPU and memory
//! speed of each run, and each cell's memory probe.

use super::Side;
use timerbench_results::CellRecord;

/// The median of a cell's memory probe readings over all its processes, when it has any.
pub(super) fn cell_memory_probe(record: &CellRecord) -> Option<f64> {
    let mut readings: Vec<f64> = record
        .conditions
        .iter()
        .flat_map(|c| [c.memory_probe_before_ns, c.memory_probe_after_ns])
        .flatten()
        .collect();
    readings.sort_by(f64::total_cmp);
    readings.get(readings.len() / 2).copied()
}

impl Side {
    /// The median calibration time over every process of every record (`null` in records
    /// older than the field): how fast the machine ran for this folder's run.
    pub(super) fn calibration(&self) -> Option<f64> {
        let mut times: Vec<f64> = self
            .records
            .values()
            .flat_map(|r| &r.conditions)
            .filter_map(|c| c.calibration_ns)
            .collect();
        times.sort_by(f64::total_cmp);
        times.get(times.len() / 2).copied()
    }

    /// The median memory probe over every reading of every process (`null` in records
    /// older than the field): how fast the machine's shared cache and memory answered
    /// during this folder's run, the state the 1M cells depend on.
    pub(super) fn memory_probe(&self) -> Option<f64> {
        let mut times: Vec<f64> = self
            .records
            .values()
            .flat_map(|r| &r.conditions)
            .flat_map(|c| [c.memory_probe_before_ns, c.memory_probe_after_ns])
            .flatten()
            .collect();
        times.sort_by(f64::total_cmp);
        times.get(times.len() / 2).copied()
    }
}
