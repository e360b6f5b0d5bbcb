//! How a source experiment names and reads its records' fields, and lists its names in
//! messages: a dotted path into a record's JSON form (as results/FORMAT.md names the
//! fields), the checks of its family and its choices, and lists in words. Shared by the
//! live, threads, lateness and runtimes sources ([`super::sources`]).

use std::collections::BTreeMap;

/// A dotted path (`lateness.wake.p50_ns`, `latency.0.start.count`) into a record as JSON.
pub fn read_path(record: &serde_json::Value, path: &str) -> Result<f64, String> {
    let mut at = record;
    for part in path.split('.') {
        let next = match part.parse::<usize>() {
            Ok(index) if at.is_array() => at.get(index),
            _ => at.get(part),
        };
        at = next
            .filter(|v| !v.is_null())
            .ok_or_else(|| format!("the record has no {path}"))?;
    }
    at.as_f64()
        .ok_or_else(|| format!("{path} is not a number in the record"))
}

/// A finite value, or why not.
pub fn finite(field: &str, value: f64) -> Result<f64, String> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("{field} is not a finite number"))
    }
}

/// Why a source cannot read `field`: a `kind` record (`live`, `threads`) takes the dotted
/// paths under `roots` and the fields `others` names.
pub fn unknown_field(field: &str, kind: &str, roots: &[&str], others: &str) -> String {
    let roots: Vec<String> = roots.iter().map(|root| root.to_string()).collect();
    format!(
        "field `{field}`: a {kind} field is a dotted path into a {kind} record under {} \
         (results/FORMAT.md, `{kind}.jsonl`), or {others}",
        and_list(&roots)
    )
}

/// The names of a source's derived fields, comma-separated.
pub fn derived_names(derived: &[(&str, &str)]) -> String {
    derived
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A record's value at the dotted `path` (its JSON form, as FORMAT.md names the fields).
pub fn record_path<T: serde::Serialize>(record: &T, path: &str) -> Result<f64, String> {
    let json = serde_json::to_value(record).map_err(|e| e.to_string())?;
    read_path(&json, path)
}

/// A family's parameters as `KEY=VALUE` words (a string without its quotes).
pub fn param_words(params: &BTreeMap<String, toml::Value>) -> Vec<String> {
    params
        .iter()
        .map(|(key, value)| match value {
            toml::Value::String(text) => format!("{key}={text}"),
            other => format!("{key}={other}"),
        })
        .collect()
}

/// The checks of a source's `family` and of its list `key` (waits, schemes): a known
/// family, and a non-empty list of names from `allowed`; `section` prefixes the message.
pub fn check_family_and_choices(
    section: &str,
    family: &str,
    (key, chosen): (&str, &[String]),
    allowed: &[&str],
) -> Result<(), String> {
    if chosen.is_empty() {
        return Err(format!("{section}.{key}: at least one"));
    }
    if let Some(unknown) = chosen.iter().find(|c| !allowed.contains(&c.as_str())) {
        return Err(format!(
            "{section}.{key}: `{unknown}` is not one of {}",
            allowed.join(", ")
        ));
    }
    if timerbench_workloads::families::find(family).is_none() {
        return Err(format!(
            "{section}.family: no family `{family}` (timerbench list)"
        ));
    }
    Ok(())
}

/// `1, 2, 4`: an experiment's sizes as `--list` shows them.
pub fn comma_list(values: &[u64]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1, 2 and 4`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_reach_into_objects_and_arrays() {
        let record = serde_json::json!({"a": {"b": [{"c": 3}]}, "n": null});
        assert_eq!(read_path(&record, "a.b.0.c"), Ok(3.0));
        assert!(read_path(&record, "a.x").unwrap_err().contains("no a.x"));
        assert!(read_path(&record, "n").is_err());
        assert_eq!(
            and_list(&["1".into(), "2".into(), "4".into()]),
            "1, 2 and 4"
        );
    }
}
