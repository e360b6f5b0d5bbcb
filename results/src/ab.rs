//! The record of one A/B duet (`timerbench ab`): one line of `ab.jsonl` per cell compared,
//! the per-round times of both sides, the ratio's median and bootstrap interval, and the
//! verdict read from that interval (`results/FORMAT.md`, *A/B records*).

use serde::{Deserialize, Serialize};

/// The file of A/B records in the folder `timerbench ab --out` names.
pub const AB_FILE: &str = "ab.jsonl";

/// One cell compared as a duet: A and B timed at the same time, one per core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbRecord {
    /// The workload family and its size.
    pub workload: String,
    pub timers: u64,
    /// The seed the workload was generated with.
    pub seed: u64,
    /// Each side: its variant label and the binary that measured it.
    pub a: AbSide,
    pub b: AbSide,
    /// The two CPUs; A ran on the first in even rounds, on the second in odd ones.
    pub cores: [usize; 2],
    /// The rounds each pair of processes ran, in order, when there were several
    /// (`--pairs`); `ratios` holds the pairs' rounds one pair after the other. Absent: one
    /// pair ran them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<Vec<u32>>,
    /// The per-round ratios B/A of the timed replays' times (one per round).
    pub ratios: Vec<f64>,
    /// The median of `ratios`.
    pub median_ratio: f64,
    /// The bootstrap 95% confidence interval of the median ratio.
    pub interval: [f64; 2],
    /// Bootstrap resamples, and the seed of their generator.
    pub resamples: u32,
    pub bootstrap_seed: u64,
    /// The equivalence margin, a fraction: an interval inside 1 ± margin is "no change".
    pub margin: f64,
    /// `no change`, `faster` or `slower`.
    pub verdict: String,
    /// The change, percent of A's time (B slower is positive): the median ratio less one.
    pub change_percent: f64,
    /// The solo phase, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solo: Option<AbSolo>,
    /// The other processes' CPU over the cell's duet, every pair of processes waited for
    /// (`crate::load`); absent in older records and where `/proc` could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_load: Option<crate::load::OthersLoad>,
    /// When the record was written (RFC 3339).
    pub written_at: String,
    /// What was compared: absent for a duet's time (`ns`, the records before counts); a
    /// count metric (`instructions`, `est-cycles`, ...) when each side was counted once
    /// under Callgrind (`ab --metric`). Then `counts` holds both sides' counts, `ratios` the
    /// one exact ratio of their counts per line, `interval` that ratio twice, and
    /// `duet_ns`, `cores` and `resamples` are not measurements (empty, as given, 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// A's and B's counts, with a count metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<[crate::counts::Counts; 2]>,
}

/// One side of a duet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbSide {
    /// The implementation and its parameters (`NAME` or `NAME:key=value,...`).
    pub variant: String,
    /// The binary that ran it.
    pub binary: String,
    /// The digest of its verified replay.
    pub digest: String,
    /// Operations (lines) of one timed replay, the fill excluded.
    pub operations: u64,
    /// Its timed replays in the duet, nanoseconds, one per round.
    pub duet_ns: Vec<u64>,
    /// The calibrated delay per timed replay injected for a study of the method
    /// (`TIMERBENCH_AB_SLOWDOWN_PERCENT`), nanoseconds; absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected_delay_ns: Option<u64>,
}

/// Each side timed alone on the first core, to state what the partner costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbSolo {
    /// The solo replays, nanoseconds, one per round.
    pub a_ns: Vec<u64>,
    pub b_ns: Vec<u64>,
    /// The median duet time over the median solo time, less one, percent, per side:
    /// how much running beside the partner slows each side's absolute figure.
    pub a_partner_effect_percent: f64,
    pub b_partner_effect_percent: f64,
    /// The median of the solo ratios B/A (rounds paired by index).
    pub solo_median_ratio: f64,
}
