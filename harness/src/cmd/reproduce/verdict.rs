//! The rule applied: from computed figures and an experiment's rule to a verdict, each
//! figure judged on its own and the experiment's verdict the worst of them. A figure
//! without a number (a cell that failed or is missing) makes the verdict "not measured",
//! with the reason: the data cannot decide, so nothing is decided.
//!
//! A figure of an implementation the rule lists in `reported` is shown with the verdict
//! "reported, not judged" and left out of the experiment's verdict: the rule makes no claim
//! on it. It still needs a number: one that cannot be computed makes the experiment "not
//! measured", as any missing figure does.
//!
//! Also the check, when the experiments file is read, that each rule fits its figure and
//! that no band is empty (one without either bound holds for every value: a check that
//! cannot fail).

use super::experiments::{Band, Experiment, FigureSpec, Rule};
use super::figures::{Computed, Orders, Payload};
use timerbench_results::{FigureValue, Verdict};

/// The rule of `implementation`'s figures: its own, or the experiment's.
fn rule_of<'a>(rule: &'a Rule, implementation: Option<&str>) -> &'a Rule {
    implementation
        .and_then(|name| rule.implementation.get(name))
        .unwrap_or(rule)
}

/// Whether the rule reports `implementation`'s figures without judging them.
pub fn is_reported(rule: &Rule, implementation: Option<&str>) -> bool {
    implementation.is_some_and(|name| rule.reported.iter().any(|r| r == name))
}

/// The values where [`judge_number`]'s verdict may change: the ends of the rule's bands
/// (none for a reported figure).
pub fn band_edges(rule: &Rule, implementation: Option<&str>) -> Vec<f64> {
    if is_reported(rule, implementation) {
        return Vec::new();
    }
    let rule = rule_of(rule, implementation);
    [rule.holds, rule.caveat]
        .into_iter()
        .flatten()
        .flat_map(|band| [band.at_least, band.at_most])
        .flatten()
        .collect()
}

/// The verdict of one number under `rule` (or the rule of its implementation);
/// `reported` when the rule reports that implementation's figures.
pub fn judge_number(rule: &Rule, implementation: Option<&str>, value: f64) -> Verdict {
    if is_reported(rule, implementation) {
        return Verdict::Reported;
    }
    let rule = rule_of(rule, implementation);
    let inside = |band: &Option<Band>| band.is_some_and(|b| b.contains(value));
    if inside(&rule.holds) {
        Verdict::Holds
    } else if inside(&rule.caveat) {
        Verdict::HoldsWithCaveat
    } else {
        Verdict::DoesNotHold
    }
}

/// The verdict of one size's orders (per workload, implementations lowest first) and the
/// orders in words.
pub fn judge_orders(rule: &Rule, tolerance: f64, orders: &Orders) -> (Verdict, String) {
    let words = orders
        .iter()
        .map(|(workload, values)| {
            let names: Vec<&str> = values.iter().map(|(name, _)| name.as_str()).collect();
            format!("{workload}: {}", names.join(" < "))
        })
        .collect::<Vec<_>>()
        .join("; ");
    match &rule.expect_lowest {
        Some(expected) => (expected_lowest(expected, tolerance, orders), words),
        None => {
            let expect_change = rule.expect_fastest_changes.unwrap_or(true);
            let (verdict, fastest) = fastest_changes(expect_change, tolerance, orders);
            (
                verdict,
                format!("{words}; fastest within the tolerance: {fastest}"),
            )
        }
    }
}

/// Whether `a` beats `b` in a workload: its value is below b's by more than the tolerance.
fn beats(values: &[(String, f64)], tolerance: f64, a: &str, b: &str) -> bool {
    let of = |name: &str| values.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    matches!((of(a), of(b)), (Some(va), Some(vb)) if va < vb * (1.0 - tolerance))
}

/// Rule `expect_lowest`: holds where `expected` is lowest in every workload, with a caveat
/// where another is lowest but within the tolerance of it, and does not hold where another
/// beats it.
fn expected_lowest(expected: &str, tolerance: f64, orders: &Orders) -> Verdict {
    let mut verdict = Verdict::Holds;
    for (_, values) in orders {
        let lowest = &values[0].0;
        if lowest == expected {
            continue;
        }
        verdict = verdict.max(if beats(values, tolerance, lowest, expected) {
            Verdict::DoesNotHold
        } else {
            Verdict::HoldsWithCaveat
        });
    }
    verdict
}

/// Rule `expect_fastest_changes`: the fastest changes when two workloads have no fastest in
/// common (the fastest of a workload: those the lowest does not beat). Returns the verdict
/// and each workload's fastest in words.
fn fastest_changes(expect_change: bool, tolerance: f64, orders: &Orders) -> (Verdict, String) {
    let fastest: Vec<(&str, Vec<&str>)> = orders
        .iter()
        .map(|(workload, values)| {
            let lowest = values[0].0.as_str();
            let tied = values
                .iter()
                .map(|(name, _)| name.as_str())
                .filter(|name| !beats(values, tolerance, lowest, name))
                .collect();
            (workload.as_str(), tied)
        })
        .collect();
    let changes = fastest.iter().enumerate().any(|(i, (_, first))| {
        fastest[i + 1..]
            .iter()
            .any(|(_, second)| first.iter().all(|name| !second.contains(name)))
    });
    let words = fastest
        .iter()
        .map(|(workload, tied)| format!("{workload} {}", tied.join(" = ")))
        .collect::<Vec<_>>()
        .join(", ");
    let verdict = if changes == expect_change {
        Verdict::Holds
    } else {
        Verdict::DoesNotHold
    };
    (verdict, words)
}

/// Every figure judged, then the experiment's verdict and why.
pub fn judge(
    figure: &FigureSpec,
    rule: &Rule,
    computed: &[Computed],
) -> (Vec<FigureValue>, Verdict, String) {
    let mut values = Vec::new();
    let mut missing = Vec::new();
    for item in computed {
        let (value, text, verdict) = match &item.payload {
            Err(why) => {
                missing.push(format!("{}: {why}", item.label));
                (None, None, Verdict::NotMeasured)
            }
            Ok(Payload::Number(number)) => (
                Some(*number),
                None,
                judge_number(rule, item.implementation.as_deref(), *number),
            ),
            Ok(Payload::Orders(orders)) => {
                let tolerance = match figure {
                    FigureSpec::Ordering { tolerance } => *tolerance,
                    _ => 0.0,
                };
                let (verdict, words) = judge_orders(rule, tolerance, orders);
                (None, Some(words), verdict)
            }
        };
        values.push(FigureValue {
            label: item.label.clone(),
            value,
            text,
            verdict,
            implementation: item.implementation.clone(),
            runs: None,
        });
    }
    if values.is_empty() {
        return (
            values,
            Verdict::NotMeasured,
            "no figure was computed".to_string(),
        );
    }
    if !missing.is_empty() {
        let reason = missing.join("; ");
        return (values, Verdict::NotMeasured, reason);
    }
    // Reported figures are shown, never weighed.
    let verdicts = values
        .iter()
        .map(|v| v.verdict)
        .filter(|v| *v != Verdict::Reported);
    // A claim that the fastest changes holds when it changes at some size: the best of
    // the sizes; every other claim must hold at every one: the worst.
    let verdict = if rule.expect_fastest_changes == Some(true) {
        verdicts.min()
    } else {
        verdicts.max()
    };
    let Some(verdict) = verdict else {
        let reason = "every figure computed is reported, none judged".to_string();
        return (values, Verdict::NotMeasured, reason);
    };
    let deciding: Vec<String> = values
        .iter()
        .filter(|v| v.verdict == verdict)
        .map(|v| match (v.value, &v.text) {
            (Some(number), _) => format!("{} = {}", v.label, number_words(number)),
            (None, Some(text)) => format!("{}: {text}", v.label),
            (None, None) => v.label.clone(),
        })
        .collect();
    let mut reason = deciding.join("; ");
    if verdict == Verdict::HoldsWithCaveat
        && let Some(note) = &rule.caveat_note
    {
        reason = format!("{reason} ({note})");
    }
    (values, verdict, reason)
}

/// A figure to three significant digits.
pub fn number_words(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let digits = (2 - value.abs().log10().floor() as i32).max(0) as usize;
    format!("{value:.digits$}")
}

/// What the figure and rule need: implementations that the experiment runs, a rule that
/// fits the figure's kind.
pub fn check_rule(experiment: &Experiment) -> Result<(), String> {
    let runs = |name: &str| {
        experiment
            .implementations
            .iter()
            .chain(&experiment.engines)
            .any(|i| i == name)
    };
    let rule = &experiment.rule;
    check_bands(rule, "rule")?;
    check_reported(experiment)?;
    let numeric = rule.holds.is_some();
    match &experiment.figure {
        FigureSpec::Ratio {
            numerator: first,
            denominator: second,
        }
        | FigureSpec::Difference {
            minuend: first,
            subtrahend: second,
        } => {
            let what = match &experiment.figure {
                FigureSpec::Ratio { .. } => "ratio",
                _ => "difference",
            };
            for name in [first, second] {
                if !runs(name) {
                    return Err(format!(
                        "the {what} names `{name}`, not among its implementations"
                    ));
                }
            }
        }
        FigureSpec::Ordering { tolerance } => {
            if !rule.reported.is_empty() {
                return Err("rule.reported is for numeric figures, not an ordering".to_string());
            }
            if !(0.0..1.0).contains(tolerance) {
                return Err("an ordering's tolerance is a fraction in [0, 1)".to_string());
            }
            if rule.expect_lowest.is_none() == rule.expect_fastest_changes.is_none() {
                return Err(
                    "an ordering's rule is one of expect_lowest and expect_fastest_changes"
                        .to_string(),
                );
            }
            if let Some(name) = &rule.expect_lowest
                && !runs(name)
            {
                return Err(format!(
                    "expect_lowest names `{name}`, not among its implementations"
                ));
            }
            return Ok(());
        }
        FigureSpec::Value | FigureSpec::Slope => {}
    }
    if !numeric && rule.implementation.values().any(|r| r.holds.is_none()) {
        return Err("a numeric figure's rule needs a `holds` band".to_string());
    }
    if !numeric && rule.implementation.is_empty() {
        return Err("a numeric figure's rule needs a `holds` band".to_string());
    }
    for name in rule.implementation.keys() {
        if !runs(name) {
            return Err(format!(
                "rule.implementation names `{name}`, not among its implementations"
            ));
        }
    }
    if rule.expect_lowest.is_some() || rule.expect_fastest_changes.is_some() {
        return Err("expect_lowest and expect_fastest_changes are for an ordering".to_string());
    }
    Ok(())
}

/// Every band of `rule` (`at`: its place in the file, `rule` or
/// `rule.implementation."NAME"`) has a bound: an empty one holds for every value.
fn check_bands(rule: &Rule, at: &str) -> Result<(), String> {
    for (name, band) in [("holds", &rule.holds), ("caveat", &rule.caveat)] {
        if band.is_some_and(|b| b.at_least.is_none() && b.at_most.is_none()) {
            return Err(format!(
                "{at}.{name} is an empty band (neither at_least nor at_most): it holds for \
                 every value, a check that cannot fail; give it a bound, or list a figure \
                 that is only shown in rule.reported"
            ));
        }
    }
    for (name, own) in &rule.implementation {
        check_bands(own, &format!("{at}.implementation.\"{name}\""))?;
    }
    Ok(())
}

/// `rule.reported` names implementations the experiment runs, none with a rule of its own,
/// not all of them (something must be judged), and only at the top of the rule.
fn check_reported(experiment: &Experiment) -> Result<(), String> {
    let rule = &experiment.rule;
    if rule.implementation.values().any(|r| !r.reported.is_empty()) {
        return Err("rule.reported is the experiment's, not one implementation's".to_string());
    }
    let names: Vec<&String> = experiment
        .implementations
        .iter()
        .chain(&experiment.engines)
        .collect();
    for name in &rule.reported {
        if !names.contains(&name) {
            return Err(format!(
                "rule.reported names `{name}`, not among its implementations"
            ));
        }
        if rule.implementation.contains_key(name) {
            return Err(format!(
                "`{name}` is both reported and judged (rule.implementation): it is one or \
                 the other"
            ));
        }
    }
    if !rule.reported.is_empty() && names.iter().all(|n| rule.reported.contains(n)) {
        return Err("rule.reported names every implementation: nothing is judged".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn band(at_least: Option<f64>, at_most: Option<f64>) -> Option<Band> {
        Some(Band { at_least, at_most })
    }

    /// Go's claim as the experiments file reads it: quad/binary from 0.63 to 0.83 holds,
    /// below 1 a caveat, else not.
    fn go_rule() -> Rule {
        Rule {
            holds: band(Some(0.63), Some(0.83)),
            caveat: band(None, Some(1.0)),
            caveat_note: Some("faster, by another margin".to_string()),
            ..Rule::default()
        }
    }

    fn numbers(values: &[f64]) -> Vec<Computed> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| Computed {
                label: format!("size {i}"),
                implementation: None,
                payload: Ok(Payload::Number(v)),
            })
            .collect()
    }

    #[test]
    fn each_verdict_follows_from_the_bands() {
        let rule = go_rule();
        let (_, verdict, _) = judge(&FigureSpec::Value, &rule, &numbers(&[0.7, 0.8]));
        assert_eq!(verdict, Verdict::Holds);
        let (_, verdict, reason) = judge(&FigureSpec::Value, &rule, &numbers(&[0.7, 0.9]));
        assert_eq!(verdict, Verdict::HoldsWithCaveat);
        assert!(reason.contains("size 1 = 0.900"), "{reason}");
        assert!(reason.contains("another margin"), "{reason}");
        let (_, verdict, _) = judge(&FigureSpec::Value, &rule, &numbers(&[0.7, 0.9, 1.2]));
        assert_eq!(verdict, Verdict::DoesNotHold);
    }

    #[test]
    fn a_missing_figure_is_not_measured_with_its_reason() {
        let mut computed = numbers(&[0.7]);
        computed.push(Computed {
            label: "size 1".to_string(),
            implementation: None,
            payload: Err("start-stop at 1000, quad-heap: failed: panic".to_string()),
        });
        let (values, verdict, reason) = judge(&FigureSpec::Value, &go_rule(), &computed);
        assert_eq!(verdict, Verdict::NotMeasured);
        assert_eq!(values[1].verdict, Verdict::NotMeasured);
        assert!(reason.contains("failed: panic"), "{reason}");
        let (_, verdict, _) = judge(&FigureSpec::Value, &go_rule(), &[]);
        assert_eq!(verdict, Verdict::NotMeasured);
    }

    #[test]
    fn an_implementation_may_have_its_own_rule() {
        let mut rule = Rule {
            holds: band(None, Some(0.15)),
            ..Rule::default()
        };
        rule.implementation.insert(
            "polling-scan".to_string(),
            Rule {
                holds: band(Some(0.8), Some(1.2)),
                ..Rule::default()
            },
        );
        assert_eq!(
            judge_number(&rule, Some("polling-scan"), 0.95),
            Verdict::Holds
        );
        assert_eq!(
            judge_number(&rule, Some("binary-heap"), 0.95),
            Verdict::DoesNotHold
        );
        assert_eq!(judge_number(&rule, None, 0.1), Verdict::Holds);
    }

    fn orders(rows: &[(&str, &[(&str, f64)])]) -> Orders {
        rows.iter()
            .map(|(w, values)| {
                let mut values: Vec<(String, f64)> =
                    values.iter().map(|(n, v)| (n.to_string(), *v)).collect();
                values.sort_by(|a, b| a.1.total_cmp(&b.1));
                (w.to_string(), values)
            })
            .collect()
    }

    fn changes() -> Rule {
        Rule {
            expect_fastest_changes: Some(true),
            ..Rule::default()
        }
    }

    #[test]
    fn the_fastest_changes_when_two_workloads_share_no_tied_fastest() {
        let rule = changes();
        let swapped = orders(&[
            ("u", &[("a", 10.0), ("b", 20.0)]),
            ("p", &[("a", 20.0), ("b", 10.0)]),
        ]);
        let (verdict, words) = judge_orders(&rule, 0.05, &swapped);
        assert_eq!(verdict, Verdict::Holds);
        assert!(
            words.ends_with("fastest within the tolerance: u a, p b"),
            "{words}"
        );
        // Within the tolerance both are fastest in both: no change.
        let tied = orders(&[
            ("u", &[("a", 10.0), ("b", 10.2)]),
            ("p", &[("a", 10.2), ("b", 10.0)]),
        ]);
        assert_eq!(judge_orders(&rule, 0.05, &tied).0, Verdict::DoesNotHold);
        // b is fastest in p and tied for it in u: the sets meet, a tie is not a change.
        let half_tied = orders(&[
            ("u", &[("a", 10.0), ("b", 10.3)]),
            ("p", &[("a", 12.0), ("b", 10.0)]),
        ]);
        let (verdict, words) = judge_orders(&rule, 0.05, &half_tied);
        assert_eq!(verdict, Verdict::DoesNotHold);
        assert!(words.ends_with("u a = b, p b"), "{words}");
        // Slower ones swap, the fastest stays: no change.
        let lower = orders(&[
            ("u", &[("a", 1.0), ("b", 10.0), ("c", 20.0)]),
            ("p", &[("a", 1.0), ("b", 20.0), ("c", 10.0)]),
        ]);
        assert_eq!(judge_orders(&rule, 0.05, &lower).0, Verdict::DoesNotHold);
        // Any two workloads of three will do.
        let third = orders(&[
            ("u", &[("a", 1.0), ("b", 2.0)]),
            ("e", &[("a", 1.0), ("b", 1.02)]),
            ("p", &[("a", 2.0), ("b", 1.0)]),
        ]);
        assert_eq!(judge_orders(&rule, 0.05, &third).0, Verdict::Holds);
    }

    #[test]
    fn a_change_at_one_size_is_enough_and_its_size_is_the_reason() {
        let same = orders(&[
            ("u", &[("a", 1.0), ("b", 2.0)]),
            ("p", &[("a", 1.0), ("b", 2.0)]),
        ]);
        let swapped = orders(&[
            ("u", &[("a", 1.0), ("b", 2.0)]),
            ("p", &[("a", 2.0), ("b", 1.0)]),
        ]);
        let computed = |sizes: &[(&str, &Orders)]| -> Vec<Computed> {
            sizes
                .iter()
                .map(|(label, orders)| Computed {
                    label: label.to_string(),
                    implementation: None,
                    payload: Ok(Payload::Orders((*orders).clone())),
                })
                .collect()
        };
        let figure = FigureSpec::Ordering { tolerance: 0.05 };
        let at = computed(&[
            ("at 1000", &same),
            ("at 100000", &swapped),
            ("at 1000000", &same),
        ]);
        let (values, verdict, reason) = judge(&figure, &changes(), &at);
        assert_eq!(verdict, Verdict::Holds);
        assert_eq!(values[0].verdict, Verdict::DoesNotHold);
        assert!(reason.starts_with("at 100000: "), "{reason}");
        assert!(!reason.contains("at 1000:"), "{reason}");
        let never = computed(&[("at 1000", &same), ("at 100000", &same)]);
        assert_eq!(judge(&figure, &changes(), &never).1, Verdict::DoesNotHold);
        // The opposite claim, that the fastest never changes, must hold at every size.
        let steady = Rule {
            expect_fastest_changes: Some(false),
            ..Rule::default()
        };
        assert_eq!(judge(&figure, &steady, &never).1, Verdict::Holds);
        assert_eq!(judge(&figure, &steady, &at).1, Verdict::DoesNotHold);
    }

    #[test]
    fn an_expected_lowest_holds_ties_and_fails() {
        let rule = Rule {
            expect_lowest: Some("a".to_string()),
            ..Rule::default()
        };
        let first = orders(&[("w", &[("a", 1.0), ("b", 2.0)])]);
        assert_eq!(judge_orders(&rule, 0.05, &first).0, Verdict::Holds);
        let tie = orders(&[("w", &[("a", 1.01), ("b", 1.0)])]);
        assert_eq!(judge_orders(&rule, 0.05, &tie).0, Verdict::HoldsWithCaveat);
        let beaten = orders(&[("w", &[("a", 2.0), ("b", 1.0)])]);
        let (verdict, words) = judge_orders(&rule, 0.05, &beaten);
        assert_eq!(verdict, Verdict::DoesNotHold);
        assert_eq!(words, "w: b < a");
    }
}
