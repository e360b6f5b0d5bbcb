//! Records the compiler's version and the source's git revision for `environment.json`
//! and the default results folder name.
//!
//! **When it runs again.** The revision is the commit HEAD names, so cargo is asked to run
//! this script again when any file that decides it changes: the worktree's own `HEAD` and
//! `index`, the file of the branch HEAD points to (`ref: refs/heads/main` in HEAD: a commit
//! rewrites `refs/heads/main`, not HEAD), and `packed-refs`. Git itself says where each is
//! (`git rev-parse --git-path`): in a linked worktree HEAD and the index are the worktree's
//! own, while the branches and `packed-refs` live in the common git directory. Only files
//! that exist are named: cargo runs a build script again on every command while a path it
//! watches is missing, which would rebuild the harness each time. A branch stored only in
//! `packed-refs` has no file of its own yet (its next commit creates one), so its nearest
//! existing folder under `refs/` is watched instead: any branch moving there runs the
//! script again, until the branch's own file exists.
//!
//! **A revision is only as good as its build.** Cargo decides from these files' times
//! whether the script's output is still current, and keeps that output in the target
//! directory. Two checkouts that share one target directory (`CARGO_TARGET_DIR`) can
//! therefore build one checkout's code with the revision the other's script recorded.
//! The script also records the package folder it ran for
//! (`TIMERBENCH_REVISION_CHECKOUT`); the harness compares it with the folder it is compiled
//! from and marks a revision recorded for another checkout `-stale`
//! (`environment::git_revision`). Measurement scripts must not share a target directory
//! between checkouts. `-dirty` is as of the script's last run: an edit to a tracked file
//! that is not staged does not run it again.

use std::path::{Path, PathBuf};
use std::process::Command;

fn output(program: &str, args: &[&str]) -> Option<String> {
    Command::new(program)
        .args(args)
        // `git status` refreshes the index's stat cache and writes `.git/index`, which this
        // script watches: in a fresh clone the next cargo command would then rebuild the
        // harness for nothing. Optional locks off, git reads the index and writes nothing.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
}

/// Where git keeps `name` (`HEAD`, `refs/heads/main`, ...) for this worktree, absolute.
fn git_path(name: &str) -> Option<PathBuf> {
    output(
        "git",
        &["rev-parse", "--path-format=absolute", "--git-path", name],
    )
    .map(PathBuf::from)
}

/// Asks cargo to run the script again when `path` changes, if it exists.
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// The files (and at most one folder) that decide HEAD's commit, each that exists.
fn watch_revision() {
    // `reftable/tables.list` stands for every ref in a repository with the reftable format.
    for name in ["HEAD", "index", "packed-refs", "reftable/tables.list"] {
        if let Some(path) = git_path(name) {
            watch(&path);
        }
    }
    // Detached, HEAD holds the commit itself and is watched above.
    let Some(branch) = output("git", &["symbolic-ref", "-q", "HEAD"]) else {
        return;
    };
    let (Some(file), Some(refs)) = (git_path(&branch), git_path("refs")) else {
        return;
    };
    let watched = file
        .ancestors()
        .take_while(|p| p.starts_with(&refs))
        .find(|p| p.exists());
    if let Some(path) = watched {
        watch(path);
    }
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=TIMERBENCH_RUSTC_VERSION={version}");

    let revision = match output("git", &["rev-parse", "--short=10", "HEAD"]) {
        Some(revision) => {
            let dirty = output("git", &["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{revision}-dirty")
            } else {
                revision
            }
        }
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=TIMERBENCH_GIT_REVISION={revision}");
    let checkout = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    println!("cargo:rustc-env=TIMERBENCH_REVISION_CHECKOUT={checkout}");
    watch_revision();
    println!("cargo:rerun-if-env-changed=RUSTC");
}
