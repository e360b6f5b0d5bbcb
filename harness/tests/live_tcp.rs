//! `timerbench live --tcp` end to end: a client process, real connections on loopback,
//! a timer per connection. Small runs (50 connections, about 3 s each) that assert what
//! holds under any load: no connection closed wrongly, every silent connection closed,
//! the firings verified; and the failures (a port taken, a client that dies, a limit that
//! cannot be raised) as one message and a non-zero exit.

mod support;

use std::path::Path;
use support::{assert_fails_with, text, timerbench_in};
use timerbench_results::live::{LIVE_FILE, LiveRecord, read_live};

/// A tiny TCP run: 50 connections, a 300 ms timeout, 1.5 s of keepalives.
const TINY: &[&str] = &[
    "live",
    "--tcp",
    "--timers",
    "50",
    "--param",
    "timeout=300",
    "--duration",
    "1500ms",
    "--idle",
    "100ms",
    "--impl",
    "hierarchical-wheel",
];

fn tiny_run(extra: &[&str], folder: &Path) -> std::process::Output {
    let mut args = TINY.to_vec();
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", "out"]);
    timerbench_in(&args, folder)
}

fn records(folder: &Path) -> Vec<LiveRecord> {
    read_live(&folder.join("out").join(LIVE_FILE)).unwrap()
}

#[test]
fn silent_connections_all_close_on_their_timers_and_none_wrongly() {
    let folder = tempfile::tempdir().unwrap();
    let output = tiny_run(
        &["--param", "idle=1", "--wait", "pwait2,tick"],
        folder.path(),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let records = records(folder.path());
    assert_eq!(records.len(), 2);
    for record in &records {
        assert_eq!(record.status, "verified", "{:?}", record.reasons);
        let tcp = record.tcp.as_ref().expect("a TCP record");
        assert_eq!(tcp.connections, 50);
        // Every connection is silent: each times out within the 300 ms timeout.
        assert_eq!((tcp.closed, tcp.open_at_end, tcp.received), (50, 0, 0));
        assert_eq!(tcp.closed_wrongly, 0);
        assert_eq!(record.firings, 50);
        assert_eq!(tcp.close_lateness.count, 50);
        assert!(tcp.server_peak_rss_bytes > 0 && tcp.client_peak_rss_bytes > 0);
        assert_eq!(tcp.client_exit, None);
    }
}

#[test]
fn keepalives_refresh_their_connections_and_none_closes_wrongly() {
    let folder = tempfile::tempdir().unwrap();
    let output = tiny_run(&["--param", "rate=200", "--wait", "pwait2"], folder.path());
    assert!(output.status.success(), "{}", text(&output.stderr));
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "verified", "{:?}", record.reasons);
    let tcp = record.tcp.as_ref().expect("a TCP record");
    assert!(tcp.client_sent > 0, "the client sent keepalives");
    // A keepalive the client sends late, after its connection was closed on time, is sent
    // and never read; under load some are.
    assert!(tcp.received > 0 && tcp.received <= tcp.client_sent);
    assert_eq!(tcp.closed_wrongly, 0);
    assert_eq!(tcp.closed_by_client, 0);
    // Each connection was closed by its timer or at the end, once.
    assert_eq!(tcp.closed + tcp.open_at_end, tcp.connections);
    assert_eq!(record.firings, tcp.closed + tcp.rearmed);
    assert_eq!(record.arrivals.applied, tcp.received);
}

#[test]
fn a_scan_a_period_restamps_each_keepalive_and_closes_none_wrongly() {
    // Under a tick the scan's clock lags the keepalives by up to a period: a timeout
    // counted from it instead of from the arrival would close connections wrongly.
    let (base, implementation) = TINY.split_at(TINY.len() - 2);
    assert_eq!(implementation, ["--impl", "hierarchical-wheel"]);
    let mut args = base.to_vec();
    args.extend_from_slice(&[
        "--impl",
        "polling-scan",
        "--wait",
        "tick",
        "--period",
        "100ms",
    ]);
    args.extend_from_slice(&["--param", "rate=200", "--out", "out"]);
    let folder = tempfile::tempdir().unwrap();
    let output = timerbench_in(&args, folder.path());
    assert!(output.status.success(), "{}", text(&output.stderr));
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "verified", "{:?}", record.reasons);
    assert_eq!(record.period_ns, Some(100_000_000));
    let tcp = record.tcp.as_ref().expect("a TCP record");
    assert!(tcp.received > 0, "keepalives arrived");
    assert_eq!(tcp.closed_wrongly, 0);
    assert_eq!(tcp.closed + tcp.open_at_end, tcp.connections);
    assert_eq!(record.firings, tcp.closed + tcp.rearmed);
}

/// Under a descriptor limit of 200 (both soft and hard, as a container's), 500
/// connections: the epoll server cannot hold them, so `auto` takes the io_uring server
/// with three rings of 200 slots, and the client spreads them over four worker threads
/// of their own tables (136 each, 64 spare).
#[test]
fn past_the_descriptor_limit_the_ring_server_and_the_workers_hold_every_connection() {
    let folder = tempfile::tempdir().unwrap();
    let mut args: Vec<&str> = TINY.to_vec();
    args[3] = "500";
    args.extend_from_slice(&["--param", "rate=1000", "--wait", "pwait2", "--out", "out"]);
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 200 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_timerbench"))
        .args(&args)
        .current_dir(folder.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "verified", "{:?}", record.reasons);
    let tcp = record.tcp.as_ref().expect("a TCP record");
    assert_eq!(tcp.io, "io_uring x3");
    assert_eq!(tcp.connections, 500);
    assert!(tcp.received > 0, "keepalives arrived");
    assert_eq!(tcp.closed_wrongly, 0);
    assert_eq!(tcp.closed_by_client, 0);
    assert_eq!(tcp.closed + tcp.open_at_end, tcp.connections);
    assert_eq!(record.firings, tcp.closed + tcp.rearmed);
    assert_eq!(record.arrivals.applied, tcp.received);
    // Asked for by name, the epoll server refuses the limit before anything runs.
    let refused = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 200 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_timerbench"))
        .args(&args[..args.len() - 2])
        .args(["--tcp-io", "epoll", "--out", "refused"])
        .current_dir(folder.path())
        .output()
        .unwrap();
    assert_fails_with(&refused, "open descriptors, but the hard limit is");
    assert!(!folder.path().join("refused").exists());
}

#[test]
fn a_port_taken_is_one_message() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let folder = tempfile::tempdir().unwrap();
    let output = tiny_run(&["--port", &port], folder.path());
    assert_fails_with(&output, &format!("cannot listen on 127.0.0.1:{port}"));
}

#[test]
fn a_client_that_dies_is_one_message_and_a_recorded_reason() {
    let folder = tempfile::tempdir().unwrap();
    let mut args = TINY.to_vec();
    args.extend_from_slice(&["--param", "rate=200", "--wait", "pwait2", "--out", "out"]);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args(&args)
        .current_dir(folder.path())
        .env(timerbench_live::api::EXIT_AFTER_ENV, "3")
        .output()
        .unwrap();
    assert_fails_with(&output, "the TCP client process died");
    let record = &records(folder.path())[0];
    let tcp = record.tcp.as_ref().expect("a TCP record");
    assert!(tcp.client_exit.as_deref().unwrap().contains("died"));
    assert!(record.reasons.iter().any(|r| r.contains("died")));
    assert!(
        record.cut_at_tick.is_some(),
        "the workload phase stopped there"
    );
}

#[test]
fn bad_tcp_flags_and_limits_are_one_message_before_anything_runs() {
    let folder = tempfile::tempdir().unwrap();
    let hold = timerbench_in(
        &["live", "--tcp", "--timers", "5", "--workload", "hold"],
        folder.path(),
    );
    assert_fails_with(&hold, "the TCP mode replays the keepalive family");
    // More descriptors than the kernel allows any process (fs.nr_open), and more rings
    // than the io_uring server makes: refused at once, with both reasons.
    let huge = timerbench_in(&["live", "--tcp", "--timers", "2000000000"], folder.path());
    assert_fails_with(&huge, "open descriptors, but the hard limit is");
    assert_fails_with(&huge, "rings of");
    let epoll = timerbench_in(
        &[
            "live",
            "--tcp",
            "--timers",
            "2000000000",
            "--tcp-io",
            "epoll",
        ],
        folder.path(),
    );
    assert_fails_with(&epoll, "open descriptors, but the hard limit is");
    let file = timerbench_in(&["live", "--tcp", "--file", "w.tw"], folder.path());
    assert_fails_with(&file, "--file");
    assert!(!folder.path().join("results").exists());
}

/// The TCP smoke's workload (500 connections, a 1 s timeout, 2,000 keepalives a second, a
/// fifth of them silent) for 2 s, with Go's server alone (`--engine` and no `--impl`).
fn go_run(folder: &Path, path: Option<&Path>) -> std::process::Output {
    engines_run(folder, &["go-runtime"], path)
}

/// The TCP smoke's workload with the `engines`' servers alone.
fn engines_run(folder: &Path, engines: &[&str], path: Option<&Path>) -> std::process::Output {
    let build = folder.join("build");
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_timerbench"));
    command.args(["live", "--tcp", "--timers", "500"]);
    for engine in engines {
        command.args(["--engine", engine]);
    }
    command
        .args(["--param", "timeout=1000", "--param", "rate=2000"])
        .args(["--param", "idle=0.2", "--duration", "2s", "--idle", "200ms"])
        .args(["--out", "out", "--build-dir"])
        .arg(&build)
        .current_dir(folder);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.output().unwrap()
}

#[test]
fn gos_server_closes_the_silent_connections_on_its_deadlines_and_none_wrongly() {
    if !timerbench::engines::build::on_path("go") {
        eprintln!("skipped: no `go` here (apt-get install golang-go)");
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let output = go_run(folder.path(), None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let records = records(folder.path());
    assert_eq!(records.len(), 1, "Go's server alone: no structure runs");
    let record = &records[0];
    assert_eq!(record.status, "verified", "{:?}", record.reasons);
    assert_eq!(
        (record.implementation.as_str(), record.wait.as_str()),
        ("go-runtime", "runtime")
    );
    let engine = record.engine.as_ref().expect("an engine's record");
    assert!(engine.runtime_version.starts_with("go"), "{engine:?}");
    let tcp = record.tcp.as_ref().expect("a TCP record");
    assert_eq!(tcp.connections, 500);
    assert_eq!(tcp.connections_why, "requested", "--timers gave the size");
    // An engine among the runs: the runtimes' table, Go's row, its wake-ups not counted.
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("the runtimes' servers beside timerbench's loop"),
        "{stdout}"
    );
    assert!(stdout.contains("wake-ups – for go-runtime:"), "{stdout}");
    assert_eq!(tcp.closed_wrongly, 0);
    assert_eq!(tcp.client_exit, None);
    // Keepalives came and were read; the silent fifth timed out within the 2 s.
    assert!(tcp.received > 0 && tcp.received <= tcp.client_sent);
    assert!(tcp.closed >= 100, "{tcp:?}");
    assert_eq!(tcp.closed + tcp.open_at_end + tcp.closed_by_client, 500);
    assert_eq!(tcp.close_lateness.count, tcp.closed);
    assert_eq!(record.lateness.early, 0);
    assert_eq!(record.firings, tcp.closed + tcp.rearmed);
    assert_eq!(record.arrivals.applied, tcp.received);
    assert!(record.workload_phase.cpu_ns > 0 && tcp.server_peak_rss_bytes > 0);
}

/// What every engine server's record of the smoke's workload holds: verified, none closed
/// wrongly, the silent fifth closed on its timers, every figure accounted for.
fn assert_smoke_record_holds(record: &LiveRecord) {
    let name = &record.implementation;
    assert_eq!(record.status, "verified", "{name}: {:?}", record.reasons);
    assert_eq!(record.wait, "runtime");
    let tcp = record.tcp.as_ref().expect("a TCP record");
    assert_eq!(tcp.connections, 500);
    assert_eq!(tcp.closed_wrongly, 0, "{name}");
    assert_eq!(tcp.client_exit, None, "{name}");
    assert!(
        tcp.received > 0 && tcp.received <= tcp.client_sent,
        "{name}: {tcp:?}"
    );
    assert!(tcp.closed >= 100, "{name}: {tcp:?}");
    assert_eq!(tcp.closed + tcp.open_at_end + tcp.closed_by_client, 500);
    assert_eq!(tcp.close_lateness.count, tcp.closed);
    assert_eq!(record.lateness.early, 0, "{name}");
    assert_eq!(record.firings, tcp.closed + tcp.rearmed);
    assert_eq!(record.arrivals.applied, tcp.received);
    assert!(record.workload_phase.cpu_ns > 0 && tcp.server_peak_rss_bytes > 0);
}

#[test]
fn tokios_servers_close_the_silent_connections_on_their_timers_and_none_wrongly() {
    let folder = tempfile::tempdir().unwrap();
    // All three in one run: one build of tokio's program serves them.
    let servers = [
        "tokio-current-thread",
        "tokio-multi-thread",
        "tokio-timeout-read",
    ];
    let output = engines_run(folder.path(), &servers, None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let records = records(folder.path());
    let names: Vec<&str> = records.iter().map(|r| r.implementation.as_str()).collect();
    assert_eq!(names, servers, "tokio's servers alone, in table order");
    // Each record names its flavour and its idle timer, in its flags and its words.
    let said = [
        ("current_thread", "sleep-reset", "Sleep pinned"),
        ("multi_thread", "sleep-reset", "Sleep pinned"),
        ("current_thread", "timeout-read", "tokio::time::timeout"),
    ];
    for (record, (flavour, timer, words)) in records.iter().zip(said) {
        assert_smoke_record_holds(record);
        let engine = record.engine.as_ref().expect("an engine's record");
        assert_eq!(engine.runtime, "tokio");
        assert!(engine.server.contains(words), "{engine:?}");
        for flag in [format!("flavor={flavour}"), format!("timer={timer}")] {
            assert!(engine.runtime_flags.contains(&flag), "{flag}: {engine:?}");
        }
    }
}

/// Whether libuv's server can be built here: `cc` and `pkg-config libuv`.
fn libuv_here() -> bool {
    timerbench::engines::build::on_path("cc")
        && std::process::Command::new("pkg-config")
            .args(["--exists", "libuv"])
            .status()
            .is_ok_and(|s| s.success())
}

#[test]
fn libuvs_server_closes_the_silent_connections_on_its_timers_and_none_wrongly() {
    if !libuv_here() {
        eprintln!("skipped: no libuv here (apt-get install libuv1-dev pkg-config gcc)");
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let output = engines_run(folder.path(), &["libuv"], None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let records = records(folder.path());
    assert_eq!(records.len(), 1, "libuv's server alone");
    assert_smoke_record_holds(&records[0]);
    let engine = records[0].engine.as_ref().expect("an engine's record");
    assert_eq!(engine.runtime, "libuv");
    assert!(engine.server.contains("uv_timer_again"), "{engine:?}");
}

#[test]
fn without_a_c_compiler_libuvs_server_is_unsupported_with_the_packages() {
    let folder = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let output = engines_run(folder.path(), &["libuv"], Some(empty.path()));
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "unsupported");
    assert!(
        record.reasons[0].contains("apt-get install libuv1-dev"),
        "{:?}",
        record.reasons
    );
}

/// Whether Netty's servers can be built here: `javac`, `java` and Debian's Netty jars.
fn netty_here() -> bool {
    use timerbench::engines::{NETTY_JARS, build::on_path};
    on_path("javac") && on_path("java") && NETTY_JARS.iter().all(|j| Path::new(j).is_file())
}

#[test]
fn nettys_servers_close_the_silent_connections_on_their_timers_and_none_wrongly() {
    if !netty_here() {
        eprintln!("skipped: no Netty here (apt-get install default-jdk-headless libnetty-java)");
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let servers = ["netty-idle-state", "netty-hashed-wheel-idle"];
    let output = engines_run(folder.path(), &servers, None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let records = records(folder.path());
    let names: Vec<&str> = records.iter().map(|r| r.implementation.as_str()).collect();
    assert_eq!(names, servers, "Netty's servers alone, in table order");
    for (record, timer) in records.iter().zip(["IdleStateHandler", "HashedWheelTimer"]) {
        assert_smoke_record_holds(record);
        let engine = record.engine.as_ref().expect("an engine's record");
        assert_eq!(engine.runtime, "netty");
        assert!(engine.server.contains(timer), "{engine:?}");
        // The transport that ran is named: native epoll where its library loads, else NIO.
        assert!(
            engine
                .runtime_flags
                .iter()
                .any(|f| f == "transport=nio" || f == "transport=epoll"),
            "{engine:?}"
        );
    }
}

#[test]
fn without_java_nettys_servers_are_unsupported_with_the_package() {
    let folder = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let output = engines_run(folder.path(), &["netty-idle-state"], Some(empty.path()));
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "unsupported");
    assert!(
        record.reasons[0].contains("apt-get install default-jdk-headless libnetty-java"),
        "{:?}",
        record.reasons
    );
}

#[test]
fn libevs_servers_close_the_silent_connections_by_either_strategy_and_none_wrongly() {
    if !(timerbench::engines::build::on_path("cc") && timerbench::engines::build::libev_links()) {
        eprintln!("skipped: no libev here (apt-get install libev-dev gcc)");
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let strategies = ["libev-timer-again", "libev-lazy"];
    let output = engines_run(folder.path(), &strategies, None);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let records = records(folder.path());
    let names: Vec<&str> = records.iter().map(|r| r.implementation.as_str()).collect();
    assert_eq!(names, strategies, "libev's servers alone, in table order");
    // Each record names its strategy in its flags and its words, and the loop's backend.
    let said = [
        ("strategy=timer-again", "ev_timer_again"),
        ("strategy=lazy", "strategy 3"),
    ];
    for (record, (flag, words)) in records.iter().zip(said) {
        assert_smoke_record_holds(record);
        let engine = record.engine.as_ref().expect("an engine's record");
        assert_eq!(engine.runtime, "libev");
        assert!(engine.runtime_version.starts_with('4'), "{engine:?}");
        assert!(
            engine.runtime_flags.contains(&flag.to_string()),
            "{engine:?}"
        );
        assert!(
            engine
                .runtime_flags
                .iter()
                .any(|f| f.starts_with("backend=")),
            "{engine:?}"
        );
        assert!(engine.server.contains(words), "{engine:?}");
    }
}

#[test]
fn without_a_c_compiler_libevs_servers_are_unsupported_with_the_package() {
    let folder = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let output = engines_run(folder.path(), &["libev-lazy"], Some(empty.path()));
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "unsupported");
    assert!(
        record.reasons[0].contains("apt-get install libev-dev"),
        "{:?}",
        record.reasons
    );
}

#[test]
fn with_a_compiler_that_finds_no_libev_its_servers_are_unsupported_naming_it() {
    let folder = tempfile::tempdir().unwrap();
    // A `cc` that compiles nothing: as a compiler on a machine without libev's header.
    let bin = tempfile::tempdir().unwrap();
    let cc = bin.path().join("cc");
    std::fs::write(
        &cc,
        "#!/bin/sh\necho 'fatal error: ev.h: No such file' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = engines_run(folder.path(), &["libev-timer-again"], Some(bin.path()));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "unsupported");
    let reason = &record.reasons[0];
    assert!(
        reason.contains("ev.h") && reason.contains("apt-get install libev-dev"),
        "{reason}"
    );
}

#[test]
fn a_server_that_does_not_build_is_failed_with_its_builds_last_lines() {
    let folder = tempfile::tempdir().unwrap();
    // The engines' sources are `engines/` in the working directory when there is one.
    let tokio = folder.path().join("engines").join("tokio");
    std::fs::create_dir_all(&tokio).unwrap();
    std::fs::write(tokio.join("Cargo.toml"), "[package\nname = \"broken\"\n").unwrap();
    let output = engines_run(folder.path(), &["tokio-current-thread"], None);
    let stdout = text(&output.stdout);
    assert!(
        !output.status.success(),
        "a failed server fails the command: {stdout}"
    );
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "failed");
    assert!(
        record.reasons[0].contains("its build failed") && record.reasons[0].contains("Cargo.toml"),
        "{:?}",
        record.reasons
    );
}

#[test]
fn without_go_its_server_is_unsupported_with_the_package_and_the_command_succeeds() {
    let folder = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let output = go_run(folder.path(), Some(empty.path()));
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    assert!(stdout.contains("apt-get install golang-go"), "{stdout}");
    let record = &records(folder.path())[0];
    assert_eq!(record.status, "unsupported");
    assert!(record.reasons[0].contains("apt-get install golang-go"));
    assert_eq!(record.engine.as_ref().unwrap().name, "go-runtime");
}

#[test]
fn an_engine_without_a_live_server_or_without_tcp_is_one_message() {
    let folder = tempfile::tempdir().unwrap();
    let jdk = timerbench_in(
        &[
            "live",
            "--tcp",
            "--timers",
            "5",
            "--engine",
            "jdk-delay-queue",
        ],
        folder.path(),
    );
    assert_fails_with(&jdk, "--engine jdk-delay-queue: no live keepalive server");
    let no_tcp = timerbench_in(&["live", "--engine", "go-runtime"], folder.path());
    assert_fails_with(&no_tcp, "--tcp");
    // And the other way round: a live server answers no engine request.
    let micro = timerbench_in(
        &[
            "engine",
            "--engine",
            "tokio-current-thread",
            "--resident",
            "1",
        ],
        folder.path(),
    );
    assert_fails_with(
        &micro,
        "--engine tokio-current-thread: only a live keepalive server",
    );
    assert!(!folder.path().join("results").exists());
}
