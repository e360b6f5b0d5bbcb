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

/// The git revision timerbench was built from (`-dirty` when tracked files had changes).
pub fn git_revision() -> String {
    env!("TIMERBENCH_GIT_REVISION").to_string()
}
