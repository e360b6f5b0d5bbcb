//! The progress of a run: a bar with the cells done and the time left on a terminal, one
//! plain line per cell otherwise (in a log, a pipe, CI). The time left is learned from the
//! cells finished so far, cell by cell ([`super::estimate`]).

use super::estimate::{CellShape, Estimate};
use crate::schema::{CellRecord, Status};
use crate::table::duration;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Progress: a bar on a terminal, plain lines otherwise.
pub(super) struct Progress {
    bar: Option<ProgressBar>,
    /// Every cell of the run in plan order, as the estimate knows it.
    cells: Vec<CellShape>,
    started: Instant,
    /// Cells run at once (`run --counts --jobs`): the time left is the cells' time over it.
    jobs: u32,
    state: Mutex<State>,
}

/// What changes as the run goes.
struct State {
    estimate: Estimate,
    /// Cells whose `full` process finished: the bar's position.
    done: u64,
    /// The cells before this index are learned (their whole block finished).
    learned: usize,
    /// When the block in progress started.
    block_started: Instant,
}

impl Progress {
    pub(super) fn new(cells: Vec<CellShape>) -> Self {
        let total = cells.len() as u64;
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} cells, {elapsed} elapsed, {prefix}  {msg}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Progress {
            bar,
            cells,
            started: Instant::now(),
            jobs: 1,
            state: Mutex::new(State {
                estimate: Estimate::from_standard_costs(),
                done: 0,
                learned: 0,
                block_started: Instant::now(),
            }),
        }
    }

    /// Progress of a counting run (`run --counts`), `jobs` cells at once: its estimate
    /// learns from its own cells only, since the suite's costs table holds a timed run's.
    pub(super) fn for_counts(self, jobs: u32) -> Self {
        self.state().estimate = Estimate::default();
        Progress {
            jobs: jobs.max(1),
            ..self
        }
    }

    /// A block of groups starts at cell `first` (plan order).
    pub(super) fn start_block(&self, first: usize) {
        let mut state = self.state();
        state.block_started = Instant::now();
        state.learned = state.learned.max(first);
    }

    /// A block finished: its cells, from `first` in plan order, are learned with their
    /// whole time, every process included.
    pub(super) fn finish_block<'r>(
        &self,
        first: usize,
        records: impl IntoIterator<Item = &'r CellRecord>,
    ) {
        let mut state = self.state();
        let mut index = first;
        for record in records {
            if let Some(cell) = self.cells.get(index) {
                state.estimate.learn(cell, record.elapsed_seconds);
            }
            index += 1;
        }
        state.learned = state.learned.max(index);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while the lock was held only lost a progress line: go on with the state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn start(&self, _index: usize, label: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(label.to_string());
        }
    }

    pub(super) fn finish_cell(&self, index: usize, label: &str, record: &CellRecord) {
        let outcome = match (&record.status, &record.throughput) {
            (Status::Ok, Some(t)) => format!(
                "ok, {:.1} ns/op{}",
                t.ns_per_op.median,
                faults_note(t, record.operations)
            ),
            (Status::Ok, None) if record.counts.is_some() => {
                let per_line = timerbench_results::counts::Metric::Instructions.per_line(record);
                format!("ok, {:.1} instructions/line", per_line.unwrap_or(f64::NAN))
            }
            // The whole reason: a skip reason is one sentence, a failure's was cut to an
            // excerpt at a word's end when it was recorded.
            (status, _) => format!("{status:?}: {}", record.reason.as_deref().unwrap_or("")),
        };
        let left = {
            let mut state = self.state();
            state.done += 1;
            self.time_left(&state)
        };
        let line = format!(
            "[{}/{}, {} elapsed, {left}] {label}: {outcome} ({:.1} s)",
            index + 1,
            self.cells.len(),
            clock(self.started.elapsed()),
            record.elapsed_seconds
        );
        match &self.bar {
            Some(bar) => {
                bar.println(line);
                bar.set_prefix(left);
                bar.inc(1);
            }
            None => println!("{line}"),
        }
    }

    /// `~3m20s left`: the cells not yet learned, predicted from those that are
    /// ([`Estimate::time_left`]); before the first block is learned, the mean time of the
    /// `full` processes so far times the cells left, marked as a first guess.
    fn time_left(&self, state: &State) -> String {
        let left = &self.cells[state.learned.min(self.cells.len())..];
        match state
            .estimate
            .time_left(left, state.block_started.elapsed())
        {
            Some(left) => format!("~{} left", clock(left / self.jobs)),
            None => {
                let guess =
                    mean_time_left(self.started.elapsed(), state.done, self.cells.len() as u64);
                // Wall time per cell done: the jobs are in it already.
                format!("~{} left (first guess)", clock(guess.unwrap_or_default()))
            }
        }
    }

    /// A line of its own, above the bar on a terminal.
    pub(super) fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }

    pub(super) fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        println!("cells done in {}", duration(self.started.elapsed()));
    }
}

/// `, 0.93 page faults/line` when the timed replays took any: the page faults of the lines
/// after the fill, per line (a figure that pays for fresh pages says so where it is read).
fn faults_note(throughput: &timerbench_results::schema::Throughput, operations: u64) -> String {
    match throughput.page_faults {
        Some(faults) if faults.minor + faults.major > 0 => {
            let lines = operations.saturating_sub(throughput.fill_operations);
            format!(", {:.3} page faults/line", faults.per_line(lines))
        }
        _ => String::new(),
    }
}

/// The time the `total - done` cells left would take at the mean of the `done` ones.
fn mean_time_left(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    let per_cell = elapsed.checked_div(u32::try_from(done).ok().filter(|&d| d > 0)?)?;
    per_cell.checked_mul(u32::try_from(total.saturating_sub(done)).ok()?)
}

/// A duration as a clock reads: `42s`, `3m05s`, `1h02m`.
fn clock(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, seconds % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_guess_is_the_mean_cell_times_the_cells_left() {
        let elapsed = Duration::from_secs(30);
        assert_eq!(
            mean_time_left(elapsed, 3, 10),
            Some(Duration::from_secs(70))
        );
        assert_eq!(mean_time_left(elapsed, 0, 10), None);
        assert_eq!(mean_time_left(elapsed, 10, 10), Some(Duration::ZERO));
    }

    #[test]
    fn a_clock_reads_seconds_minutes_and_hours() {
        assert_eq!(clock(Duration::from_secs(42)), "42s");
        assert_eq!(clock(Duration::from_secs(185)), "3m05s");
        assert_eq!(clock(Duration::from_secs(3720)), "1h02m");
    }

    #[test]
    fn page_faults_show_per_timed_line_and_only_when_taken() {
        use timerbench_results::schema::{PageFaults, Throughput};
        let mut throughput: Throughput = serde_json::from_value(serde_json::json!({
            "repeats": 1,
            "ns_per_op": {"median": 1.0, "mad": 0.0, "samples": [1.0]},
            "ns_per_fired": null,
            "fill_operations": 100,
        }))
        .expect("a throughput record without page faults reads");
        assert_eq!(throughput.page_faults, None);
        assert_eq!(faults_note(&throughput, 1100), "");
        throughput.page_faults = Some(PageFaults {
            minor: 0,
            major: 0,
            replays: 4,
        });
        assert_eq!(faults_note(&throughput, 1100), "");
        // 4 replays of the 1,000 lines after the fill, 2,000 faults: half a fault a line.
        throughput.page_faults = Some(PageFaults {
            minor: 1_990,
            major: 10,
            replays: 4,
        });
        assert_eq!(faults_note(&throughput, 1100), ", 0.500 page faults/line");
    }
}
