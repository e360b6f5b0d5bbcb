//! How far the conformance suite and the differential test may move the clock of the
//! structure under test, read from what it declares empty time costs it
//! ([`EmptyTime`](timerbench_impls::EmptyTime)).
//!
//! Most structures skip empty time: a clock move costs the timers it handles, so the
//! suites move their clocks by up to 2^63 ticks and to the end of time. A scan
//! (`Scanned`) pays every pending timer per move, whatever the span, so it takes the same
//! moves. A walker (`Walked { step }`: skynet's `timer_update`, Netty's worker) visits one
//! bucket per `step` ticks it covers, due or not: a move of 2^40 ticks would take it hours,
//! and that cost is its declared nature, not a bug. For a walker the suites cap every clock
//! move, give each check that needs huge moves a counterpart of the same shape within the
//! cap (named as such, and announced on stderr), and check instead that its moves cost what
//! it declares. Starts are never capped: a deadline beyond the horizon is a valid start,
//! stopped or left pending rather than reached.

// Each suite uses its own part of this file.
#![allow(dead_code)]

use timerbench_impls::{EmptyTime, Tick};

/// The most bucket visits one clock move of the conformance suite may cost a walker.
pub const WALK_MOVE_VISITS: u64 = 1 << 21;

/// The most bucket visits all the clock moves of one conformance check may cost a walker.
pub const WALK_TEST_VISITS: u64 = 1 << 26;

/// What the suites may ask of the clock of the structure under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Any move: its cost follows the timers, not the ticks (skipped or scanned).
    Any,
    /// A walker: a move of N ticks visits about N / `step` buckets.
    Walker {
        /// Ticks per bucket visit.
        step: Tick,
    },
}

impl Reach {
    /// The reach of a structure that declares `empty_time`.
    pub fn of(empty_time: EmptyTime) -> Reach {
        match empty_time {
            EmptyTime::Walked { step } => Reach::Walker { step: step.max(1) },
            EmptyTime::Skipped | EmptyTime::Scanned => Reach::Any,
        }
    }

    /// Whether it walks empty time.
    pub fn is_walker(self) -> bool {
        matches!(self, Reach::Walker { .. })
    }

    /// The bucket visits a move of `ticks` costs a walker (rounded up; 0 for `Any`).
    pub fn visits(self, ticks: Tick) -> u64 {
        match self {
            Reach::Any => 0,
            Reach::Walker { step } => ticks.div_ceil(step),
        }
    }

    /// The ticks `visits` bucket visits cover: unbounded for `Any`.
    pub fn ticks(self, visits: u64) -> Tick {
        match self {
            Reach::Any => Tick::MAX,
            Reach::Walker { step } => visits.saturating_mul(step),
        }
    }

    /// The longest single move of the conformance suite.
    pub fn max_move(self) -> Tick {
        self.ticks(WALK_MOVE_VISITS)
    }

    /// `ticks`, or for a walker at most the longest single move.
    pub fn clamp(self, ticks: Tick) -> Tick {
        ticks.min(self.max_move())
    }
}
