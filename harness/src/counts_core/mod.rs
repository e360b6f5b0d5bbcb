//! Counting a cell: one `timerbench cell` process in `counted` mode run under Valgrind's
//! Callgrind, with the cache and branch simulation on and collection only inside the
//! counted function ([`COUNTED_FUNCTION`]), its out file read into the record's
//! [`Counts`]. `run --counts` and `ab --metric` both count through here, so it lives beside
//! `cmd/`.
//!
//! Callgrind rather than Cachegrind: Cachegrind's start/stop client requests came with
//! Valgrind 3.22, and Debian's is 3.19; Callgrind's `--toggle-collect` on a function
//! needs no client request, only the function's symbol.
//!
//! The simulated caches are fixed ([`DEFAULT_GEOMETRY`]), not Valgrind's guess from the
//! host, so that two machines' counts of one build are comparable; `--cache-geometry`
//! sets them, and the record says which were simulated.

pub mod callgrind;

use crate::cell_core::os;
use crate::cell_core::timed::COUNTED_FUNCTION;
use crate::child_process::{Ended, run_with_input};
use crate::schema::{CellMode, CellRecord, CellSpec, CountedReplay, Status};
use anyhow::{Context, bail};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use timerbench_results::counts::{CacheGeometry, CacheLevel, Counts};

/// The simulated machine by default: a common modern core's first levels (32 KiB, 8-way,
/// 64-byte lines, for instructions and data alike) and an 8 MiB, 16-way last level, a
/// desktop or server part's share. Every size is a power of two, as Valgrind's simulation
/// wants its number of sets.
pub const DEFAULT_GEOMETRY: CacheGeometry = CacheGeometry {
    i1: level(32 * 1024, 8),
    d1: level(32 * 1024, 8),
    ll: level(8 * 1024 * 1024, 16),
};

/// [`DEFAULT_GEOMETRY`] as `--cache-geometry` takes it.
pub const DEFAULT_GEOMETRY_TEXT: &str = "I1=32768,8,64:D1=32768,8,64:LL=8388608,16,64";

const fn level(size_bytes: u64, associativity: u32) -> CacheLevel {
    CacheLevel {
        size_bytes,
        associativity,
        line_bytes: 64,
    }
}

/// A `--cache-geometry` value: `I1=SIZE,ASSOC,LINE:D1=...:LL=...`, any of the three (the
/// others keep [`DEFAULT_GEOMETRY`]'s), in any order.
pub fn parse_geometry(text: &str) -> Result<CacheGeometry, String> {
    let mut geometry = DEFAULT_GEOMETRY;
    for part in text.split(':').filter(|p| !p.trim().is_empty()) {
        let (name, value) = part.split_once('=').ok_or_else(|| {
            format!("`{part}` is not LEVEL=SIZE,ASSOC,LINE (e.g. {DEFAULT_GEOMETRY_TEXT})")
        })?;
        let slot = match name.trim() {
            "I1" => &mut geometry.i1,
            "D1" => &mut geometry.d1,
            "LL" => &mut geometry.ll,
            other => return Err(format!("unknown cache level `{other}`; one of I1, D1, LL")),
        };
        let numbers: Vec<&str> = value.split(',').map(str::trim).collect();
        let parsed = match numbers.as_slice() {
            [size, assoc, line] => size
                .parse()
                .ok()
                .zip(assoc.parse().ok())
                .zip(line.parse().ok())
                .filter(|((s, a), l)| *s > 0 && *a > 0 && *l > 0),
            _ => None,
        };
        let Some(((size_bytes, associativity), line_bytes)) = parsed else {
            return Err(format!(
                "`{part}`: the level is three positive numbers, SIZE,ASSOC,LINE in bytes"
            ));
        };
        *slot = CacheLevel {
            size_bytes,
            associativity,
            line_bytes,
        };
    }
    Ok(geometry)
}

/// The Valgrind flags that simulate `geometry`.
fn geometry_flags(geometry: &CacheGeometry) -> [String; 3] {
    [
        format!("--I1={}", geometry.i1),
        format!("--D1={}", geometry.d1),
        format!("--LL={}", geometry.ll),
    ]
}

/// The message when no `valgrind` is on the PATH.
pub const NO_VALGRIND: &str = "valgrind not found: apt-get install valgrind";

/// The exit status without valgrind: the machine lacks a tool, as for a bad flag (2).
pub const NO_VALGRIND_EXIT: u8 = 2;

/// Valgrind as found on the PATH and checked with the geometry: its version (`valgrind-3.19.0`).
#[derive(Debug, Clone)]
pub struct Valgrind {
    pub version: String,
    pub geometry: CacheGeometry,
}

impl Valgrind {
    /// Finds `valgrind` and checks that it accepts `geometry` (running `true` under
    /// Callgrind with it: about a second), before anything is written. `None` when there
    /// is no valgrind on the PATH: the caller says [`NO_VALGRIND`] and exits
    /// [`NO_VALGRIND_EXIT`]; a geometry it refuses is its own message, naming the flag.
    pub fn check(geometry: CacheGeometry) -> anyhow::Result<Option<Valgrind>> {
        let version = match Command::new("valgrind").arg("--version").output() {
            Ok(output) if output.status.success() => {
                String::from_utf8_lossy(&output.stdout).trim().to_string()
            }
            _ => return Ok(None),
        };
        let output = Command::new("valgrind")
            .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .args(geometry_flags(&geometry))
            .arg("true")
            .output()
            .context("cannot start valgrind")?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let said: Vec<&str> = stderr
                .lines()
                .map(|l| l.trim_start_matches(|c: char| c == '=' || c.is_ascii_digit()))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .take(3)
                .collect();
            bail!(
                "--cache-geometry: valgrind refuses the simulated caches ({}): {}",
                geometry_flags(&geometry).join(" "),
                said.join("; ")
            );
        }
        Ok(Some(Valgrind { version, geometry }))
    }

    /// `valgrind-3.19.0 callgrind`: the record's `tool`.
    pub fn tool(&self) -> String {
        format!("{} callgrind", self.version)
    }
}

/// Counts the cell of `spec` (its mode set to `counted` here) with the `timerbench` at
/// `binary`, killed at `limit`: the record, `ok` with its counts, `unverified` without,
/// or `failed`/`timeout` with the reason.
pub fn count_cell(
    valgrind: &Valgrind,
    binary: &Path,
    spec: &CellSpec,
    limit: Duration,
) -> CellRecord {
    let started = Instant::now();
    let mut spec = spec.clone();
    spec.mode = CellMode::Counted;
    let outcome = run_counted(valgrind, binary, &spec, limit);
    let seconds = started.elapsed().as_secs_f64();
    let mut record = match outcome {
        Ok((answer, totals)) => match answer.problem {
            None => {
                let mut record = CellRecord::for_spec(&spec, Status::Ok, None);
                record.counts = Some(Counts {
                    tool: valgrind.tool(),
                    cache: valgrind.geometry,
                    lines: answer.lines,
                    totals,
                    seconds,
                });
                record.digest = answer.digest;
                record
            }
            Some(problem) => {
                let mut record = CellRecord::for_spec(&spec, Status::Unverified, Some(problem));
                record.digest = answer.digest;
                record
            }
        },
        Err((status, reason)) => CellRecord::for_spec(&spec, status, Some(reason)),
    };
    record.elapsed_seconds = seconds;
    record
}

/// One counting process: its answer and the totals of its out file.
fn run_counted(
    valgrind: &Valgrind,
    binary: &Path,
    spec: &CellSpec,
    limit: Duration,
) -> Result<(CountedReplay, timerbench_results::counts::CountTotals), (Status, String)> {
    let fail = |reason: String| (Status::Failed, reason);
    let out_file = OutFile::new();
    let mut command = Command::new("valgrind");
    command
        .args([
            "--tool=callgrind",
            "--cache-sim=yes",
            "--branch-sim=yes",
            "--collect-atstart=no",
        ])
        .arg(format!("--toggle-collect=*{COUNTED_FUNCTION}*"))
        .args(geometry_flags(&valgrind.geometry))
        .arg(format!("--callgrind-out-file={}", out_file.0.display()))
        .arg(binary)
        .arg("cell");
    // The cell re-executes itself to tune the allocator unless told it is tuned; under
    // Valgrind that `exec` would leave the tool. So it is started tuned, with the settings
    // a timed cell runs under.
    for (name, value) in os::tuned_environment() {
        command.env(name, value);
    }
    no_address_randomisation(&mut command);
    let input = serde_json::to_vec(spec).expect("specs serialise");
    let Ended {
        status,
        stdout,
        stderr,
    } = run_with_input(&mut command, &input, limit)
        .map_err(|e| fail(format!("cannot start valgrind: {e}")))?;
    let stderr = String::from_utf8_lossy(&stderr).to_string();
    let Some(status) = status else {
        return Err((
            Status::Timeout,
            format!("killed after the {} s time limit", limit.as_secs()),
        ));
    };
    if !status.success() {
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        // A build from before counts has no `counted` mode: say so rather than its words.
        let older = stderr.contains("bad cell spec") && stderr.contains("counted");
        return Err(fail(match older {
            true => format!(
                "{} cannot count: it predates `timerbench run --counts` (its `cell` has no \
                 counted mode)",
                binary.display()
            ),
            false => format!(
                "the counting process (valgrind) ended with {status}: {}",
                last.trim()
            ),
        }));
    }
    let text = String::from_utf8_lossy(&stdout);
    let answer: CountedReplay = serde_json::from_str(text.trim()).map_err(|e| {
        fail(format!(
            "the counting process answered something unreadable ({e})"
        ))
    })?;
    let out_file = &out_file.0;
    let out = std::fs::read_to_string(out_file)
        .map_err(|e| fail(format!("no callgrind out file {}: {e}", out_file.display())))?;
    let totals = callgrind::parse_totals(&out, &out_file.display().to_string()).map_err(fail)?;
    if answer.problem.is_none() && totals.instructions == 0 {
        // The toggle matched no function: the counts would be zeros, not a fast structure.
        return Err(fail(format!(
            "callgrind counted nothing inside `{COUNTED_FUNCTION}`: does the binary have its \
             symbol (not stripped)?"
        )));
    }
    Ok((answer, totals))
}

/// Starts `command` with address-space randomisation off: with it on, the heap and stack
/// land at other addresses in each process, so other accesses share a simulated cache set
/// and the first-level misses moved by about 1% between two counts of one cell (the
/// instructions did not).
#[cfg(target_os = "linux")]
fn no_address_randomisation(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec, `personality` only sets a flag of the child, read at
    // its `exec`; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| {
            let current = libc::personality(0xffff_ffff);
            if current != -1 {
                libc::personality(
                    (current as libc::c_ulong) | libc::ADDR_NO_RANDOMIZE as libc::c_ulong,
                );
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn no_address_randomisation(_: &mut Command) {}

/// A Callgrind out file of its own in the temporary folder, removed when dropped.
struct OutFile(std::path::PathBuf);

impl OutFile {
    fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("timerbench-callgrind-{}-{n}.out", std::process::id());
        OutFile(std::env::temp_dir().join(name))
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_geometry_is_its_flag_text() {
        assert_eq!(parse_geometry(DEFAULT_GEOMETRY_TEXT), Ok(DEFAULT_GEOMETRY));
        assert_eq!(
            geometry_flags(&DEFAULT_GEOMETRY)
                .join(":")
                .replace("--", ""),
            DEFAULT_GEOMETRY_TEXT
        );
    }

    #[test]
    fn a_geometry_sets_the_levels_it_names_and_keeps_the_others() {
        let geometry = parse_geometry("LL=33554432,16,64").unwrap();
        assert_eq!(geometry.ll.size_bytes, 32 * 1024 * 1024);
        assert_eq!(geometry.d1, DEFAULT_GEOMETRY.d1);
    }

    #[test]
    fn a_bad_geometry_says_what_is_wrong() {
        let unknown = parse_geometry("L2=1,2,3").unwrap_err();
        assert!(unknown.contains("unknown cache level `L2`"), "{unknown}");
        let short = parse_geometry("D1=32768,8").unwrap_err();
        assert!(short.contains("three positive numbers"), "{short}");
        let zero = parse_geometry("D1=32768,0,64").unwrap_err();
        assert!(zero.contains("three positive numbers"), "{zero}");
        let bare = parse_geometry("D1").unwrap_err();
        assert!(bare.contains("LEVEL=SIZE,ASSOC,LINE"), "{bare}");
    }
}
