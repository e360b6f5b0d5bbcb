//! `--metric` on `compare`, `rank` and `combine`, on results folders written here whose
//! records hold counts (as `timerbench run --counts` writes them): the figure read is the
//! count per counted line, a change of a count is stated exactly, a cell without counts
//! reads as missing with where counts come from, runs of two simulated machines and an
//! unknown metric are refused.

mod support;

use serde_json::{Value, json};
use std::path::Path;
use support::{
    assert_fails_with, assert_succeeded, cell_record, text, timerbench_in as timerbench,
};

/// The cache geometry of a record, with a last level of `ll_bytes`.
fn cache(ll_bytes: u64) -> Value {
    let level = |size: u64, associativity: u32| json!({"size_bytes": size, "associativity": associativity, "line_bytes": 64});
    json!({"i1": level(32768, 8), "d1": level(32768, 8), "ll": level(ll_bytes, 16)})
}

/// A counted cell: `instructions` over 100 counted lines, a timed figure of 10 ns/op (so
/// that `--metric ns` still reads it), the last level `ll_bytes`.
fn counted(workload: &str, implementation: &str, instructions: u64, ll_bytes: u64) -> Value {
    let mut record = cell_record(workload, 1000, implementation, 10.0);
    record["schema"] = json!(5);
    record["counts"] = json!({
        "tool": "valgrind-3.19.0 callgrind",
        "cache": cache(ll_bytes),
        "lines": 100,
        "totals": {
            "instructions": instructions, "data_reads": 300, "data_writes": 100,
            "i1_misses": 0, "d1_read_misses": 30, "d1_write_misses": 10,
            "ll_instruction_misses": 0, "ll_read_misses": 5, "ll_write_misses": 0,
            "conditional_branches": 200, "conditional_mispredicts": 20,
            "indirect_branches": 0, "indirect_mispredicts": 0,
        },
        "seconds": 1.0,
    });
    record
}

/// Writes `records` as the `results.jsonl` of folder `name` under `dir`.
fn folder(dir: &Path, name: &str, records: &[Value]) {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(folder.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
}

const LL: u64 = 8 << 20;

/// A: hold's binary-heap 1000 instructions over 100 lines, btree 2000; cron's btree
/// timed only. B: binary-heap 20 instructions more (0.2 a line), btree the same, cron's
/// btree still without counts.
fn two_runs(dir: &Path) {
    folder(
        dir,
        "a",
        &[
            counted("hold", "binary-heap", 1000, LL),
            counted("hold", "btree", 2000, LL),
            cell_record("cron", 1000, "btree", 10.0),
        ],
    );
    folder(
        dir,
        "b",
        &[
            counted("hold", "binary-heap", 1020, LL),
            counted("hold", "btree", 2000, LL),
            cell_record("cron", 1000, "btree", 10.0),
        ],
    );
}

/// The output line of `workload` and `implementation`.
fn row<'s>(stdout: &'s str, workload: &str, implementation: &str) -> &'s str {
    stdout
        .lines()
        .find(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.first() == Some(&workload) && words.contains(&implementation)
        })
        .unwrap_or_else(|| panic!("no {workload} {implementation} in:\n{stdout}"))
}

#[test]
fn compare_states_a_count_change_exactly_and_any_change_is_one() {
    let dir = tempfile::tempdir().unwrap();
    two_runs(dir.path());
    let output = timerbench(
        &["compare", "a", "b", "--metric", "instructions"],
        dir.path(),
    );
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(stdout.contains("A instructions/line"), "{stdout}");
    let heap = row(&stdout, "hold", "binary-heap");
    for figure in ["10.000", "10.200", "1.0200", "+0.2000", "more"] {
        assert!(heap.contains(figure), "{figure} not in {heap:?}");
    }
    let btree = row(&stdout, "hold", "btree");
    assert!(
        btree.contains("1.0000") && !btree.contains("more") && !btree.contains("fewer"),
        "{btree}"
    );
    assert!(stdout.contains("any change is a change"), "{stdout}");
    // The timed-only cell is missing, never a count of 0, and the output says why.
    assert!(
        stdout.contains("ok but without counts") && stdout.contains("timerbench run --counts"),
        "{stdout}"
    );

    // Without the flag, the same folders compare by time as before: the same 10 ns/op.
    let timed = timerbench(&["compare", "a", "b"], dir.path());
    assert_succeeded(&timed);
    let timed = text(&timed.stdout);
    assert!(timed.contains("A ns/op"), "{timed}");
    assert!(
        !timed.contains("more") && !timed.contains("without counts"),
        "{timed}"
    );
}

#[test]
fn compare_over_runs_and_combine_read_counts() {
    let dir = tempfile::tempdir().unwrap();
    two_runs(dir.path());
    folder(
        dir.path(),
        "b2",
        &[
            counted("hold", "binary-heap", 1020, LL),
            counted("hold", "btree", 2000, LL),
        ],
    );
    let output = timerbench(
        &[
            "compare",
            "--a",
            "a",
            "--b",
            "b",
            "b2",
            "--metric",
            "est-cycles",
        ],
        dir.path(),
    );
    assert_succeeded(&output);
    let stdout = text(&output.stdout);
    assert!(stdout.contains("A est. cycles/line"), "{stdout}");
    // One run against two: a count's change is exact, so it differs without an interval
    // from the spread between runs; the unchanged btree is the same.
    assert!(
        row(&stdout, "hold", "binary-heap").contains("differs: slower"),
        "{stdout}"
    );
    assert!(row(&stdout, "hold", "btree").contains("same"), "{stdout}");
    assert!(stdout.contains("timerbench run --counts"), "{stdout}");

    let combined = timerbench(
        &["combine", "b", "b2", "--metric", "instructions"],
        dir.path(),
    );
    assert_succeeded(&combined);
    let stdout = text(&combined.stdout);
    assert!(stdout.contains("mean instructions/line"), "{stdout}");
    // Two runs of one count: the mean is the count per line and the interval nothing.
    let heap = row(&stdout, "hold", "binary-heap");
    assert!(
        heap.contains("2/2") && heap.contains("10.200") && heap.contains("±0.00"),
        "{heap}"
    );
}

#[test]
fn rank_orders_by_the_count_per_line() {
    let dir = tempfile::tempdir().unwrap();
    // By time the heap is fastest; by instructions the btree does fewer.
    let mut heap = counted("hold", "binary-heap", 3000, LL);
    heap["throughput"]["ns_per_op"]["median"] = json!(5.0);
    folder(
        dir.path(),
        "r",
        &[
            heap,
            counted("hold", "btree", 1500, LL),
            cell_record("hold", 1000, "hierarchical-wheel", 8.0),
        ],
    );
    let by_count = timerbench(&["rank", "r", "--metric", "instructions"], dir.path());
    assert_succeeded(&by_count);
    let stdout = text(&by_count.stdout);
    assert!(stdout.contains("by instructions/line"), "{stdout}");
    let first = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap_or_else(|| panic!("no first place in:\n{stdout}"));
    assert!(first.contains("btree"), "{stdout}");
    assert!(
        row(&stdout, "2", "binary-heap").contains("2.00×"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 verified cell without counts") && stdout.contains("--counts"),
        "{stdout}"
    );
    let by_time = timerbench(&["rank", "r"], dir.path());
    assert_succeeded(&by_time);
    let stdout = text(&by_time.stdout);
    let first = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap_or_else(|| panic!("no first place in:\n{stdout}"));
    assert!(first.contains("binary-heap"), "{stdout}");
}

#[test]
fn runs_of_two_simulated_machines_and_an_unknown_metric_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    folder(dir.path(), "small", &[counted("hold", "btree", 1000, LL)]);
    folder(
        dir.path(),
        "large",
        &[counted("hold", "btree", 1000, 2 * LL)],
    );
    for args in [
        &["compare", "small", "large", "--metric", "instructions"][..],
        &["combine", "small", "large", "--metric", "ll-misses"],
        &[
            "compare",
            "--a",
            "small",
            "--b",
            "large",
            "--metric",
            "d1-misses",
        ],
    ] {
        let output = timerbench(args, dir.path());
        assert_fails_with(&output, "different simulated machines");
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains("small")
                && stderr.contains("large")
                && stderr.contains(&format!("LL {LL},16,64"))
                && stderr.contains(&format!("LL {},16,64", 2 * LL)),
            "{args:?}: {stderr}"
        );
    }
    // Two timed runs by a count: nothing to compare, and the message says where counts
    // come from.
    folder(
        dir.path(),
        "timed",
        &[cell_record("hold", 1000, "btree", 10.0)],
    );
    assert_fails_with(
        &timerbench(
            &["compare", "timed", "timed", "--metric", "instructions"],
            dir.path(),
        ),
        "none with counts in both (no counts: run `timerbench run --counts`)",
    );
    // By time the geometry does not matter.
    assert_succeeded(&timerbench(&["compare", "small", "large"], dir.path()));

    for command in [
        &["compare", "small", "large"][..],
        &["rank", "small"],
        &["combine", "small"],
    ] {
        let mut args = command.to_vec();
        args.extend(["--metric", "cycles"]);
        let output = timerbench(&args, dir.path());
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert_fails_with(&output, "--metric");
        assert_fails_with(&output, "est-cycles");
    }
}
