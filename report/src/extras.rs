//! The records besides the runs' that the report shows in sections of their own: the live
//! runs (`live.jsonl` of `timerbench live`) and the threads study (`threads.jsonl` of
//! `timerbench threads`), from the folders given and from any results folder of the report
//! that holds such a file.

use anyhow::bail;
use std::path::{Path, PathBuf};

/// Folders (or files) of records besides the runs', each given on the command line.
#[derive(Debug, Clone, Default)]
pub struct Extras {
    /// Folders of `timerbench live` (or their `live.jsonl`): the Live section.
    pub live: Vec<PathBuf>,
    /// Folders of `timerbench threads` (or their `threads.jsonl`): the Threads section.
    pub threads: Vec<PathBuf>,
}

/// The files called `file` to read: each of `given` (a folder holding one, or the file
/// itself), then the one in each of the report's `runs` folders that has it; each once.
///
/// A given path that does not exist, or a folder without `file`, is an error naming it:
/// a report silently without the records asked for would read as if they were absent.
pub fn files(
    given: &[PathBuf],
    runs: &[PathBuf],
    file: &str,
    command: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = Vec::new();
    for path in given {
        let resolved = if path.is_dir() {
            path.join(file)
        } else {
            path.clone()
        };
        if !path.exists() {
            bail!(
                "{} does not exist (give a folder of `{command}`, holding {file})",
                path.display()
            );
        }
        if !resolved.is_file() {
            bail!(
                "{} has no {file}: not a folder of `{command}`",
                path.display()
            );
        }
        push_once(&mut found, resolved);
    }
    for run in runs {
        let candidate = run.join(file);
        if candidate.is_file() {
            push_once(&mut found, candidate);
        }
    }
    Ok(found)
}

/// Adds `path` unless the same file is already there under another spelling.
fn push_once(found: &mut Vec<PathBuf>, path: PathBuf) {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if !found.iter().any(|f| same(f, &path)) {
        found.push(path);
    }
}

/// The line numbers (from 1) of the non-blank lines of `text`: the lines the record readers
/// take, in order, so the `n`-th record read came from the `n`-th of them.
pub fn record_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, _)| index + 1)
        .collect()
}

/// The items of `all` in the order of their first appearance, each once.
pub fn first_appearance<'a>(all: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for item in all {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}
