//! The tables of `timerbench live`: one row per run, and with `--repeat N` (each structure
//! × wait strategy run N times, interleaved) one per structure × wait strategy, read as a
//! median with its range over the runs.
//!
//! One run's p99 is the 99th percentile of a few thousand to a few tens of thousands of
//! firings, and its baseline's p99 (the bare loop, run right after it) moves by tens of
//! microseconds from one run to the next on a virtual machine. A structure's p99 against
//! one baseline is therefore mostly the two runs' noise. So each run's excess over *its
//! own* baseline (run right after it, on the same machine state) is taken, and the median
//! of those excesses over the runs is the figure, with the smallest and largest beside it.
//! CPU per second is read the same way: its median and its spread (largest / smallest − 1)
//! over the runs.
//!
//! The excess is then split as the lateness is (`total = rounding + wake + dispatch`): the
//! wake part's p99 against the same baseline p99 is what the kernel's returns added under
//! the run's load (its input wakes the loop too; the bare loop has none), and the dispatch
//! p99 is the loop's own work between a return and a callback, the structure's share of
//! an exact structure's lateness. Only the total is the figure; the split says
//! which side of the machine an excess came from.
//!
//! The loaded baseline (the same waits while the same operations arrive, read and dropped)
//! gives a second reading, "p99 − own loaded": the run's p99 against a loop with the same
//! input and no structure, right after it.

use crate::stats::median;
use crate::table::Table;
use std::path::Path;
use timerbench_results::live::{LiveRecord, Spread};

/// The runs of one structure under one wait strategy, in the order they ran.
struct Series<'a> {
    implementation: &'a str,
    wait: String,
    runs: Vec<&'a LiveRecord>,
}

/// The wait column as `timerbench live`'s table shows it (`tick/100ms` for a period).
pub fn wait_label(record: &LiveRecord) -> String {
    match record.period_ns {
        Some(period) => format!("tick/{}ms", period as f64 / 1e6),
        None => record.wait.clone(),
    }
}

fn series(records: &[LiveRecord]) -> Vec<Series<'_>> {
    let mut out: Vec<Series> = Vec::new();
    for record in records {
        let wait = wait_label(record);
        match out
            .iter_mut()
            .find(|s| s.implementation == record.implementation && s.wait == wait)
        {
            Some(series) => series.runs.push(record),
            None => out.push(Series {
                implementation: &record.implementation,
                wait,
                runs: vec![record],
            }),
        }
    }
    out
}

/// The smallest and largest of `values`.
fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

/// `median (min..max)` of `values`, at `digits` decimals.
fn median_range(values: &[f64], digits: usize) -> String {
    let (min, max) = min_max(values);
    format!(
        "{:.digits$} ({min:.digits$}..{max:.digits$})",
        median(values)
    )
}

/// A run's p99 lateness minus its own baseline's p99, in µs (negative: the structure's
/// run came out below the bare loop's).
fn p99_excess_us(record: &LiveRecord) -> f64 {
    (record.lateness.total.p99_ns as f64 - record.baseline.p99_ns as f64) / 1e3
}

/// A run's p99 minus its own loaded baseline's p99, in µs; `None` without one.
fn loaded_excess_us(record: &LiveRecord) -> Option<f64> {
    let loaded = record.loaded_baseline.as_ref()?;
    Some((record.lateness.total.p99_ns as f64 - loaded.lateness.p99_ns as f64) / 1e3)
}

/// The wake part's p99 minus the run's own baseline p99, in µs: the kernel's returns under
/// the run's load against the bare loop's.
fn wake_excess_us(record: &LiveRecord) -> f64 {
    (record.lateness.wake.p99_ns as f64 - record.baseline.p99_ns as f64) / 1e3
}

/// The spread of `values` as largest / smallest − 1, in percent (`-` if a value is 0).
fn spread_percent(values: &[f64]) -> String {
    let (min, max) = min_max(values);
    if min > 0.0 {
        format!("{:.1}%", 100.0 * (max / min - 1.0))
    } else {
        "-".into()
    }
}

/// The table over repeats: one row per structure × wait strategy.
pub fn table(records: &[LiveRecord]) -> Table {
    let mut table = Table::new(&[
        "implementation",
        "wait",
        "runs",
        "verified",
        "early",
        "p99 µs",
        "baseline p99 µs",
        "p99 − own baseline µs",
        "wake − own baseline µs",
        "dispatch p99 µs",
        "p99 − own loaded µs",
        "CPU ms/s",
        "CPU spread",
        "wakeups/s",
    ]);
    for series in series(records) {
        let of = |f: &dyn Fn(&LiveRecord) -> f64| -> Vec<f64> {
            series.runs.iter().map(|r| f(r)).collect()
        };
        let cpu = of(&|r| r.workload_phase.cpu_ms_per_second);
        table.row(vec![
            series.implementation.to_string(),
            series.wait.clone(),
            series.runs.len().to_string(),
            series
                .runs
                .iter()
                .filter(|r| r.status == "verified")
                .count()
                .to_string(),
            series
                .runs
                .iter()
                .map(|r| r.lateness.early)
                .sum::<u64>()
                .to_string(),
            median_range(&of(&|r| r.lateness.total.p99_ns as f64 / 1e3), 0),
            median_range(&of(&|r| r.baseline.p99_ns as f64 / 1e3), 0),
            median_range(&of(&p99_excess_us), 0),
            // An engine's runtime does not say when its poller returned: no split.
            if series.runs.iter().any(|r| r.lateness.wake.count == 0) {
                "-".into()
            } else {
                median_range(&of(&wake_excess_us), 0)
            },
            if series.runs.iter().any(|r| r.lateness.dispatch.count == 0) {
                "-".into()
            } else {
                median_range(&of(&|r| r.lateness.dispatch.p99_ns as f64 / 1e3), 0)
            },
            match series
                .runs
                .iter()
                .map(|r| loaded_excess_us(r))
                .collect::<Option<Vec<f64>>>()
            {
                Some(excesses) => median_range(&excesses, 0),
                None => "-".into(),
            },
            median_range(&cpu, 2),
            spread_percent(&cpu),
            // An engine's server counts no wakeups (`engine.wakeups_of` says so): none, not 0.
            if series
                .runs
                .iter()
                .any(|r| r.engine.is_some() && r.tcp.is_some())
            {
                "n/c".into()
            } else {
                median_range(&of(&|r| r.workload_phase.wakeups_per_second), 0)
            },
        ]);
    }
    table
}

/// A spread's p50/p99/p99.9/max in µs (`-` when empty).
fn micros(spread: &Spread) -> String {
    if spread.count == 0 {
        return "-".into();
    }
    let us = |ns: u64| format!("{:.0}", ns as f64 / 1e3);
    format!(
        "{}/{}/{}/{}",
        us(spread.p50_ns),
        us(spread.p99_ns),
        us(spread.p999_ns),
        us(spread.max_ns)
    )
}

/// The table of every run, one row each.
pub fn runs_table(records: &[LiveRecord]) -> Table {
    let mut table = Table::new(&[
        "implementation",
        "wait",
        "status",
        "firings",
        "early",
        "lateness µs",
        "baseline µs",
        "loaded µs",
        "wakeups/s",
        "CPU ms/s",
        "idle wakeups/s",
        "behind p99 ms",
    ]);
    for r in records {
        // An engine's runtime counts no wakeups (its record's `engine.wakeups_of` says so).
        let counted = r.engine.is_none();
        table.row(vec![
            r.implementation.clone(),
            wait_label(r),
            r.status.clone(),
            r.firings.to_string(),
            r.lateness.early.to_string(),
            micros(&r.lateness.total),
            micros(&r.baseline),
            r.loaded_baseline
                .as_ref()
                .map_or("-".into(), |loaded| micros(&loaded.lateness)),
            match counted {
                true => format!(
                    "{:.0}/{:.0}",
                    r.workload_phase.wakeups_per_second, r.workload_phase.useless_per_second
                ),
                false => "n/c".into(),
            },
            format!("{:.2}", r.workload_phase.cpu_ms_per_second),
            match counted {
                true => format!("{:.1}", r.idle_phase.wakeups_per_second),
                false => "n/c".into(),
            },
            format!("{:.3}", r.arrivals.behind.p99_ns as f64 / 1e6),
        ]);
    }
    table
}

/// The tables of the runs: a row per run; with `repeats` above 1, each structure's median
/// and range over its runs; the TCP figures if any; and what the columns mean.
pub fn print_tables(records: &[LiveRecord], repeats: usize, folder: &Path) {
    println!("{}", runs_table(records).render("  "));
    if repeats > 1 {
        println!("{}", table(records).render("  "));
        println!(
            "  over the runs: median (smallest..largest); \"p99 − own baseline\" takes each \
             run's p99 against the baseline run right after it, \"wake − own baseline\" the \
             wake part's p99 against the same, \"p99 − own loaded\" the p99 against its loaded \
             baseline (the same input, no structure); CPU spread is largest / smallest − 1"
        );
    }
    if let Some(tcp) = super::live_tcp::table(records) {
        println!("{}", tcp.render("  "));
        println!(
            "  TCP: server: how it held the connections (epoll, or io_uring xN rings of \
             registered files); why that many: requested, the seed's, the smoke's, or the \
             hard descriptor limit an engine's server stopped at; keepalives the client sent / the server read; closes on \
             time (within the declared lateness plus the baseline's p99.9) and wrongly (a \
             keepalive sent within the timeout); peak RSS of the server and the client"
        );
    }
    if let Some((runtimes, notes)) = super::live_tcp::runtimes_table(records) {
        println!("  the idle timeout: the runtimes' servers beside timerbench's loop");
        println!("{}", runtimes.render("  "));
        for note in notes {
            println!("  {note}");
        }
    }
    println!(
        "  lateness, baseline and loaded: p50/p99/p99.9/max in µs; wakeups per second \
         (total/useless), n/c where a runtime counts none; an engine's CPU is its whole \
         process's; written to {}",
        folder.join(timerbench_results::live::LIVE_FILE).display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(implementation: &str, p99_us: u64, baseline_p99_us: u64, cpu: f64) -> LiveRecord {
        let mut record = LiveRecord {
            implementation: implementation.into(),
            wait: "pwait2".into(),
            status: "verified".into(),
            ..LiveRecord::default()
        };
        record.lateness.total = Spread {
            count: 100,
            p99_ns: p99_us * 1000,
            ..Spread::default()
        };
        record.baseline = Spread {
            count: 100,
            p99_ns: baseline_p99_us * 1000,
            ..Spread::default()
        };
        // The kernel's return took all of the p99 but 4 µs, which the loop's dispatch took.
        record.lateness.wake = Spread {
            count: 100,
            p99_ns: (p99_us - 4) * 1000,
            ..Spread::default()
        };
        record.lateness.dispatch = Spread {
            count: 100,
            p99_ns: 4000,
            ..Spread::default()
        };
        // The loaded baseline's p99 10 µs above the bare one's.
        record.loaded_baseline = Some(timerbench_results::live::LoadedBaseline {
            lateness: Spread {
                count: 100,
                p99_ns: (baseline_p99_us + 10) * 1000,
                ..Spread::default()
            },
            arrivals: 50,
        });
        record.workload_phase.cpu_ms_per_second = cpu;
        record
    }

    #[test]
    fn each_run_is_read_against_its_own_baseline_and_the_median_is_taken() {
        // Excesses +60, -5, +10: the median is +10, where the medians of the p99s
        // (100) and of the baselines (95) would give +5.
        let records = [
            run("binary-heap", 100, 40, 30.0),
            run("quad-heap", 80, 80, 20.0),
            run("binary-heap", 90, 95, 33.0),
            run("binary-heap", 110, 100, 31.5),
        ];
        let text = table(&records).render("");
        let binary = text.lines().find(|l| l.starts_with("binary-heap")).unwrap();
        assert!(binary.contains("10 (-5..60)"), "{binary}");
        // The split: wake excesses +56, -9, +6 (median +6); dispatch 4 in each run.
        assert!(binary.contains("6 (-9..56)"), "{binary}");
        assert!(binary.contains("4 (4..4)"), "{binary}");
        // Against the loaded baselines (50, 105, 110): +50, -15, 0, median 0.
        assert!(binary.contains("0 (-15..50)"), "{binary}");
        assert!(binary.contains("31.50 (30.00..33.00)"), "{binary}");
        assert!(binary.contains("10.0%"), "{binary}");
        let quad = text.lines().find(|l| l.starts_with("quad-heap")).unwrap();
        assert!(quad.contains("0 (0..0)"), "{quad}");
        assert!(quad.contains("-4 (-4..-4)"), "{quad}");
        assert!(!quad.contains("n/c"), "{quad}");
    }

    #[test]
    fn an_engine_server_has_no_wakeup_count() {
        let go = LiveRecord {
            engine: Some(Default::default()),
            tcp: Some(Default::default()),
            ..run("go-runtime", 1000, 200, 54.0)
        };
        let go = LiveRecord {
            lateness: timerbench_results::live::LatenessParts {
                total: go.lateness.total,
                ..Default::default()
            },
            loaded_baseline: None,
            ..go
        };
        let text = table(&[go.clone(), go]).render("");
        let row = text.lines().find(|l| l.starts_with("go-runtime")).unwrap();
        assert!(row.trim_end().ends_with("n/c"), "{row}");
        // Go does not say when its poller returned: no wake or dispatch part.
        assert!(row.contains(" - "), "{row}");
    }
}
