//! The engine registry: every engine of the protocol (docs/engines.md) in one table, each
//! fact about an engine a field of its row, so that `engine`, `run --engine`, `live --tcp`
//! and `reproduce` read them from here rather than keep lists of names of their own.

pub mod build;

use std::path::{Path, PathBuf};

/// What builds and runs an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Toolchain {
    /// A POSIX shell script, run with `sh`.
    Shell,
    /// Go (`go build`), Debian's `golang-go`.
    Go,
    /// Java (`javac`, `java`), Debian's `default-jdk-headless`.
    Java,
    /// Java and Netty's jars ([`NETTY_JARS`]), Debian's `libnetty-java`: `HashedWheelTimer`
    /// for the replay engine, the transport and `IdleStateHandler` for the live servers.
    Netty,
    /// A Rust project of its own (`cargo build --release --locked`), outside timerbench's
    /// workspace: tokio's server.
    Cargo,
    /// C (`cc`) and libuv (`pkg-config libuv`), Debian's `libuv1-dev`.
    Libuv,
    /// C (`cc`) and libev (`ev.h`, `-lev`: Debian's has no pkg-config file), Debian's
    /// `libev-dev`.
    Libev,
}

/// The JVM's flags for every JDK engine but Netty's live servers ([`SERVER_JVM_FLAGS`];
/// docs/engines.md, *JVM flags*), answered back in `runtime_flags`. A fixed heap (`-Xms` =
/// `-Xmx`), touched at start, so that it never resizes and no sample pays for touching new
/// pages; a fixed young generation, large enough for an iteration's garbage; the serial
/// collector: its collections stop the engine's thread and run on one thread, with no
/// concurrent collector work on the second core beside the timers' worker, and the
/// cheapest write barrier.
pub const JVM_FLAGS: &[&str] = &[
    "-Xms1g",
    "-Xmx1g",
    "-Xmn512m",
    "-XX:+AlwaysPreTouch",
    "-XX:+UseSerialGC",
];

/// Where Debian's `libnetty-java` puts the jar that holds `HashedWheelTimer`.
pub const NETTY_COMMON_JAR: &str = "/usr/share/java/netty-common.jar";

/// Every jar of Debian's `libnetty-java` that Netty's engines are compiled and run with:
/// `HashedWheelTimer` (common), and for the live servers the transport (NIO, and native epoll
/// where its library loads), its buffers and resolver, and `IdleStateHandler` (handler,
/// which links against codec).
pub const NETTY_JARS: &[&str] = &[
    NETTY_COMMON_JAR,
    "/usr/share/java/netty-buffer.jar",
    "/usr/share/java/netty-resolver.jar",
    "/usr/share/java/netty-transport.jar",
    "/usr/share/java/netty-codec.jar",
    "/usr/share/java/netty-handler.jar",
    "/usr/share/java/netty-transport-native-unix-common.jar",
    "/usr/share/java/netty-transport-native-epoll.jar",
];

/// The JVM's flags for the Netty keepalive servers (`live --tcp`), answered back in
/// `runtime_flags`. A fixed heap, so that it never resizes, but not touched at start: a
/// server's peak RSS is then the pages it used, not the heap's size. The serial collector,
/// as for the replay engines ([`JVM_FLAGS`]): its collections run on one thread, and the
/// process's CPU holds no concurrent collector's work.
pub const SERVER_JVM_FLAGS: &[&str] = &["-Xms512m", "-Xmx512m", "-XX:+UseSerialGC"];

impl Toolchain {
    /// The command that installs it where it is missing.
    pub fn install(self) -> &'static str {
        match self {
            Toolchain::Shell => "apt-get install dash",
            Toolchain::Go => "apt-get install golang-go",
            Toolchain::Java => "apt-get install default-jdk-headless",
            Toolchain::Netty => "apt-get install default-jdk-headless libnetty-java",
            Toolchain::Cargo => "install Rust's cargo (https://rustup.rs)",
            Toolchain::Libuv => "apt-get install libuv1-dev pkg-config gcc",
            Toolchain::Libev => "apt-get install libev-dev gcc",
        }
    }

    /// The programs it needs on `PATH`.
    fn programs(self) -> &'static [&'static str] {
        match self {
            Toolchain::Shell => &["sh"],
            Toolchain::Go => &["go"],
            Toolchain::Java | Toolchain::Netty => &["javac", "java"],
            Toolchain::Cargo => &["cargo"],
            Toolchain::Libuv => &["cc", "pkg-config"],
            Toolchain::Libev => &["cc"],
        }
    }
}

/// One engine of the protocol.
#[derive(Debug, Clone, Copy)]
pub struct Engine {
    /// Its name on the command line and in the table.
    pub name: &'static str,
    /// What builds and runs it.
    pub toolchain: Toolchain,
    /// Whether its replay's log is verified: false for the null engine, which does nothing.
    pub verifies: bool,
    /// Whether it replays a workload in virtual time; the others run only the start+stop
    /// microbenchmark on the real clock (`run --engine` makes them `unsupported` on any
    /// other workload).
    pub replays: bool,
    /// Whether `engine --micro lateness` runs it when no `--engine` is named.
    pub lateness: bool,
    /// Whether its timer has a tick (`tick-ms`); the others run once, deadline-driven.
    pub ticked: bool,
    /// Whether it has a live keepalive server (`live --tcp --engine`).
    pub live: bool,
    /// Whether it answers the protocol's requests (the start+stop microbenchmark, a replay,
    /// `micro lateness`: `engine`, `run --engine`); false for an engine that is only a live
    /// server, which those commands refuse by name and leave out of their defaults.
    pub requests: bool,
}

/// Every engine, in table order.
pub const ENGINES: &[Engine] = &[
    Engine {
        name: "null",
        toolchain: Toolchain::Shell,
        verifies: false,
        replays: true,
        lateness: false,
        ticked: false,
        live: false,
        requests: true,
    },
    Engine {
        name: "go-runtime",
        toolchain: Toolchain::Go,
        verifies: true,
        replays: false,
        lateness: true,
        ticked: false,
        live: true,
        requests: true,
    },
    Engine {
        name: "jdk-delay-queue",
        toolchain: Toolchain::Java,
        verifies: true,
        replays: true,
        lateness: false,
        ticked: false,
        live: false,
        requests: true,
    },
    Engine {
        name: "jdk-priority-queue",
        toolchain: Toolchain::Java,
        verifies: true,
        replays: true,
        lateness: false,
        ticked: false,
        live: false,
        requests: true,
    },
    Engine {
        name: "jdk-scheduled-executor",
        toolchain: Toolchain::Java,
        verifies: true,
        replays: false,
        lateness: true,
        ticked: false,
        live: false,
        requests: true,
    },
    Engine {
        name: "netty-hashed-wheel",
        toolchain: Toolchain::Netty,
        verifies: true,
        replays: false,
        lateness: true,
        ticked: true,
        live: false,
        requests: true,
    },
    // tokio's keepalive server (engines/tokio): a task per connection, its idle timer a
    // `Sleep` reset on each keepalive, on a current-thread runtime or a multi-thread one.
    Engine {
        name: "tokio-current-thread",
        toolchain: Toolchain::Cargo,
        verifies: true,
        replays: false,
        lateness: false,
        ticked: false,
        live: true,
        requests: false,
    },
    Engine {
        name: "tokio-multi-thread",
        toolchain: Toolchain::Cargo,
        verifies: true,
        replays: false,
        lateness: false,
        ticked: false,
        live: true,
        requests: false,
    },
    // libuv's keepalive server (engines/libuv): one loop, a `uv_timer_t` per connection
    // re-armed with `uv_timer_again` on each keepalive.
    Engine {
        name: "libuv",
        toolchain: Toolchain::Libuv,
        verifies: true,
        replays: false,
        lateness: false,
        ticked: false,
        live: true,
        requests: false,
    },
    // libev's keepalive servers (engines/libev): one loop, an `ev_timer` per connection,
    // kept by one of the strategies of libev's manual, "Be smart about timeouts": 2, moved
    // with `ev_timer_again` on each keepalive; 3, left to fire and re-armed lazily against
    // the last activity.
    Engine {
        name: "libev-timer-again",
        toolchain: Toolchain::Libev,
        verifies: true,
        replays: false,
        lateness: false,
        ticked: false,
        live: true,
        requests: false,
    },
    Engine {
        name: "libev-lazy",
        toolchain: Toolchain::Libev,
        verifies: true,
        replays: false,
        lateness: false,
        ticked: false,
        live: true,
        requests: false,
    },
    // tokio's keepalive server again, its idle timer in the form most tokio code takes:
    // `tokio::time::timeout` around each read, a new timer per read, on a current-thread
    // runtime.
    Engine {
        name: "tokio-timeout-read",
        toolchain: Toolchain::Cargo,
        verifies: true,
        replays: false,
        lateness: false,
        ticked: false,
        live: true,
        requests: false,
    },
    // Netty's keepalive servers (engines/netty/NettyKeepalive.java): one event-loop thread,
    // the idle timeout by IdleStateHandler on the loop's scheduled-task queue, or by one
    // HashedWheelTimer for every connection.
    Engine {
        name: "netty-idle-state",
        toolchain: Toolchain::Netty,
        verifies: true,
        replays: false,
        lateness: false,
        ticked: false,
        live: true,
        requests: false,
    },
    Engine {
        name: "netty-hashed-wheel-idle",
        toolchain: Toolchain::Netty,
        verifies: true,
        replays: false,
        lateness: false,
        ticked: false,
        live: true,
        requests: false,
    },
];

/// The names of the engines with `fact`, joined by commas (for messages).
pub fn names_where(fact: fn(&Engine) -> bool) -> String {
    ENGINES
        .iter()
        .filter(|e| fact(e))
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The engines named, in table order, or all that answer requests; an unknown name, or
/// an engine that is only a live server, is an error naming the flag.
pub fn select(names: &[String]) -> anyhow::Result<Vec<&'static Engine>> {
    if let Some(unknown) = names.iter().find(|n| !ENGINES.iter().any(|e| e.name == *n)) {
        let known: Vec<&str> = ENGINES.iter().map(|e| e.name).collect();
        anyhow::bail!(
            "--engine {unknown}: no such engine (known: {})",
            known.join(", ")
        );
    }
    if let Some(server) = names
        .iter()
        .find(|n| ENGINES.iter().any(|e| e.name == *n && !e.requests))
    {
        anyhow::bail!(
            "--engine {server}: only a live keepalive server (`timerbench live --tcp --engine \
             {server}`); the engines that answer here: {}",
            names_where(|e| e.requests)
        );
    }
    Ok(ENGINES
        .iter()
        .filter(|e| e.requests && (names.is_empty() || names.iter().any(|n| n == e.name)))
        .collect())
}

/// The engines' sources: `engines/` in the working directory (a clone's root), else the
/// source tree this timerbench was built from.
pub fn sources() -> PathBuf {
    let here = PathBuf::from("engines");
    if here.is_dir() {
        return here;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engines")
}
