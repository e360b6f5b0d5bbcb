//! `timerbench compare --a RUN... --b RUN...`: two sides of several runs each, every
//! cell's ratio of the means over runs (B/A) with its 95% interval, and "differs" only
//! where that interval excludes 1.
//!
//! A single run's cell processes agree far more closely than two runs do (a whole run at
//! 1M moves with the host's memory state), so a difference judged by the noise within
//! runs calls that movement a change. Here the runs are the top level (Kalibera and
//! Jones, ISMM 2013): each side's cell is the mean of its runs' medians
//! ([`combine`](crate::stats::combine)), and the interval of the ratio comes from the
//! variation between runs, by the delta method on the log of the ratio:
//! `se² = s_A²/(n_A·m_A²) + s_B²/(n_B·m_B²)`, degrees of freedom by Welch–Satterthwaite,
//! the interval `(m_B/m_A) · exp(±t · se)`. A side with one run gives no interval, and
//! its row never says "differs".

use crate::runs::{NO_COUNTS, check_run_geometries, combined_cells, per_line_text, read_runs_by};
use crate::stats::{Combined, t_975};
use crate::table::{Format, table};
use anyhow::{Context, bail};
use std::path::PathBuf;
use std::process::ExitCode;
use timerbench_results::counts::Metric;

/// The band of the closing count of cells whose means agree.
const WITHIN: f64 = 0.05;

/// The 95% interval of B/A from each side's combined runs, or `None` when a side has
/// fewer than two runs.
pub fn ratio_interval(a: Combined, b: Combined) -> Option<[f64; 2]> {
    let part = |side: Combined| {
        let deviation = side.deviation?;
        Some((deviation / side.mean).powi(2) / side.runs as f64)
    };
    let (va, vb) = (part(a)?, part(b)?);
    let se = (va + vb).sqrt();
    let ratio = b.mean / a.mean;
    if se == 0.0 {
        return Some([ratio, ratio]);
    }
    let degrees =
        (va + vb).powi(2) / (va.powi(2) / (a.runs - 1) as f64 + vb.powi(2) / (b.runs - 1) as f64);
    let factor = (t_975(degrees) * se).exp();
    Some([ratio / factor, ratio * factor])
}

/// What a row says.
pub fn verdict(interval: Option<[f64; 2]>) -> &'static str {
    match interval {
        None => "no interval",
        Some([low, _]) if low > 1.0 => "differs: slower",
        Some([_, high]) if high < 1.0 => "differs: faster",
        Some(_) => "same",
    }
}

/// Compares the runs `a` with the runs `b` in `metric`. With a count, the runs of a side
/// agree exactly, so the interval is the ratio itself and any change "differs".
pub fn run(
    a: &[PathBuf],
    b: &[PathBuf],
    format: Format,
    metric: Metric,
) -> anyhow::Result<ExitCode> {
    // Each side's shards merge into its runs; the sides may be of different plans.
    let runs_a = read_runs_by(a, metric).context("--a")?;
    let runs_b = read_runs_by(b, metric).context("--b")?;
    check_run_geometries(metric, runs_a.iter().chain(&runs_b))?;
    let (cells_a, cells_b) = (combined_cells(&runs_a), combined_cells(&runs_b));
    let mut rows = Vec::new();
    let mut differs = 0;
    let mut within = 0;
    for (key, side_a) in &cells_a {
        let Some(side_b) = cells_b.get(key) else {
            continue;
        };
        // A count does not vary between runs of one binary: its ratio is exact even from
        // one run a side (and 0 against 0 is no change).
        let interval = if metric.is_count() {
            let ratio = if side_a.mean == side_b.mean {
                1.0
            } else {
                side_b.mean / side_a.mean
            };
            Some([ratio, ratio])
        } else {
            ratio_interval(*side_a, *side_b)
        };
        let word = verdict(interval);
        differs += usize::from(word.starts_with("differs"));
        within += usize::from((side_b.mean / side_a.mean - 1.0).abs() <= WITHIN);
        rows.push(vec![
            key.workload.clone(),
            key.timers.to_string(),
            key.implementation.clone(),
            format!("{}/{}", side_a.runs, side_b.runs),
            per_line_text(side_a.mean, metric),
            per_line_text(side_b.mean, metric),
            format!("{:.3}", side_b.mean / side_a.mean),
            interval.map_or("none".to_string(), |[low, high]| {
                format!("{low:.3} to {high:.3}")
            }),
            word.to_string(),
        ]);
    }
    if rows.is_empty() {
        if metric.is_count() {
            bail!("--metric {metric}: the two sides share no cell with counts ({NO_COUNTS})");
        }
        bail!("the two sides share no cell with figures");
    }
    let (unit_a, unit_b) = (
        format!(">A {}", metric.unit()),
        format!(">B {}", metric.unit()),
    );
    let header = [
        "workload",
        ">timers",
        "implementation",
        ">runs A/B",
        unit_a.as_str(),
        unit_b.as_str(),
        ">B/A",
        ">95% interval",
        "verdict",
    ];
    let total = rows.len();
    print!("{}", table(&header, rows, format));
    println!(
        "\n{differs} of {total} cells differ: their interval of B/A (runs as the top level) excludes 1."
    );
    println!("{within} of {total} cells within ±5% (the ratio of the means).");
    if metric.is_count() {
        println!(
            "{metric} is a count of a deterministic replay: the runs of one binary agree \
             exactly, so any change differs."
        );
    }
    let without: usize = runs_a.iter().chain(&runs_b).map(|r| r.without_counts).sum();
    if without > 0 {
        println!("{without} verified cells of the runs without counts, left out ({NO_COUNTS}).");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::combine;

    #[test]
    fn runs_that_agree_are_the_same_and_a_shift_beyond_their_spread_differs() {
        let a = combine(&[10.0, 10.2, 9.8]);
        assert_eq!(
            verdict(ratio_interval(a, combine(&[10.1, 9.9, 10.0]))),
            "same"
        );
        let slower = ratio_interval(a, combine(&[12.0, 12.2, 11.8])).unwrap();
        assert!(slower[0] < 1.2 && 1.2 < slower[1], "{slower:?}");
        assert_eq!(verdict(Some(slower)), "differs: slower");
        assert_eq!(
            verdict(ratio_interval(a, combine(&[8.0, 8.1, 7.9]))),
            "differs: faster"
        );
    }

    #[test]
    fn one_run_on_a_side_has_no_interval() {
        let a = combine(&[10.0]);
        assert_eq!(ratio_interval(a, combine(&[20.0, 20.0])), None);
        assert_eq!(verdict(None), "no interval");
    }
}
