//! A results folder on disk: the one reader and writer of its files, shared by the run
//! that writes a folder and the report that reads it.
//!
//! Writes never leave a half-written file: `results.jsonl` grows one whole line at a time,
//! flushed to disk before the next cell starts, so an interrupted run loses at most the
//! cell it was measuring; the other files are written to a temporary file in the same
//! folder and renamed into place. Reads fail with one message naming the file and line.

use crate::schema::{CellKey, CellRecord, Environment};
use crate::version;
use anyhow::{Context, bail};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// One record per line, appended as each cell finishes.
pub const RESULTS_FILE: &str = "results.jsonl";
/// The machine and build of the run.
pub const ENVIRONMENT_FILE: &str = "environment.json";
/// One row per cell, for spreadsheets.
pub const SUMMARY_FILE: &str = "summary.csv";
/// The HTML report `timerbench run` writes at the end (`timerbench report`'s default).
pub const REPORT_FILE: &str = "report.html";

/// What a results folder holds, read and checked.
#[derive(Debug, Clone)]
pub struct RunFiles {
    /// Every record of `results.jsonl`, in file order, with its line (a resumed run may
    /// hold a cell twice: see [`latest_by_cell`]).
    pub records: Vec<RecordLine>,
    /// `environment.json`, when the folder has one.
    pub environment: Option<Environment>,
}

/// Reads a results folder: `results.jsonl` (required, every line a record of a version
/// this build reads) and `environment.json` (optional, but well-formed when present).
pub fn read_run(folder: &Path) -> anyhow::Result<RunFiles> {
    if !folder.exists() {
        bail!("results folder {} does not exist", folder.display());
    }
    if !folder.is_dir() {
        bail!(
            "{} is not a results folder (not a directory)",
            folder.display()
        );
    }
    let results = folder.join(RESULTS_FILE);
    if !results.is_file() {
        bail!(
            "{} has no {RESULTS_FILE}: not a results folder of `timerbench run`",
            folder.display()
        );
    }
    let records = read_record_lines(&results)?;
    let environment_path = folder.join(ENVIRONMENT_FILE);
    let environment = if environment_path.exists() {
        Some(read_environment(&environment_path)?)
    } else {
        None
    };
    Ok(RunFiles {
        records,
        environment,
    })
}

/// A record and the line of `results.jsonl` it was read from, for messages about it.
#[derive(Debug, Clone)]
pub struct RecordLine {
    /// The line number, from 1.
    pub line: usize,
    /// The record.
    pub record: CellRecord,
}

/// Every record of a results file, checked line by line (blank lines are skipped).
pub fn read_records(path: &Path) -> anyhow::Result<Vec<CellRecord>> {
    Ok(read_record_lines(path)?
        .into_iter()
        .map(|line| line.record)
        .collect())
}

/// [`read_records`], with the line of each.
pub fn read_record_lines(path: &Path) -> anyhow::Result<Vec<RecordLine>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut records = Vec::new();
    for (index, text) in BufReader::new(file).lines().enumerate() {
        let text = text.with_context(|| format!("cannot read {}", path.display()))?;
        if text.trim().is_empty() {
            continue;
        }
        let line = index + 1;
        let location = format!("{}:{line}", path.display());
        let record = version::decode(&text, &location, "a cell record")?;
        records.push(RecordLine { line, record });
    }
    Ok(records)
}

/// An `environment.json`, checked.
pub fn read_environment(path: &Path) -> anyhow::Result<Environment> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    version::decode(&text, &path.display().to_string(), "an environment record")
}

/// Writes `folder/environment.json`.
pub fn write_environment(folder: &Path, environment: &Environment) -> anyhow::Result<()> {
    let text =
        serde_json::to_string_pretty(environment).context("cannot encode the environment")?;
    write_atomically(&folder.join(ENVIRONMENT_FILE), (text + "\n").as_bytes())
}

/// The records a run already holds, to resume it: none when the folder has no
/// `results.jsonl` yet. A last line cut short by an interruption is removed first, so that
/// appending goes on cleanly.
pub fn recorded_so_far(folder: &Path) -> anyhow::Result<Vec<CellRecord>> {
    let path = folder.join(RESULTS_FILE);
    if !path.exists() {
        return Ok(Vec::new());
    }
    cut_partial_line(&path)?;
    read_records(&path)
}

fn cut_partial_line(path: &Path) -> anyhow::Result<()> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.last().is_some_and(|&b| b != b'\n') {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        file.set_len(keep as u64)
            .with_context(|| format!("cannot cut the partial last line of {}", path.display()))?;
    }
    Ok(())
}

/// `results.jsonl` open for appending, one whole record at a time.
pub struct Appender {
    file: File,
    path: PathBuf,
}

impl Appender {
    /// Opens (creating it if need be) `folder/results.jsonl` for appending.
    pub fn open(folder: &Path) -> anyhow::Result<Appender> {
        let path = folder.join(RESULTS_FILE);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Appender { file, path })
    }

    /// Appends `record` as one line and waits until it is on disk, so that a run killed
    /// afterwards keeps it.
    pub fn append(&mut self, record: &CellRecord) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(record).context("cannot encode the record")?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .with_context(|| format!("cannot append to {}", self.path.display()))
    }

    /// The file appended to.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The latest record of each cell: a resumed run may hold a cell twice, and the later
/// record is the one that counts.
pub fn latest_by_cell(
    records: impl IntoIterator<Item = CellRecord>,
) -> BTreeMap<CellKey, CellRecord> {
    records
        .into_iter()
        .map(|record| (record.key.clone(), record))
        .collect()
}

/// The newest run under `root` (e.g. `results/`): of its folders that hold a
/// `results.jsonl`, the one whose results changed last (by name when that ties). Hidden
/// folders (the workload cache `.cache`) and folders without results (this crate's `src`)
/// are not runs.
pub fn newest_run(root: &Path) -> anyhow::Result<PathBuf> {
    let entries =
        std::fs::read_dir(root).with_context(|| format!("cannot read {}", root.display()))?;
    let mut newest: Option<(std::time::SystemTime, String, PathBuf)> = None;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", root.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let results = entry.path().join(RESULTS_FILE);
        if name.starts_with('.') || !results.is_file() {
            continue;
        }
        let modified = std::fs::metadata(&results)
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        let candidate = (modified, name, entry.path());
        if newest
            .as_ref()
            .is_none_or(|best| (&candidate.0, &candidate.1) > (&best.0, &best.1))
        {
            newest = Some(candidate);
        }
    }
    match newest {
        Some((_, _, path)) => Ok(path),
        None => bail!(
            "no run under {}: no folder there holds a {RESULTS_FILE}",
            root.display()
        ),
    }
}

/// Creates `path` with `bytes`: written to a temporary file in the same folder, synced,
/// and renamed to `path`, so that a reader sees the old file or the whole new one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let write = || -> std::io::Result<()> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(".timerbench-").suffix(".partial");
        // A temporary file is private (0600); the finished one is an ordinary file.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
        let mut temporary = builder.tempfile_in(folder)?;
        temporary.write_all(bytes)?;
        temporary.as_file().sync_all()?;
        temporary.persist(path).map_err(|e| e.error)?;
        Ok(())
    };
    write().with_context(|| format!("cannot write {}", path.display()))
}
