//! `ab --metric instructions` (or another count): each side, its binary and variant,
//! counts the cell once under Callgrind ([`crate::counts_core`]), verified first; no duet,
//! no rounds. A count is exact, so the change is stated exactly: both sides' counts per
//! line, B/A − 1 and the difference per line, in one record per cell in `ab.jsonl`.

use super::duet::SideSpec;
use super::verdict;
use crate::counts_core::{Valgrind, count_cell};
use crate::schema::{CellKey, CellSpec, Status, identity};
use anyhow::bail;
use std::path::Path;
use std::time::Duration;
use timerbench_results::ab::{AbRecord, AbSide};
use timerbench_results::counts::{Counts, Metric};
use timerbench_workloads::families::{GenSpec, command_line};

/// The longest a side's counting may take: a 1M cell counts for minutes, never hours.
const SIDE_LIMIT: Duration = Duration::from_secs(3600);

/// What one cell's count comparison needs besides the sides.
pub(super) struct CountedCell<'a> {
    pub workload_name: &'a str,
    pub family: &'a str,
    pub spec: &'a GenSpec,
    pub path: &'a Path,
    pub metric: Metric,
    pub margin: f64,
    pub bootstrap_seed: u64,
    pub cores: [usize; 2],
}

/// Counts both sides of `cell` and compares them in `cell.metric`: the record, or the
/// side that could not be counted (it did not verify, or failed) as the error.
pub(super) fn count_sides(
    valgrind: &Valgrind,
    sides: &[SideSpec; 2],
    cell: &CountedCell,
) -> anyhow::Result<AbRecord> {
    let reference = timerbench_workloads::load(cell.path)?.summary;
    let count_side = |name: &str, side: &SideSpec| -> anyhow::Result<(AbSide, Counts)> {
        let key = CellKey {
            workload: cell.workload_name.to_string(),
            timers: cell.spec.timers,
            implementation: side.variant.clone(),
        };
        let spec = CellSpec {
            cell: identity(
                key,
                cell.family,
                cell.spec,
                command_line(cell.family, cell.spec),
                String::new(),
                &reference,
            ),
            workload_path: cell.path.to_path_buf(),
            reference: reference.clone(),
            repeat: 1,
            min_sample_ns: 0,
            inject_panic: false,
            mode: Default::default(),
        };
        let record = count_cell(valgrind, &side.binary, &spec, SIDE_LIMIT);
        let (Status::Ok, Some(counts)) = (record.status, record.counts) else {
            bail!(
                "{name} ({} with {}) was not counted: {}: {}",
                side.variant,
                side.binary.display(),
                record.status.as_str(),
                record.reason.unwrap_or_default()
            );
        };
        let ab_side = AbSide {
            variant: side.variant.clone(),
            binary: side.binary.display().to_string(),
            digest: record.digest.unwrap_or_default(),
            operations: counts.lines,
            duet_ns: Vec::new(),
            injected_delay_ns: None,
        };
        Ok((ab_side, counts))
    };
    // A count does not depend on what else runs: both sides count at once.
    let (a_side, b_side) = std::thread::scope(|scope| {
        let a = scope.spawn(|| count_side("A", &sides[0]));
        let b = count_side("B", &sides[1]);
        (a.join().expect("counting A does not panic"), b)
    });
    let counted = [a_side?, b_side?];
    let [(a, a_counts), (b, b_counts)] = counted;
    let ratio = per_line(cell.metric, &b_counts) / per_line(cell.metric, &a_counts);
    let interval = [ratio, ratio];
    let verdict = verdict::verdict(interval, cell.margin);
    Ok(AbRecord {
        workload: cell.workload_name.to_string(),
        timers: cell.spec.timers,
        seed: cell.spec.seed,
        a,
        b,
        cores: cell.cores,
        // Counts do not depend on what else ran: no window is read.
        others_load: None,
        pairs: None,
        ratios: vec![ratio],
        median_ratio: ratio,
        interval,
        resamples: 0,
        bootstrap_seed: cell.bootstrap_seed,
        margin: cell.margin,
        verdict: verdict.name().to_string(),
        change_percent: (ratio - 1.0) * 100.0,
        solo: None,
        written_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        metric: Some(cell.metric.name().to_string()),
        counts: Some([a_counts, b_counts]),
    })
}

/// A side's count in `metric` per counted line.
fn per_line(metric: Metric, counts: &Counts) -> f64 {
    let total = metric.total(&counts.totals).unwrap_or(0);
    total as f64 / counts.lines.max(1) as f64
}

/// What the terminal shows of a count record: both sides per line and the exact change.
pub(super) fn summary_line(record: &AbRecord) -> String {
    let (Some(metric), Some([a, b])) = (&record.metric, &record.counts) else {
        return String::new();
    };
    let metric: Metric = metric.parse().unwrap_or(Metric::Instructions);
    let (a_line, b_line) = (per_line(metric, a), per_line(metric, b));
    let (a_total, b_total) = (
        metric.total(&a.totals).unwrap_or(0),
        metric.total(&b.totals).unwrap_or(0),
    );
    format!(
        "{} {} ({} vs {}, {}): A {a_line:.3}, B {b_line:.3} {}; B/A - 1 = {:+.4}%, \
         B - A = {:+.3} per line ({:+} over {} lines), exact",
        record.workload,
        record.timers,
        record.a.variant,
        record.b.variant,
        metric.name(),
        metric.unit(),
        record.change_percent,
        b_line - a_line,
        b_total as i128 - a_total as i128,
        a.lines
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerbench_results::counts::CountTotals;

    fn counts(instructions: u64, lines: u64) -> Counts {
        Counts {
            tool: "valgrind callgrind".into(),
            cache: crate::counts_core::DEFAULT_GEOMETRY,
            lines,
            totals: CountTotals {
                instructions,
                ..CountTotals::default()
            },
            seconds: 1.0,
        }
    }

    #[test]
    fn a_count_is_compared_per_line() {
        let a = counts(1000, 10);
        let b = counts(1200, 10);
        let ratio = per_line(Metric::Instructions, &b) / per_line(Metric::Instructions, &a);
        assert!((ratio - 1.2).abs() < 1e-12, "{ratio}");
        assert_eq!(per_line(Metric::LlMisses, &a), 0.0);
    }
}
