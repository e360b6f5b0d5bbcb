//! The engines and how each is built from its source in `engines/` into the build
//! directory, when its toolchain is on this machine.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What builds and runs an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Builds `engine` from `sources` (the repository's `engines/`) into `build` and returns the
/// command that runs it, to which the request's arguments are appended.
pub fn build(engine: &Engine, sources: &Path, build: &Path) -> Result<Vec<String>, NotBuilt> {
    if let Some(missing) = engine.toolchain.programs().iter().find(|p| !on_path(p)) {
        return Err(NotBuilt::Unsupported(format!(
            "`{missing}` not found: {}",
            engine.toolchain.install()
        )));
    }
    if engine.toolchain == Toolchain::Netty && !Path::new(NETTY_COMMON_JAR).is_file() {
        return Err(NotBuilt::Unsupported(format!(
            "{NETTY_COMMON_JAR} not found: {}",
            engine.toolchain.install()
        )));
    }
    let text = |p: PathBuf| p.display().to_string();
    match engine.toolchain {
        Toolchain::Shell => Ok(vec![
            "sh".into(),
            text(sources.join("null").join("engine.sh")),
        ]),
        Toolchain::Go => {
            let binary = absolute(build)?.join("go-runtime");
            let mut go = Command::new("go");
            go.args(["build", "-o"])
                .arg(&binary)
                .arg(".")
                .current_dir(sources.join("go"))
                // Offline and self-contained: no module download, a cache under `build`.
                .env("GOPROXY", "off")
                .env("GOFLAGS", "-mod=mod")
                .env("GOCACHE", absolute(build)?.join("go-cache"));
            run_build(&mut go)?;
            Ok(vec![text(binary)])
        }
        Toolchain::Java => {
            let classes = build.join("java");
            let java_files = java_sources(&sources.join("java"))?;
            run_build(
                Command::new("javac")
                    .arg("-d")
                    .arg(&classes)
                    .args(java_files),
            )?;
            Ok(vec![
                "java".into(),
                "-cp".into(),
                text(classes),
                "Engine".into(),
                engine.name.into(),
            ])
        }
        Toolchain::Netty => {
            let classes = build.join("java");
            let netty_classes = build.join("netty");
            run_build(
                Command::new("javac")
                    .arg("-d")
                    .arg(&classes)
                    .args(java_sources(&sources.join("java"))?),
            )?;
            let classpath = format!(
                "{}:{}:{NETTY_COMMON_JAR}",
                classes.display(),
                netty_classes.display()
            );
            run_build(
                Command::new("javac")
                    .arg("-cp")
                    .arg(&classpath)
                    .arg("-d")
                    .arg(&netty_classes)
                    .args(java_sources(&sources.join("netty"))?),
            )?;
            Ok(vec![
                "java".into(),
                "-cp".into(),
                classpath,
                "NettyEngine".into(),
                engine.name.into(),
            ])
        }
    }
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
