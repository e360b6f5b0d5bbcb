//! The engines and how each is built from its source in `engines/` into the build
//! directory, when its toolchain is on this machine.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What builds and runs an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Toolchain {
    /// A POSIX shell script, run with `sh`.
    Shell,
    /// Go (`go build`), Debian's `golang-go`.
    Go,
    /// Java (`javac`, `java`), Debian's `default-jdk-headless`.
    Java,
    /// Java and Netty's `netty-common.jar`, Debian's `libnetty-java`.
    Netty,
}

/// The JVM's flags for every JDK engine (docs/engines.md, *JVM flags*), answered back in
/// `runtime_flags`. A fixed heap (`-Xms` = `-Xmx`), touched at start, so that it never
/// resizes and no sample pays for touching new pages; a fixed young generation, large
/// enough for an iteration's garbage; the serial collector: its collections stop the
/// engine's thread and run on one thread, with no concurrent collector work on the second
/// core beside the timers' worker, and the cheapest write barrier.
pub const JVM_FLAGS: &[&str] = &[
    "-Xms1g",
    "-Xmx1g",
    "-Xmn512m",
    "-XX:+AlwaysPreTouch",
    "-XX:+UseSerialGC",
];

/// Where Debian's `libnetty-java` puts the jar that holds `HashedWheelTimer`.
pub const NETTY_COMMON_JAR: &str = "/usr/share/java/netty-common.jar";

impl Toolchain {
    /// The command that installs it where it is missing.
    pub fn install(self) -> &'static str {
        match self {
            Toolchain::Shell => "apt-get install dash",
            Toolchain::Go => "apt-get install golang-go",
            Toolchain::Java => "apt-get install default-jdk-headless",
            Toolchain::Netty => "apt-get install default-jdk-headless libnetty-java",
        }
    }

    /// The programs it needs on `PATH`.
    fn programs(self) -> &'static [&'static str] {
        match self {
            Toolchain::Shell => &["sh"],
            Toolchain::Go => &["go"],
            Toolchain::Java | Toolchain::Netty => &["javac", "java"],
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
}

/// Every engine, in table order.
pub const ENGINES: &[Engine] = &[
    Engine {
        name: "null",
        toolchain: Toolchain::Shell,
        verifies: false,
    },
    Engine {
        name: "go-runtime",
        toolchain: Toolchain::Go,
        verifies: true,
    },
    Engine {
        name: "jdk-delay-queue",
        toolchain: Toolchain::Java,
        verifies: true,
    },
    Engine {
        name: "jdk-priority-queue",
        toolchain: Toolchain::Java,
        verifies: true,
    },
    Engine {
        name: "jdk-scheduled-executor",
        toolchain: Toolchain::Java,
        verifies: true,
    },
    Engine {
        name: "netty-hashed-wheel",
        toolchain: Toolchain::Netty,
        verifies: true,
    },
];

/// Why an engine has no command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotBuilt {
    /// Its toolchain is missing: the install command.
    Unsupported(String),
    /// The build failed: what it said.
    BuildFailed(String),
}

/// Whether `program` is an executable file on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            let file = dir.join(program);
            file.metadata().is_ok_and(|m| {
                m.is_file()
                    && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
            })
        })
    })
}

/// Builds engines from `sources` (the repository's `engines/`) into `build`, each
/// toolchain's sources once per builder, however many engines share them.
pub struct Builder<'a> {
    sources: &'a Path,
    build: &'a Path,
    compiled: HashMap<Toolchain, Result<(), NotBuilt>>,
}

impl<'a> Builder<'a> {
    /// A builder that has built nothing yet.
    pub fn new(sources: &'a Path, build: &'a Path) -> Self {
        Builder {
            sources,
            build,
            compiled: HashMap::new(),
        }
    }

    /// Builds `engine` (its toolchain's sources, unless already built) and returns the
    /// command that runs it, to which the request's arguments are appended.
    pub fn build(&mut self, engine: &Engine) -> Result<Vec<String>, NotBuilt> {
        if engine.toolchain == Toolchain::Netty {
            // Netty's engine runs on the JDK engines' classes: they are compiled once for
            // both, after the check that names Netty's package when something is missing.
            present(Toolchain::Netty)?;
            self.compile(Toolchain::Java)?;
        }
        self.compile(engine.toolchain)?;
        command(engine, self.sources, self.build)
    }

    fn compile(&mut self, toolchain: Toolchain) -> Result<(), NotBuilt> {
        let (sources, build) = (self.sources, self.build);
        self.compiled
            .entry(toolchain)
            .or_insert_with(|| compile(toolchain, sources, build))
            .clone()
    }
}

/// Builds one engine with a builder of its own: see [`Builder::build`].
pub fn build(engine: &Engine, sources: &Path, build: &Path) -> Result<Vec<String>, NotBuilt> {
    Builder::new(sources, build).build(engine)
}

/// Whether the toolchain is here: its programs on `PATH`, Netty's jar in its place.
fn present(toolchain: Toolchain) -> Result<(), NotBuilt> {
    let missing = |what: &str| {
        Err(NotBuilt::Unsupported(format!(
            "{what} not found: {}",
            toolchain.install()
        )))
    };
    if let Some(program) = toolchain.programs().iter().find(|p| !on_path(p)) {
        return missing(&format!("`{program}`"));
    }
    if toolchain == Toolchain::Netty && !Path::new(NETTY_COMMON_JAR).is_file() {
        return missing(NETTY_COMMON_JAR);
    }
    Ok(())
}

/// Compiles a toolchain's engines: `go build` offline, `javac` with no download.
fn compile(toolchain: Toolchain, sources: &Path, build: &Path) -> Result<(), NotBuilt> {
    present(toolchain)?;
    match toolchain {
        Toolchain::Shell => Ok(()),
        Toolchain::Go => run_build(
            Command::new("go")
                .args(["build", "-o"])
                .arg(absolute(build)?.join("go-runtime"))
                .arg(".")
                .current_dir(sources.join("go"))
                // Offline and self-contained: no module download, a cache under `build`.
                .env("GOPROXY", "off")
                .env("GOFLAGS", "-mod=mod")
                .env("GOCACHE", absolute(build)?.join("go-cache"))
                // Pure Go (the live server's `net` without cgo's resolver): no C toolchain
                // needed, and a fresh cache builds no C.
                .env("CGO_ENABLED", "0"),
        ),
        Toolchain::Java => javac(&sources.join("java"), &build.join("java"), None),
        // The JDK engines' classes are already built (`Builder::build`).
        Toolchain::Netty => javac(
            &sources.join("netty"),
            &build.join("netty"),
            Some(&netty_classpath(build)),
        ),
    }
}

/// The command that runs a compiled engine.
fn command(engine: &Engine, sources: &Path, build: &Path) -> Result<Vec<String>, NotBuilt> {
    let java = |classpath: String, class: &str| {
        std::iter::once("java")
            .chain(JVM_FLAGS.iter().copied())
            .chain(["-cp", classpath.as_str(), class, engine.name])
            .map(String::from)
            .collect::<Vec<String>>()
    };
    Ok(match engine.toolchain {
        Toolchain::Shell => vec![
            "sh".into(),
            sources.join("null").join("engine.sh").display().to_string(),
        ],
        Toolchain::Go => vec![absolute(build)?.join("go-runtime").display().to_string()],
        Toolchain::Java => java(build.join("java").display().to_string(), "Engine"),
        Toolchain::Netty => java(netty_classpath(build), "NettyEngine"),
    })
}

/// The JDK engines' classes, Netty's engine's, and Netty's jar.
fn netty_classpath(build: &Path) -> String {
    format!(
        "{}:{}:{NETTY_COMMON_JAR}",
        build.join("java").display(),
        build.join("netty").display()
    )
}

/// `javac -d CLASSES [-cp CLASSPATH] DIR/*.java`.
fn javac(dir: &Path, classes: &Path, classpath: Option<&str>) -> Result<(), NotBuilt> {
    let mut javac = Command::new("javac");
    if let Some(classpath) = classpath {
        javac.arg("-cp").arg(classpath);
    }
    run_build(javac.arg("-d").arg(classes).args(java_sources(dir)?))
}

fn absolute(path: &Path) -> Result<PathBuf, NotBuilt> {
    std::fs::create_dir_all(path)
        .and_then(|()| std::path::absolute(path))
        .map_err(|e| NotBuilt::BuildFailed(format!("{}: {e}", path.display())))
}

fn java_sources(dir: &Path) -> Result<Vec<PathBuf>, NotBuilt> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| NotBuilt::BuildFailed(format!("{}: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    files.sort();
    Ok(files)
}

fn run_build(command: &mut Command) -> Result<(), NotBuilt> {
    let output = command
        .output()
        .map_err(|e| NotBuilt::BuildFailed(e.to_string()))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    Err(NotBuilt::BuildFailed(
        lines[lines.len().saturating_sub(8)..].join("\n"),
    ))
}
