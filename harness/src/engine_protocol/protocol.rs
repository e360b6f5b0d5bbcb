//! The engine protocol's harness side (docs/engines.md): start the program with the
//! request as arguments, wait at most the limit, and read one JSON answer from its stdout.

use super::lateness::{LatenessAnswer, LatenessRequest};
use serde::Deserialize;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The protocol version this harness speaks (docs/engines.md, *The version rule*).
pub const PROTOCOL: u32 = 2;

/// How many of an engine's last stderr lines a failure shows.
const STDERR_LINES: usize = 8;

/// What an engine is asked to run.
#[derive(Debug, Clone)]
pub enum Request {
    /// Replay a workload in virtual time and write the expiry log to `log`.
    Replay {
        /// The `.tw` file.
        workload: PathBuf,
        /// Where the engine writes its log.
        log: PathBuf,
        /// Engine-specific `key=value` parameters (`purge-interval=3`).
        parameters: Vec<String>,
    },
    /// Start+stop pairs with `resident` timers pending: the Go article's shape.
    StartStop {
        /// Timers pending while the pairs run.
        resident: u64,
        /// The engine's own parameters, KEY=VALUE (`worker=waiting`).
        parameters: Vec<String>,
    },
    /// Restarts (Go's `Timer.Reset`) of `resident` pending timers in turn.
    Restart {
        /// Timers pending, each restarted in its turn.
        resident: u64,
        /// The engine's own parameters, KEY=VALUE.
        parameters: Vec<String>,
    },
    /// Timers on the real clock: their lateness, the worker's wake-ups and CPU.
    Lateness(LatenessRequest),
}

/// The sampling rule passed to every engine; the engine applies it on its own clock.
#[derive(Debug, Clone, Copy)]
pub struct Sampling {
    /// Measured iterations.
    pub samples: u32,
    /// Minimum length of one iteration, in milliseconds.
    pub min_sample_ms: u64,
    /// Warm-up iterations at least.
    pub warmup: u32,
    /// Warm-up iterations at most, settled or not.
    pub max_warmup: u32,
}

impl Request {
    /// The arguments after the program's own: `MODE [BENCH] key=value...`.
    pub fn arguments(&self, sampling: &Sampling) -> Vec<String> {
        let mut args = match self {
            Request::Replay {
                workload,
                log,
                parameters,
            } => [
                "replay".to_string(),
                format!("workload={}", workload.display()),
                format!("log={}", log.display()),
            ]
            .into_iter()
            .chain(parameters.iter().cloned())
            .collect(),
            Request::StartStop {
                resident,
                parameters,
            } => micro("start-stop", *resident, parameters),
            Request::Restart {
                resident,
                parameters,
            } => micro("restart", *resident, parameters),
            Request::Lateness(lateness) => lateness.arguments(),
        };
        args.extend([
            format!("samples={}", sampling.samples),
            format!("min-sample-ms={}", sampling.min_sample_ms),
            format!("warmup={}", sampling.warmup),
            format!("max-warmup={}", sampling.max_warmup),
        ]);
        args
    }
}

/// `micro BENCH resident=N` and the engine's own parameters.
fn micro(bench: &str, resident: u64, parameters: &[String]) -> Vec<String> {
    [
        "micro".to_string(),
        bench.to_string(),
        format!("resident={resident}"),
    ]
    .into_iter()
    .chain(parameters.iter().cloned())
    .collect()
}

/// An engine's answer: one JSON object on stdout.
#[derive(Debug, Clone, Deserialize)]
pub struct Answer {
    /// Must be [`PROTOCOL`].
    pub protocol: u32,
    /// The engine's name.
    pub engine: String,
    /// Its runtime (`go`, the JVM's name, `sh`).
    pub runtime: String,
    /// The runtime's version.
    pub runtime_version: String,
    /// The flags the runtime ran with (the JVM's input arguments; Go's GOMAXPROCS, GOGC).
    #[serde(default)]
    pub runtime_flags: Vec<String>,
    /// `ok` or `unsupported`.
    pub status: String,
    /// Why `unsupported`.
    pub reason: Option<String>,
    /// What one sample's figure is per: `replay`, `start-stop pair`, `restart`.
    pub unit: Option<String>,
    /// Microbenchmarks: resident timers that fell due during the run.
    pub resident_fired: Option<u64>,
    /// Nanoseconds per unit, one per measured iteration, on the engine's own clock.
    #[serde(default)]
    pub samples_ns: Vec<f64>,
    /// Per sample: the collections that ran during it (empty where not counted).
    #[serde(default)]
    pub samples_gc_count: Vec<u64>,
    /// Per sample: the time of those collections, ms.
    #[serde(default)]
    pub samples_gc_ms: Vec<f64>,
    /// Per sample: the JIT's compilation time during it, ms.
    #[serde(default)]
    pub samples_jit_ms: Vec<f64>,
    /// Per sample: the bytes every thread allocated during it (-1 where not counted).
    #[serde(default)]
    pub samples_allocated_bytes: Vec<i64>,
    /// The young generation's eden, bytes: what a sample's garbage is sized against.
    pub eden_bytes: Option<u64>,
    /// What the engine does between samples, untimed, and how a sample is sized, in words.
    pub between_samples: Option<String>,
    /// Units run in the last iteration.
    pub iterations_per_sample: Option<u64>,
    /// Warm-up iterations run.
    pub warmup_iterations: Option<u64>,
    /// Whether the warm-up settled before its maximum.
    pub warmup_settled: Option<bool>,
    /// The process's peak resident set (VmHWM), in bytes.
    pub peak_rss_bytes: Option<u64>,
    /// The heap in use after a full collection once the samples are taken, bytes.
    pub heap_live_bytes: Option<u64>,
    /// A replay's counts and log; required for a replay.
    pub replay: Option<ReplayAnswer>,
    /// The lateness microbenchmark's figures; required for an `ok` answer to it.
    pub lateness: Option<Box<LatenessAnswer>>,
}

/// What an engine says its replay did; the harness verifies it against the model.
#[derive(Debug, Clone, Deserialize)]
pub struct ReplayAnswer {
    /// Operation lines replayed.
    pub operations: u64,
    /// Timers started.
    pub started: u64,
    /// Timers fired.
    pub fired: u64,
    /// Pending timers stopped.
    pub stopped: u64,
    /// Stops of timers not pending.
    pub misses: u64,
    /// Timers pending at the end.
    pub pending: u64,
    /// The clock at the end.
    pub final_clock: u64,
    /// The expiry log the engine wrote.
    pub log: PathBuf,
}

/// Why an exchange gave no usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The program could not be started.
    DidNotStart(String),
    /// It exited non-zero or by a signal.
    Crashed(String),
    /// It ran past the limit and was killed.
    Hung(Duration),
    /// Its stdout was not one valid answer.
    Malformed(String),
    /// Its expiry log differs from the model's.
    WrongLog(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::DidNotStart(why) => write!(f, "did not start: {why}"),
            Failure::Crashed(status) => write!(f, "crashed: {status}"),
            Failure::Hung(limit) => write!(f, "hung: killed after its limit of {limit:?}"),
            Failure::Malformed(why) => write!(f, "malformed answer: {why}"),
            Failure::WrongLog(why) => write!(f, "wrong expiry log: {why}"),
        }
    }
}

/// One exchange's raw result.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// The answer, or why there is none.
    pub answer: Result<Answer, Failure>,
    /// The last lines of stderr.
    pub stderr_tail: String,
    /// Start to exit, seen from the harness: the protocol's cost, never an engine timing.
    pub wall: Duration,
}

/// Runs `argv` plus the request's arguments, in its own process group so that a hang is
/// killed with every child; stdout and stderr go to files in `scratch`.
pub fn exchange(
    argv: &[String],
    request: &Request,
    sampling: &Sampling,
    limit: Duration,
    scratch: &Path,
) -> Exchange {
    let started = Instant::now();
    let result = run_limited(argv, request, sampling, limit, scratch);
    let wall = started.elapsed();
    let stderr_tail = tail(&std::fs::read_to_string(scratch.join("stderr")).unwrap_or_default());
    let answer = result.and_then(|stdout| parse(&stdout));
    Exchange {
        answer,
        stderr_tail,
        wall,
    }
}

fn run_limited(
    argv: &[String],
    request: &Request,
    sampling: &Sampling,
    limit: Duration,
    scratch: &Path,
) -> Result<String, Failure> {
    let start_failure = |e: std::io::Error| Failure::DidNotStart(e.to_string());
    std::fs::create_dir_all(scratch).map_err(start_failure)?;
    let stdout_path = scratch.join("stdout");
    let stdout = std::fs::File::create(&stdout_path).map_err(start_failure)?;
    let stderr = std::fs::File::create(scratch.join("stderr")).map_err(start_failure)?;
    let (program, own_args) = argv
        .split_first()
        .ok_or_else(|| Failure::DidNotStart("empty command".into()))?;
    let mut child = Command::new(program)
        .args(own_args)
        .args(request.arguments(sampling))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn()
        .map_err(|e| Failure::DidNotStart(format!("{program}: {e}")))?;
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(start_failure)? {
            break status;
        }
        if Instant::now() >= deadline {
            kill_group(child.id());
            let _ = child.wait();
            return Err(Failure::Hung(limit));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    if !status.success() {
        return Err(Failure::Crashed(status.to_string()));
    }
    std::fs::read_to_string(&stdout_path).map_err(|e| Failure::Malformed(e.to_string()))
}

/// SIGKILL to the process group the engine leads.
fn kill_group(pid: u32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
    }
}

/// The last [`STDERR_LINES`] non-empty lines.
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(STDERR_LINES)..].join("\n")
}

/// Parses stdout: exactly one JSON object, of this protocol, with what its status needs.
pub fn parse(stdout: &str) -> Result<Answer, Failure> {
    let text = stdout.trim();
    if text.is_empty() {
        return Err(Failure::Malformed("nothing on stdout".into()));
    }
    let answer: Answer = serde_json::from_str(text).map_err(|e| {
        let start: String = text.chars().take(80).collect();
        Failure::Malformed(format!("{e} in `{start}`"))
    })?;
    if answer.protocol != PROTOCOL {
        return Err(Failure::Malformed(format!(
            "protocol {} (this harness speaks {PROTOCOL})",
            answer.protocol
        )));
    }
    let per_sample = [
        ("samples_gc_count", answer.samples_gc_count.len()),
        ("samples_gc_ms", answer.samples_gc_ms.len()),
        ("samples_jit_ms", answer.samples_jit_ms.len()),
        (
            "samples_allocated_bytes",
            answer.samples_allocated_bytes.len(),
        ),
    ];
    let samples = answer.samples_ns.len();
    if let Some((field, len)) = per_sample
        .iter()
        .find(|(_, len)| *len != 0 && *len != samples)
    {
        return Err(Failure::Malformed(format!(
            "{field} has {len} entries for {samples} samples"
        )));
    }
    match answer.status.as_str() {
        "ok" if answer.samples_ns.iter().any(|s| !s.is_finite() || *s < 0.0) => Err(
            Failure::Malformed("a sample is negative or not a number".into()),
        ),
        "ok" => Ok(answer),
        "unsupported" if answer.reason.is_some() => Ok(answer),
        "unsupported" => Err(Failure::Malformed("`unsupported` without a reason".into())),
        other => Err(Failure::Malformed(format!("unknown status `{other}`"))),
    }
}
