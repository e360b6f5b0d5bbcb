//! Records the compiler's version and the source's git revision for `environment.json`
//! and the default results folder name.

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
    if let Some(git_dir) = output("git", &["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={git_dir}/HEAD");
        println!("cargo:rerun-if-changed={git_dir}/index");
    }
    println!("cargo:rerun-if-env-changed=RUSTC");
}
