//! A workload file's description (`timerbench run --file`), in place of a family's: the
//! file, its metadata lines, its counts, and its shape as the run computed it
//! (`workloads.json`): pending timers over the trace and a histogram of its delays on
//! powers of two, so that a reader sees what kind of load the trace is.

use super::charts::{figure_or, grid};
use super::format::slug;
use crate::charts::{Axis, Chart, Scale, Series, Unit};
use crate::figures::thousands;
use crate::model::Workload;
use maud::{Markup, html};
use timerbench_results::workloads::{DelayHistogram, FileWorkload};

/// The colour of a file's shape: not an implementation's.
const SHAPE_COLOR: (u8, u8, u8) = (0x44, 0x44, 0x44);

/// The heading, the file, its metadata and counts, and its two shape charts.
pub(super) fn description(
    workload: &Workload,
    file: &FileWorkload,
    drawn: &mut Vec<Chart>,
) -> anyhow::Result<Markup> {
    let tick = file.meta("tick");
    let ticks = match tick {
        Some(tick) => format!("ticks of {tick}"),
        None => "ticks".to_string(),
    };
    let lines = &file.lines;
    let zero_delays = file.delays.counts.first().copied().unwrap_or(0);
    let pending = figure_or(
        pending_chart(workload, file, &ticks),
        &format!(
            "The most timers pending at once in each window of {} {ticks} (the trace's clock \
             cut into at most 500 windows); the peak, {}, is the cells' size.",
            thousands(file.pending.window_ticks),
            thousands(file.peak_pending)
        ),
        "the trace has no operation",
        drawn,
    )?;
    let delays = figure_or(
        delay_chart(workload, file, &ticks),
        &format!(
            "Starts and restarts by delay (deadline minus the clock at the start), in powers \
             of two: each step spans 2^(k−1) to 2^k − 1 {ticks}.{}",
            if zero_delays > 0 {
                format!(" Not drawn: {} with a delay of 0.", thousands(zero_delays))
            } else {
                String::new()
            }
        ),
        "no start or restart with a delay above 0",
        drawn,
    )?;
    Ok(html! {
        h3 { (workload.name) }
        p {
            strong { "A workload file" } ", measured as given: "
            code { (file.path) } " "
            span.note { "(" (thousands(file.bytes)) " bytes, sha256 " code { (file.sha256) } ")" }
            "."
        }
        @if let Some(description) = file.meta("description") {
            p { strong { "Describes" } " " (description) }
        }
        dl.params {
            @for (key, value) in &file.metadata {
                dt { "@" (key) }
                dd { (value) }
            }
            dt { "lines" }
            dd {
                (thousands(lines.start)) " s, " (thousands(lines.stop)) " x, "
                (thousands(lines.restart)) " r, " (thousands(lines.advance)) " a, "
                (thousands(lines.tick)) " t, " (thousands(lines.next)) " n"
            }
            dt { "timers" }
            dd {
                (thousands(file.started)) " started (a restart counts as a start), "
                (thousands(file.fired)) " fired, " (thousands(file.stopped)) " stopped, "
                (thousands(file.misses)) " stops of a timer not pending, "
                (thousands(file.pending_at_end)) " pending at the end"
            }
            dt { "peak" }
            dd { (thousands(file.peak_pending)) " pending at once: the cells' size" }
            dt { "clock" }
            dd { (thousands(file.final_clock)) " " (ticks) " at the end" }
        }
        div.(grid(1)) { (pending) (delays) }
    })
}

/// Pending timers over the trace's clock.
fn pending_chart(workload: &Workload, file: &FileWorkload, ticks: &str) -> Chart {
    let window = file.pending.window_ticks as f64;
    let points: Vec<(f64, f64)> = file
        .pending
        .max
        .iter()
        .enumerate()
        .map(|(index, &count)| (index as f64 * window, count as f64))
        .collect();
    let last = points.last().map_or(0.0, |p| p.0);
    Chart {
        id: format!("{}-pending", slug(&workload.name)),
        title: format!("{}: pending timers", workload.name),
        x: Axis::fit(
            format!("clock ({ticks})"),
            Scale::Linear,
            Unit::Ticks,
            [0.0, last.max(1.0)],
        ),
        y: Axis::fit(
            "pending timers",
            Scale::Linear,
            Unit::Count,
            points.iter().map(|p| p.1).chain([0.0]),
        ),
        series: vec![shape_series("pending", points)],
        markers: false,
        small: false,
        labelled: false,
    }
}

/// The delays of the starts and restarts, a step outline over power-of-two buckets on a
/// log axis (the delays of 0, which a log axis cannot hold, are said in the caption).
fn delay_chart(workload: &Workload, file: &FileWorkload, ticks: &str) -> Chart {
    let counts = &file.delays.counts;
    let mut points = Vec::new();
    if let Some(first) = (1..counts.len()).find(|&k| counts[k] > 0) {
        points.push((DelayHistogram::bounds(first).0 as f64, 0.0));
        for (k, &count) in counts.iter().enumerate().skip(first) {
            let (lo, hi) = DelayHistogram::bounds(k);
            points.push((lo as f64, count as f64));
            points.push((hi as f64 + 1.0, count as f64));
        }
        let end = points.last().map_or(1.0, |p| p.0);
        points.push((end, 0.0));
    }
    Chart {
        id: format!("{}-delays", slug(&workload.name)),
        title: format!("{}: delays", workload.name),
        x: Axis::fit(
            format!("delay ({ticks}, log scale)"),
            Scale::Log,
            Unit::Ticks,
            points.iter().map(|p| p.0),
        ),
        y: Axis::fit(
            "starts and restarts",
            Scale::Linear,
            Unit::Count,
            points.iter().map(|p| p.1).chain([0.0]),
        ),
        series: vec![shape_series("starts", points)],
        markers: false,
        small: false,
        labelled: false,
    }
}

fn shape_series(name: &str, points: Vec<(f64, f64)>) -> Series {
    Series::plain(name, SHAPE_COLOR, points)
}
