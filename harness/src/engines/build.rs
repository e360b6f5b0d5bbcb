//! How each engine is built from its source in `engines/` into the build directory, when
//! its toolchain is on this machine.

use super::{Engine, JVM_FLAGS, NETTY_JARS, SERVER_JVM_FLAGS, Toolchain};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Whether the toolchain is here: its programs on `PATH`, Netty's jars in their place.
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
    if toolchain == Toolchain::Netty
        && let Some(jar) = NETTY_JARS.iter().find(|j| !Path::new(j).is_file())
    {
        return missing(jar);
    }
    if toolchain == Toolchain::Libuv && libuv_flags().is_none() {
        return missing("libuv (`pkg-config libuv`)");
    }
    if toolchain == Toolchain::Libev && !libev_links() {
        return missing("libev (`ev.h` and `-lev`)");
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
        Toolchain::Libuv => run_build(
            Command::new("cc")
                .args(["-O2", "-o"])
                .arg(absolute(build)?.join("libuv-keepalive"))
                .arg(sources.join("libuv").join("keepalive.c"))
                .args(libuv_flags().unwrap_or_default())
                .arg("-lpthread"),
        ),
        Toolchain::Libev => run_build(
            Command::new("cc")
                .args(["-O2", "-o"])
                .arg(absolute(build)?.join("libev-keepalive"))
                .arg(sources.join("libev").join("keepalive.c"))
                .args(["-lev", "-lpthread"]),
        ),
        Toolchain::Cargo => run_build(
            Command::new("cargo")
                .args([
                    "build",
                    "--release",
                    "--locked",
                    "--quiet",
                    "--manifest-path",
                ])
                .arg(absolute(&sources.join("tokio"))?.join("Cargo.toml"))
                .arg("--target-dir")
                .arg(absolute(build)?.join("tokio")),
        ),
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
        // A Netty engine with a live server is only that server, with a server's heap.
        let flags = if engine.live {
            SERVER_JVM_FLAGS
        } else {
            JVM_FLAGS
        };
        std::iter::once("java")
            .chain(flags.iter().copied())
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
        Toolchain::Netty if engine.live => java(netty_classpath(build), "NettyKeepalive"),
        Toolchain::Netty => java(netty_classpath(build), "NettyEngine"),
        Toolchain::Libuv => vec![
            absolute(build)?
                .join("libuv-keepalive")
                .display()
                .to_string(),
        ],
        // The engine's name picks the manual's strategy.
        Toolchain::Libev => vec![
            absolute(build)?
                .join("libev-keepalive")
                .display()
                .to_string(),
            engine.name.to_string(),
        ],
        // The engine's name picks the runtime's flavour.
        Toolchain::Cargo => vec![
            tokio_binary(build)?.display().to_string(),
            engine.name.to_string(),
        ],
    })
}

/// libuv's compiler and linker flags (`pkg-config --cflags --libs libuv`), if it is here.
fn libuv_flags() -> Option<Vec<String>> {
    let output = Command::new("pkg-config")
        .args(["--cflags", "--libs", "libuv"])
        .output()
        .ok()?;
    let flags = String::from_utf8_lossy(&output.stdout);
    output
        .status
        .success()
        .then(|| flags.split_whitespace().map(String::from).collect())
}

/// Whether libev's header and library are here: a program that includes `ev.h` and calls
/// libev compiles and links with `-lev` (Debian's libev has no pkg-config file to ask).
pub fn libev_links() -> bool {
    use std::io::Write;
    const PROBE: &[u8] = b"#include <ev.h>\nint main(void) { return ev_version_major() < 4; }\n";
    let child = Command::new("cc")
        .args(["-x", "c", "-", "-o", "/dev/null", "-lev"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    let fed = child
        .stdin
        .take()
        .is_some_and(|mut stdin| stdin.write_all(PROBE).is_ok());
    child.wait().is_ok_and(|status| status.success()) && fed
}

/// Where `cargo build --release --target-dir BUILD/tokio` puts tokio's server.
fn tokio_binary(build: &Path) -> Result<PathBuf, NotBuilt> {
    Ok(absolute(build)?
        .join("tokio")
        .join("release")
        .join("tokio-keepalive"))
}

/// The JDK engines' classes, Netty's engines', and Netty's jars.
fn netty_classpath(build: &Path) -> String {
    format!(
        "{}:{}:{}",
        build.join("java").display(),
        build.join("netty").display(),
        NETTY_JARS.join(":")
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
