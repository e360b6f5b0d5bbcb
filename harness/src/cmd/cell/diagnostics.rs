//! What the record has no field for: the figures that explain a cell's figures (page
//! faults inside the timed replays, allocations in the memory pass, the probe's cost, the allocator's settings,
//! the time of each pass), gathered by the passes and written on standard error by
//! `timerbench cell --diagnostics`. Standard output stays the one record line the parent
//! reads.

use super::clock::ProbeCost;
use crate::cell_core::os::allocator_tunables;

/// What the record has no field for, written on standard error with `--diagnostics`.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    /// Minor page faults taken inside `drive` (the fill's and the timed steps') in each
    /// timed sample, all its replays together (0 where `/proc/self/stat` cannot be read).
    pub throughput_drive_page_faults: Vec<u64>,
    /// Allocations made by `with_capacity` in the memory pass.
    pub construction_allocations: u64,
    /// Allocations made inside `drive` in the memory pass.
    pub memory_drive_allocations: u64,
    /// The latency clock's probe cost: what an empty unit records, and what a before/after
    /// pair costs the loop, nanoseconds.
    pub probe: Option<ProbeCost>,
    /// Seconds per pass: load, warm-up, memory, throughput, latency.
    pub pass_seconds: Vec<(&'static str, f64)>,
}

impl Diagnostics {
    /// Writes them on standard error.
    pub(super) fn print(&self) {
        eprintln!(
            "timerbench cell: inside drive per timed sample: minor page faults {:?}; memory \
             pass (the last one counted): {} allocations in with_capacity, {} inside drive",
            self.throughput_drive_page_faults,
            self.construction_allocations,
            self.memory_drive_allocations
        );
        if let Some(probe) = &self.probe {
            eprintln!(
                "timerbench cell: probe: {:.1} ns recorded by an empty unit, {:.1} ns per \
                 before/after pair",
                probe.recorded_ns, probe.pair_ns
            );
        }
        match allocator_tunables() {
            Some(tunables) => eprintln!("timerbench cell: allocator: GLIBC_TUNABLES={tunables}"),
            None => eprintln!("timerbench cell: allocator: default settings"),
        }
        let passes: Vec<String> = self
            .pass_seconds
            .iter()
            .map(|(name, seconds)| format!("{name} {seconds:.3} s"))
            .collect();
        eprintln!("timerbench cell: passes: {}", passes.join(", "));
    }
}
