//! The time a run has left, learned from the cells it has finished.
//!
//! A suite's cells differ in cost by four orders of magnitude: a 1k cell is a few process
//! starts and a few minimum-length samples, a 1M cell is dozens of replays of a second or
//! more, and two thirds of the run's time go to the 1M groups. Nor do lines say it: at 1M
//! keepalive took twelve times purgatory's time over as many lines. So a mean over the
//! cells done so far says little about the cells left (the suite runs workload by
//! workload, sizes ascending: early on it has seen only small ones, and it read "3 minutes
//! left" of a 20-minute run). Each cell left is predicted instead:
//!
//! 1. from the table of a whole run of the suite ([`STANDARD_COSTS`]), when it has the
//!    cell: the cells' costs relative to one another hold from run to run, while the
//!    machine's speed moves them all together. So the table's seconds are scaled by the
//!    speed found so far: the learned cells' seconds over the table's for them (1 before
//!    any is learned);
//! 2. else from the finished cells of the same implementation at the same size: their
//!    seconds per workload line, times the cell's lines;
//! 3. else any implementation at that size: the size's seconds per line;
//! 4. else the nearest size below that has any, by the same two rules: per line, a larger
//!    size costs more (its cache misses), so this errs short until the size is reached,
//!    which the suite's first workload does.
//!
//! A cell left out by design (above its structure's suite limit) costs nothing.
//!
//! A cell is learned when its whole group is finished, since its `samples` processes
//! (rounds after every cell's `full` one) belong to its time: the record's
//! `elapsed_seconds`, every process included. The group in progress is predicted whole,
//! less the time it has already run.

use std::collections::BTreeMap;
use std::time::Duration;
use timerbench_workloads::suite::STANDARD_COSTS;

/// What the estimate knows of a cell before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CellShape {
    pub workload: String,
    /// The implementation's label (a variant with parameters is its own).
    pub implementation: String,
    pub timers: u64,
    /// The workload's operation lines.
    pub lines: u64,
    /// Left out by design: not run, so it costs nothing.
    pub skipped: bool,
}

impl CellShape {
    fn id(&self) -> CellId {
        (
            self.workload.clone(),
            self.timers,
            self.implementation.clone(),
        )
    }
}

/// A cell as the costs table names it: workload, timers, implementation.
type CellId = (String, u64, String);

/// The table of [`STANDARD_COSTS`]: seconds by cell. A line that does not read is
/// skipped (the table only steers an estimate; its test checks every line reads).
pub(super) fn costs_table(text: &str) -> BTreeMap<CellId, f64> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with("workload,"))
        .filter_map(|line| {
            let mut fields = line.split(',');
            let workload = fields.next()?.to_string();
            let timers = fields.next()?.parse().ok()?;
            let implementation = fields.next()?.to_string();
            let seconds: f64 = fields.next()?.parse().ok()?;
            (fields.next().is_none() && seconds.is_finite() && seconds >= 0.0)
                .then_some(((workload, timers, implementation), seconds))
        })
        .collect()
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

/// The table's costs, and the learned ones: by (size, implementation) and by size.
#[derive(Debug, Default)]
pub(super) struct Estimate {
    table: BTreeMap<CellId, f64>,
    /// Seconds learned, and the table's seconds, over the learned cells the table has.
    speed: Spent,
    by_cell: BTreeMap<(u64, String), Spent>,
    by_size: BTreeMap<u64, Spent>,
}

impl Estimate {
    /// An estimate that starts from the standard suite's costs table.
    pub fn from_standard_costs() -> Self {
        Estimate {
            table: costs_table(STANDARD_COSTS),
            ..Estimate::default()
        }
    }

    /// Learns a finished cell: `seconds` of wall time, every process included.
    pub fn learn(&mut self, cell: &CellShape, seconds: f64) {
        // A cell left out took no time, whatever the table says its run took: learning it
        // would read the machine as faster than it is.
        if cell.skipped {
            return;
        }
        if let Some(&expected) = self.table.get(&cell.id()) {
            // Spent's `lines` holds the table's seconds here: the speed is a ratio of two
            // sums of seconds, as a cost per line is of seconds and lines.
            self.speed.seconds += seconds;
            self.speed.lines += expected;
        }
        self.by_cell
            .entry((cell.timers, cell.implementation.clone()))
            .or_default()
            .add(seconds, cell.lines);
        self.by_size
            .entry(cell.timers)
            .or_default()
            .add(seconds, cell.lines);
    }

    /// The predicted seconds of `cell` (the module's rules), `None` when neither the table
    /// nor anything learned says.
    pub fn predict(&self, cell: &CellShape) -> Option<f64> {
        if cell.skipped {
            return Some(0.0);
        }
        if let Some(&expected) = self.table.get(&cell.id()) {
            return Some(expected * self.speed.per_line().unwrap_or(1.0));
        }
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
    /// the group in progress has run; `None` when some cell left has no prediction yet.
    pub fn time_left<'a>(
        &self,
        left: impl IntoIterator<Item = &'a CellShape>,
        into_current: Duration,
    ) -> Option<Duration> {
        let seconds: f64 = left
            .into_iter()
            .map(|c| self.predict(c))
            .sum::<Option<f64>>()?;
        let seconds = (seconds - into_current.as_secs_f64()).max(0.0);
        Some(Duration::from_secs_f64(seconds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(implementation: &str, timers: u64, lines: u64) -> CellShape {
        CellShape {
            workload: "hold".to_string(),
            implementation: implementation.to_string(),
            timers,
            lines,
            skipped: false,
        }
    }

    #[test]
    fn the_standard_costs_table_reads_whole() {
        let lines = STANDARD_COSTS
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("workload,"))
            .count();
        assert!(lines > 0);
        assert_eq!(
            costs_table(STANDARD_COSTS).len(),
            lines,
            "a line did not read"
        );
    }

    #[test]
    fn a_cell_in_the_table_is_its_cost_there_scaled_by_the_speed_found() {
        let mut estimate = Estimate {
            table: costs_table(
                "workload,timers,implementation,seconds\nhold,1000,heap,2\nhold,1000,wheel,10\n",
            ),
            ..Estimate::default()
        };
        assert_eq!(estimate.predict(&cell("wheel", 1000, 5)), Some(10.0));
        // The heap took three times the table's: so will the wheel.
        estimate.learn(&cell("heap", 1000, 5), 6.0);
        assert_eq!(estimate.predict(&cell("wheel", 1000, 5)), Some(30.0));
        // A cell left out costs nothing, and teaches nothing of the machine's speed.
        let skipped = CellShape {
            skipped: true,
            ..cell("wheel", 1000, 5)
        };
        assert_eq!(estimate.predict(&skipped), Some(0.0));
        estimate.learn(&skipped, 0.0);
        assert_eq!(estimate.predict(&cell("wheel", 1000, 5)), Some(30.0));
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
