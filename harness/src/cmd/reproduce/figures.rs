//! From records to figures: the value of an experiment's field in each cell, then the
//! figure the experiment computes from them (the values, ratios between two
//! implementations, log-log slopes over sizes, or the order of the implementations).
//!
//! A cell without a value (failed, unverified, missing, or without the field) leaves the
//! figures that need it without a number, with the reason, so that the verdict becomes
//! "not measured" instead of a guess.

use super::experiments::{Experiment, FigureSpec};
use std::collections::BTreeMap;
use timerbench_impls::Variant;
use timerbench_results::{CellKey, CellReading, CellRecord, FileWorkload, Status};

/// The latest record of each cell of a run.
pub type Records = BTreeMap<CellKey, CellRecord>;
/// The run's workload files (`workloads.json`) by workload name.
pub type Files = BTreeMap<String, FileWorkload>;

/// Fields computed from a record rather than read from it, with what they are.
pub const DERIVED_FIELDS: &[(&str, &str)] = &[
    (
        "fraction_stopped",
        "stopped / started of a workload file (its workloads.json counts, by the reference \
         model; a restart of a pending timer counts as a stop): the share of timers cancelled",
    ),
    (
        "ns_per_timer",
        "throughput.ns_per_op.median × operations / timers: CPU per timer (per request on purgatory)",
    ),
    (
        "ns_per_advance",
        "throughput.ns_per_op.median × operations / latency.advance.count: CPU per clock move \
         (per simulated millisecond on keepalive)",
    ),
];

/// The record's top-level objects a dotted field may start with.
const FIELD_ROOTS: &[&str] = &["throughput", "latency", "memory", "lateness", "fixed_costs"];

/// Whether `field` is a derived field or a dotted path under one of [`FIELD_ROOTS`].
pub fn check_field(field: &str) -> Result<(), String> {
    if DERIVED_FIELDS.iter().any(|(name, _)| *name == field) {
        return Ok(());
    }
    let root = field.split('.').next().unwrap_or("");
    if FIELD_ROOTS.contains(&root) && field.contains('.') {
        Ok(())
    } else {
        Err(format!(
            "field `{field}`: a dotted path under {} (results/FORMAT.md), or one of {}",
            FIELD_ROOTS.join(", "),
            DERIVED_FIELDS
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// The value of `field` in `record` (its workload file's counts in `file`, when it is
/// one), or why there is none.
pub fn read_value(
    record: &CellRecord,
    field: &str,
    file: Option<&FileWorkload>,
) -> Result<f64, String> {
    if record.status != Status::Ok {
        return Err(format!(
            "{}: {}",
            record.status.as_str(),
            record.reason.as_deref().unwrap_or("no reason given")
        ));
    }
    let per_op = || read_path(record, "throughput.ns_per_op.median");
    let value = match field {
        "fraction_stopped" => {
            let file = file.ok_or("fraction_stopped is a workload file's count (run --file)")?;
            if file.started == 0 {
                return Err("the workload file starts no timer".to_string());
            }
            file.stopped as f64 / file.started as f64
        }
        "ns_per_timer" => per_op()? * record.operations as f64 / record.key.timers.max(1) as f64,
        "ns_per_advance" => {
            let advances = read_path(record, "latency.advance.count")?;
            if advances <= 0.0 {
                return Err("no advance in the workload".to_string());
            }
            per_op()? * record.operations as f64 / advances
        }
        path => read_path(record, path)?,
    };
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{field} is not a finite number"))
    }
}

/// A dotted path into the record as JSON.
fn read_path(record: &CellRecord, path: &str) -> Result<f64, String> {
    let json = serde_json::to_value(record).map_err(|e| e.to_string())?;
    let mut at = &json;
    for part in path.split('.') {
        at = at
            .get(part)
            .filter(|v| !v.is_null())
            .ok_or_else(|| format!("the record has no {path}"))?;
    }
    at.as_f64()
        .ok_or_else(|| format!("{path} is not a number in the record"))
}

/// The label of each `--impl` string, as records name it.
pub fn label(implementation: &str) -> String {
    Variant::parse(implementation)
        .map_or_else(|_| implementation.to_string(), |v| v.label().to_string())
}

/// Every cell the experiment planned, with the value of `field` (its own field, or one
/// it shows) from `records`.
pub fn readings(
    experiment: &Experiment,
    field: &str,
    sizes: &[u64],
    records: &Records,
    files: &Files,
) -> Vec<CellReading> {
    let mut readings = Vec::new();
    for workload in experiment.workload_names() {
        for &timers in sizes {
            for implementation in experiment.cell_labels() {
                let key = CellKey {
                    workload: workload.clone(),
                    timers,
                    implementation,
                };
                let (status, value) = match records.get(&key) {
                    Some(record) => (
                        record.status.as_str().to_string(),
                        read_value(record, field, files.get(&key.workload)),
                    ),
                    None => (
                        "missing".to_string(),
                        Err("no record of the cell".to_string()),
                    ),
                };
                readings.push(CellReading {
                    workload: key.workload,
                    timers,
                    implementation: key.implementation,
                    status,
                    value: value.as_ref().ok().copied(),
                    reason: value.err(),
                });
            }
        }
    }
    readings
}

/// The fields the experiment shows beside its figure, in words for its `measured` text:
/// `also shown, not judged: FIELD: WORKLOAD at SIZE, IMPL = VALUE; ...` (`–` for a cell
/// without a value); empty when it shows none.
pub fn shown_words(
    experiment: &Experiment,
    sizes: &[u64],
    records: &Records,
    files: &Files,
) -> String {
    let fields: Vec<String> = experiment
        .shown
        .iter()
        .map(|field| {
            let cells: Vec<String> = readings(experiment, field, sizes, records, files)
                .iter()
                .map(|r| {
                    let value = r
                        .value
                        .map_or("–".to_string(), super::verdict::number_words);
                    format!(
                        "{} at {}, {} = {value}",
                        r.workload, r.timers, r.implementation
                    )
                })
                .collect();
            format!("{field}: {}", cells.join("; "))
        })
        .collect();
    if fields.is_empty() {
        String::new()
    } else {
        format!("; also shown, not judged: {}", fields.join(". "))
    }
}

/// One computed figure, before the rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    pub label: String,
    /// The implementation it is of, when one (a value, a slope): for per-implementation
    /// rules.
    pub implementation: Option<String>,
    pub payload: Result<Payload, String>,
}

/// Per workload, the implementations with their values, lowest first.
pub type Orders = Vec<(String, Vec<(String, f64)>)>;

/// What a figure is.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    Number(f64),
    Orders(Orders),
}

/// The figures of `experiment` from its readings.
pub fn compute(experiment: &Experiment, sizes: &[u64], readings: &[CellReading]) -> Vec<Computed> {
    let get = |workload: &str, timers: u64, implementation: &str| -> Result<f64, String> {
        let reading = readings
            .iter()
            .find(|r| {
                r.workload == workload && r.timers == timers && r.implementation == implementation
            })
            .ok_or_else(|| format!("{workload} at {timers}, {implementation}: not planned"))?;
        reading.value.ok_or_else(|| {
            format!(
                "{workload} at {timers}, {implementation}: {}",
                reading.reason.as_deref().unwrap_or("no value")
            )
        })
    };
    let labels: Vec<String> = experiment
        .implementations
        .iter()
        .map(|i| label(i))
        .collect();
    let mut out = Vec::new();
    for workload in experiment.workload_names() {
        match &experiment.figure {
            FigureSpec::Value => {
                for &timers in sizes {
                    for implementation in &labels {
                        out.push(Computed {
                            label: format!("{workload} at {timers}, {implementation}"),
                            implementation: Some(implementation.clone()),
                            payload: get(&workload, timers, implementation).map(Payload::Number),
                        });
                    }
                }
            }
            FigureSpec::Ratio {
                numerator,
                denominator,
            } => {
                for &timers in sizes {
                    let ratio = get(&workload, timers, &label(numerator)).and_then(|n| {
                        let d = get(&workload, timers, &label(denominator))?;
                        if d > 0.0 {
                            Ok(n / d)
                        } else {
                            Err(format!("{workload} at {timers}: the denominator is 0"))
                        }
                    });
                    out.push(Computed {
                        label: format!("{workload} at {timers}"),
                        implementation: None,
                        payload: ratio.map(Payload::Number),
                    });
                }
            }
            FigureSpec::Difference {
                minuend,
                subtrahend,
            } => {
                for &timers in sizes {
                    let difference = get(&workload, timers, &label(minuend))
                        .and_then(|m| Ok(m - get(&workload, timers, &label(subtrahend))?));
                    out.push(Computed {
                        label: format!("{workload} at {timers}"),
                        implementation: None,
                        payload: difference.map(Payload::Number),
                    });
                }
            }
            FigureSpec::Slope => {
                for implementation in &labels {
                    let points: Result<Vec<(f64, f64)>, String> = sizes
                        .iter()
                        .map(|&timers| {
                            get(&workload, timers, implementation).map(|v| (timers as f64, v))
                        })
                        .collect();
                    out.push(Computed {
                        label: format!("{workload}, {implementation}"),
                        implementation: Some(implementation.clone()),
                        payload: points.and_then(|p| log_log_slope(&p)).map(Payload::Number),
                    });
                }
            }
            FigureSpec::Ordering { .. } => {}
        }
    }
    if let FigureSpec::Ordering { .. } = experiment.figure {
        for &timers in sizes {
            let orders: Result<Orders, String> = experiment
                .workload_names()
                .into_iter()
                .map(|workload| {
                    let mut values = labels
                        .iter()
                        .map(|i| get(&workload, timers, i).map(|v| (i.clone(), v)))
                        .collect::<Result<Vec<_>, String>>()?;
                    values.sort_by(|a, b| a.1.total_cmp(&b.1));
                    Ok((workload, values))
                })
                .collect();
            out.push(Computed {
                label: format!("at {timers}"),
                implementation: None,
                payload: orders.map(Payload::Orders),
            });
        }
    }
    out
}

/// The least-squares slope of ln(y) over ln(x): the exponent `b` of `y = a·x^b` that fits
/// best. Needs two distinct sizes and positive values.
pub fn log_log_slope(points: &[(f64, f64)]) -> Result<f64, String> {
    if points.iter().any(|&(x, y)| x <= 0.0 || y <= 0.0) {
        return Err("a slope on log-log axes needs positive sizes and values".to_string());
    }
    let logs: Vec<(f64, f64)> = points.iter().map(|&(x, y)| (x.ln(), y.ln())).collect();
    let n = logs.len() as f64;
    let mean_x = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    if logs.len() < 2 || sxx <= 0.0 {
        return Err("a slope needs at least two distinct sizes".to_string());
    }
    Ok(sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_of_an_exact_power_law_is_its_exponent() {
        for exponent in [0.0, 0.5, 1.0, 2.0, -0.25] {
            let points: Vec<(f64, f64)> = [1e3, 1e4, 1e5, 1e6, 1e7]
                .iter()
                .map(|&x: &f64| (x, 7.0 * x.powf(exponent)))
                .collect();
            let slope = log_log_slope(&points).unwrap();
            assert!((slope - exponent).abs() < 1e-9, "{exponent}: {slope}");
        }
    }

    #[test]
    fn a_slope_needs_two_sizes_and_positive_values() {
        assert!(log_log_slope(&[(1e3, 5.0)]).is_err());
        assert!(log_log_slope(&[(1e3, 5.0), (1e3, 6.0)]).is_err());
        assert!(log_log_slope(&[(1e3, 0.0), (1e4, 6.0)]).is_err());
    }

    #[test]
    fn fields_are_checked() {
        assert!(check_field("throughput.ns_per_op.median").is_ok());
        assert!(check_field("ns_per_timer").is_ok());
        assert!(check_field("throughput").is_err());
        assert!(check_field("speed.median").is_err());
    }
}
