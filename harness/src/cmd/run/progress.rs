//! The progress of a run: a bar with the cells done and the time left on a terminal, one
//! plain line per cell otherwise (in a log, a pipe, CI).

use super::child::excerpt;
use crate::schema::{CellRecord, Status};
use crate::table::duration;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Instant;

/// Progress: a bar on a terminal, plain lines otherwise.
pub(super) struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    started: Instant,
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
            (status, _) => format!(
                "{status:?}: {}",
                excerpt(record.reason.as_deref().unwrap_or(""))
                    .chars()
                    .take(120)
                    .collect::<String>()
            ),
        };
        let line = format!(
            "[{}/{}] {label}: {outcome} ({:.1} s)",
            index + 1,
            self.total,
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
