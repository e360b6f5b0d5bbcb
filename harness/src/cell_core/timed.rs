//! The timed replay: the one loop whose time `timerbench cell` reports as throughput and
//! `cargo bench` samples, so that the two measure the same thing.
//!
//! A timed replay is a fresh queue built with `with_capacity` of the verified peak, an
//! optional fill replayed before the clock starts, then `Instant` around `drive` of the
//! timed steps with the [`Quiet`] observer, and nothing else: the queue is handed back
//! with the clock stopped, so that checking it and dropping it are not timed either.
//! The capacity is the peak the verification found
//! ([`Verified::capacity`](super::verify::Verified::capacity)): both callers verify an
//! implementation on the workload before they time it.
//!
//! Both callers split the workload at its fill, the leading starts
//! ([`Program::fill_steps`]), with [`TimedWorkload::after_fill`]; the fill's `drive` is
//! timed apart ([`Timed::fill_elapsed`]). So one definition gives four figures
//! (`results/FORMAT.md`, *Per operation*): per operation line ([`Operations::Lines`]) or per
//! unit ([`Operations::Units`]: a `t N` is N one-tick calls), the fill included or not.
//! `timerbench cell` records all four; `cargo bench` reports the one per unit after the
//! fill (its throughput elements), which is the record's `ns_per_unit_after_fill`.

use super::verify::Verified;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};
use timerbench_impls::floor::{Firings, building_with};
use timerbench_impls::{TimerId, TimerQueue, Variant};
use timerbench_workloads::Program;
use timerbench_workloads::program::Step;
use timerbench_workloads::reference::Summary;
use timerbench_workloads::replay::{Counts, Observer, Quiet, ReplayError, drive, empty_handles};

/// How a pass builds its queues: the variant (its parameters) and the capacity, the peak
/// the verification found, and for the floor what it fires.
#[derive(Debug, Clone, Copy)]
pub struct Recipe<'v> {
    /// The implementation and its parameters.
    pub variant: &'v Variant,
    /// Room for this many pending timers.
    pub capacity: usize,
    /// The floor's firings on the workload (its warm-up's,
    /// [`Verified::firings`](super::verify::Verified::firings)); `None` for a queue.
    pub firings: Option<&'v Arc<Firings>>,
}

impl<'v> Recipe<'v> {
    /// The recipe of `variant` as `verified` on the workload: its peak as the capacity, and
    /// the floor's firings.
    pub fn verified(variant: &'v Variant, verified: &'v Verified) -> anyhow::Result<Self> {
        Ok(Recipe {
            variant,
            capacity: verified.capacity()?,
            firings: verified.firings.as_ref(),
        })
    }

    /// A fresh queue (a floor that fires the recipe's firings).
    pub fn build<Q: TimerQueue<u64>>(&self) -> Q {
        match self.firings {
            Some(firings) => building_with(firings, || self.variant.build(self.capacity)),
            None => self.variant.build(self.capacity),
        }
    }
}

/// How the operations of a timed replay are counted, for a time per operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operations {
    /// One per line of the workload, a `t N` counting once: the summary's `operations`,
    /// what `timerbench cell` divides its throughput by.
    Lines,
    /// One per unit the replay times on its own
    /// ([`Kind`](timerbench_workloads::replay::Kind)): a line, except that a `t N` counts
    /// N one-tick calls; what `cargo bench` reports as throughput elements.
    Units,
}

/// A workload as the timed replay sees it: the steps replayed before the clock starts
/// (none, or the fill), and the steps timed.
pub struct TimedWorkload<'p> {
    fill: Option<Program>,
    timed: Cow<'p, Program>,
}

impl<'p> TimedWorkload<'p> {
    /// The whole of `program` timed, nothing before the clock: `timerbench cell`'s
    /// latency pass, which times every unit, the fill's starts included. Borrows the
    /// program, so a large workload is not copied.
    pub fn whole(program: &'p Program) -> Self {
        TimedWorkload {
            fill: None,
            timed: Cow::Borrowed(program),
        }
    }

    /// The first `fill_steps` steps of `program` replayed (and timed apart) before the
    /// timed steps: the throughput repeats of `timerbench cell` and `cargo bench`'s groups,
    /// split at [`Program::fill_steps`]. The fill must be starts only, or the split is not
    /// the one the caller meant.
    pub fn after_fill(program: &Program, fill_steps: usize) -> Result<Self, String> {
        let Some((fill, _)) = program.steps.split_at_checked(fill_steps) else {
            return Err(format!(
                "a fill of {fill_steps} steps in a workload of {}",
                program.steps.len()
            ));
        };
        if let Some(index) = fill.iter().position(|s| !matches!(s, Step::Start { .. })) {
            return Err(format!(
                "the fill is the leading starts, but line {} is not a start",
                program.lines[index]
            ));
        }
        let part = |range: std::ops::Range<usize>| Program {
            path: program.path.clone(),
            metadata: program.metadata.clone(),
            steps: program.steps[range.clone()].to_vec(),
            lines: program.lines[range].to_vec(),
            keys: program.keys.clone(),
            ..Program::default()
        };
        Ok(TimedWorkload {
            fill: Some(part(0..fill_steps)),
            timed: Cow::Owned(part(fill_steps..program.steps.len())),
        })
    }

    /// The steps timed.
    pub fn timed(&self) -> &Program {
        &self.timed
    }

    /// The operations of the timed steps, counted as `operations` says.
    pub fn operations(&self, operations: Operations) -> u64 {
        count(&self.timed, operations)
    }

    /// The operations of the fill (each a start: lines and units are the same).
    pub fn fill_operations(&self) -> u64 {
        self.fill.as_ref().map_or(0, |fill| fill.steps.len() as u64)
    }

    /// A fresh queue built by `recipe`, the fill replayed: ready for the clock. An error is
    /// the fill's replay failing.
    pub fn fresh_queue<Q: TimerQueue<u64>>(
        &self,
        recipe: Recipe<'_>,
    ) -> Result<Ready<'_, Q>, ReplayError> {
        let mut ready = Ready {
            handles: empty_handles(&self.timed),
            counts: Counts::default(),
            queue: recipe.build(),
            timed: &self.timed,
            fill_elapsed: Duration::ZERO,
        };
        if let Some(fill) = &self.fill {
            // Timed apart, so that a caller can count the fill in or leave it out.
            let started = Instant::now();
            drive(
                &mut ready.queue,
                fill,
                &mut ready.handles,
                &mut ready.counts,
                &mut Quiet,
            )?;
            ready.fill_elapsed = started.elapsed();
        }
        Ok(ready)
    }
}

/// The operations of `program`'s steps, counted as `operations` says.
fn count(program: &Program, operations: Operations) -> u64 {
    match operations {
        Operations::Lines => program.steps.len() as u64,
        Operations::Units => program
            .steps
            .iter()
            .map(|step| match *step {
                Step::Tick { ticks } => ticks,
                _ => 1,
            })
            .sum(),
    }
}

/// A queue about to replay the timed steps, with the handles and counts of its fill.
pub struct Ready<'w, Q> {
    handles: Vec<TimerId>,
    counts: Counts,
    queue: Q,
    timed: &'w Program,
    /// The time of the fill's `drive` (zero without a fill).
    fill_elapsed: Duration,
}

impl<Q: TimerQueue<u64>> Ready<'_, Q> {
    /// The timed replay: `Instant` around `drive` of the timed steps with [`Quiet`], and
    /// only that.
    pub fn time(mut self) -> Timed<Q> {
        let started = Instant::now();
        let result = drive(
            &mut self.queue,
            self.timed,
            &mut self.handles,
            &mut self.counts,
            &mut Quiet,
        );
        let elapsed = started.elapsed();
        Timed {
            elapsed,
            fill_elapsed: self.fill_elapsed,
            replayed: Replayed {
                result,
                counts: self.counts,
                queue: self.queue,
            },
        }
    }

    /// The timed steps replayed with `observer`, which does its own timing (the latency
    /// pass's probe).
    pub fn observe<O: Observer>(mut self, observer: &mut O) -> Replayed<Q> {
        let result = drive(
            &mut self.queue,
            self.timed,
            &mut self.handles,
            &mut self.counts,
            observer,
        );
        Replayed {
            result,
            counts: self.counts,
            queue: self.queue,
        }
    }
}

/// The name of the one function Callgrind counts inside (`--toggle-collect`): distinctive,
/// so that the glob `*timerbench_counted_replay*` matches its instances (one per
/// structure, as it is generic) and nothing else, in a debug or a release build.
pub const COUNTED_FUNCTION: &str = "timerbench_counted_replay";

/// The counted replay: `drive` of the timed steps with [`Quiet`], as [`Ready::time`] does
/// without the two clock reads, and nothing else. Never inlined, so that it stays a
/// function of its own that Callgrind's collection is toggled on at its entry and off at
/// its return ([`COUNTED_FUNCTION`]): the fill before it and the check and drop after it
/// are not counted.
#[inline(never)]
pub fn timerbench_counted_replay<Q: TimerQueue<u64>>(ready: Ready<'_, Q>) -> Replayed<Q> {
    ready.observe(&mut Quiet)
}

/// A timed replay's wall time and what it left.
pub struct Timed<Q> {
    /// The time of `drive` over the timed steps.
    pub elapsed: Duration,
    /// The time of `drive` over the fill, before the timed steps (zero without a fill).
    pub fill_elapsed: Duration,
    /// The replay's result, counts and queue.
    pub replayed: Replayed<Q>,
}

/// What a replay of a verified workload left, to check against the reference.
pub struct Replayed<Q> {
    /// `drive`'s result.
    pub result: Result<(), ReplayError>,
    /// The counts, the fill's included.
    pub counts: Counts,
    /// The queue, as the replay left it.
    pub queue: Q,
}

impl<Q: TimerQueue<u64>> Replayed<Q> {
    /// The replay's result and counts against the verified `reference`: a replay after the
    /// verified one logs no firing, so its counts are what is left to compare.
    pub fn check(&self, reference: &Summary) -> Result<(), String> {
        if let Err(error) = &self.result {
            return Err(error.to_string());
        }
        let got = [
            ("fired", self.counts.fired, reference.fired),
            ("started", self.counts.started, reference.started),
            ("stopped", self.counts.stopped, reference.stopped),
            ("misses", self.counts.misses, reference.misses),
            ("pending", self.queue.len() as u64, reference.pending),
            ("final clock", self.queue.now(), reference.final_clock),
        ];
        match got.iter().find(|(_, got, expected)| got != expected) {
            Some((what, got, expected)) => Err(format!("{what}: expected {expected}, got {got}")),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_core::testing::{generated as program, variant};
    use timerbench_impls::binary_heap::BinaryHeapTimers;

    #[test]
    fn a_split_replay_ends_where_the_whole_one_does() {
        let program = program("hold", 300, &[]);
        let capacity = program.peak_pending as usize;
        let heap = variant("binary-heap");
        let whole = TimedWorkload::whole(&program);
        let split = TimedWorkload::after_fill(&program, 300).unwrap();
        for workload in [&whole, &split] {
            let timed = workload
                .fresh_queue::<BinaryHeapTimers<u64>>(Recipe {
                    variant: &heap,
                    capacity,
                    firings: None,
                })
                .unwrap()
                .time();
            assert_eq!(timed.replayed.check(&program.summary), Ok(()));
        }
        assert_eq!(split.timed().steps.len(), program.steps.len() - 300);
    }

    #[test]
    fn lines_count_a_tick_run_once_and_units_count_each_tick() {
        let program = program("sparse", 20, &[("drive", "tick")]);
        let whole = TimedWorkload::whole(&program);
        let lines = whole.operations(Operations::Lines);
        let units = whole.operations(Operations::Units);
        assert_eq!(lines, program.summary.operations);
        assert!(units > lines, "{units} units, {lines} lines");
        let split = TimedWorkload::after_fill(&program, 1).unwrap();
        assert_eq!(split.operations(Operations::Lines), lines - 1);
        assert_eq!(split.operations(Operations::Units), units - 1);
    }

    #[test]
    fn a_fill_must_be_leading_starts() {
        let program = program("start-stop", 10, &[]);
        let too_long = TimedWorkload::after_fill(&program, 12).err().unwrap();
        assert!(too_long.contains("is not a start"), "{too_long}");
        let past_the_end = program.steps.len() + 1;
        assert!(TimedWorkload::after_fill(&program, past_the_end).is_err());
    }

    #[test]
    fn a_replay_that_counts_otherwise_fails_its_check() {
        let program = program("hold", 50, &[]);
        let heap = variant("binary-heap");
        let recipe = Recipe {
            variant: &heap,
            capacity: 50,
            firings: None,
        };
        let mut replayed = TimedWorkload::whole(&program)
            .fresh_queue::<BinaryHeapTimers<u64>>(recipe)
            .unwrap()
            .observe(&mut Quiet);
        assert_eq!(replayed.check(&program.summary), Ok(()));
        replayed.counts.fired += 1;
        let error = replayed.check(&program.summary).unwrap_err();
        assert!(error.starts_with("fired: expected "), "{error}");
    }
}
