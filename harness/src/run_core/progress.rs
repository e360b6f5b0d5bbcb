//! The progress of a run: a bar with the cells done and the time left on a terminal, one
//! plain line per cell otherwise (in a log, a pipe, CI).

use crate::schema::{CellRecord, Status};
use crate::table::duration;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Progress: a bar on a terminal, plain lines otherwise.
pub(super) struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    started: Instant,
    /// Cells finished so far: the estimate of the time left is read off them.
    done: AtomicU64,
}

impl Progress {
    pub(super) fn new(total: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} cells, {elapsed} elapsed, ETA {eta}  {msg}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Progress {
            bar,
            total,
            started: Instant::now(),
            done: AtomicU64::new(0),
        }
    }

    pub(super) fn start(&self, _index: usize, label: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(label.to_string());
        }
    }

    pub(super) fn finish_cell(&self, index: usize, label: &str, record: &CellRecord) {
        let outcome = match (&record.status, &record.throughput) {
            (Status::Ok, Some(t)) => format!("ok, {:.1} ns/op", t.ns_per_op.median),
            // The whole reason: a skip reason is one sentence, a failure's was cut to an
            // excerpt at a word's end when it was recorded.
            (status, _) => format!("{status:?}: {}", record.reason.as_deref().unwrap_or("")),
        };
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let line = format!(
            "[{}/{}, {}] {label}: {outcome} ({:.1} s)",
            index + 1,
            self.total,
            self.timing(done),
            record.elapsed_seconds
        );
        match &self.bar {
            Some(bar) => {
                bar.println(line);
                bar.inc(1);
            }
            None => println!("{line}"),
        }
    }

    /// The time since the run began and an estimate of what is left, from the mean time
    /// of the `done` cells so far: `1m05s elapsed, ~3m20s left`.
    fn timing(&self, done: u64) -> String {
        let elapsed = self.started.elapsed();
        let left = time_left(elapsed, done, self.total);
        format!(
            "{} elapsed, ~{} left",
            clock(elapsed),
            clock(left.unwrap_or_default())
        )
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

/// The time the `total - done` cells left would take at the mean of the `done` ones.
fn time_left(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
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
    fn the_time_left_is_the_mean_cell_times_the_cells_left() {
        let elapsed = Duration::from_secs(30);
        assert_eq!(time_left(elapsed, 3, 10), Some(Duration::from_secs(70)));
        assert_eq!(time_left(elapsed, 0, 10), None);
        assert_eq!(time_left(elapsed, 10, 10), Some(Duration::ZERO));
    }

    #[test]
    fn a_clock_reads_seconds_minutes_and_hours() {
        assert_eq!(clock(Duration::from_secs(42)), "42s");
        assert_eq!(clock(Duration::from_secs(185)), "3m05s");
        assert_eq!(clock(Duration::from_secs(3720)), "1h02m");
    }
}
