//! Several runs of `timerbench reproduce` as one finding per experiment. A numeric figure
//! becomes the mean over the runs with its 95% interval ([`crate::stats::combine`]: Student's
//! t over one number per run, the run being the top level of the repetition), judged by
//! the rule on the mean and at every point of the interval, so that a verdict whose
//! interval crosses a boundary of the rule says so and where. An ordering has no mean:
//! each run is judged on its own, and the finding says in how many runs each verdict came.
//!
//! Everything is read from the runs' findings (figures, verdicts, the rule as data), so
//! the same code judges runs just measured (`--runs N`) and runs taken apart (`--from`).

use super::experiments::{FigureSpec, Rule};
use super::figures::{Computed, Payload};
use super::verdict::{band_edges, judge, judge_number, number_words};
use crate::stats::combine;
use anyhow::bail;
use timerbench_results::{
    CellReading, CombinedBy, FINDINGS_SCHEMA, FigureRuns, FigureValue, Finding, FindingRuns,
    Findings, RunOfFindings, Verdict,
};

/// One run's findings, with the name its folder goes by in the combined findings.
pub struct Run {
    pub folder: String,
    pub findings: Findings,
}

/// The findings of `runs` combined: one finding per experiment, in the first run's order
/// (then those only later runs have). Runs of `--quick` and of full sizes, or of two
/// builds, are refused: their figures are not samples of one thing.
pub fn combine_runs(runs: &[Run], command: String) -> anyhow::Result<Findings> {
    let Some(first) = runs.first() else {
        bail!("no run to combine");
    };
    for run in &runs[1..] {
        if run.findings.quick != first.findings.quick {
            bail!(
                "{} is a --quick run and {} is not: combine runs of the same sizes",
                quick_one(runs, true),
                quick_one(runs, false)
            );
        }
        if run.findings.git_revision != first.findings.git_revision {
            bail!(
                "{} is of revision {} and {} of {}: combine runs of one build",
                first.folder,
                first.findings.git_revision,
                run.folder,
                run.findings.git_revision
            );
        }
    }
    let mut ids: Vec<&str> = Vec::new();
    for run in runs {
        for finding in &run.findings.experiments {
            if !ids.contains(&finding.id.as_str()) {
                ids.push(&finding.id);
            }
        }
    }
    let experiments = ids
        .into_iter()
        .map(|id| {
            let of_id: Vec<(&str, &Finding)> = runs
                .iter()
                .filter_map(|run| {
                    let finding = run.findings.experiments.iter().find(|f| f.id == id)?;
                    Some((run.folder.as_str(), finding))
                })
                .collect();
            combine_experiment(&of_id)
        })
        .collect();
    Ok(Findings {
        schema: FINDINGS_SCHEMA,
        quick: first.findings.quick,
        // RFC 3339 in UTC sorts as time does: the earliest run's start.
        started: runs
            .iter()
            .map(|r| r.findings.started.clone())
            .min()
            .unwrap_or_default(),
        command,
        git_revision: first.findings.git_revision.clone(),
        experiments,
        runs: runs
            .iter()
            .map(|r| RunOfFindings {
                folder: r.folder.clone(),
                started: r.findings.started.clone(),
            })
            .collect(),
    })
}

/// The folder of a run that is (`quick`) or is not a `--quick` one.
fn quick_one(runs: &[Run], quick: bool) -> &str {
    runs.iter()
        .find(|r| r.findings.quick == quick)
        .map_or("", |r| r.folder.as_str())
}

/// One experiment's findings over the runs that have it (`(folder, finding)`, at least
/// one), as one finding.
pub fn combine_experiment(runs: &[(&str, &Finding)]) -> Finding {
    let (_, first) = runs[0];
    let folders: Vec<String> = runs.iter().map(|(folder, _)| folder.to_string()).collect();
    let verdicts: Vec<Verdict> = runs.iter().map(|(_, f)| f.verdict).collect();
    let mut finding = Finding {
        folder: format!("{}/{}", folders[0], first.folder),
        records: Some(
            runs.iter()
                .map(|(folder, f)| {
                    let records = f.records.clone().unwrap_or_else(|| {
                        format!("{}/{}", f.folder, timerbench_results::RESULTS_FILE)
                    });
                    format!("{folder}/{records}")
                })
                .collect::<Vec<_>>()
                .join(", "),
        ),
        reused: Vec::new(),
        cells: combined_cells(runs),
        ..first.clone()
    };
    let (values, verdict, method, within, note, reason) = match judged(runs) {
        Ok(judged) => judged,
        Err(why) => {
            let within = vec![Verdict::NotMeasured];
            (
                Vec::new(),
                Verdict::NotMeasured,
                CombinedBy::Mean,
                within,
                why.clone(),
                why,
            )
        }
    };
    finding.values = values;
    finding.verdict = verdict;
    finding.reason = reason;
    finding.runs = Some(FindingRuns {
        folders,
        verdicts,
        method,
        within,
        note,
    });
    finding
}

/// What [`judged`] gives: the figures, the verdict, how it was reached, the verdicts within
/// reach, the note and the reason.
type Judged = (
    Vec<FigureValue>,
    Verdict,
    CombinedBy,
    Vec<Verdict>,
    String,
    String,
);

/// The experiment judged over its runs, or why it cannot be (a run that did not measure
/// it, runs that disagree on the rule or the figures).
fn judged(runs: &[(&str, &Finding)]) -> Result<Judged, String> {
    let (first_folder, first) = runs[0];
    let unmeasured: Vec<String> = runs
        .iter()
        .filter(|(_, f)| f.verdict == Verdict::NotMeasured)
        .map(|(folder, f)| format!("{folder}: {}", f.reason))
        .collect();
    if !unmeasured.is_empty() {
        return Err(format!(
            "not measured in {} of {} runs: {}",
            unmeasured.len(),
            runs.len(),
            unmeasured.join("; ")
        ));
    }
    if let Some((folder, _)) = runs.iter().find(|(_, f)| f.rule_data != first.rule_data) {
        return Err(format!(
            "{first_folder} and {folder} judged it by different rules: combine runs of one \
             experiments file"
        ));
    }
    let labels = |f: &Finding| f.values.iter().map(|v| v.label.clone()).collect::<Vec<_>>();
    if let Some((folder, other)) = runs.iter().find(|(_, f)| labels(f) != labels(first)) {
        return Err(format!(
            "the runs computed different figures ({first_folder}: {}; {folder}: {}): combine \
             runs of the same sizes and implementations",
            labels(first).join(", "),
            labels(other).join(", ")
        ));
    }
    let rule: Rule = serde_json::from_value(first.rule_data.clone())
        .map_err(|e| format!("{first_folder}: the finding's rule cannot be read: {e}"))?;
    if first.values.iter().all(|v| v.value.is_some()) {
        by_mean(runs, &rule)
    } else {
        Ok(by_run(runs))
    }
}

/// Numeric figures: each the mean over the runs, judged by the rule, with the verdicts
/// its interval reaches.
fn by_mean(runs: &[(&str, &Finding)], rule: &Rule) -> Result<Judged, String> {
    let (first_folder, first) = runs[0];
    let own_rules = !rule.implementation.is_empty() || !rule.reported.is_empty();
    if own_rules && first.values.iter().any(|v| v.implementation.is_none()) {
        return Err(format!(
            "{first_folder}'s findings do not name each figure's implementation (written by an \
             older timerbench), so the rule's bands for single implementations cannot be \
             applied: measure the runs again"
        ));
    }
    let per_figure: Vec<Vec<f64>> = (0..first.values.len())
        .map(|i| runs.iter().filter_map(|(_, f)| f.values[i].value).collect())
        .collect();
    let computed: Vec<Computed> = first
        .values
        .iter()
        .zip(&per_figure)
        .map(|(value, numbers)| Computed {
            label: value.label.clone(),
            implementation: value.implementation.clone(),
            payload: Ok(Payload::Number(combine(numbers).mean)),
        })
        .collect();
    let (mut values, verdict, reason) = judge(&FigureSpec::Value, rule, &computed);
    let mut reaches = Vec::new();
    for (i, value) in values.iter_mut().enumerate() {
        let spread = combine(&per_figure[i]);
        let interval = spread
            .half_width
            .map(|half| (spread.mean - half, spread.mean + half));
        let implementation = value.implementation.as_deref();
        let (within, straddle) = match interval {
            Some((low, high)) => within_interval(rule, implementation, spread.mean, low, high),
            None => (vec![value.verdict], String::new()),
        };
        // A reported figure reaches no verdict of the experiment's.
        if value.verdict != Verdict::Reported {
            reaches.push(within.clone());
        }
        value.runs = Some(FigureRuns {
            values: per_figure[i].iter().map(|&v| Some(v)).collect(),
            verdicts: runs.iter().map(|(_, f)| f.values[i].verdict).collect(),
            interval,
            within,
            straddle,
        });
    }
    let within = experiment_within(&reaches);
    let count = runs.len();
    let note = if count < 2 {
        "on one run: no interval (one run does not measure the variation between runs)".to_string()
    } else if within.len() == 1 {
        format!(
            "on the mean of {count} runs; the verdict is the same anywhere within the figures' \
             95% intervals"
        )
    } else {
        let others: Vec<&Verdict> = within.iter().filter(|v| **v != verdict).collect();
        let crossing: Vec<String> = values
            .iter()
            .filter_map(|v| {
                let figure = v.runs.as_ref()?;
                let (low, high) = figure.interval?;
                figure.within.iter().any(|w| others.contains(&w)).then(|| {
                    format!(
                        "{} = {} (95% interval {} to {}): {}",
                        v.label,
                        number_words(v.value.unwrap_or(f64::NAN)),
                        number_words(low),
                        number_words(high),
                        figure.straddle
                    )
                })
            })
            .collect();
        format!(
            "on the mean of {count} runs, but the interval straddles the rule's boundary: {}",
            crossing.join("; ")
        )
    };
    let reason = format!(
        "{} {note}; {reason}{}",
        verdict.words(),
        added_words(rule, first)
    );
    Ok((values, verdict, CombinedBy::Mean, within, note, reason))
}

/// What a run's reason says beyond the rule's words for its figures (the sides of an
/// experiment with engines, the thread counts of a threads experiment): the rest of its
/// reason after what [`judge`] gives for its own figures.
fn added_words(rule: &Rule, finding: &Finding) -> String {
    let computed: Vec<Computed> = finding
        .values
        .iter()
        .map(|v| Computed {
            label: v.label.clone(),
            implementation: v.implementation.clone(),
            payload: v.value.map(Payload::Number).ok_or_else(String::new),
        })
        .collect();
    let (_, _, own) = judge(&FigureSpec::Value, rule, &computed);
    finding
        .reason
        .strip_prefix(&own)
        .unwrap_or_default()
        .to_string()
}

/// The verdicts the rule gives between `low` and `high` (best first), and where those
/// other than the mean's lie, in words: `does not hold at the low end`.
///
/// A verdict changes only at a band's end, so the verdicts in the interval are those at
/// its ends, at each band end inside it, and between two of those points (a band may lie
/// wholly inside the interval, with the same verdict at both ends).
pub fn within_interval(
    rule: &Rule,
    implementation: Option<&str>,
    mean: f64,
    low: f64,
    high: f64,
) -> (Vec<Verdict>, String) {
    let mut points = vec![low, high];
    points.extend(
        band_edges(rule, implementation)
            .into_iter()
            .filter(|e| *e > low && *e < high),
    );
    points.sort_by(f64::total_cmp);
    let midpoints: Vec<f64> = points.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
    points.extend(midpoints);
    let verdict = |value| judge_number(rule, implementation, value);
    let mut within: Vec<Verdict> = points.iter().map(|&p| verdict(p)).collect();
    within.push(verdict(mean));
    within.sort();
    within.dedup();
    let (at_low, at_high, at_mean) = (verdict(low), verdict(high), verdict(mean));
    let straddle = within
        .iter()
        .filter(|&&v| v != at_mean)
        .map(|&v| {
            let place = match (v == at_low, v == at_high) {
                (true, true) => "at both ends",
                (true, false) => "at the low end",
                (false, true) => "at the high end",
                (false, false) => "inside the interval",
            };
            format!("{} {place}", v.words())
        })
        .collect::<Vec<_>>()
        .join(", ");
    (within, straddle)
}

/// The verdicts the experiment (the worst of its figures) can take when each figure may
/// take any verdict within its interval (`reaches`, one list per figure), best first.
pub fn experiment_within(reaches: &[Vec<Verdict>]) -> Vec<Verdict> {
    let best = reaches.iter().filter_map(|r| r.iter().min()).max();
    let worst = reaches.iter().filter_map(|r| r.iter().max()).max();
    let (Some(&best), Some(&worst)) = (best, worst) else {
        return vec![Verdict::NotMeasured];
    };
    let mut within: Vec<Verdict> = reaches
        .iter()
        .flatten()
        .copied()
        .filter(|v| (best..=worst).contains(v))
        .collect();
    within.sort();
    within.dedup();
    within
}

/// Figures without a mean (orderings): each run judged on its own; each figure's and the
/// experiment's verdict the median of the runs'.
fn by_run(runs: &[(&str, &Finding)]) -> Judged {
    let (_, first) = runs[0];
    let values = first
        .values
        .iter()
        .enumerate()
        .map(|(i, value)| {
            let verdicts: Vec<Verdict> = runs.iter().map(|(_, f)| f.values[i].verdict).collect();
            let texts: Vec<String> = runs
                .iter()
                .map(|(_, f)| f.values[i].text.clone().unwrap_or_default())
                .collect();
            let text = if texts.iter().all(|t| *t == texts[0]) {
                texts[0].clone()
            } else {
                runs.iter()
                    .zip(&texts)
                    .map(|((folder, _), text)| format!("in {folder}: {text}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            FigureValue {
                text: Some(text),
                value: None,
                verdict: median_verdict(&verdicts),
                runs: Some(FigureRuns {
                    values: vec![None; runs.len()],
                    within: distinct(&verdicts),
                    straddle: counts(runs, &verdicts),
                    verdicts,
                    interval: None,
                }),
                ..value.clone()
            }
        })
        .collect();
    let verdicts: Vec<Verdict> = runs.iter().map(|(_, f)| f.verdict).collect();
    let verdict = median_verdict(&verdicts);
    let within = distinct(&verdicts);
    let count = runs.len();
    let note = if within.len() == 1 {
        format!("in each of the {count} runs, each judged on its own (an ordering has no mean)")
    } else {
        format!(
            "as the median of {count} runs, each judged on its own (an ordering has no mean): {}",
            counts(runs, &verdicts)
        )
    };
    let reasons: Vec<String> = runs
        .iter()
        .map(|(folder, f)| format!("{folder}: {}", f.reason))
        .collect();
    let reason = format!("{} {note}; {}", verdict.words(), reasons.join("; "));
    (values, verdict, CombinedBy::PerRun, within, note, reason)
}

/// The middle verdict of the runs' (the worse of the two middle ones for an even count:
/// a tie between runs is not settled in the claim's favour).
pub fn median_verdict(verdicts: &[Verdict]) -> Verdict {
    let mut sorted = verdicts.to_vec();
    sorted.sort();
    sorted
        .get(sorted.len() / 2)
        .copied()
        .unwrap_or(Verdict::NotMeasured)
}

fn distinct(verdicts: &[Verdict]) -> Vec<Verdict> {
    let mut distinct = verdicts.to_vec();
    distinct.sort();
    distinct.dedup();
    distinct
}

/// `holds in 2 of 3 runs (run-1, run-3), does not hold in 1 (run-2)`; empty when every run
/// gave the same verdict.
pub fn counts(runs: &[(&str, &Finding)], verdicts: &[Verdict]) -> String {
    let kinds = distinct(verdicts);
    if kinds.len() < 2 {
        return String::new();
    }
    kinds
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            let folders: Vec<&str> = runs
                .iter()
                .zip(verdicts)
                .filter(|(_, v)| *v == kind)
                .map(|((folder, _), _)| *folder)
                .collect();
            let of = if i == 0 {
                format!(" of {}", verdicts.len())
            } else {
                String::new()
            };
            format!(
                "{} in {}{of} ({})",
                kind.words(),
                folders.len(),
                folders.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each cell of the first run with its mean value over the runs; a cell without a value in
/// some run has none, with that run's reason.
fn combined_cells(runs: &[(&str, &Finding)]) -> Vec<CellReading> {
    let (_, first) = runs[0];
    first
        .cells
        .iter()
        .map(|cell| {
            let mut values = Vec::new();
            let mut lacking = None;
            for (folder, finding) in runs {
                let same = finding.cells.iter().find(|c| {
                    c.workload == cell.workload
                        && c.timers == cell.timers
                        && c.implementation == cell.implementation
                });
                match same.and_then(|c| c.value) {
                    Some(value) => values.push(value),
                    None => {
                        let (status, why) = same.map_or(("missing", "no such cell"), |c| {
                            (c.status.as_str(), c.reason.as_deref().unwrap_or("no value"))
                        });
                        if lacking.is_none() {
                            lacking = Some((status.to_string(), format!("{folder}: {why}")));
                        }
                    }
                }
            }
            match lacking {
                None => CellReading {
                    value: Some(combine(&values).mean),
                    reason: None,
                    ..cell.clone()
                },
                Some((status, reason)) => CellReading {
                    status,
                    value: None,
                    reason: Some(reason),
                    ..cell.clone()
                },
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "combined_tests.rs"]
mod tests;
