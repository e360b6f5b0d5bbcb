//! Several runs of the experiments as one set of findings: `--runs N` measures them N
//! times into `DIR/run-1/`, `DIR/run-2/`, ... (each a findings folder of its own, as one
//! `timerbench reproduce` writes it); `--from DIR...` measures nothing and reads earlier
//! ones, which may have been taken far apart. Both write the combined findings
//! ([`super::combined`]) into the findings folder.

use super::combined::{Run, combine_runs};
use super::experiments::Experiment;
use super::output;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use timerbench_results::{FINDINGS_FILE, Findings, read_findings};

/// The folder of run `index` (from 1) inside the findings folder.
fn run_folder(index: u32) -> String {
    format!("run-{index}")
}

/// Measures the selected experiments `count` times, as `count` runs into `folder`'s
/// `run-K/`, and writes their combined findings into `folder`.
pub(super) fn measure(
    selected: &[&Experiment],
    folder: &Path,
    quick: bool,
    count: u32,
) -> anyhow::Result<Findings> {
    // Every run's folder is checked before the first is measured: a refusal after an hour
    // of measuring would waste it.
    for index in 1..=count {
        super::check_free(selected, folder, &folder.join(run_folder(index)))?;
    }
    // Each run measures every selected experiment before the next run starts, rather than
    // one experiment `count` times back to back: what moves a figure from run to run (at
    // 1M, the host's memory state) drifts over minutes, so runs back to back would share
    // it and their interval would leave out the very variation it is there to measure.
    // Spread out, an experiment's runs lie as far apart as the whole selection takes.
    let mut runs = Vec::new();
    for index in 1..=count {
        let name = run_folder(index);
        let heading = format!(" (run {index} of {count})");
        let findings = super::reproduce_once(selected, &folder.join(&name), quick, &heading)?;
        println!();
        runs.push(Run {
            folder: name,
            findings,
        });
    }
    let combined = combine_runs(&runs, super::command_line())?;
    output::write_all(folder, &combined)?;
    Ok(combined)
}

/// Reads the findings folders `from` (two or more, each one run's), keeps the experiments
/// `only` names (all without it), and writes their combined findings into `out`. Nothing
/// is written when a folder is refused.
pub(super) fn from_folders(
    from: &[PathBuf],
    out: &Path,
    only: &[String],
) -> anyhow::Result<Findings> {
    if from.len() < 2 {
        bail!("--from: give two findings folders or more (one run is already its own findings)");
    }
    if out.join(FINDINGS_FILE).exists() {
        bail!(
            "--out {}: already holds findings; choose another --out",
            out.display()
        );
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut runs = Vec::new();
    for folder in from {
        let (canonical, mut findings) = read_run(folder)?;
        if seen.contains(&canonical) {
            bail!("--from {}: given twice", folder.display());
        }
        if !only.is_empty() {
            findings.experiments.retain(|f| only.contains(&f.id));
        }
        runs.push(Run {
            folder: name_in(out, &canonical),
            findings,
        });
        seen.push(canonical);
    }
    for id in only {
        if !runs
            .iter()
            .any(|r| r.findings.experiments.iter().any(|f| &f.id == id))
        {
            bail!("--only {id}: in none of the --from folders");
        }
    }
    let combined = combine_runs(&runs, super::command_line()).context("--from")?;
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create the findings folder {}", out.display()))?;
    output::write_all(out, &combined)?;
    Ok(combined)
}

/// One `--from` folder's findings, with its canonical path; one message naming the folder
/// when it is missing, not a findings folder, or already a combination.
fn read_run(folder: &Path) -> anyhow::Result<(PathBuf, Findings)> {
    if !folder.is_dir() {
        bail!("--from {}: no such folder", folder.display());
    }
    if !folder.join(FINDINGS_FILE).is_file() {
        bail!(
            "--from {}: not a findings folder of timerbench reproduce (it has no {FINDINGS_FILE})",
            folder.display()
        );
    }
    let findings = read_findings(folder).with_context(|| format!("--from {}", folder.display()))?;
    if let Some(first) = findings.runs.first() {
        bail!(
            "--from {}: already combines {} runs; give the runs' own folders ({}/{}, ...)",
            folder.display(),
            findings.runs.len(),
            folder.display(),
            first.folder
        );
    }
    let canonical = folder
        .canonicalize()
        .with_context(|| format!("--from {}", folder.display()))?;
    Ok((canonical, findings))
}

/// A run's folder as the combined findings name it: relative to `out` when inside it,
/// else its whole path.
fn name_in(out: &Path, run: &Path) -> String {
    let out = out.canonicalize().or_else(|_| std::path::absolute(out));
    out.ok()
        .and_then(|out| run.strip_prefix(out).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| run.to_path_buf())
        .display()
        .to_string()
}
