//! The binaries of `--a-rev` and `--b-rev`: a git revision of this repository, exported
//! with `git archive` (the repository's worktrees are left alone) and built with
//! `cargo build --release` into a target directory of its own, so that two revisions
//! never share build artefacts and a build is reused when asked for again.

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Builds `timerbench` at `revision` (given by `flag`) under `dir` and returns the path of
/// its binary.
pub(super) fn build_revision(flag: &str, revision: &str, dir: &Path) -> anyhow::Result<PathBuf> {
    let commit = resolve(flag, revision)?;
    let root = dir.join(&commit);
    let source = root.join("source");
    let binary = root.join("target/release/timerbench");
    if !source.join("Cargo.toml").is_file() {
        std::fs::create_dir_all(&source)
            .with_context(|| format!("cannot create {}", source.display()))?;
        export(&commit, &source).with_context(|| format!("{flag} {revision}"))?;
    }
    eprintln!(
        "timerbench ab: building {flag} {revision} ({commit}) in {}",
        root.display()
    );
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "-p", "timerbench", "--manifest-path"])
        .arg(source.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target"))
        .status()
        .context("cannot run cargo")?;
    if !status.success() || !binary.is_file() {
        bail!("{flag} {revision}: `cargo build --release` failed ({status}); its output is above");
    }
    Ok(binary)
}

/// The commit `revision` names in the repository of the current directory.
fn resolve(flag: &str, revision: &str) -> anyhow::Result<String> {
    let output = Command::new("git")
        .args(["rev-parse", "--verify", "--quiet"])
        .arg(format!("{revision}^{{commit}}"))
        .stderr(Stdio::null())
        .output()
        .context("cannot run git")?;
    if !output.status.success() {
        bail!("{flag} {revision}: not a commit of the repository in the current directory");
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Writes the tree of `commit` into `dir` (`git archive | tar -x`).
fn export(commit: &str, dir: &Path) -> anyhow::Result<()> {
    let mut archive = Command::new("git")
        .args(["archive", "--format=tar", commit])
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot run git archive")?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dir)
        .stdin(
            archive
                .stdout
                .take()
                .context("no output from git archive")?,
        )
        .status()
        .context("cannot run tar")?;
    let archived = archive.wait()?;
    if !archived.success() || !tar.success() {
        bail!("cannot export {commit} into {}", dir.display());
    }
    Ok(())
}
