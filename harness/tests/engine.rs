//! `timerbench engine`: the protocol with fake engines (shell scripts) that answer well,
//! crash, hang, answer malformed JSON or replay a wrong log; a missing toolchain; and, when
//! Java is here, the JDK engines' expiry logs against the reference model.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{assert_fails_with, text, timerbench_in};
use timerbench::engine_protocol::protocol::{Request, Sampling};
use timerbench::engine_protocol::{Outcome, run_engine};
use timerbench::engines::{self, Engine, Toolchain, build};

const FAKE: Engine = Engine {
    name: "fake",
    toolchain: Toolchain::Shell,
    verifies: true,
    replays: true,
    lateness: false,
    ticked: false,
    live: false,
    requests: true,
};

const QUICK: Sampling = Sampling {
    samples: 1,
    min_sample_ms: 0,
    warmup: 1,
    max_warmup: 1,
};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads/examples")
}

/// `stop.tw` fires one timer, `20 2 20`, after 9 operations: 3 started, 2 stopped, 3 misses.
fn stop_workload() -> timerbench_workloads::Program {
    timerbench_workloads::load(&examples().join("stop.tw")).expect("stop.tw loads")
}

/// A fake engine whose body is `script`; `$log` is the log path it was given.
fn fake(dir: &Path, script: &str) -> Vec<String> {
    let path = dir.join("engine.sh");
    let prelude = "for a in \"$@\"; do case \"$a\" in log=*) log=\"${a#log=}\";; esac; done\n";
    std::fs::write(&path, format!("{prelude}{script}\n")).unwrap();
    vec!["sh".into(), path.display().to_string()]
}

const REPLAY_ANSWER: &str = r#"printf '{"protocol":2,"engine":"fake","runtime":"sh","runtime_version":"","status":"ok","unit":"replay","samples_ns":[5.0],"replay":{"operations":9,"started":3,"fired":1,"stopped":2,"misses":3,"pending":0,"final_clock":20,"log":"%s"}}\n' "$log""#;

fn run_fake(script: &str, limit: Duration) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let argv = fake(dir.path(), script);
    let request = Request::Replay {
        workload: examples().join("stop.tw"),
        log: dir.path().join("expiries"),
        parameters: vec![],
    };
    let program = stop_workload();
    run_engine(
        &FAKE,
        &argv,
        &request,
        Some(&program),
        &QUICK,
        limit,
        &dir.path().join("run"),
    )
}

fn failure(outcome: Outcome) -> (String, String) {
    match outcome {
        Outcome::Failed {
            failure,
            stderr_tail,
        } => (failure, stderr_tail),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn a_right_log_is_verified_with_the_models_digest() {
    let outcome = run_fake(
        &format!("echo '20 2 20' > \"$log\"\n{REPLAY_ANSWER}"),
        Duration::from_secs(30),
    );
    match outcome {
        Outcome::Answered { digest, answer, .. } => {
            assert_eq!(digest, Some(stop_workload().summary.digest));
            assert_eq!(answer.samples_ns, vec![5.0]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_wrong_log_names_the_first_differing_line() {
    let (failure, _) = failure(run_fake(
        &format!("echo '20 1 20' > \"$log\"\n{REPLAY_ANSWER}"),
        Duration::from_secs(30),
    ));
    assert!(failure.contains("wrong expiry log"), "{failure}");
    assert!(
        failure.contains("expected `20 2 20`, got `20 1 20`"),
        "{failure}"
    );
}

#[test]
fn wrong_counts_with_the_right_log_are_a_wrong_log() {
    let answer = REPLAY_ANSWER.replace("\"misses\":3", "\"misses\":4");
    let (failure, _) = failure(run_fake(
        &format!("echo '20 2 20' > \"$log\"\n{answer}"),
        Duration::from_secs(30),
    ));
    assert!(failure.contains("summary differs"), "{failure}");
}

#[test]
fn a_crash_is_reported_with_its_stderr() {
    let (failure, stderr) = failure(run_fake(
        "echo 'line one' >&2; echo 'boom: out of timers' >&2; exit 3",
        Duration::from_secs(30),
    ));
    assert!(
        failure.contains("crashed") && failure.contains('3'),
        "{failure}"
    );
    assert!(stderr.ends_with("boom: out of timers"), "{stderr}");
}

#[test]
fn a_hang_is_killed_at_its_limit() {
    let (failure, stderr) = failure(run_fake(
        "echo 'waiting forever' >&2; sleep 60",
        Duration::from_millis(300),
    ));
    assert!(failure.contains("hung"), "{failure}");
    assert!(stderr.contains("waiting forever"), "{stderr}");
}

#[test]
fn malformed_answers_are_refused() {
    for (script, needle) in [
        ("echo 'not json'", "malformed"),
        ("true", "nothing on stdout"),
        (
            r#"echo '{"protocol":1,"engine":"f","runtime":"","runtime_version":"","status":"ok"}'"#,
            "protocol 1",
        ),
        (
            r#"echo '{"protocol":2,"engine":"f","runtime":"","runtime_version":"","status":"ok"}'"#,
            "without `replay`",
        ),
        (
            r#"echo '{"protocol":2,"engine":"f","runtime":"","runtime_version":"","status":"unsupported"}'"#,
            "without a reason",
        ),
        (
            r#"echo '{"protocol":2,"engine":"f","runtime":"","runtime_version":"","status":"ok","samples_ns":[1,2],"samples_gc_count":[0]}'"#,
            "samples_gc_count has 1 entries for 2 samples",
        ),
        (
            r#"echo '{"protocol":2,"engine":"f","runtime":"","runtime_version":"","status":"ok","samples_ns":[1],"samples_allocated_bytes":[8,8]}'"#,
            "samples_allocated_bytes has 2 entries for 1 samples",
        ),
    ] {
        let (failure, _) = failure(run_fake(script, Duration::from_secs(30)));
        assert!(failure.contains(needle), "{script}: {failure}");
    }
}

#[test]
fn an_unsupported_answer_is_not_a_failure() {
    let outcome = run_fake(
        r#"echo '{"protocol":2,"engine":"f","runtime":"","runtime_version":"","status":"unsupported","reason":"no virtual clock"}'"#,
        Duration::from_secs(30),
    );
    assert!(matches!(outcome, Outcome::Unsupported(ref why) if why == "no virtual clock"));
}

#[test]
fn a_missing_toolchain_is_unsupported_with_its_package() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let empty = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args([
            "engine",
            "--engine",
            "go-runtime",
            "--engine",
            "jdk-delay-queue",
        ])
        .args(["--resident", "10", "--build-dir"])
        .arg(empty.path().join("build"))
        .env("PATH", empty.path())
        .current_dir(&repo)
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(stdout.contains("apt-get install golang-go"), "{stdout}");
    assert!(
        stdout.contains("apt-get install default-jdk-headless"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_engine_names_the_flag() {
    let output = timerbench_in(
        &["engine", "--engine", "nope", "--resident", "1"],
        Path::new("."),
    );
    assert_fails_with(&output, "--engine nope");
}

/// A valid workload made by construction: fresh names for `s` (near 2^64 too), a small pool
/// for `r` and `x` (reuse, stale stops), delays of 0, a few ticks or up to 2^50.
fn generated(seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |below: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below
    };
    let mut out = String::from("timer-workload v1\n@name generated\n");
    let mut fresh = 0u64;
    for _ in 0..400 {
        let delay = match next(4) {
            0 => 0,
            1 | 2 => next(60),
            _ => next(1 << 50),
        };
        let line = match next(10) {
            0 | 1 => {
                fresh += 1;
                let id = if fresh.is_multiple_of(2) {
                    u64::MAX - fresh
                } else {
                    1000 + fresh
                };
                format!("s {id} {delay}")
            }
            2..=4 => format!("r {} {delay}", next(20)),
            5 | 6 => format!("x {}", next(20)),
            7 => format!(
                "a {}",
                1 + if next(5) == 0 {
                    next(1 << 40)
                } else {
                    next(40)
                }
            ),
            8 => format!("t {}", 1 + next(20)),
            _ => "n".to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn jdk_engines_replay_like_the_reference_model() {
    if !(build::on_path("javac") && build::on_path("java")) {
        eprintln!("skipped: no javac/java here (apt-get install default-jdk-headless)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engines");
    let mut workloads: Vec<PathBuf> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tw"))
        .collect();
    for seed in 1..=3 {
        let path = dir.path().join(format!("generated-{seed}.tw"));
        std::fs::write(&path, generated(seed)).unwrap();
        workloads.push(path);
    }
    workloads.sort();
    let replaying = ["jdk-delay-queue", "jdk-priority-queue"];
    for engine in engines::ENGINES
        .iter()
        .filter(|e| replaying.contains(&e.name))
    {
        let argv = build::build(engine, &sources, &dir.path().join("build")).expect("javac builds");
        for workload in &workloads {
            let program = timerbench_workloads::load(workload).unwrap();
            let generated = workload.starts_with(dir.path());
            if generated {
                // Firings, stops and misses, so the purge and the stale stops are exercised.
                let s = &program.summary;
                assert!(s.fired > 10 && s.stopped > 10 && s.misses > 0, "{s:?}");
            }
            // Kafka's default interval, and 2 so that purge passes run on small workloads.
            let purges: &[&str] = if generated {
                &["purge-interval=1000", "purge-interval=2"]
            } else {
                &["purge-interval=1000"]
            };
            for purge in purges {
                let request = Request::Replay {
                    workload: workload.clone(),
                    log: dir.path().join("expiries"),
                    parameters: vec![purge.to_string()],
                };
                let outcome = run_engine(
                    engine,
                    &argv,
                    &request,
                    Some(&program),
                    &QUICK,
                    Duration::from_secs(120),
                    &dir.path().join("run"),
                );
                match outcome {
                    Outcome::Answered { digest, .. } => {
                        assert_eq!(digest, Some(program.summary.digest.clone()))
                    }
                    other => panic!("{} on {}: {other:?}", engine.name, workload.display()),
                }
            }
        }
    }
}

/// A start+stop request over 100 resident timers with the engine's own `parameters`.
fn start_stop(parameters: &[String]) -> Request {
    Request::StartStop {
        resident: 100,
        parameters: parameters.to_vec(),
    }
}

/// A restart request over 100 resident timers, with no parameters of the engine's own.
fn restart() -> Request {
    Request::Restart {
        resident: 100,
        parameters: Vec::new(),
    }
}

/// The real-clock engines (Go's runtime timers, the JDK's executor, Netty's wheel) each
/// answer a small start+stop run, and refuse a replay as unsupported.
#[test]
fn real_clock_engines_run_start_stop_pairs_and_refuse_replays() {
    let dir = tempfile::tempdir().unwrap();
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engines");
    let names = ["go-runtime", "jdk-scheduled-executor", "netty-hashed-wheel"];
    for engine in engines::ENGINES.iter().filter(|e| names.contains(&e.name)) {
        let argv = match build::build(engine, &sources, &dir.path().join("build")) {
            Ok(argv) => argv,
            Err(build::NotBuilt::Unsupported(why)) => {
                eprintln!("skipped {}: {why}", engine.name);
                continue;
            }
            Err(other) => panic!("{}: {other:?}", engine.name),
        };
        let run = |request: &Request| {
            run_engine(
                engine,
                &argv,
                request,
                None,
                &QUICK,
                Duration::from_secs(120),
                &dir.path().join("run"),
            )
        };
        match run(&start_stop(&[])) {
            Outcome::Answered { answer, .. } => {
                assert_eq!(answer.engine, engine.name);
                assert_eq!(answer.unit.as_deref(), Some("start-stop pair"));
                assert_eq!(answer.samples_ns.len(), 1);
                assert!(answer.peak_rss_bytes.unwrap_or(0) > 0);
                // The residents are due an hour on: none falls due during the run.
                assert_eq!(answer.resident_fired, Some(0), "{}", engine.name);
                // Each sample says what the collector did during it.
                assert_eq!(answer.samples_gc_count.len(), 1, "{}", engine.name);
                assert_eq!(answer.samples_gc_ms.len(), 1, "{}", engine.name);
                if engine.name != "go-runtime" {
                    for flag in engines::JVM_FLAGS {
                        assert!(answer.runtime_flags.iter().any(|f| f == flag), "{flag}");
                    }
                    assert_eq!(answer.samples_jit_ms.len(), 1);
                    assert_eq!(answer.samples_allocated_bytes.len(), 1);
                    assert!(answer.heap_live_bytes.unwrap_or(0) > 0);
                    // Every JVM engine collects its heap before each iteration and says so.
                    let between = answer.between_samples.as_deref().unwrap_or("");
                    assert!(between.contains("System.gc()"), "{between}");
                }
            }
            other => panic!("{}: {other:?}", engine.name),
        }
        if engine.name == "jdk-scheduled-executor" {
            // The worker's two modes say which ran; a mode it does not know is refused.
            for (mode, words) in [("busy", "worker=busy"), ("waiting", "worker=waiting")] {
                match run(&start_stop(&[format!("worker={mode}")])) {
                    Outcome::Answered { answer, .. } => {
                        let between = answer.between_samples.unwrap_or_default();
                        assert!(between.contains(words), "{between}");
                    }
                    other => panic!("worker={mode}: {other:?}"),
                }
            }
            let refused = run(&start_stop(&["worker=lazy".to_string()]));
            assert!(matches!(refused, Outcome::Failed { .. }), "{refused:?}");
        }
        if engine.name == "go-runtime" {
            match run(&restart()) {
                Outcome::Answered { answer, .. } => {
                    assert_eq!(answer.unit.as_deref(), Some("restart"));
                    assert_eq!(answer.samples_ns.len(), 1);
                }
                other => panic!("go-runtime restart: {other:?}"),
            }
        } else {
            let restart = run(&restart());
            assert!(matches!(restart, Outcome::Unsupported(_)), "{restart:?}");
        }
        let replay = Request::Replay {
            workload: examples().join("stop.tw"),
            log: dir.path().join("expiries"),
            parameters: vec![],
        };
        assert!(
            matches!(run(&replay), Outcome::Unsupported(_)),
            "{}",
            engine.name
        );
    }
}

/// `argv` with the JVM's heap flags replaced by a smaller heap: an eden of 51.2 MiB fills in
/// tens of milliseconds, so that samples of whole edens stay short in a test, and a 200 ms
/// sample holds a few collections, as the harness's 409.6 MiB eden holds one or two.
fn with_small_heap(argv: &[String]) -> Vec<String> {
    let heap = ["-Xms128m", "-Xmx128m", "-Xmn64m"].map(String::from);
    let rest = argv[1..]
        .iter()
        .filter(|a| !["-Xms", "-Xmx", "-Xmn"].iter().any(|f| a.starts_with(f)));
    let small: Vec<String> = argv[..1].iter().chain(&heap).chain(rest).cloned().collect();
    assert_eq!(small.len(), argv.len(), "{argv:?}");
    small
}

/// The JVM replay engines' samples start from the same heap (collected, then half an eden
/// of untimed replays) and are sized in whole edens of garbage, so that every sample holds
/// the same number of young collections, one per eden of its garbage: their cost is in the
/// figure, the same in each. A replay allocates the same bytes every time on one thread,
/// so the counts do not depend on timing; only how many edens a sample spans does (the
/// edens that 200 ms of replays fill, fixed for all the samples by the warm-up: several
/// at any pace above 128 MB/s, and none, with no collection, below it).
#[test]
fn jvm_replay_samples_hold_the_same_collections() {
    if !(build::on_path("javac") && build::on_path("java")) {
        eprintln!("skipped: no javac/java here (apt-get install default-jdk-headless)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../engines");
    let workload = dir.path().join("generated.tw");
    std::fs::write(&workload, generated(7)).unwrap();
    let program = timerbench_workloads::load(&workload).unwrap();
    let sampling = Sampling {
        samples: 3,
        min_sample_ms: 200,
        warmup: 2,
        max_warmup: 2,
    };
    for name in ["jdk-priority-queue", "jdk-delay-queue"] {
        let engine = engines::ENGINES.iter().find(|e| e.name == name).unwrap();
        let argv = build::build(engine, &sources, &dir.path().join("build")).expect("javac builds");
        let request = Request::Replay {
            workload: workload.clone(),
            log: dir.path().join("expiries"),
            parameters: vec!["purge-interval=2".into()],
        };
        let answer = match run_engine(
            engine,
            &with_small_heap(&argv),
            &request,
            Some(&program),
            &sampling,
            Duration::from_secs(120),
            &dir.path().join("run"),
        ) {
            Outcome::Answered { answer, .. } => answer,
            other => panic!("{name}: {other:?}"),
        };
        let eden = answer.eden_bytes.unwrap_or(0) as f64;
        assert!(eden > 0.0 && eden < 64.0 * 1048576.0, "{name}: eden {eden}");
        let counts = &answer.samples_gc_count;
        eprintln!("{name}: collections per sample {counts:?}");
        assert_eq!(counts.len(), 3, "{name}");
        assert!(counts.iter().all(|&n| n == counts[0]), "{name}: {counts:?}");
        // Each sample's garbage is as many edens as it held collections, within half an eden.
        for &bytes in &answer.samples_allocated_bytes {
            let edens = bytes as f64 / eden;
            assert!(
                (edens - counts[0] as f64).abs() < 0.5,
                "{name}: {edens} edens"
            );
        }
        let between = answer.between_samples.as_deref().unwrap_or("");
        let rule = if counts[0] > 0 {
            "half the eden"
        } else {
            "leaves out the collection"
        };
        assert!(between.contains(rule), "{name}: {between}");
    }
}

/// A build that fails is reported with the compiler's words, not as unsupported.
#[test]
fn a_failed_build_carries_the_compilers_message() {
    if !build::on_path("javac") {
        eprintln!("skipped: no javac here (apt-get install default-jdk-headless)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("java")).unwrap();
    std::fs::write(
        dir.path().join("java/Engine.java"),
        "class Engine { oops }\n",
    )
    .unwrap();
    let engine = engines::ENGINES
        .iter()
        .find(|e| e.name == "jdk-delay-queue")
        .unwrap();
    match build::build(engine, dir.path(), &dir.path().join("build")) {
        Err(build::NotBuilt::BuildFailed(message)) => {
            assert!(message.contains("Engine.java"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}
