//! The layout binaries: `timerbench` built from the source in the current directory with
//! `cargo rustc --release`, linked by the toolchain's lld, its sections shuffled with a
//! seed (layout 0: not shuffled).
//!
//! rustc puts every function in a section of its own on Linux (its targets' default), so
//! lld's `--shuffle-sections='*=SEED'` permutes the functions of the whole program, those
//! of the dependencies included, at link time. The flags go to `cargo rustc`, which hands
//! them to the final crate only (the `timerbench` bin, a thin `main`), so the dependencies
//! and the `timerbench` library are not rebuilt: a layout costs a compile of
//! `src/main.rs` and a link.

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The linker flag that shuffles a layout, `SEED` standing for its seed (recorded in the
/// study's settings, so that a study is only continued with the same shuffle).
pub(super) const SHUFFLE_FLAG: &str = "-Wl,--shuffle-sections=*=SEED";

/// What building a layout needs: cargo, and the folder of the toolchain's `ld.lld`.
pub(super) struct Toolchain {
    cargo: OsString,
    lld_folder: PathBuf,
}

/// Finds cargo (`$CARGO`, else `cargo`) and the `ld.lld` of rustc's sysroot (`$RUSTC`,
/// else `rustc`); one clear error when either is missing.
pub(super) fn find_toolchain() -> anyhow::Result<Toolchain> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    output_of(&cargo, &["--version"])
        .context("the layouts are built with cargo, and it cannot be run")?;
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = output_of(&rustc, &["--print", "sysroot"])?;
    let version = output_of(&rustc, &["-vV"])?;
    let host = version
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .with_context(|| format!("`{} -vV` names no host", rustc.to_string_lossy()))?;
    let lld_folder = Path::new(sysroot.trim())
        .join("lib/rustlib")
        .join(host.trim())
        .join("bin/gcc-ld");
    if !lld_folder.join("ld.lld").is_file() {
        bail!(
            "no lld at {}: the layouts are linked by the lld that the Rust toolchain ships \
             (rustup's stable toolchain on x86_64 Linux has it); install such a toolchain",
            lld_folder.join("ld.lld").display()
        );
    }
    Ok(Toolchain { cargo, lld_folder })
}

/// The standard output of `program args`, which must succeed.
fn output_of(program: &OsString, args: &[&str]) -> anyhow::Result<String> {
    let shown = format!("{} {}", program.to_string_lossy(), args.join(" "));
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run `{shown}`"))?;
    if !output.status.success() {
        bail!(
            "`{shown}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Builds the layout with `seed` (`None`: unshuffled) and copies its binary to `binary`,
/// whole or not at all (a binary there is a finished build).
pub(super) fn build_layout(
    toolchain: &Toolchain,
    layout: u32,
    seed: Option<u32>,
    binary: &Path,
) -> anyhow::Result<()> {
    let mut command = Command::new(&toolchain.cargo);
    command
        .args([
            "rustc",
            "--release",
            "-p",
            "timerbench",
            "--bin",
            "timerbench",
        ])
        // The artefact messages name the binary, wherever the target folder is; the
        // compiler's messages are still shown as text on standard error.
        .arg("--message-format=json-render-diagnostics")
        .arg("--")
        .arg(format!(
            "-Clink-arg=-B{}",
            toolchain.lld_folder.to_string_lossy()
        ))
        .arg("-Clink-arg=-fuse-ld=lld");
    if let Some(seed) = seed {
        command.arg(format!(
            "-Clink-arg={}",
            SHUFFLE_FLAG.replace("SEED", &seed.to_string())
        ));
    }
    let output = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run cargo")?;
    if !output.status.success() {
        bail!(
            "layout {layout}: `cargo rustc --release -p timerbench` failed ({}); its output \
             is above (the study builds the source of the current directory: run it from the \
             repository)",
            output.status
        );
    }
    let built = executable(&String::from_utf8_lossy(&output.stdout)).with_context(|| {
        format!("layout {layout}: cargo named no `timerbench` binary among its artefacts")
    })?;
    copy_whole(&built, binary)
}

/// Builds `timerbench` as usual again, so that the workspace's `target/release/timerbench`
/// is not left as the last layout's: cargo sees that the link flags changed and links it
/// again (the compiled code is unchanged).
pub(super) fn restore_ordinary_build(toolchain: &Toolchain) -> anyhow::Result<()> {
    let status = Command::new(&toolchain.cargo)
        .args([
            "build",
            "--release",
            "-p",
            "timerbench",
            "--bin",
            "timerbench",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!(
            "`cargo build --release -p timerbench` failed ({status}) after the layouts were \
             built; its output is above"
        );
    }
    Ok(())
}

/// The `timerbench` executable named by cargo's JSON messages.
fn executable(messages: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == "timerbench")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
}

/// Copies `from` to `to` through a temporary name beside it, renamed when complete.
fn copy_whole(from: &Path, to: &Path) -> anyhow::Result<()> {
    let folder = to.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let partial = to.with_extension("partial");
    std::fs::copy(from, &partial)
        .and_then(|_| std::fs::rename(&partial, to))
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))
}

/// The SHA-256 of the file at `path`, in hex.
pub(super) fn sha256(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

/// The source a build would take: the commit of the current directory's repository, and
/// a hash of its uncommitted changes to tracked files when it has any (`unknown` outside
/// git). A study records it, so that its layouts are never built from two sources.
pub(super) fn source_identity() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| output.stdout)
    };
    let Some(commit) = git(&["rev-parse", "HEAD"]) else {
        return "unknown".to_string();
    };
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    match git(&["diff", "HEAD"]) {
        Some(diff) if !diff.is_empty() => {
            let hash: String = Sha256::digest(&diff)
                .iter()
                .take(6)
                .map(|byte| format!("{byte:02x}"))
                .collect();
            format!("{commit}+changes-{hash}")
        }
        _ => commit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_is_the_timerbench_artefact_with_an_executable() {
        let messages = [
            r#"{"reason":"compiler-artifact","target":{"name":"timerbench"},"executable":null}"#,
            "not json",
            r#"{"reason":"compiler-artifact","target":{"name":"other"},"executable":"/t/other"}"#,
            r#"{"reason":"compiler-artifact","target":{"name":"timerbench"},"executable":"/t/timerbench"}"#,
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        assert_eq!(executable(&messages), Some(PathBuf::from("/t/timerbench")));
        assert_eq!(executable(r#"{"reason":"build-finished"}"#), None);
    }
}
