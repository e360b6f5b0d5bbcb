//! `timerbench import` as a user meets it: a workload written and summarized, or one error,
//! a non-zero exit and no file.

mod support;

use std::path::Path;
use support::{assert_fails_with, text, timerbench};

fn capture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../workloads/traces/linux-6.18-timer-12s.txt.gz")
        .display()
        .to_string()
}

/// `timerbench import FORMAT INPUT -o FOLDER/NAME EXTRA...`, which must succeed: the
/// output's path and what the command printed (its summary).
fn import_ok(
    folder: &Path,
    format: &str,
    input: &str,
    name: &str,
    extra: &[&str],
) -> (String, String) {
    let out = folder.join(name).to_str().unwrap().to_string();
    let mut args = vec!["import", format, input, "-o", &out];
    args.extend_from_slice(extra);
    let output = timerbench(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    (out, text(&output.stderr))
}

#[test]
fn import_ftrace_writes_a_workload_that_replays() {
    let folder = tempfile::tempdir().unwrap();
    let (out, summary) = import_ok(
        folder.path(),
        "ftrace",
        &capture(),
        "capture.tw",
        &["--timers", "wheel"],
    );
    assert!(summary.contains("514 starts"), "{summary}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.contains("@timers wheel"));
    assert!(written.contains("@generator timerbench import ftrace"));
    let replay = timerbench(&["replay", &out, "--impl", "quad-heap"]);
    assert!(replay.status.success(), "{}", text(&replay.stderr));
}

#[test]
fn import_csv_writes_a_workload() {
    let folder = tempfile::tempdir().unwrap();
    let csv = folder.path().join("events.csv");
    std::fs::write(&csv, "0,start,a,5000000\n1000000,stop,a\n").unwrap();
    let (out, _) = import_ok(
        folder.path(),
        "csv",
        csv.to_str().unwrap(),
        "events.tw",
        &[],
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.ends_with("s 0 5\na 1\nx 0\n"), "{written}");
    assert!(written.contains("\n@moves advance\n"), "{written}");
    let (out, _) = import_ok(
        folder.path(),
        "csv",
        csv.to_str().unwrap(),
        "ticks.tw",
        &["--moves", "tick"],
    );
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(written.ends_with("s 0 5\nt 1\nx 0\n"), "{written}");
    assert!(written.contains("\n@moves tick\n"), "{written}");
}

#[test]
fn import_errors_are_one_message_and_no_file() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("out.tw");
    let out_text = out.to_str().unwrap();
    let missing = folder.path().join("missing.txt");
    let output = timerbench(&[
        "import",
        "ftrace",
        missing.to_str().unwrap(),
        "-o",
        out_text,
    ]);
    assert_fails_with(&output, "missing.txt");
    let empty = folder.path().join("empty.txt");
    std::fs::write(&empty, "# tracer: nop\n").unwrap();
    let output = timerbench(&["import", "ftrace", empty.to_str().unwrap(), "-o", out_text]);
    assert_fails_with(&output, "no timer events");
    let capture = capture();
    for (flag, value, message) in [
        ("--tick", "1x", "tick `1x`"),
        ("--timers", "x", "--timers"),
        (
            "--moves",
            "jump",
            "invalid value 'jump' for '--moves <MOVES>'",
        ),
    ] {
        let output = timerbench(&["import", "ftrace", &capture, "-o", out_text, flag, value]);
        assert_fails_with(&output, message);
    }
    let bad = folder.path().join("bad.csv");
    std::fs::write(&bad, "0,start,a,1\n0,launch,a\n").unwrap();
    let output = timerbench(&["import", "csv", bad.to_str().unwrap(), "-o", out_text]);
    assert_fails_with(&output, "bad.csv:2:");
    assert!(!out.exists());
    // Only the two inputs: no output, no temporary file left behind.
    assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 2);
}
