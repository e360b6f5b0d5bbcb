//! `timerbench engine --micro lateness`: the table and the refusals through a fake engine,
//! and, when java and Netty's jar are here, Netty's wheel and the JDK's executor on the real
//! clock, checked for what must hold whatever the machine's load.

mod support;

use std::path::Path;
use std::time::Duration;
use support::{assert_fails_with, text, timerbench_in};
use timerbench::engine_protocol::lateness::{LatenessAnswer, LatenessRequest, check};
use timerbench::engine_protocol::protocol::{self, Request, Sampling};
use timerbench::engines::{self, build, build::NotBuilt};

const QUICK: Sampling = Sampling {
    samples: 1,
    min_sample_ms: 0,
    warmup: 1,
    max_warmup: 1,
};

/// An answer as an engine prints it, with the `lateness` object given.
fn answer_with(lateness: &str) -> String {
    format!(
        r#"{{"protocol":2,"engine":"null","runtime":"sh","runtime_version":"","status":"ok","unit":"lateness","samples_ns":[],"lateness":{lateness}}}"#
    )
}

const LATENESS: &str = r#"{"timers":4,"fired":4,"early":0,"tick_ms":null,"spread_ms":1000,"lateness_us":{"p50":51.6,"p99":99.4,"p999":100.2,"max":101.7},"busy":{"seconds":1.1,"wakeups_per_s":10.8,"cpu_ms_per_s":4.72,"process_cpu_ms_per_s":9.0},"idle":{"seconds":0.5,"wakeups_per_s":10.0,"cpu_ms_per_s":0.76,"process_cpu_ms_per_s":1.0},"wakeups_of":"voluntary context switches of the timer's worker thread","cpu_of":"the worker"}"#;

/// Runs `timerbench engine --engine null --micro lateness --timers 4` with the null
/// engine's script replaced by one that prints `answer`.
fn with_fake_null(answer: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("engines/null")).unwrap();
    std::fs::write(
        dir.path().join("engines/null/engine.sh"),
        format!("echo \"$*\" > \"$(dirname \"$0\")/request\"\ncat <<'EOF'\n{answer}\nEOF\n"),
    )
    .unwrap();
    let mut args = vec![
        "engine",
        "--engine",
        "null",
        "--micro",
        "lateness",
        "--timers",
        "4",
        "--sources",
        "engines",
        "--build-dir",
        "build",
    ];
    args.extend(extra);
    let output = timerbench_in(&args, dir.path());
    let request = std::fs::read_to_string(dir.path().join("engines/null/request")).unwrap();
    assert!(
        request.starts_with("micro lateness timers=4 spread-ms="),
        "{request}"
    );
    output
}

#[test]
fn a_lateness_answer_is_shown_in_the_live_tables_columns() {
    let output = with_fake_null(&answer_with(LATENESS), &[]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let header = stdout.lines().next().unwrap();
    for column in [
        "firings",
        "early",
        "lateness µs",
        "wakeups/s",
        "CPU ms/s",
        "idle wakeups/s",
    ] {
        assert!(header.contains(column), "{header}");
    }
    let row = stdout.lines().nth(1).unwrap();
    assert!(row.starts_with("null"), "{row}");
    assert!(
        row.contains("4/4") && row.contains("52/99/100/102"),
        "{row}"
    );
    assert!(
        row.contains("10.8") && row.contains("4.72") && row.contains("worker thread"),
        "{row}"
    );
}

#[test]
fn impossible_or_missing_figures_fail_the_command() {
    let too_many = LATENESS.replace("\"fired\":4", "\"fired\":5");
    assert_fails_with(&with_fake_null(&answer_with(&too_many), &[]), "5 fired");
    let not_an_object = answer_with("[1]");
    assert_fails_with(&with_fake_null(&not_an_object, &[]), "malformed answer");
}

#[test]
fn lateness_refuses_resident_and_a_zero_tick() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| timerbench_in(args, dir.path());
    assert_fails_with(
        &run(&["engine", "--micro", "lateness", "--resident", "5"]),
        "--micro lateness takes --timers",
    );
    assert_fails_with(
        &run(&[
            "engine",
            "--engine",
            "null",
            "--micro",
            "lateness",
            "--tick-ms",
            "0",
        ]),
        "--tick-ms 0",
    );
}

/// One real exchange with a built engine, its answer checked as the command checks it.
fn lateness_of(argv: &[String], engine: &str, tick_ms: Option<u64>, dir: &Path) -> LatenessAnswer {
    let request = LatenessRequest {
        timers: 2000,
        spread_ms: 200,
        idle_ms: 300,
        tick_ms,
    };
    let scratch = dir.join(format!("run-{engine}-{tick_ms:?}"));
    let exchange = protocol::exchange(
        argv,
        &Request::Lateness(request),
        &QUICK,
        Duration::from_secs(60),
        &scratch,
    );
    let answer = exchange
        .answer
        .unwrap_or_else(|f| panic!("{engine}: {f}\n{}", exchange.stderr_tail));
    let lateness = *answer.lateness.expect("an ok answer carries `lateness`");
    check(&request, &lateness).unwrap();
    assert_eq!(lateness.tick_ms, tick_ms);
    lateness
}

/// Netty's worker fires a bucket only once its tick's end has passed, and the executor
/// only once the deadline has: no firing is early, every timer fires. Netty's worker
/// sleeps to every tick even with nothing pending; the executor's parks until work comes.
/// The three runs go side by side: none of what is asserted depends on the load.
#[test]
fn netty_and_the_jdk_executor_fire_every_timer_late_and_count_their_wakeups() {
    let dir = tempfile::tempdir().unwrap();
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engines");
    let build_dir = dir.path().join("build");
    let mut builder = build::Builder::new(&sources, &build_dir);
    let mut argv = |name: &str| {
        let engine = engines::ENGINES.iter().find(|e| e.name == name).unwrap();
        match builder.build(engine) {
            Ok(argv) => Some(argv),
            Err(NotBuilt::Unsupported(why)) => {
                eprintln!("skipped: {name}: {why}");
                None
            }
            Err(other) => panic!("{name}: {other:?}"),
        }
    };
    let (Some(jdk), Some(netty)) = (argv("jdk-scheduled-executor"), argv("netty-hashed-wheel"))
    else {
        return;
    };
    let (executor, coarse, fine) = std::thread::scope(|s| {
        let executor = s.spawn(|| lateness_of(&jdk, "jdk", None, dir.path()));
        let coarse = s.spawn(|| lateness_of(&netty, "netty", Some(100), dir.path()));
        let fine = s.spawn(|| lateness_of(&netty, "netty", Some(1), dir.path()));
        (
            executor.join().unwrap(),
            coarse.join().unwrap(),
            fine.join().unwrap(),
        )
    });
    for answer in [&executor, &coarse, &fine] {
        assert_eq!((answer.fired, answer.early), (2000, 0), "{answer:?}");
        assert!(answer.wakeups_of.contains("worker thread"), "{answer:?}");
    }
    let idle = executor
        .idle
        .wakeups_per_s
        .expect("the worker's switches are counted");
    assert!(
        idle < 10.0,
        "an idle executor parks without a timeout: {idle}/s"
    );
    assert!(executor.busy.wakeups_per_s.unwrap() > idle);
    // Deadlines spread over 200 ms fire at 100 ms tick ends: half wait 10 ms or more.
    assert!(coarse.lateness_us.p50.unwrap() >= 10_000.0, "{coarse:?}");
    let idle = coarse.idle.wakeups_per_s.unwrap();
    assert!(
        (1.0..100.0).contains(&idle),
        "a 100 ms tick while idle: {idle}/s"
    );
    let idle = fine.idle.wakeups_per_s.unwrap();
    assert!(idle >= 20.0, "a 1 ms tick while idle: {idle}/s");
}

/// `--with-live` runs the port live on the same timers after the engines: its table (the
/// run verified against the model) below theirs.
#[test]
fn with_live_runs_the_port_on_the_same_timers() {
    let output = with_fake_null(
        &answer_with(LATENESS),
        &[
            "--spread-ms",
            "40",
            "--idle-ms",
            "50",
            "--tick-ms",
            "10",
            "--with-live",
        ],
    );
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(
        stdout.contains(
            "live --file build/lateness.tw --wait tick --idle 50ms --impl netty-wheel:tick=10"
        ),
        "{stdout}"
    );
    let port = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("netty-wheel:tick=10 "))
        .unwrap_or_else(|| panic!("no live row: {stdout}"));
    assert!(
        port.contains("verified") && port.contains("tick/10ms"),
        "{port}"
    );
}
