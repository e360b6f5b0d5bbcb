//! `timerbench import csv`: a plain CSV of timer events to a v1 workload, for recordings
//! that are not ftrace (an application's own log, another tracer's export). It goes
//! through the same [`Builder`] as the ftrace importer, so the two mean the same things.
//!
//! The form, one event a line, fields separated by commas (spaces around them ignored):
//!
//! ```text
//! time,event,id[,deadline]
//! ```
//!
//! - `time`: when it happened, a whole number of nanoseconds on any clock (the first row is
//!   tick 0). Rows must come in non-decreasing time.
//! - `event`: `start` (arm, or re-arm if pending: `deadline` required), `stop`, or `fire`
//!   (the recording saw the timer fire: the replay's firing comes from the model, which
//!   fires it no later than this row; see the `import` module).
//! - `id`: the timer's name, any text without commas or spaces. One name is one timer for
//!   the whole file; the output numbers timers 0, 1, ... in order of first start.
//! - `deadline`: for `start` only, the absolute deadline in nanoseconds on the same clock as
//!   `time`; rounded up to a tick, so it never moves earlier. A past deadline is delay 0.
//!
//! Blank lines and lines starting with `#` are ignored, and so is a first line starting
//! with `time` (a header). Anything else that does not fit is an error naming the line:
//! unlike an ftrace capture, this form is written on purpose.

use super::{
    Builder, Event, ImportError, Imported, Moves, open_lines, source_names, tally_metadata,
};
use crate::Workload;
use crate::metadata::Metadata;
use std::io::BufRead;
use std::path::Path;

/// Imports the CSV at `path` with ticks of `tick_ns` nanoseconds (`tick_text` for `@tick`),
/// the clock moved as `moves` says.
pub fn import(
    path: &Path,
    tick_ns: u64,
    tick_text: &str,
    moves: Moves,
    generator: Option<&str>,
) -> Result<Imported, ImportError> {
    let input = open_lines(path)?;
    let mut builder = Builder::new(1, tick_ns, moves);
    let mut last_time: Option<u64> = None;
    let mut rows = 0u64;
    let mut seen_other = false;
    for (index, line) in input.lines().enumerate() {
        let number = index as u64 + 1;
        let line = line.map_err(|e| ImportError::line(path, number, e))?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if !seen_other && text.starts_with("time") {
            seen_other = true;
            continue;
        }
        seen_other = true;
        let bad = |what: &str| ImportError::line(path, number, format!("{what}: `{text}`"));
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        if !(3..=4).contains(&fields.len()) {
            return Err(bad("expected time,event,id[,deadline]"));
        }
        let time: u64 = fields[0]
            .parse()
            .map_err(|_| bad("the time is not a whole number of nanoseconds"))?;
        if last_time.is_some_and(|last| time < last) {
            return Err(bad("the time goes back: rows must come in time order"));
        }
        last_time = Some(time);
        let id = fields[2];
        if id.is_empty() || id.contains(char::is_whitespace) {
            return Err(bad("the id is empty or holds spaces"));
        }
        let who = (0, id.to_string());
        let event = match (fields[1], fields.get(3)) {
            ("start", Some(deadline)) => {
                let deadline: u64 = deadline
                    .parse()
                    .map_err(|_| bad("the deadline is not a whole number of nanoseconds"))?;
                Event::Start(who, i128::from(deadline))
            }
            ("start", None) => return Err(bad("a start needs a deadline")),
            ("stop", None) => Event::Stop(who),
            ("fire", None) => Event::Fire(who),
            ("stop" | "fire", Some(_)) => return Err(bad("only a start has a deadline")),
            _ => return Err(bad("the event is not start, stop or fire")),
        };
        builder.event(i128::from(time), &event);
        rows += 1;
    }
    if rows == 0 {
        return Err(ImportError::file(
            path,
            "no events (time,event,id[,deadline] rows)",
        ));
    }
    let tallies = std::mem::take(&mut builder.tallies);
    let (ops, timers) = builder.finish();
    let mut metadata = Metadata::new();
    let name = path.file_stem().map_or_else(String::new, |s| {
        s.to_string_lossy().trim_end_matches(".csv").to_string()
    });
    metadata.push("name", name);
    metadata.push(
        "description",
        "timer events imported by timerbench import csv",
    );
    if let Some(generator) = generator {
        metadata.push("generator", generator);
    }
    metadata.push("source", source_names(&[path.to_path_buf()]));
    metadata.push("tick", tick_text);
    metadata.push("moves", moves.name());
    metadata.push("rows", rows.to_string());
    metadata.push("timers", timers.to_string());
    tally_metadata(&mut metadata, &["csv"], &tallies);
    let t = &tallies[0];
    let summary = format!(
        "{} operations from {rows} rows: {} starts, {} restarts, {} stops, {} recorded firings \
         ({} on time, {} with the clock moved ahead)",
        ops.len(),
        t.starts,
        t.restarts,
        t.stops,
        t.firings,
        t.firings_reproduced,
        t.firings_clock_moved
    );
    Ok(Imported {
        workload: Workload { metadata, ops },
        summary,
    })
}
