//! A run split into shards (`run --shard K/N`), merged by the readers, and runs of one
//! plan from several hosts read side by side (docs/scale-out.md): the merge equals one
//! unsharded run, and every refusal is one clear message with nothing written.

mod support;

use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Output;
use support::{assert_fails_with, assert_succeeded, cell_record, text};

fn timerbench(args: &[&str], cwd: &Path) -> Output {
    support::timerbench_in(args, cwd)
}

/// A narrow smoke run: three workloads at one small size through three structures (nine
/// cells), one quick sample each, so that four runs of it stay fast.
const SMOKE: &[&str] = &[
    "run",
    "--suite",
    "smoke",
    "--workload",
    "burst",
    "--workload",
    "sparse-next",
    "--workload",
    "start-stop",
    "--timers",
    "300",
    "--impl",
    "btree",
    "--impl",
    "hierarchical-wheel",
    "--impl",
    "binary-heap",
    "--repeat",
    "1",
    "--processes",
    "1",
    "--min-sample-ms",
    "1",
];

fn smoke(extra: &[&str], cwd: &Path) -> Output {
    let mut args = SMOKE.to_vec();
    args.extend_from_slice(extra);
    timerbench(&args, cwd)
}

/// Each cell of a folder (`workload/timers/implementation`) with its status.
fn statuses(folder: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(folder.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|v| {
            (
                format!("{}/{}/{}", v["workload"], v["timers"], v["implementation"]),
                v["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn environment(folder: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(folder.join("environment.json")).unwrap())
        .unwrap()
}

/// What a report's tables say of which cells, whatever the figures: every table cell above
/// the environment section (whose command and times are each run's own), sorted, each cell
/// that holds a figure (a digit: a time, a ratio, a count, the figure-chosen cell where an
/// implementation did worst) as `#`, so that the same table shape and the same names,
/// words and statuses compare equal.
fn tables_without_figures(report: &Path) -> Vec<String> {
    let html = std::fs::read_to_string(report).unwrap();
    let html = &html[..html
        .find("id=\"environment\"")
        .expect("an environment section")];
    let cell = regex::Regex::new(r"(?s)<t[dh][^>]*>(.*?)</t[dh]>").unwrap();
    let tag = regex::Regex::new(r"<[^>]+>").unwrap();
    let mut cells: Vec<String> = cell
        .captures_iter(html)
        .map(|c| {
            let plain = tag.replace_all(&c[1], "").trim().to_string();
            if plain.chars().any(|c| c.is_ascii_digit()) {
                "#".to_string()
            } else {
                plain
            }
        })
        .collect();
    cells.sort();
    cells
}

#[test]
fn three_shards_merge_into_the_run_one_machine_would_have_written() {
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path();
    let plan = smoke(&["--plan", "--shard-count", "3"], cwd);
    assert_succeeded(&plan);
    let plan = text(&plan.stdout);
    for k in 1..=3 {
        assert!(plan.contains(&format!("{k}/3")), "{plan}");
    }
    assert_eq!(
        std::fs::read_dir(cwd).unwrap().count(),
        0,
        "--plan writes nothing"
    );

    let mut merged = BTreeMap::new();
    let mut digests = BTreeSet::new();
    let shards: Vec<String> = (1..=3).map(|k| format!("shard-{k}")).collect();
    for (k, folder) in shards.iter().enumerate() {
        let shard = format!("{}/3", k + 1);
        assert_succeeded(&smoke(&["--shard", &shard, "--out", folder], cwd));
        let cells = statuses(&cwd.join(folder));
        assert!(!cells.is_empty(), "shard {shard} holds cells");
        for (cell, status) in cells {
            assert!(
                merged.insert(cell.clone(), status).is_none(),
                "{cell} is in two shards"
            );
        }
        let environment = environment(&cwd.join(folder));
        assert_eq!(environment["shard"], json!({"index": k + 1, "count": 3}));
        digests.insert(environment["plan"].as_str().unwrap().to_string());
        assert!(
            !cwd.join(folder).join("report.html").exists(),
            "a shard writes no report of its part"
        );
    }
    assert_succeeded(&smoke(&["--out", "whole"], cwd));
    let whole = cwd.join("whole");
    assert_eq!(merged, statuses(&whole), "the merged cells and statuses");
    digests.insert(environment(&whole)["plan"].as_str().unwrap().to_string());
    assert_eq!(digests.len(), 1, "one plan: {digests:?}");

    let mut report = vec!["report", "-o", "merged.html"];
    report.extend(shards.iter().map(String::as_str));
    let output = timerbench(&report, cwd);
    assert_succeeded(&output);
    assert!(
        text(&output.stdout).contains("(1 run, 9 cells"),
        "{}",
        text(&output.stdout)
    );
    assert_succeeded(&timerbench(&["report", "whole", "-o", "whole.html"], cwd));
    assert_eq!(
        tables_without_figures(&cwd.join("merged.html")),
        tables_without_figures(&cwd.join("whole.html")),
        "the report's tables, figures aside"
    );

    let mut rank = vec!["rank"];
    rank.extend(shards.iter().map(String::as_str));
    let output = timerbench(&rank, cwd);
    assert_succeeded(&output);
    assert!(text(&output.stdout).contains("(3 shards)"));
    assert!(!text(&output.stdout).contains("host B"), "one host");

    let mut combine = vec!["combine"];
    combine.extend(shards.iter().map(String::as_str));
    let output = timerbench(&combine, cwd);
    assert_succeeded(&output);
    assert!(text(&output.stdout).contains("One run: no interval"));

    let mut compare = vec!["compare", "--a"];
    compare.extend(shards.iter().map(String::as_str));
    compare.extend(["--b", "whole", "--color", "never"]);
    let output = timerbench(&compare, cwd);
    assert_succeeded(&output);
    let ok = merged.values().filter(|s| *s == "ok").count();
    assert!(
        text(&output.stdout).contains(&format!("of {ok} cells within")),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn the_default_suites_three_shards_expect_times_within_a_quarter_of_each_other() {
    let root = tempfile::tempdir().unwrap();
    let output = timerbench(&["run", "--plan", "--shard-count", "3"], root.path());
    assert_succeeded(&output);
    let out = text(&output.stdout);
    let total: usize = out
        .lines()
        .next()
        .and_then(|line| line.split(", ").find(|w| w.ends_with(" cells")))
        .and_then(|w| w.trim_end_matches(" cells").parse().ok())
        .unwrap_or_else(|| panic!("the plan's cells: {out}"));
    let totals = &out[out.find("shards:").expect("the shards' totals")..];
    let rows: Vec<(usize, f64)> = totals
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                [shard, cells, seconds] if shard.ends_with("/3") => {
                    Some((cells.parse().unwrap(), seconds.parse().unwrap()))
                }
                _ => None,
            }
        })
        .collect();
    assert_eq!(rows.len(), 3, "{totals}");
    assert_eq!(rows.iter().map(|r| r.0).sum::<usize>(), total);
    let most = rows.iter().map(|r| r.1).fold(0.0, f64::max);
    let least = rows.iter().map(|r| r.1).fold(f64::MAX, f64::min);
    assert!(least > 0.0 && most <= 1.25 * least, "{totals}");
    // The 1M cells spread: every shard has some.
    for k in 1..=3 {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with(&format!("{k}/3")) && l.contains("/1000000/")),
            "shard {k}/3 holds no 1M cell"
        );
    }
}

/// Writes a results folder `name` under `root`: `environment.json` with `plan`, `shard`,
/// `host_label` and `revision` as given (none left out when `None`), and one record per
/// `(workload, implementation, median)` at 1000 timers.
fn folder(
    root: &Path,
    name: &str,
    environment: &[(&str, Value)],
    cells: &[(&str, &str, f64)],
) -> String {
    let folder = root.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let mut document = json!({
        "schema": 5, "cpu": "Test CPU", "cores": 2, "memory_bytes": 1u64 << 30,
        "os": "Linux", "rustc": "rustc", "git_revision": "abc", "host": name,
        "command": "timerbench run", "started": "2026-11-29T00:00:00Z", "suite": "default",
        "repeat": 3, "cell_timeout_seconds": 1800,
    });
    for (field, value) in environment {
        document[*field] = value.clone();
    }
    std::fs::write(folder.join("environment.json"), document.to_string()).unwrap();
    let records: Vec<String> = cells
        .iter()
        .map(|(w, i, median)| cell_record(w, 1000, i, *median).to_string())
        .collect();
    std::fs::write(folder.join("results.jsonl"), records.join("\n") + "\n").unwrap();
    name.to_string()
}

fn shard(plan: &str, k: u32, n: u32) -> Vec<(&'static str, Value)> {
    vec![
        ("plan", json!(plan)),
        ("shard", json!({"index": k, "count": n})),
    ]
}

/// `report` (with -o), `rank`, `combine` and `compare --a ... --b other` of `folders` each
/// fail with `needle`, and the report is not written.
fn every_reader_refuses(root: &Path, folders: &[&str], needle: &str) {
    let other = folder(root, "other", &[], &[("hold", "btree", 5.0)]);
    let output = root.join("refused.html");
    let mut report = vec!["report", "-o", output.to_str().unwrap()];
    report.extend_from_slice(folders);
    assert_fails_with(&timerbench(&report, root), needle);
    assert!(!output.exists(), "nothing written");
    for command in ["rank", "combine"] {
        let mut args = vec![command];
        args.extend_from_slice(folders);
        assert_fails_with(&timerbench(&args, root), needle);
    }
    let mut compare = vec!["compare", "--a"];
    compare.extend_from_slice(folders);
    compare.extend(["--b", other.as_str()]);
    assert_fails_with(&timerbench(&compare, root), needle);
}

#[test]
fn shards_that_are_not_one_plans_whole_run_are_refused_with_the_reason() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    fn cells(implementation: &str) -> Vec<(&str, &str, f64)> {
        vec![("hold", implementation, 10.0)]
    }
    let a1 = folder(root, "a1", &shard("aaaa", 1, 2), &cells("btree"));
    let a2 = folder(root, "a2", &shard("aaaa", 2, 2), &cells("binary-heap"));
    let b2 = folder(root, "b2", &shard("bbbb", 2, 2), &cells("binary-heap"));
    let mut newer = shard("cccc", 2, 2);
    newer.push(("git_revision", json!("def")));
    let c2 = folder(root, "c2", &newer, &cells("binary-heap"));
    let out_of_range = folder(root, "a5", &shard("aaaa", 5, 2), &cells("list"));
    let older = folder(root, "older", &[], &cells("binary-heap"));
    let overlapping = folder(root, "a2-again", &shard("aaaa", 2, 2), &cells("btree"));

    every_reader_refuses(root, &[&a1, &b2], "of different plans (aaaa and bbbb");
    every_reader_refuses(root, &[&a1, &c2], "of different revisions (abc and def)");
    every_reader_refuses(root, &[&a1], "lacks shard 2/2");
    every_reader_refuses(
        root,
        &[&a1, &a2, &a2],
        "shard 2/2 of Test CPU's run is given twice",
    );
    every_reader_refuses(root, &[&a1, &out_of_range], "shard numbers run from 1 to 2");
    every_reader_refuses(root, &[&a1, &older], "has no `plan`");
    every_reader_refuses(root, &[&a1, &overlapping], "is also in");

    // The whole plan reads.
    assert_succeeded(&timerbench(&["rank", &a1, &a2], root));

    for bad in ["0/3", "4/3", "3", "x/3"] {
        assert_fails_with(
            &timerbench(&["run", "--plan", "--shard", bad], root),
            "--shard",
        );
    }
    assert_fails_with(&timerbench(&["run", "--shard-count", "3"], root), "--plan");
}

#[test]
fn runs_of_one_plan_from_two_hosts_show_their_rankings_and_the_pairs_that_flip() {
    // Two runs labelled as two hosts (one machine here): on `left` btree leads binary-heap
    // at hold, on `right` the reverse, each beyond its noise; the list's order holds.
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let host = |label: &str| vec![("plan", json!("aaaa")), ("host_label", json!(label))];
    let left = folder(
        root,
        "left",
        &host("left"),
        &[
            ("hold", "btree", 10.0),
            ("hold", "binary-heap", 20.0),
            ("hold", "list", 40.0),
        ],
    );
    let right = folder(
        root,
        "right",
        &host("right"),
        &[
            ("hold", "btree", 20.0),
            ("hold", "binary-heap", 10.0),
            ("hold", "list", 40.0),
        ],
    );
    let output = timerbench(&["rank", &left, &right], root);
    assert_succeeded(&output);
    let out = text(&output.stdout);
    assert!(
        out.contains("host A (left)") && out.contains("host B (right)"),
        "{out}"
    );
    assert!(out.contains("Flips between host A and host B: 1"), "{out}");
    let flips = &out[out.find("Flips between").unwrap()..];
    let flip = flips
        .lines()
        .find(|line| line.trim_start().starts_with("hold"))
        .unwrap_or_else(|| panic!("a flip row: {out}"));
    assert!(
        flip.contains("btree") && flip.contains("binary-heap") && !flip.contains("list"),
        "{flip}"
    );

    // Hosts are set side by side over one plan's runs.
    let another = folder(
        root,
        "another",
        &[("plan", json!("bbbb")), ("host_label", json!("right"))],
        &[("hold", "btree", 20.0)],
    );
    assert_fails_with(
        &timerbench(&["rank", &left, &another], root),
        "are runs of different plans (aaaa and bbbb)",
    );

    assert_succeeded(&timerbench(
        &["report", &left, &right, "-o", "hosts.html"],
        root,
    ));
    let html = std::fs::read_to_string(root.join("hosts.html")).unwrap();
    assert!(html.contains("id=\"hosts\""), "the hosts section");
    assert!(html.contains("Flips between A and B: 1"));
}
