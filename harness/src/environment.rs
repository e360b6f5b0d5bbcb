//! What machine and build a run happened on, for `environment.json`. The machine is read
//! from `/proc` and `/etc`, the build from what `build.rs` recorded; what cannot be read
//! says `unknown`.

use crate::schema::{Environment, SCHEMA_VERSION};

/// How a run samples, for `environment.json`.
pub struct Sampling {
    /// Timed samples per process.
    pub repeat: u32,
    /// Processes per cell.
    pub processes: u32,
    /// Processes per cell at 1M timers or more.
    pub processes_at_1m: u32,
    /// The least time of a sample, milliseconds.
    pub min_sample_ms: u64,
    pub max_processes: u32,
    /// Groups at this many timers or more are measured as one block (0: none).
    pub spread_from: u64,
}

/// The environment of a run starting now.
pub fn capture(suite: &str, sampling: Sampling, timeout: u64) -> Environment {
    Environment {
        schema: SCHEMA_VERSION,
        cpu: cpu_model(),
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_bytes: memory_bytes(),
        os: os(),
        rustc: env!("TIMERBENCH_RUSTC_VERSION").to_string(),
        git_revision: git_revision(),
        host: host(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        started: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        suite: suite.to_string(),
        repeat: sampling.repeat,
        cell_timeout_seconds: timeout,
        processes: sampling.processes,
        processes_at_1m: sampling.processes_at_1m,
        min_sample_ms: sampling.min_sample_ms,
        max_processes: sampling.max_processes,
        spread_from: sampling.spread_from,
        // The run fills these in when it has them.
        plan: None,
        shard: None,
        host_label: None,
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0)
}

fn os() -> String {
    let name = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| format!(", Linux {}", k.trim()))
        .unwrap_or_default();
    format!("{name}{kernel}")
}

/// The host name, as a file-name-safe word.
pub fn host() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_else(|_| "unknown".to_string());
    let safe: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "unknown".to_string()
    } else {
        safe
    }
}

/// The git revision timerbench was built from (`-dirty` when tracked files had changes;
/// `-stale` when `build.rs` recorded it for another checkout, see [`REVISION_IS_STALE`]).
pub fn git_revision() -> String {
    revision_label(env!("TIMERBENCH_GIT_REVISION"), REVISION_IS_STALE)
}

/// Whether the revision `build.rs` recorded is another checkout's: its script ran for
/// another package folder than the one this crate is compiled from. That happens when two
/// checkouts share a target directory and cargo reuses one's script output for the other
/// (`harness/build.rs`, header); the revision then names the other checkout's commit, not
/// the code built here. Decided when compiling, so a run never asks git and never fails
/// for it.
pub const REVISION_IS_STALE: bool = !same_text(
    env!("TIMERBENCH_REVISION_CHECKOUT"),
    env!("CARGO_MANIFEST_DIR"),
);

/// `timerbench --version`: the package's version and the build's revision, as
/// [`git_revision`] gives it.
pub const VERSION: &str = if REVISION_IS_STALE {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (revision ",
        env!("TIMERBENCH_GIT_REVISION"),
        "-stale)"
    )
} else {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (revision ",
        env!("TIMERBENCH_GIT_REVISION"),
        ")"
    )
};

/// The revision as records give it: `-stale` added when it is another checkout's.
fn revision_label(recorded: &str, stale: bool) -> String {
    if stale {
        format!("{recorded}-stale")
    } else {
        recorded.to_string()
    }
}

/// Two strings equal, in a constant.
const fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_of_another_checkout_is_marked_stale() {
        assert!(same_text("/a/harness", "/a/harness"));
        assert!(!same_text("/a/harness", "/b/harness"));
        assert!(!same_text("/a/harness", "/a/harnes"));
        assert_eq!(revision_label("0123456789", false), "0123456789");
        assert_eq!(
            revision_label("0123456789-dirty", true),
            "0123456789-dirty-stale"
        );
        // `--version` and the records say the same.
        assert!(VERSION.starts_with(env!("CARGO_PKG_VERSION")));
        assert!(VERSION.ends_with(&format!(" (revision {})", git_revision())));
    }
}
