//! The counts of a cell (schema 5): its timed part replayed once under Valgrind's
//! Callgrind, with the cache and branch simulation on, and what a reader compares by.
//!
//! A time on a virtual machine moves by percents between processes and by tens of percents
//! between runs; a count of a deterministic replay does not move at all. The counts are
//! the second axis of a cell: they judge a change to one structure to the instruction,
//! while rankings across structures stay on time (METHODOLOGY.md, *Counts*). A count is of
//! a simulated machine, not of this one: the record says which ([`CacheGeometry`]), and
//! two records of different machines are never compared.
//!
//! Only the timed part is counted: the lines after the fill, the same lines a cell's
//! `ns_per_op_after_fill` is taken over, never the process start, the workload's decoding
//! or the fill. Every figure a reader compares is per counted line ([`Metric::per_line`]).

use crate::schema::CellRecord;
use serde::{Deserialize, Serialize};

/// What one replay's timed part did on the simulated machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// The tool and its version, as `valgrind --version` prints it plus the tool:
    /// `valgrind-3.19.0 callgrind`.
    pub tool: String,
    /// The simulated caches: the machine the counts are of.
    pub cache: CacheGeometry,
    /// The operation lines counted: the workload's lines after the fill.
    pub lines: u64,
    /// The events over the counted lines.
    pub totals: CountTotals,
    /// Wall seconds the counting process took, start to end (Valgrind included): what the
    /// next count of this cell will cost, not a figure of the structure.
    pub seconds: f64,
}

/// One simulated cache level, as Valgrind's `--D1=size,assoc,line` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLevel {
    pub size_bytes: u64,
    pub associativity: u32,
    pub line_bytes: u32,
}

impl std::fmt::Display for CacheLevel {
    /// `32768,8,64`: the form Valgrind's cache flags take.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{},{},{}",
            self.size_bytes, self.associativity, self.line_bytes
        )
    }
}

/// The simulated machine's caches. Valgrind models two levels, an instruction and a data
/// first level and one last level (the machine's last, whatever its number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheGeometry {
    pub i1: CacheLevel,
    pub d1: CacheLevel,
    pub ll: CacheLevel,
}

/// The events Callgrind counts with `--cache-sim=yes --branch-sim=yes`, summed over the
/// counted lines. Callgrind's own event names are in brackets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountTotals {
    /// Instructions executed (`Ir`).
    pub instructions: u64,
    /// Data reads (`Dr`) and writes (`Dw`).
    pub data_reads: u64,
    pub data_writes: u64,
    /// First-level misses: instruction fetches (`I1mr`), data reads (`D1mr`), data writes
    /// (`D1mw`).
    pub i1_misses: u64,
    pub d1_read_misses: u64,
    pub d1_write_misses: u64,
    /// Last-level misses: instruction fetches (`ILmr`), data reads (`DLmr`), data writes
    /// (`DLmw`).
    pub ll_instruction_misses: u64,
    pub ll_read_misses: u64,
    pub ll_write_misses: u64,
    /// Conditional branches executed (`Bc`) and mispredicted (`Bcm`).
    pub conditional_branches: u64,
    pub conditional_mispredicts: u64,
    /// Indirect branches executed (`Bi`) and mispredicted (`Bim`).
    pub indirect_branches: u64,
    pub indirect_mispredicts: u64,
}

/// The estimated cycles' formula, as a record's reader sees it stated:
/// iai-callgrind's, which weights each access by where the simulated hierarchy answered it.
pub const EST_CYCLES_FORMULA: &str =
    "L1 hits + 5 x last-level hits + 35 x last-level misses (memory accesses)";

impl CountTotals {
    /// Every access the first level saw: instruction fetches and data reads and writes.
    pub fn accesses(&self) -> u64 {
        self.instructions + self.data_reads + self.data_writes
    }

    /// First-level misses of every kind.
    pub fn l1_misses(&self) -> u64 {
        self.i1_misses + self.d1_read_misses + self.d1_write_misses
    }

    /// Last-level misses of every kind: the accesses that went to memory.
    pub fn ll_misses(&self) -> u64 {
        self.ll_instruction_misses + self.ll_read_misses + self.ll_write_misses
    }

    /// Data first-level misses, reads and writes.
    pub fn d1_misses(&self) -> u64 {
        self.d1_read_misses + self.d1_write_misses
    }

    /// Mispredicted branches, conditional and indirect.
    pub fn mispredicts(&self) -> u64 {
        self.conditional_mispredicts + self.indirect_mispredicts
    }

    /// [`EST_CYCLES_FORMULA`]: an access that hit the first level costs 1, one the last
    /// level answered 5, one that went to memory 35. Saturating, since a malformed count
    /// must not wrap into a plausible figure.
    pub fn est_cycles(&self) -> u64 {
        let l1_hits = self.accesses().saturating_sub(self.l1_misses());
        let ll_hits = self.l1_misses().saturating_sub(self.ll_misses());
        l1_hits + 5 * ll_hits + 35 * self.ll_misses()
    }
}

/// What a reader compares cells by: the time, or one count per counted line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// The median ns/op of the timed samples: the time, as every reader read it before
    /// counts.
    Ns,
    Instructions,
    EstCycles,
    LlMisses,
    D1Misses,
    BranchMispredicts,
}

impl Metric {
    pub const ALL: [Metric; 6] = [
        Metric::Ns,
        Metric::Instructions,
        Metric::EstCycles,
        Metric::LlMisses,
        Metric::D1Misses,
        Metric::BranchMispredicts,
    ];

    /// The name a flag takes: `ns`, `instructions`, `est-cycles`, `ll-misses`, `d1-misses`,
    /// `branch-mispredicts`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Ns => "ns",
            Metric::Instructions => "instructions",
            Metric::EstCycles => "est-cycles",
            Metric::LlMisses => "ll-misses",
            Metric::D1Misses => "d1-misses",
            Metric::BranchMispredicts => "branch-mispredicts",
        }
    }

    /// The unit a table's header shows: `ns/op`, `instructions/line`, ...
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Ns => "ns/op",
            Metric::Instructions => "instructions/line",
            Metric::EstCycles => "est. cycles/line",
            Metric::LlMisses => "LL misses/line",
            Metric::D1Misses => "D1 misses/line",
            Metric::BranchMispredicts => "branch mispredicts/line",
        }
    }

    /// Whether the metric is a count (deterministic) rather than a time.
    pub fn is_count(self) -> bool {
        self != Metric::Ns
    }

    /// A count's total, for the count metrics.
    pub fn total(self, totals: &CountTotals) -> Option<u64> {
        match self {
            Metric::Ns => None,
            Metric::Instructions => Some(totals.instructions),
            Metric::EstCycles => Some(totals.est_cycles()),
            Metric::LlMisses => Some(totals.ll_misses()),
            Metric::D1Misses => Some(totals.d1_misses()),
            Metric::BranchMispredicts => Some(totals.mispredicts()),
        }
    }

    /// The cell's figure in this metric, `None` when the record has none: the median
    /// ns/op for [`Metric::Ns`], else the count per counted line.
    pub fn per_line(self, record: &CellRecord) -> Option<f64> {
        match self {
            Metric::Ns => record.throughput.as_ref().map(|t| t.ns_per_op.median),
            _ => {
                let counts = record.counts.as_ref()?;
                let total = self.total(&counts.totals)?;
                (counts.lines > 0).then(|| total as f64 / counts.lines as f64)
            }
        }
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Metric {
    type Err = String;

    /// One of [`Metric::ALL`]'s names; an unknown one is refused with the list.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
                format!("unknown metric `{name}`; one of: {}", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals() -> CountTotals {
        CountTotals {
            instructions: 1000,
            data_reads: 300,
            data_writes: 100,
            i1_misses: 10,
            d1_read_misses: 30,
            d1_write_misses: 10,
            ll_instruction_misses: 2,
            ll_read_misses: 5,
            ll_write_misses: 3,
            conditional_branches: 200,
            conditional_mispredicts: 20,
            indirect_branches: 10,
            indirect_mispredicts: 1,
        }
    }

    #[test]
    fn estimated_cycles_weigh_each_access_by_the_level_that_answered_it() {
        // 1400 accesses, 50 first-level misses, 10 of them to memory:
        // 1350 L1 hits + 5 x 40 LL hits + 35 x 10 memory accesses.
        assert_eq!(totals().est_cycles(), 1350 + 200 + 350);
    }

    #[test]
    fn a_metric_reads_by_its_name_and_refuses_an_unknown_one_with_the_list() {
        for metric in Metric::ALL {
            assert_eq!(metric.name().parse::<Metric>(), Ok(metric));
        }
        let error = "cycles".parse::<Metric>().unwrap_err();
        assert!(
            error.contains("`cycles`") && error.contains("est-cycles"),
            "{error}"
        );
    }

    #[test]
    fn count_metrics_read_their_totals() {
        let t = totals();
        assert_eq!(Metric::Instructions.total(&t), Some(1000));
        assert_eq!(Metric::LlMisses.total(&t), Some(10));
        assert_eq!(Metric::D1Misses.total(&t), Some(40));
        assert_eq!(Metric::BranchMispredicts.total(&t), Some(21));
        assert_eq!(Metric::Ns.total(&t), None);
    }
}
