//! What the report refuses: a missing folder, a folder without results, a malformed line
//! or histogram, a record of a newer schema; each with one message naming the file and
//! line, and no report written.

use super::*;
use crate::write_report;

#[test]
fn errors_name_the_file_and_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("report.html");
    std::fs::write(&output, "the previous report").unwrap();
    let unchanged = || std::fs::read_to_string(&output).unwrap() == "the previous report";

    let missing = dir.path().join("nowhere");
    let error = format!(
        "{:#}",
        write_report(&[missing], &output, None, &catalog()).unwrap_err()
    );
    assert!(
        error.contains("nowhere") && error.contains("does not exist"),
        "{error}"
    );
    assert!(unchanged());

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let error = format!(
        "{:#}",
        write_report(&[empty], &output, None, &catalog()).unwrap_err()
    );
    assert!(error.contains("has no results.jsonl"), "{error}");
    assert!(unchanged());

    let bad = dir.path().join("bad");
    write_run(&bad, "alpha", 1.0);
    let results = bad.join("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{\"schema\": 1, \"workload\": \"burst\"";
    std::fs::write(&results, lines.join("\n") + "\n").unwrap();
    let good = dir.path().join("good");
    write_run(&good, "beta", 1.0);
    let error = format!(
        "{:#}",
        write_report(&[good.clone(), bad.clone()], &output, None, &catalog()).unwrap_err()
    );
    assert!(error.contains("results.jsonl:2"), "{error}");
    assert!(unchanged());

    // A histogram that does not decode is as malformed as a line that does not parse.
    let mut record = record("burst", "burst", 1_000, "btree", 1.0);
    record.latency.get_mut("start").unwrap().histogram_v2 = "AAAA".to_string();
    std::fs::write(&results, serde_json::to_string(&record).unwrap() + "\n").unwrap();
    let error = format!(
        "{:#}",
        write_report(&[bad], &output, None, &catalog()).unwrap_err()
    );
    assert!(
        error.contains(
            "results.jsonl:1: burst at 1,000 timers, btree: the `start` latency histogram"
        ),
        "{error}"
    );
    assert!(unchanged());

    // No partial file is left beside the report.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_newer_schema_or_none_is_refused_with_the_versions_read() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    write_run(&folder, "alpha", 1.0);
    let output = dir.path().join("report.html");
    let results = folder.join("results.jsonl");
    let original = std::fs::read_to_string(&results).unwrap();
    let newer = SCHEMA_VERSION + 1;
    let readable = timerbench_results::version::readable();
    let refusal = |results_text: String| {
        std::fs::write(&results, results_text).unwrap();
        let error = write_report(std::slice::from_ref(&folder), &output, None, &catalog());
        assert!(!output.exists(), "a report was written");
        format!("{:#}", error.unwrap_err())
    };
    let with_line_3 = |line: String| {
        let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
        lines[2] = line;
        lines.join("\n") + "\n"
    };
    let mut record: serde_json::Value =
        serde_json::from_str(original.lines().nth(2).unwrap()).unwrap();

    // Newer: refused by its version alone, whatever the rest of the line holds.
    record["schema"] = newer.into();
    record["throughput"] = "a shape this build does not know".into();
    assert_eq!(
        refusal(with_line_3(record.to_string())),
        format!(
            "{}:3: schema version {newer} is newer than this timerbench reads ({readable}); use a newer timerbench",
            results.display()
        )
    );

    // No version at all: not a timerbench record.
    record.as_object_mut().unwrap().remove("schema");
    let error = refusal(with_line_3(record.to_string()));
    assert!(
        error.starts_with(&format!(
            "{}:3: not a cell record: it has no `schema` field",
            results.display()
        )),
        "{error}"
    );

    // The environment is versioned too.
    std::fs::write(&results, &original).unwrap();
    let environment = folder.join("environment.json");
    let text = std::fs::read_to_string(&environment).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["schema"] = newer.into();
    std::fs::write(&environment, value.to_string()).unwrap();
    let error = refusal(original.clone());
    assert!(
        error.starts_with(&format!(
            "{}: schema version {newer} is newer",
            environment.display()
        )),
        "{error}"
    );
}
