//! The time a run has left, learned from the cells it has finished.
//!
//! A suite's cells differ in cost by four orders of magnitude: a 1k cell is a few process
//! starts and a few minimum-length samples, a 1M cell is dozens of replays of a second or
//! more, and half the run's time goes to the 1M groups. The suite runs workload by
//! workload, sizes ascending, so a mean over the cells done so far says little about the
//! cells left: early on it has seen only small ones (it read "3 minutes left" of a
//! 15-minute run). So each cell left is predicted from finished cells like it:
//!
//! 1. the same implementation at the same size: its seconds per workload line, times the
//!    cell's lines (a cell's replays, and so its time, grow with its lines at the sizes
//!    where time is spent);
//! 2. else any implementation at that size: the size's seconds per line;
//! 3. else the nearest size below that has any, by the same two rules: per line, a larger
//!    size costs more (its cache misses), so this errs short until the size is reached,
//!    which the suite's first workload does.
//!
//! A cell is learned when its whole group is finished, since its `samples` processes
//! (rounds after every cell's `full` one) belong to its time: the record's
//! `elapsed_seconds`, every process included. The group in progress is predicted whole,
//! less the time it has already run.

use std::collections::BTreeMap;
use std::time::Duration;

/// What the estimate knows of a cell before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CellShape {
    /// The implementation's label (a variant with parameters is its own).
    pub implementation: String,
    pub timers: u64,
    /// The workload's operation lines.
    pub lines: u64,
}

/// Seconds and lines summed over finished cells.
#[derive(Debug, Clone, Copy, Default)]
struct Spent {
    seconds: f64,
    lines: f64,
}

impl Spent {
    fn add(&mut self, seconds: f64, lines: u64) {
        self.seconds += seconds;
        self.lines += lines as f64;
    }

    /// Seconds per line, when any line was spent.
    fn per_line(&self) -> Option<f64> {
        (self.lines > 0.0).then(|| self.seconds / self.lines)
    }
}

/// The learned costs: by (size, implementation) and by size.
#[derive(Debug, Default)]
pub(super) struct Estimate {
    by_cell: BTreeMap<(u64, String), Spent>,
    by_size: BTreeMap<u64, Spent>,
}

impl Estimate {
    /// Learns a finished cell: `seconds` of wall time, every process included.
    pub fn learn(&mut self, cell: &CellShape, seconds: f64) {
        self.by_cell
            .entry((cell.timers, cell.implementation.clone()))
            .or_default()
            .add(seconds, cell.lines);
        self.by_size
            .entry(cell.timers)
            .or_default()
            .add(seconds, cell.lines);
    }

    /// Whether anything was learned yet.
    pub fn knows_anything(&self) -> bool {
        !self.by_size.is_empty()
    }

    /// The predicted seconds of `cell` (the module's rules), `None` before anything was
    /// learned.
    pub fn predict(&self, cell: &CellShape) -> Option<f64> {
        let sizes = std::iter::once(cell.timers).chain(
            self.by_size
                .range(..cell.timers)
                .rev()
                .map(|(&timers, _)| timers),
        );
        for timers in sizes {
            let same = self
                .by_cell
                .get(&(timers, cell.implementation.clone()))
                .and_then(Spent::per_line);
            let any = self.by_size.get(&timers).and_then(Spent::per_line);
            if let Some(per_line) = same.or(any) {
                return Some(per_line * cell.lines as f64);
            }
        }
        // Only larger sizes are known: their cost per line, an overestimate that the
        // first small group replaces.
        let (_, spent) = self.by_size.iter().next()?;
        Some(spent.per_line()? * cell.lines as f64)
    }

    /// The time `left` (cells not yet learned) would take, less `into_current`, the time
    /// the group in progress has run; `None` before anything was learned.
    pub fn time_left<'a>(
        &self,
        left: impl IntoIterator<Item = &'a CellShape>,
        into_current: Duration,
    ) -> Option<Duration> {
        if !self.knows_anything() {
            return None;
        }
        let seconds: f64 = left.into_iter().filter_map(|c| self.predict(c)).sum();
        let seconds = (seconds - into_current.as_secs_f64()).max(0.0);
        Some(Duration::from_secs_f64(seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(implementation: &str, timers: u64, lines: u64) -> CellShape {
        CellShape {
            implementation: implementation.to_string(),
            timers,
            lines,
        }
    }

    #[test]
    fn a_cell_is_predicted_from_its_implementation_at_its_size_per_line() {
        let mut estimate = Estimate::default();
        estimate.learn(&cell("heap", 1_000_000, 3_000_000), 30.0);
        estimate.learn(&cell("wheel", 1_000_000, 3_000_000), 6.0);
        // Twice the lines, twice the time; the wheel's own rate, not the size's mean.
        assert_eq!(
            estimate.predict(&cell("wheel", 1_000_000, 6_000_000)),
            Some(12.0)
        );
    }

    #[test]
    fn an_implementation_unseen_at_a_size_takes_the_size_rate_then_the_nearest_size_below() {
        let mut estimate = Estimate::default();
        estimate.learn(&cell("heap", 1_000, 1_000), 1.0);
        estimate.learn(&cell("heap", 100_000, 100_000), 10.0);
        estimate.learn(&cell("wheel", 100_000, 100_000), 30.0);
        // At 100k the size's rate: 40 s over 200k lines.
        assert_eq!(estimate.predict(&cell("list", 100_000, 10_000)), Some(2.0));
        // At 1M, nothing yet: the nearest size below, the implementation's own rate.
        assert_eq!(
            estimate.predict(&cell("wheel", 1_000_000, 1_000_000)),
            Some(300.0)
        );
        // Below every known size: the smallest known size's rate.
        assert_eq!(estimate.predict(&cell("heap", 100, 100)), Some(0.1));
    }

    #[test]
    fn the_time_left_sums_the_cells_left_less_the_current_groups_time() {
        let mut estimate = Estimate::default();
        assert_eq!(
            estimate.time_left(&[cell("heap", 1_000, 1_000)], Duration::ZERO),
            None
        );
        estimate.learn(&cell("heap", 1_000, 1_000), 2.0);
        let left = [cell("heap", 1_000, 1_000), cell("heap", 1_000, 2_000)];
        assert_eq!(
            estimate.time_left(&left, Duration::from_secs(1)),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            estimate.time_left(&left, Duration::from_secs(60)),
            Some(Duration::ZERO)
        );
    }
}
