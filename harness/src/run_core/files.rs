//! `timerbench run --file PATH`: workload files measured as suite workloads are.
//!
//! Each file is read whole, hashed (SHA-256) and checked by the reference model before
//! anything else happens, so that a missing or malformed file is one message naming it
//! (and its line) and no results folder is made. It becomes a workload of the run: named
//! by its `@name` line, else its file stem; sized by its peak of pending timers (the
//! cells' `timers`); `family` `file` with the `params` `path` (as given) and `sha256` in
//! its records. Its bytes are copied into the workload cache under their hash, and the
//! cells replay that copy, so what is measured is what was hashed even if the file changes
//! during the run. Its shape (pending timers over the trace, a histogram of its delays)
//! is computed here, once, in one pass over the checked program, and written to the
//! folder's `workloads.json` for the report.

use super::cache::Prepared;
use anyhow::{anyhow, bail};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use timerbench_impls::Variant;
use timerbench_results::schema::CellRecord;
use timerbench_results::workloads::{
    DelayHistogram, FILE_FAMILY, FileWorkload, LineCounts, PENDING_WINDOWS, PendingSeries,
    read_workload_files, write_workload_files,
};
use timerbench_workloads::Program;
use timerbench_workloads::program::Step;
use timerbench_workloads::suite::Case;

/// A workload file of the run, read and checked.
pub(super) struct FileInput {
    /// What the folder keeps of it (`workloads.json`).
    pub workload: FileWorkload,
    /// Its bytes, to copy into the cache.
    bytes: Vec<u8>,
    /// The reference model's outcome and reach, for the cells.
    program: Program,
}

impl FileInput {
    /// The case its cells are planned from: `family` `file`, `timers` its peak.
    pub fn case(&self) -> Case {
        Case {
            workload: self.workload.name.clone(),
            family: FILE_FAMILY.to_string(),
            spec: timerbench_workloads::families::GenSpec {
                timers: self.workload.peak_pending,
                ops: None,
                seed: 0,
                params: vec![
                    ("path".to_string(), self.workload.path.clone()),
                    ("sha256".to_string(), self.workload.sha256.clone()),
                ],
            },
        }
    }

    /// What its records say regenerates it: the file's own `@generator` (the command
    /// that made it, e.g. `timerbench import ...`), else nothing.
    pub fn generator(&self) -> String {
        self.workload.meta("generator").unwrap_or("").to_string()
    }
}

/// Whether `case` is a workload file's.
pub(super) fn is_file(case: &Case) -> bool {
    case.family == timerbench_results::FILE_FAMILY
}

/// The id of a file case in the run's map of prepared workloads: its hash.
pub(super) fn id(sha256: &str) -> String {
    format!("file sha256:{sha256}")
}

/// Reads and checks every file, in the order given: one error naming the first that is
/// missing or malformed (`PATH:LINE: what`), or two files that would share a name.
pub(super) fn read_all(paths: &[PathBuf]) -> anyhow::Result<Vec<FileInput>> {
    let mut inputs: Vec<FileInput> = Vec::new();
    for path in paths {
        let input = read(path)?;
        if let Some(other) = inputs
            .iter()
            .find(|i| i.workload.name == input.workload.name)
        {
            bail!(
                "--file {} and --file {} are both workload `{}` (their @name or file stem): \
                 give one another @name, or rename it",
                other.workload.path,
                input.workload.path,
                input.workload.name
            );
        }
        inputs.push(input);
    }
    Ok(inputs)
}

/// One file, read whole, hashed and checked by the reference model.
fn read(path: &Path) -> anyhow::Result<FileInput> {
    let bytes = std::fs::read(path)
        .map_err(|e| anyhow!("--file {}: cannot read it: {e}", path.display()))?;
    let program = timerbench_workloads::program::load_from(bytes.as_slice(), path)
        .map_err(|e| anyhow!("--file {e}"))?;
    let sha256: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let name = program
        .metadata
        .get("name")
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .or_else(|| {
            path.file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| path.display().to_string());
    if name.contains('/') {
        bail!(
            "--file {}: its workload name `{name}` has a `/`, which names cells \
             (WORKLOAD/TIMERS/IMPL): give it another @name",
            path.display()
        );
    }
    let workload = shape(&program, name, path, sha256, bytes.len() as u64);
    Ok(FileInput {
        workload,
        bytes,
        program,
    })
}

/// Copies each file into the cache under its hash (when not there already) and gives the
/// cells' prepared workloads by [`id`].
pub(super) fn prepare(
    inputs: &[FileInput],
    cache: &Path,
) -> anyhow::Result<BTreeMap<String, Prepared>> {
    let mut prepared = BTreeMap::new();
    if inputs.is_empty() {
        return Ok(prepared);
    }
    std::fs::create_dir_all(cache)
        .map_err(|e| anyhow!("cannot create the workload cache {}: {e}", cache.display()))?;
    for input in inputs {
        let sha256 = &input.workload.sha256;
        let path = cache.join(format!("file-{sha256}.tw"));
        let same = std::fs::read(&path).is_ok_and(|held| held == input.bytes);
        if !same {
            timerbench_results::write_atomically(&path, &input.bytes)?;
        }
        prepared.insert(
            id(sha256),
            Prepared {
                path,
                reference: input.program.summary.clone(),
                reach: input.program.reach,
            },
        );
    }
    Ok(prepared)
}

/// On `--resume`: refuses a file whose workload the folder holds cells of from another
/// file (another hash), so that two files of one name are never mixed in one run.
pub(super) fn check_recorded(
    inputs: &[FileInput],
    recorded: &[CellRecord],
    folder: &Path,
) -> anyhow::Result<()> {
    for record in recorded.iter().filter(|r| r.family == FILE_FAMILY) {
        let Some(input) = inputs
            .iter()
            .find(|i| i.workload.name == record.key.workload)
        else {
            continue;
        };
        let held = record.params.get("sha256").map_or("", String::as_str);
        if held != input.workload.sha256 {
            bail!(
                "--file {}: the run in {} measured workload `{}` from {} with sha256 {held}, \
                 and this file's is {}: it changed since, or is another file of that name; \
                 start a new run with --out",
                input.workload.path,
                folder.display(),
                input.workload.name,
                record.params.get("path").map_or("a file", String::as_str),
                input.workload.sha256
            );
        }
    }
    Ok(())
}

/// Writes the files into the folder's `workloads.json`, keeping the entries of other
/// files it holds already (a resumed run writes the same ones again).
pub(super) fn record(inputs: &[FileInput], folder: &Path) -> anyhow::Result<()> {
    if inputs.is_empty() {
        return Ok(());
    }
    let mut files = read_workload_files(folder)?;
    files.retain(|held| inputs.iter().all(|i| i.workload.name != held.name));
    files.extend(inputs.iter().map(|i| i.workload.clone()));
    write_workload_files(folder, &files)
}

/// Why `variant` does not run on a file: its peak of pending timers is above the
/// implementation's suite limit, as a suite size would be, unless `named` with --impl.
pub(super) fn above_limit(variant: &Variant, file: &FileWorkload, named: bool) -> Option<String> {
    let limit = variant.implementation.suite_limit?;
    (file.peak_pending > limit.max_timers && !named).then(|| {
        format!(
            "{} runs at most {} timers in a suite ({}); {} peaks at {} pending timers; \
             --impl {} runs it on a file",
            variant.implementation.name,
            limit.max_timers,
            limit.why,
            file.path,
            file.peak_pending,
            variant.label()
        )
    })
}

/// What the folder keeps of a checked `program`: its identity, metadata, counts and
/// shape, in one pass over its steps and the model's firings.
fn shape(program: &Program, name: String, path: &Path, sha256: String, bytes: u64) -> FileWorkload {
    let summary = &program.summary;
    let window_ticks = (summary.final_clock / PENDING_WINDOWS + 1).max(1);
    let windows = (summary.final_clock / window_ticks + 1) as usize;
    let mut series = Series {
        window_ticks,
        max: vec![0; windows],
        last: 0,
        count: 0,
    };
    let mut lines = LineCounts::default();
    let mut delays: Vec<u64> = Vec::new();
    let mut pending = vec![false; program.keys.len()];
    let mut now: u64 = 0;
    let mut firings = program.expected.iter().peekable();
    let mut delay = |delay: u64| {
        let bucket = DelayHistogram::bucket(delay);
        if delays.len() <= bucket {
            delays.resize(bucket + 1, 0);
        }
        delays[bucket] += 1;
    };
    for (index, step) in program.steps.iter().enumerate() {
        let mut count = series.count;
        match *step {
            Step::Start { slot, delay: d } => {
                lines.start += 1;
                delay(d);
                pending[slot as usize] = true;
                count += 1;
            }
            Step::Restart { slot, delay: d } => {
                lines.restart += 1;
                delay(d);
                if !std::mem::replace(&mut pending[slot as usize], true) {
                    count += 1;
                }
            }
            Step::Stop { slot } => {
                lines.stop += 1;
                if std::mem::replace(&mut pending[slot as usize], false) {
                    count -= 1;
                }
            }
            Step::Advance { ticks } => {
                lines.advance += 1;
                now += ticks;
            }
            Step::Tick { ticks } => {
                lines.tick += 1;
                now += ticks;
            }
            Step::Next => lines.next += 1,
        }
        // Each firing at the clock that fired it (the tick of a `t N`, the end of a move).
        while let Some(firing) = firings.next_if(|f| f.step as usize == index) {
            if std::mem::replace(&mut pending[firing.slot as usize], false) {
                count -= 1;
            }
            now = now.max(firing.now);
            series.at(firing.now, count);
        }
        series.at(now, count);
    }
    series.at(summary.final_clock, series.count);
    FileWorkload {
        name,
        path: path.display().to_string(),
        sha256,
        bytes,
        metadata: program
            .metadata
            .entries()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        lines,
        started: summary.started,
        fired: summary.fired,
        stopped: summary.stopped,
        misses: summary.misses,
        pending_at_end: summary.pending,
        final_clock: summary.final_clock,
        peak_pending: program.peak_pending,
        pending: PendingSeries {
            window_ticks,
            max: series.max,
        },
        delays: DelayHistogram { counts: delays },
    }
}

/// Pending timers by window of the clock, as the pass goes.
struct Series {
    window_ticks: u64,
    /// The most pending in each window so far.
    max: Vec<u64>,
    /// The window of the last count.
    last: usize,
    /// The count now.
    count: u64,
}

impl Series {
    /// `count` timers pending at `clock` (never before the last clock): the windows
    /// between the last one and this one held the last count throughout.
    fn at(&mut self, clock: u64, count: u64) {
        let window = ((clock / self.window_ticks) as usize).min(self.max.len() - 1);
        for carried in &mut self.max[(self.last + 1).min(window)..window] {
            *carried = self.count;
        }
        if window > self.last {
            self.max[window] = self.count.max(count);
            self.last = window;
        } else {
            self.max[window] = self.max[window].max(count);
        }
        self.count = count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerbench_impls::{Implementation, SuiteLimit};

    static SCANNER: Implementation = Implementation {
        name: "scanner",
        summary: "a structure that scans every timer per move",
        peer: false,
        parameters: &[],
        suite_limit: Some(SuiteLimit {
            max_timers: 2,
            why: "scans every pending timer per clock move",
        }),
    };

    #[test]
    fn a_file_above_the_suite_limit_is_skipped_unless_named() {
        let text = "timer-workload v1\ns 1 5\ns 2 5\ns 3 5\na 5\n";
        let p = program(text);
        let w = shape(&p, "three".into(), Path::new("three.tw"), "00".into(), 1);
        let variant = Variant::of(&SCANNER);
        assert_eq!(
            above_limit(&variant, &w, false).as_deref(),
            Some(
                "scanner runs at most 2 timers in a suite (scans every pending timer per clock \
                 move); three.tw peaks at 3 pending timers; --impl scanner runs it on a file"
            )
        );
        assert_eq!(above_limit(&variant, &w, true), None);
        let heap = Variant::parse("binary-heap").unwrap();
        assert_eq!(above_limit(&heap, &w, false), None);
    }

    fn program(text: &str) -> Program {
        timerbench_workloads::program::load_from(text.as_bytes(), Path::new("t.tw")).unwrap()
    }

    #[test]
    fn the_shape_follows_the_pending_timers_and_the_delays() {
        let text = "timer-workload v1\n@name tiny\n@tick 1ms\n\
                    s 1 0\ns 2 3\ns 3 1000\nr 2 5\nx 3\nx 3\na 2\nt 4\nn\n";
        let p = program(text);
        let w = shape(&p, "tiny".into(), Path::new("t.tw"), "00".into(), 1);
        assert_eq!(
            w.lines,
            LineCounts {
                start: 3,
                stop: 2,
                restart: 1,
                advance: 1,
                tick: 1,
                next: 1
            }
        );
        // Delays 0, 3, 1000, 5: buckets 0, 2, 10, 3.
        let mut expected = vec![0u64; 11];
        for bucket in [0, 2, 10, 3] {
            expected[bucket] += 1;
        }
        assert_eq!(w.delays.counts, expected);
        assert_eq!((w.peak_pending, w.fired, w.final_clock), (3, 2, 6));
        assert_eq!(w.pending.window_ticks, 1);
        // Clock 0: three pending, then 2 until timer 1 fires at 2 (1 left, and 2 when the
        // window opened); timer 2 fires at tick 5 of the `t 4` line (clock 2 to 6).
        assert_eq!(w.pending.max, vec![3, 2, 2, 1, 1, 1, 0]);
        assert_eq!(w.meta("tick"), Some("1ms"));
    }
}
