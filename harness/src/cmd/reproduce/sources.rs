//! Experiments whose records come from another command than `timerbench run`: live runs
//! (`timerbench live`, [`super::live_source`]), threads runs (`timerbench threads`,
//! [`super::threads_source`]) and lateness runs (an engine's `micro lateness` beside its
//! port live, [`super::lateness_source`]).
//!
//! Such an experiment plans *series* (an implementation with a wait strategy, or inside a
//! sharing scheme) at *points* (connections, a tick length, producer threads), runs the
//! command through its own flags into `DIR/<id>/`, reads its records back, and computes the
//! same figures and verdicts as a cell experiment ([`super::verdict::judge`]). A series
//! whose run failed or did not verify has no value, with the reason: its figures, and so
//! the experiment, are "not measured", never a failed reproduction.

use super::experiments::{Experiment, FigureSpec};
use super::figures::{Computed, Orders, Payload, log_log_slope};
use super::verdict::number_words;
use serde::Deserialize;
use std::path::Path;
use timerbench_results::{CellReading, FigureValue, Finding, RESULTS_FILE, Verdict};

pub use super::source_fields::{
    and_list, check_family_and_choices, comma_list, derived_names, finite, param_words, read_path,
    record_path, unknown_field,
};

/// Where an experiment's records come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Cells of `timerbench run` (`results.jsonl`).
    #[default]
    Cells,
    /// Runs of `timerbench live` (`live.jsonl`).
    Live,
    /// Runs of `timerbench threads` (`threads.jsonl`).
    Threads,
    /// An engine's `micro lateness` and its port's `timerbench live` (`live.jsonl`).
    Lateness,
    /// The runtimes' keepalive servers beside timerbench's loop, one `timerbench live
    /// --tcp` (`live.jsonl`, [`super::runtimes_source`]).
    Runtimes,
}

/// Whether the experiment is read from live, threads or lateness runs (or names their
/// table).
pub fn is_source(experiment: &Experiment) -> bool {
    experiment.kind != SourceKind::Cells
        || experiment.live.is_some()
        || experiment.threads.is_some()
        || experiment.lateness.is_some()
        || experiment.runtimes.is_some()
}

/// The records file of the experiment's folder.
pub fn records_file(experiment: &Experiment) -> &'static str {
    match experiment.kind {
        SourceKind::Cells => RESULTS_FILE,
        SourceKind::Live | SourceKind::Lateness | SourceKind::Runtimes => {
            timerbench_results::live::LIVE_FILE
        }
        SourceKind::Threads => timerbench_results::threads::THREADS_FILE,
    }
}

/// The checks of a live or threads experiment, when the file is read.
pub fn check(experiment: &Experiment) -> Result<(), String> {
    if !experiment.workloads.is_empty() || !experiment.traces.is_empty() {
        return Err(
            "a live or threads experiment has no workloads or traces: its table \
                    (`live` or `threads`) names its workload"
                .to_string(),
        );
    }
    if experiment.implementations.is_empty() {
        return Err("needs at least one implementation".to_string());
    }
    let tables = (&experiment.live, &experiment.threads, &experiment.lateness);
    match (experiment.kind, tables, &experiment.runtimes) {
        (SourceKind::Live, (Some(live), None, None), None) => live.check(experiment)?,
        (SourceKind::Threads, (None, Some(threads), None), None) => threads.check(experiment)?,
        (SourceKind::Lateness, (None, None, Some(lateness)), None) => lateness.check(experiment)?,
        (SourceKind::Runtimes, (None, None, None), Some(runtimes)) => runtimes.check(experiment)?,
        _ => {
            return Err(
                "`kind = \"live\"` goes with a `live` table, `kind = \"threads\"` with a \
                 `threads` table, `kind = \"lateness\"` with a `lateness` table, `kind = \
                 \"runtimes\"` with a `runtimes` table, and no table with another kind"
                    .to_string(),
            );
        }
    }
    // The rule names series, not implementations: check it against them.
    let mut series = experiment.clone();
    series.implementations = series_labels(experiment);
    super::verdict::check_rule(&series)
}

/// The series of the experiment, as its rule and figure name them.
pub fn series_labels(experiment: &Experiment) -> Vec<String> {
    if experiment.runtimes.is_some() {
        return super::runtimes_source::series();
    }
    match (&experiment.live, &experiment.threads, &experiment.lateness) {
        (Some(live), _, _) => live.series(experiment),
        (_, Some(threads), _) => threads.series(experiment),
        (_, _, Some(lateness)) => lateness.series(experiment),
        _ => Vec::new(),
    }
}

/// The `--list` line of a live or threads experiment, or `None` for cells.
pub fn list_words(experiment: &Experiment) -> Option<String> {
    if let Some(runtimes) = &experiment.runtimes {
        return Some(runtimes.list_words(experiment));
    }
    let (what, points) = match (&experiment.live, &experiment.threads, &experiment.lateness) {
        (Some(live), _, _) => (format!("live {}", live.workload_words()), live.point_name()),
        (_, Some(threads), _) => (
            format!("threads {}", threads.workload_words()),
            "producer threads",
        ),
        (_, _, Some(lateness)) => (lateness.workload_words(), "tick ms"),
        _ => return None,
    };
    Some(format!(
        "{}: {}\n    {} on {what}; {points} {} (--quick: {})",
        experiment.id,
        experiment.title,
        series_labels(experiment).join(", "),
        comma_list(&experiment.sizes),
        comma_list(&experiment.quick_sizes),
    ))
}

/// Runs and judges a live, threads or lateness experiment; never fails (an error is the reason).
pub fn reproduce(experiment: &Experiment, folder: &Path, quick: bool) -> Finding {
    let run_folder = folder.join(&experiment.id);
    if let Some(runtimes) = &experiment.runtimes {
        let build = folder.join(".cache").join("engines");
        return runtimes.reproduce(experiment, &run_folder, &build, quick);
    }
    let measured = match (&experiment.live, &experiment.threads, &experiment.lateness) {
        (Some(live), _, _) => live.measure(experiment, &run_folder, quick),
        (_, Some(threads), _) => threads.measure(experiment, &run_folder, quick),
        (_, _, Some(lateness)) => {
            let build = folder.join(".cache").join("engines");
            lateness.measure(experiment, &run_folder, &build, quick)
        }
        _ => Err(anyhow::anyhow!("no live, threads or lateness table")),
    };
    let (measured, failure) = match measured {
        Ok(measured) => (measured, String::new()),
        Err(error) => (Measured::default(), format!("the run failed: {error:#}")),
    };
    finding(experiment, &measured, &failure)
}

/// Whether a finding is "not measured" only because this machine lacks what it needs
/// (a kernel without `epoll_pwait2`, an engine's toolchain), which is the machine's limit,
/// not a failed run.
pub fn lacks_capability(finding: &Finding) -> bool {
    let lacking = |cell: &CellReading| {
        let no_pwait2 = cell
            .reason
            .as_deref()
            .is_some_and(|why| why.contains(timerbench_live::api::NO_PWAIT2));
        no_pwait2 || super::lateness_source::lacks_toolchain(cell)
    };
    finding.verdict == Verdict::NotMeasured
        && finding.cells.iter().any(lacking)
        && finding
            .cells
            .iter()
            .all(|c| c.value.is_some() || lacking(c))
}

/// One series at one point, read back from its record.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub point: u64,
    pub series: String,
    /// The record's status (`verified`, `unverified`), or `missing` without a record.
    pub status: String,
    pub value: Result<f64, String>,
}

impl Reading {
    pub fn new(point: u64, series: &str, status: &str, value: Result<f64, String>) -> Self {
        Reading {
            point,
            series: series.to_string(),
            status: status.to_string(),
            value,
        }
    }
}

/// What a source measured, for the finding.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// The workload's name, as the records give it.
    pub workload: String,
    /// The points run, in order.
    pub points: Vec<u64>,
    /// The experiment's field, each series at each point.
    pub readings: Vec<Reading>,
    /// Each shown field, read the same way.
    pub shown: Vec<(String, Vec<Reading>)>,
    /// A point in words: `100000 connections`, `100 ms tick`, `2 threads`.
    pub point_words: Vec<(u64, String)>,
    /// What the reader must know beside the figures (thread counts not run, counts
    /// oversubscribed): added to the measured text and the verdict's reason.
    pub note: String,
    /// What the measured text says besides (how the operations arrived).
    pub detail: String,
    /// What a point counts, for the chart's axis: `timers`, `tick (ms)`, `producer threads`.
    pub axis: String,
}

impl Measured {
    fn words_of(&self, point: u64) -> String {
        self.point_words
            .iter()
            .find(|(p, _)| *p == point)
            .map_or_else(|| point.to_string(), |(_, words)| words.clone())
    }
}

/// The finding of a source experiment from what it measured (or from `failure`, the
/// reason nothing was).
pub(super) fn finding(experiment: &Experiment, measured: &Measured, failure: &str) -> Finding {
    let series = series_labels(experiment);
    let judged = if failure.is_empty() {
        let computed = compute(&experiment.figure, &series, measured);
        super::verdict::judge(&experiment.figure, &experiment.rule, &computed)
    } else {
        (Vec::new(), Verdict::NotMeasured, failure.to_string())
    };
    judged_finding(experiment, measured, judged)
}

/// The finding of a source experiment from what it measured and its figures as judged
/// ([`super::verdict::judge`]).
pub(super) fn judged_finding(
    experiment: &Experiment,
    measured: &Measured,
    (values, verdict, mut reason): (Vec<FigureValue>, Verdict, String),
) -> Finding {
    if !measured.note.is_empty() && verdict != Verdict::NotMeasured {
        reason = format!("{reason} ({})", measured.note);
    }
    let shown: Vec<String> = measured
        .shown
        .iter()
        .map(|(field, readings)| {
            let cells: Vec<String> = readings
                .iter()
                .map(|r| {
                    let value = r
                        .value
                        .as_ref()
                        .map_or("–".to_string(), |v| number_words(*v));
                    format!("{}, {} = {value}", measured.words_of(r.point), r.series)
                })
                .collect();
            format!("{field}: {}", cells.join("; "))
        })
        .collect();
    let points: Vec<String> = measured
        .points
        .iter()
        .map(|&p| measured.words_of(p))
        .collect();
    let mut details = format!(
        "workload {}; at {}; field {}",
        measured.workload,
        points.join(", "),
        experiment.field
    );
    if !shown.is_empty() {
        details.push_str(&format!("; also shown, not judged: {}", shown.join(". ")));
    }
    for note in [&measured.note, &measured.detail] {
        if !note.is_empty() {
            details.push_str(&format!("; {note}"));
        }
    }
    Finding {
        id: experiment.id.clone(),
        title: experiment.title.clone(),
        claim: experiment.claim.clone(),
        source: experiment.source.clone(),
        published: experiment.published.clone(),
        measured: format!("{} ({details})", experiment.measured),
        field: experiment.field.clone(),
        figure: super::output::figure_words(&experiment.figure),
        rule: super::output::rule_words(&experiment.rule),
        rule_data: serde_json::to_value(&experiment.rule).unwrap_or_default(),
        folder: experiment.id.clone(),
        reused: Vec::new(),
        records: Some(format!("{}/{}", experiment.id, records_file(experiment))),
        axis: (!measured.axis.is_empty()).then(|| measured.axis.clone()),
        cells: measured
            .readings
            .iter()
            .map(|r| CellReading {
                workload: measured.workload.clone(),
                timers: r.point,
                implementation: r.series.clone(),
                status: r.status.clone(),
                value: r.value.as_ref().ok().copied(),
                reason: r.value.as_ref().err().cloned(),
            })
            .collect(),
        values,
        verdict,
        reason,
        runs: None,
    }
}

/// The figures of `figure` over the series at each point, as [`super::figures::compute`]
/// computes them over implementations at each size; a slope is over the points.
pub fn compute(figure: &FigureSpec, series: &[String], measured: &Measured) -> Vec<Computed> {
    let workload = &measured.workload;
    let get = |point: u64, name: &str| -> Result<f64, String> {
        let reading = measured
            .readings
            .iter()
            .find(|r| r.point == point && r.series == name)
            .ok_or_else(|| format!("{}, {name}: not run", measured.words_of(point)))?;
        reading
            .value
            .clone()
            .map_err(|why| format!("{}, {name}: {why}", measured.words_of(point)))
    };
    let at = |point: u64| format!("{workload} at {}", measured.words_of(point));
    let mut out = Vec::new();
    let pair = |first: &str, second: &str, combine: fn(f64, f64) -> Result<f64, String>| {
        measured
            .points
            .iter()
            .map(|&point| Computed {
                label: at(point),
                implementation: None,
                payload: get(point, first)
                    .and_then(|a| combine(a, get(point, second)?))
                    .map(Payload::Number),
            })
            .collect::<Vec<_>>()
    };
    match figure {
        FigureSpec::Value => {
            for &point in &measured.points {
                for name in series {
                    out.push(Computed {
                        label: format!("{}, {name}", at(point)),
                        implementation: Some(name.clone()),
                        payload: get(point, name).map(Payload::Number),
                    });
                }
            }
        }
        FigureSpec::Ratio {
            numerator,
            denominator,
        } => {
            out = pair(numerator, denominator, |n, d| {
                if d > 0.0 {
                    Ok(n / d)
                } else {
                    Err("the denominator is 0".to_string())
                }
            })
        }
        FigureSpec::Difference {
            minuend,
            subtrahend,
        } => out = pair(minuend, subtrahend, |m, s| Ok(m - s)),
        FigureSpec::Slope => {
            for name in series {
                let points: Result<Vec<(f64, f64)>, String> = measured
                    .points
                    .iter()
                    .map(|&point| get(point, name).map(|v| (point as f64, v)))
                    .collect();
                let payload = points.and_then(|points| {
                    if points.len() < 2 {
                        Err(format!(
                            "a slope needs two points, and only {} was run",
                            measured
                                .points
                                .first()
                                .map_or("none".to_string(), |&p| { measured.words_of(p) })
                        ))
                    } else {
                        log_log_slope(&points)
                    }
                });
                out.push(Computed {
                    label: format!("{workload}, {name}"),
                    implementation: Some(name.clone()),
                    payload: payload.map(Payload::Number),
                });
            }
        }
        FigureSpec::Ordering { .. } => {
            for &point in &measured.points {
                let values: Result<Vec<(String, f64)>, String> = series
                    .iter()
                    .map(|name| get(point, name).map(|v| (name.clone(), v)))
                    .collect();
                let orders = values.map(|mut values| -> Orders {
                    values.sort_by(|a, b| a.1.total_cmp(&b.1));
                    vec![(workload.clone(), values)]
                });
                out.push(Computed {
                    label: format!("at {}", measured.words_of(point)),
                    implementation: None,
                    payload: orders.map(Payload::Orders),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(readings: &[(u64, &str, f64)]) -> Measured {
        let mut points: Vec<u64> = readings.iter().map(|r| r.0).collect();
        points.dedup();
        Measured {
            workload: "w".to_string(),
            points,
            readings: readings
                .iter()
                .map(|&(point, series, value)| Reading {
                    point,
                    series: series.to_string(),
                    status: "verified".to_string(),
                    value: Ok(value),
                })
                .collect(),
            ..Measured::default()
        }
    }

    #[test]
    fn a_difference_and_a_slope_are_computed_over_series_and_points() {
        let series = ["a".to_string(), "b".to_string()];
        let m = measured(&[
            (1, "a", 700.0),
            (1, "b", 200.0),
            (2, "a", 2800.0),
            (2, "b", 200.0),
        ]);
        let difference = FigureSpec::Difference {
            minuend: "a".to_string(),
            subtrahend: "b".to_string(),
        };
        let values: Vec<_> = compute(&difference, &series, &m)
            .into_iter()
            .map(|c| c.payload.unwrap())
            .collect();
        assert_eq!(values, [Payload::Number(500.0), Payload::Number(2600.0)]);
        let slopes: Vec<f64> = compute(&FigureSpec::Slope, &series, &m)
            .into_iter()
            .map(|c| match c.payload {
                Ok(Payload::Number(slope)) => slope,
                other => panic!("{other:?}"),
            })
            .collect();
        // 700 -> 2800 over 1 -> 2 is a slope of 2; a constant, 0.
        assert!(
            (slopes[0] - 2.0).abs() < 1e-9 && slopes[1].abs() < 1e-9,
            "{slopes:?}"
        );
        let slopes = compute(&FigureSpec::Slope, &series, &m);
        assert_eq!(slopes[0].implementation.as_deref(), Some("a"));
    }

    #[test]
    fn a_missing_series_or_a_lone_point_is_a_reason_not_a_number() {
        let series = ["a".to_string(), "b".to_string()];
        let mut m = measured(&[(1, "a", 1.0), (1, "b", 2.0)]);
        let slopes = compute(&FigureSpec::Slope, &series, &m);
        let why = slopes[0].payload.clone().unwrap_err();
        assert!(why.contains("a slope needs two points"), "{why}");
        m.readings[1].value = Err("unverified: timer 3 fired twice".to_string());
        let ratio = FigureSpec::Ratio {
            numerator: "a".to_string(),
            denominator: "b".to_string(),
        };
        let why = compute(&ratio, &series, &m)[0].payload.clone().unwrap_err();
        assert_eq!(why, "1, b: unverified: timer 3 fired twice");
    }

    #[test]
    fn a_kernel_without_pwait2_is_not_measured_with_the_reason_and_not_a_failure() {
        let idle = super::super::experiments::load(None)
            .unwrap()
            .into_iter()
            .find(|e| e.id == "live-idle-wakeups")
            .unwrap();
        let missing = timerbench_live::api::NO_PWAIT2;
        let mut m = measured(&[
            (200, "netty-wheel:tick=100 with tick", 10.0),
            (200, "netty-wheel:tick=100 with pwait2", 0.0),
        ]);
        m.readings[1].status = "missing".to_string();
        m.readings[1].value = Err(missing.to_string());
        let found = finding(&idle, &m, "");
        assert_eq!(found.verdict, Verdict::NotMeasured);
        assert!(found.reason.contains(missing), "{}", found.reason);
        assert!(lacks_capability(&found));
        assert_eq!(
            found.records.as_deref(),
            Some("live-idle-wakeups/live.jsonl")
        );
        // Another failure beside it is a failure of the run.
        m.readings[0].value = Err("unverified: timer 1 fired twice".to_string());
        assert!(!lacks_capability(&finding(&idle, &m, "")));
    }
}
