//! The `timerbench` command as a user meets it: exit codes, messages, files written or not.

mod support;

use std::path::{Path, PathBuf};
use support::{assert_fails_with, text, timerbench};
use timerbench_impls::{EmptyTime, IMPLEMENTATIONS, Variant};
use timerbench_workloads::families::FAMILIES;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads/examples")
}

#[test]
fn list_names_every_implementation_and_family() {
    let output = timerbench(&["list"]);
    assert!(output.status.success());
    let stdout = text(&output.stdout);
    for implementation in IMPLEMENTATIONS {
        assert!(
            stdout.contains(implementation.name),
            "{}",
            implementation.name
        );
    }
    for family in FAMILIES {
        let info = family.info();
        assert!(stdout.contains(info.name), "{}", info.name);
        for param in info.params {
            assert!(stdout.contains(param.name), "{} {}", info.name, param.name);
        }
    }
}

#[test]
fn replay_verifies_every_implementation_on_the_examples() {
    let files: Vec<String> = ["start", "stop", "restart", "advance", "tick", "next"]
        .iter()
        .map(|n| examples().join(format!("{n}.tw")).display().to_string())
        .collect();
    let mut args = vec!["replay"];
    args.extend(files.iter().map(String::as_str));
    let output = timerbench(&args);
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    let verdicts = |verdict: &str| {
        stdout
            .lines()
            .filter(|l| l.trim_end().ends_with(verdict))
            .count()
    };
    // Every implementation on every file: exact ones `ok`, approximate ones `in bound`
    // with their lateness, except that a structure walking every bucket refuses the jump
    // of 10^12 ticks in advance.tw, beyond its walk budget, as declared.
    let mut expected = (0, 0, 0);
    for implementation in IMPLEMENTATIONS {
        let declared = Variant::of(implementation).declarations();
        let walks = matches!(declared.empty_time, EmptyTime::Walked { .. });
        let refused = usize::from(walks && declared.range.clock_limit() < 1_000_000_000_000);
        let run = files.len() - refused;
        if declared.precision.is_exact() {
            expected.0 += run;
        } else {
            expected.1 += run;
            let lateness = format!("lateness, {}: ", implementation.name);
            let shown = stdout.lines().filter(|l| l.contains(&lateness)).count();
            assert_eq!(shown, run, "{lateness}\n{stdout}");
        }
        expected.2 += refused;
    }
    assert_eq!(verdicts(" ok"), expected.0, "{stdout}");
    assert_eq!(verdicts(" in bound"), expected.1, "{stdout}");
    assert_eq!(verdicts("UNSUPPORTED"), expected.2, "{stdout}");
    assert!(expected.2 >= 3, "netty, ring and skynet refuse the jump");
    // A refusal is one message naming the file, line and limit, and a non-zero exit;
    // nothing else went wrong.
    assert!(!output.status.success(), "{stdout}\n{stderr}");
    let refusals = stderr
        .lines()
        .filter(|l| l.contains("advance.tw: "))
        .count();
    assert_eq!(refusals, expected.2, "{stderr}");
    assert!(
        stderr.contains(&format!("{} replay(s)", expected.2)),
        "{stderr}"
    );
    assert!(!stdout.contains("FAILED"), "{stdout}");
}

#[test]
fn a_malformed_workload_is_one_message_with_file_and_line() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("bad.tw");
    std::fs::write(&path, "timer-workload v1\n@name bad\ns 1 5\nfrobnicate 3\n").unwrap();
    let output = timerbench(&["replay", path.to_str().unwrap()]);
    assert_fails_with(
        &output,
        &format!("{}:4: unknown operation `frobnicate`", path.display()),
    );
    assert_eq!(text(&output.stderr).lines().count(), 1, "one message");
}

#[test]
fn a_missing_file_and_a_bad_flag_are_clear_errors() {
    assert_fails_with(
        &timerbench(&["replay", "/no/such.tw"]),
        "/no/such.tw: cannot open",
    );
    let tick = examples().join("tick.tw");
    let tick = tick.to_str().unwrap();
    assert_fails_with(
        &timerbench(&["replay", tick, "--impl", "red-black"]),
        "--impl",
    );
    assert_fails_with(
        &timerbench(&["replay", tick, "--frobnicate"]),
        "--frobnicate",
    );
    assert_fails_with(
        &timerbench(&["replay", tick, "--expiries", "/tmp/x"]),
        "--expiries needs exactly one FILE and one --impl",
    );
}

#[test]
fn a_bad_implementation_parameter_is_one_clear_error() {
    let tick = examples().join("tick.tw");
    let tick = tick.to_str().unwrap();
    for (flag, needle) in [
        (
            "hashed-wheel:slot=64",
            "unknown parameter `slot` (parameters: slots)",
        ),
        (
            "hashed-wheel:slots=1000",
            "slots must be a power of two from 2 to 2^24",
        ),
        ("linux-wheel:levels=x", "the value must be a whole number"),
        ("btree:slots=64", "takes none"),
    ] {
        let output = timerbench(&["replay", tick, "--impl", flag]);
        assert_fails_with(&output, "--impl");
        assert_fails_with(&output, needle);
    }
}

#[test]
fn a_variant_replays_under_its_own_name() {
    let tick = examples().join("tick.tw");
    let output = timerbench(&[
        "replay",
        tick.to_str().unwrap(),
        "--impl",
        "hashed-wheel:slots=2",
        "--impl",
        "kafka-wheel:slots=3",
    ]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    for label in ["hashed-wheel:slots=2 ", "kafka-wheel:slots=3 "] {
        let row = stdout.lines().find(|l| l.trim_start().starts_with(label));
        assert!(
            row.is_some_and(|r| r.trim_end().ends_with(" ok")),
            "{stdout}"
        );
    }
}

/// The case: a 2^49-tick delay through tokio-delay-queue panicked inside the
/// adapter. Its declared range refuses it before it runs: one message naming the line and
/// the limit, no panic, a non-zero exit; the other implementations still replay it.
#[test]
fn a_workload_beyond_a_declared_range_is_refused_before_it_runs() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("far.tw");
    std::fs::write(
        &path,
        "timer-workload v1\ns 1 5\na 3\ns 2 562949953421312\nn\n",
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let output = timerbench(&[
        "replay",
        file,
        "--impl",
        "tokio-delay-queue",
        "--impl",
        "btree",
    ]);
    assert_fails_with(
        &output,
        &format!(
            "{file}: tokio-delay-queue: not run: line 4 asks for a delay of 562949953421312 ticks, beyond the limit of"
        ),
    );
    let stdout = text(&output.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with("btree") && l.trim_end().ends_with(" ok")),
        "{stdout}"
    );
    assert!(stdout.contains("UNSUPPORTED"), "{stdout}");
    assert_eq!(
        text(&output.stderr).lines().count(),
        2,
        "the refusal and the count"
    );
}

/// tokio-sleep's range: a delay one past its limit is refused with the one message, and one
/// at the limit (past the 2^36 ms ring of tokio's top level), beside a timer in the ring's
/// last slot, replays like the model.
#[test]
fn tokio_sleep_refuses_past_its_range_and_replays_the_ring_within_it() {
    use timerbench_impls::peers::tokio_sleep::MAX_DELAY;
    let folder = tempfile::tempdir().unwrap();
    let write = |name: &str, delay: u64| {
        let path = folder.path().join(name);
        let ring = (1u64 << 36) - (1 << 30) + 10;
        let workload = format!("timer-workload v1\ns 1 5\na 3\ns 2 {delay}\ns 3 {ring}\nn\nn\n");
        std::fs::write(&path, workload).unwrap();
        path.to_str().unwrap().to_string()
    };
    let past = write("past.tw", MAX_DELAY + 1);
    let output = timerbench(&["replay", &past, "--impl", "tokio-sleep"]);
    assert_fails_with(
        &output,
        &format!(
            "{past}: tokio-sleep: not run: line 4 asks for a delay of {} ticks, beyond the limit of {MAX_DELAY} ticks",
            MAX_DELAY + 1
        ),
    );
    let within = write("within.tw", MAX_DELAY);
    let output = timerbench(&["replay", &within, "--impl", "tokio-sleep"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with("tokio-sleep") && l.trim_end().ends_with(" ok")),
        "{stdout}"
    );
}

#[test]
fn the_approximate_wheel_prints_its_lateness() {
    let tick = examples().join("tick.tw");
    let output = timerbench(&["replay", tick.to_str().unwrap(), "--impl", "linux-wheel"]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let line = stdout
        .lines()
        .find(|l| l.contains("lateness, linux-wheel: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    for part in [
        "firings late: p50 ",
        ", p99 ",
        ", max ",
        " of its delay",
        "pending late at the end",
    ] {
        assert!(line.contains(part), "{line}");
    }
}

#[test]
fn the_expiry_log_is_written_only_for_a_verified_replay() {
    let folder = tempfile::tempdir().unwrap();
    let log = folder.path().join("expiries.log");
    let tick = examples().join("tick.tw");
    let output = timerbench(&[
        "replay",
        tick.to_str().unwrap(),
        "--impl",
        "hierarchical-wheel",
        "--expiries",
        log.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let written = std::fs::read_to_string(&log).unwrap();
    let hand_traced = std::fs::read_to_string(examples().join("tick.expiries")).unwrap();
    assert_eq!(written, hand_traced);

    let bad = folder.path().join("bad.tw");
    std::fs::write(&bad, "timer-workload v1\ns 1 5\ns 1 5\n").unwrap();
    let second = folder.path().join("second.log");
    let output = timerbench(&[
        "replay",
        bad.to_str().unwrap(),
        "--impl",
        "btree",
        "--expiries",
        second.to_str().unwrap(),
    ]);
    assert_fails_with(&output, "bad.tw:3: timer 1 is already pending");
    assert!(!second.exists(), "no log for a failed replay");
}

#[test]
fn gen_refuses_bad_input_and_writes_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("w.tw");
    let out = out.to_str().unwrap();
    assert_fails_with(
        &timerbench(&["gen", "no-such-family", "-o", out]),
        "unknown family",
    );
    assert_fails_with(
        &timerbench(&["gen", "burst", "--timers", "0", "-o", out]),
        "--timers",
    );
    assert_fails_with(
        &timerbench(&["gen", "burst", "--param", "novalue", "-o", out]),
        "KEY=VALUE",
    );
    assert_fails_with(
        &timerbench(&["gen", "burst", "--param", "frobnicate=1", "-o", out]),
        "no parameter `frobnicate`",
    );
    assert_fails_with(
        &timerbench(&["gen", "burst", "-o", "/no/such/folder/w.tw"]),
        "cannot write /no/such/folder/w.tw",
    );
    assert!(!Path::new(out).exists());
    assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 0);
}

#[test]
fn a_generated_workload_records_its_command_and_replays() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("hold.tw");
    let out = out.to_str().unwrap();
    let output = timerbench(&[
        "gen",
        "hold",
        "--timers",
        "500",
        "--ops",
        "2000",
        "--seed",
        "7",
        "--param",
        "dist=pareto",
        "-o",
        out,
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let content = std::fs::read_to_string(out).unwrap();
    assert!(
        content.contains(
            "@generator timerbench gen hold --timers 500 --ops 2000 --seed 7 --param dist=pareto"
        ),
        "{}",
        &content[..content.len().min(600)]
    );
    let output = timerbench(&["replay", out]);
    assert!(output.status.success(), "{}", text(&output.stderr));
}
