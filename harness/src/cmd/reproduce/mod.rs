//! `timerbench reproduce`: the literature's claims, re-measured. Each experiment of
//! `harness/experiments.toml` ([`experiments`]) is run through `timerbench run`'s own plan,
//! loop and records into a folder of its own (`DIR/<id>/`), its records read back, its
//! figure computed ([`figures`]) and judged by its rule ([`verdict`]); the findings are
//! written as `findings.json`, `findings.md` and `findings.html` ([`output`]).
//!
//! An experiment whose run fails (a bad workload, a folder that cannot be written) is
//! "not measured" with the error as its reason, and the others go on; a cell that fails
//! makes the figures that need it "not measured" the same way.
//!
//! A cell is measured once per run ([`reuse`]): an experiment that plans a cell an
//! earlier one measured copies that record instead, and says so.
//!
//! `--runs N` measures the experiments N times, as N runs into `DIR/run-1/`...; `--from
//! DIR...` measures nothing and reads earlier runs' findings folders; either way the runs
//! are combined into one finding per experiment ([`combined`], [`runs`]).

mod combined;
pub mod experiments;
pub mod figures;
mod lateness_source;
mod live_source;
mod output;
mod reuse;
mod runs;
mod runtimes_source;
mod sides;
mod source_fields;
pub mod sources;
mod suite;
mod threads_source;
pub mod verdict;

use crate::environment;
use anyhow::{Context, bail};
use clap::Parser;
use experiments::Experiment;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use timerbench_results::{
    Finding, Findings, ReusedCells, Verdict, latest_by_cell, read_run, read_workload_files,
};
use timerbench_workloads::suite::SuiteFile;

/// Re-measure the published claims of the timer literature (experiments.toml) and compute
/// a verdict for each from its rule: holds, holds with a caveat, does not hold, or not
/// measured.
#[derive(clap::Args)]
pub struct Args {
    /// Reduced sizes, one process per cell and short samples: the whole set in a few
    /// minutes, for CI. The figures then test the method, not the claims.
    #[arg(long)]
    quick: bool,
    /// Only this experiment (repeatable; default: all).
    #[arg(long = "only", value_name = "ID")]
    only: Vec<String>,
    /// The folder of the findings and of each experiment's run (default:
    /// results/reproduce-<date>-<host>-<git rev>).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Another experiments file instead of the built-in harness/experiments.toml.
    #[arg(long, value_name = "FILE")]
    experiments: Option<PathBuf>,
    /// List the experiments (id, claim, sizes) and run nothing.
    #[arg(long, conflicts_with_all = ["out", "quick"])]
    list: bool,
    /// Measure the experiments N times, as N runs one after the other (`DIR/run-1/`, ...,
    /// each a findings folder of its own), and judge each on its figures' means over the
    /// runs with their 95% intervals.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    runs: u32,
    /// Measure nothing: combine the findings folders of earlier `timerbench reproduce`
    /// runs (two or more, taken apart) into findings judged on the means, in `--out`.
    #[arg(
        long,
        value_name = "DIR",
        num_args = 1..,
        conflicts_with_all = ["runs", "quick", "list", "experiments"]
    )]
    from: Vec<PathBuf>,
}

/// `timerbench run`'s flags, parsed from the words [`run_words`] builds, so that each
/// experiment's run is checked exactly as a typed command would be.
#[derive(Parser)]
#[command(name = "timerbench")]
struct RunCommand {
    #[command(flatten)]
    args: crate::run_core::Args,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let clock = Instant::now();
    if !args.from.is_empty() {
        let folder = args.out.clone().unwrap_or_else(default_folder);
        let findings = runs::from_folders(&args.from, &folder, &args.only)?;
        return Ok(finish(&folder, &findings, clock));
    }
    let all = experiments::load(args.experiments.as_deref())?;
    let selected = select(&all, &args.only)?;
    if args.list {
        list(&selected);
        return Ok(ExitCode::SUCCESS);
    }
    let folder = match &args.out {
        Some(folder) => folder.clone(),
        None => default_folder(),
    };
    let findings = if args.runs == 1 {
        check_free(&selected, &folder, &folder)?;
        reproduce_once(&selected, &folder, args.quick, "")?
    } else {
        runs::measure(&selected, &folder, args.quick, args.runs)?
    };
    Ok(finish(&folder, &findings, clock))
}

/// `--list`: each experiment's id, title, implementations, workloads and sizes.
fn list(selected: &[&Experiment]) {
    for experiment in selected {
        if let Some(line) = sources::list_words(experiment) {
            println!("{line}");
            continue;
        }
        println!("{}: {}", experiment.id, experiment.title);
        println!(
            "    {} on {}; sizes {} (--quick: {})",
            experiment.implementations.join(", "),
            experiment.workload_names().join(", "),
            if experiment.traces.is_empty() {
                sources::comma_list(&experiment.sizes)
            } else {
                "the trace's own".to_string()
            },
            if experiment.traces.is_empty() {
                sources::comma_list(&experiment.quick_sizes)
            } else {
                "the same".to_string()
            },
        );
    }
}

/// Refuses a run `folder` (inside `--out` `out`) where an experiment's results already are.
fn check_free(selected: &[&Experiment], out: &Path, folder: &Path) -> anyhow::Result<()> {
    for experiment in selected {
        let run = folder.join(&experiment.id);
        if run.join(sources::records_file(experiment)).exists() {
            bail!(
                "--out {}: {} already holds results; choose another --out",
                out.display(),
                run.display()
            );
        }
    }
    Ok(())
}

/// One run of the selected experiments into `folder`, its findings written there;
/// `heading` follows `timerbench reproduce` in the progress (` (run 2 of 3)`).
fn reproduce_once(
    selected: &[&Experiment],
    folder: &Path,
    quick: bool,
    heading: &str,
) -> anyhow::Result<Findings> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create the findings folder {}", folder.display()))?;
    let started = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    println!(
        "timerbench reproduce{}{heading}: {} experiment{}, findings in {}",
        if quick { " --quick" } else { "" },
        selected.len(),
        if selected.len() == 1 { "" } else { "s" },
        folder.display()
    );
    let mut findings = Vec::new();
    // Cells are shared between the experiments of one run, never between runs: another
    // run's sample of a cell is what a run is for.
    let mut earlier = reuse::Earlier::default();
    for (index, experiment) in selected.iter().enumerate() {
        println!(
            "\n[{}/{}] {}: {}",
            index + 1,
            selected.len(),
            experiment.id,
            experiment.title
        );
        let finding = reproduce(experiment, folder, quick, &mut earlier);
        println!("  -> {}: {}", finding.verdict.words(), finding.reason);
        findings.push(finding);
    }
    let findings = Findings {
        schema: timerbench_results::FINDINGS_SCHEMA,
        quick,
        started,
        command: command_line(),
        git_revision: environment::git_revision(),
        experiments: findings,
        runs: Vec::new(),
    };
    output::write_all(folder, &findings)?;
    Ok(findings)
}

/// The command line, words joined by spaces.
fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Prints the table and the files of the findings in `folder`; the exit status.
fn finish(folder: &Path, findings: &Findings, clock: Instant) -> ExitCode {
    println!("\n{}", output::terminal_table(findings));
    for path in output::files(folder) {
        println!("{}", path.display());
    }
    println!("reproduce took {:.0} s", clock.elapsed().as_secs_f64());
    // A claim that does not hold is a finding; an experiment the data could not decide is
    // a failure of the reproduction (a cell failed, a run could not be made), unless this
    // machine lacks what it needs (a kernel without epoll_pwait2): that is the machine's.
    let undecided = findings
        .experiments
        .iter()
        .filter(|f| f.verdict == Verdict::NotMeasured && !sources::lacks_capability(f))
        .count();
    if undecided > 0 {
        eprintln!("timerbench: {undecided} experiment(s) not measured: see their reasons above");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The experiments `--only` selects (all without it); an unknown id is one error listing
/// the ids.
fn select<'a>(all: &'a [Experiment], only: &[String]) -> anyhow::Result<Vec<&'a Experiment>> {
    for id in only {
        if !all.iter().any(|e| &e.id == id) {
            bail!(
                "--only {id}: no such experiment (experiments: {})",
                all.iter()
                    .map(|e| e.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(all
        .iter()
        .filter(|e| only.is_empty() || only.contains(&e.id))
        .collect())
}

/// One experiment: run (copying the cells `earlier` holds), read back, judge; then its
/// records kept in `earlier` for the experiments after it. Never fails: an error is the
/// finding's reason.
fn reproduce(
    experiment: &Experiment,
    folder: &Path,
    quick: bool,
    earlier: &mut reuse::Earlier,
) -> Finding {
    if sources::is_source(experiment) {
        return sources::reproduce(experiment, folder, quick);
    }
    let mut sizes = experiment.sizes(quick).to_vec();
    let run_folder = folder.join(&experiment.id);
    let measured = measure(experiment, folder, &run_folder, &sizes, quick, earlier);
    let mut shown = String::new();
    let mut reused = Vec::new();
    let (cells, values, verdict, reason) = match measured {
        Ok((records, files, copied)) => {
            earlier.keep(&experiment.id, records.values());
            reused = copied;
            if !experiment.traces.is_empty() {
                // A trace's size is its own peak of pending timers, read off its records.
                let names = experiment.workload_names();
                sizes = records
                    .keys()
                    .filter(|key| names.contains(&key.workload))
                    .map(|key| key.timers)
                    .collect::<std::collections::BTreeSet<u64>>()
                    .into_iter()
                    .collect();
            }
            shown = figures::shown_words(experiment, &sizes, &records, &files);
            let cells = figures::readings(experiment, &experiment.field, &sizes, &records, &files);
            let computed = figures::compute(experiment, &sizes, &cells);
            let (values, verdict, reason) =
                verdict::judge(&experiment.figure, &experiment.rule, &computed);
            let reason = format!("{reason}{}", sides::words(experiment, &records));
            (cells, values, verdict, reason)
        }
        Err(error) => (
            Vec::new(),
            Vec::new(),
            Verdict::NotMeasured,
            format!("the run failed: {error:#}"),
        ),
    };
    Finding {
        id: experiment.id.clone(),
        title: experiment.title.clone(),
        claim: experiment.claim.clone(),
        source: experiment.source.clone(),
        published: experiment.published.clone(),
        measured: format!(
            "{} (workloads {}; sizes {}; field {}{shown})",
            experiment.measured,
            experiment.workload_names().join(", "),
            sizes
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            experiment.field
        ),
        field: experiment.field.clone(),
        figure: output::figure_words(&experiment.figure),
        rule: output::rule_words(&experiment.rule),
        rule_data: serde_json::to_value(&experiment.rule).unwrap_or_default(),
        folder: experiment.id.clone(),
        reused,
        records: None,
        axis: None,
        cells,
        values,
        verdict,
        reason,
        runs: None,
    }
}

/// Runs the experiment's cells through `timerbench run` into `run_folder` (which must not
/// hold results yet, as for `run --out`), copying those `earlier` holds instead of
/// measuring them, and reads its records back; with them, how many cells were copied from
/// which experiment.
fn measure(
    experiment: &Experiment,
    folder: &Path,
    run_folder: &Path,
    sizes: &[u64],
    quick: bool,
    earlier: &reuse::Earlier,
) -> anyhow::Result<(figures::Records, figures::Files, Vec<ReusedCells>)> {
    let suite = if experiment.traces.is_empty() {
        experiment.suite(sizes)?
    } else {
        SuiteFile::standard()
    };
    let files = import_traces(experiment, &folder.join("traces"))?;
    let words = run_words(experiment, run_folder, sizes, &files, quick);
    let command = RunCommand::try_parse_from(&words)
        .map_err(|e| anyhow::anyhow!("the run's flags {}: {e}", words.join(" ")))?;
    let planned = crate::run_core::Planned::new(&command.args, &suite)?;
    let definitions = planned.definitions();
    let (copied, reused) = earlier.find(&definitions);
    if !reused.is_empty() {
        println!(
            "  {} of {} reused: {} (records copied, not measured again)",
            copied.len(),
            reuse::count(definitions.len() as u64),
            reuse::words(&reused)
        );
    }
    if copied.len() < definitions.len() {
        println!("  {}", pasteable(&words));
    } else {
        println!("  nothing new to measure: no cell run");
    }
    // The run's exit status says whether every cell was ok; the findings read each cell's
    // status from its record instead.
    // The folder's recorded command is the one that makes it again: this experiment alone.
    let again = format!(
        "timerbench reproduce{} --only {} --out {}",
        if quick { " --quick" } else { "" },
        experiment.id,
        folder.display()
    );
    planned.run(Some(&again), &copied)?;
    let lines = read_run(run_folder)?.records;
    let workload_files = read_workload_files(run_folder)?
        .into_iter()
        .map(|file| (file.name.clone(), file))
        .collect();
    Ok((
        latest_by_cell(lines.into_iter().map(|line| line.record)),
        workload_files,
        reused,
    ))
}

/// Imports each trace of `experiment` into `traces/NAME-TIMERS-MOVES.tw` (once: a later
/// experiment of the same trace, timers and moves reuses it) with `timerbench import
/// ftrace` in a child process, as a user would; gives the files.
fn import_traces(experiment: &Experiment, traces: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for trace in &experiment.traces {
        let moves = trace.moves().name();
        let file = traces.join(format!("{}-{}-{moves}.tw", trace.name, trace.timers));
        if !file.is_file() {
            if !Path::new(&trace.path).is_file() {
                bail!(
                    "trace {}: {} not found (run timerbench reproduce from the repository root)",
                    trace.name,
                    trace.path
                );
            }
            std::fs::create_dir_all(traces)
                .with_context(|| format!("cannot create {}", traces.display()))?;
            let exe = std::env::current_exe().context("cannot find the timerbench executable")?;
            let output = std::process::Command::new(exe)
                .args([
                    "import",
                    "ftrace",
                    &trace.path,
                    "--timers",
                    &trace.timers,
                    "--moves",
                    moves,
                    "-o",
                ])
                .arg(&file)
                .output()
                .context("cannot run timerbench import")?;
            if !output.status.success() {
                bail!(
                    "trace {}: timerbench import ftrace {} failed: {}",
                    trace.name,
                    trace.path,
                    String::from_utf8_lossy(&output.stderr).trim()
                );
            }
        }
        files.push(file);
    }
    Ok(files)
}

/// The `timerbench run` command of an experiment (program name first).
fn run_words(
    experiment: &Experiment,
    run_folder: &Path,
    sizes: &[u64],
    files: &[PathBuf],
    quick: bool,
) -> Vec<String> {
    let mut words: Vec<String> = vec!["timerbench".into()];
    if files.is_empty() {
        words.extend(["--suite".into(), "full".into()]);
    }
    words.extend(["--out".into(), run_folder.display().to_string()]);
    for implementation in &experiment.implementations {
        words.extend(["--impl".into(), implementation.clone()]);
    }
    if !experiment.engines.is_empty() {
        words.extend(["--engine".into(), experiment.engines.join(",")]);
    }
    for size in sizes {
        words.extend(["--timers".into(), size.to_string()]);
    }
    for file in files {
        words.extend(["--file".into(), file.display().to_string()]);
    }
    if quick {
        // One process per cell, but three samples of at least 5 ms: the median of three
        // shrugs off the one sample a busy machine spoils, for a second or two in all.
        for (flag, value) in [
            ("--processes", "1"),
            ("--max-processes", "1"),
            ("--repeat", "3"),
            ("--min-sample-ms", "5"),
        ] {
            words.extend([flag.into(), value.into()]);
        }
    }
    words
}

/// The run's words as one would paste them into a shell: `timerbench run ...` (the
/// parsed words lack the subcommand, which `RunCommand` does not take), each word quoted
/// when the shell would split or expand it.
fn pasteable(words: &[String]) -> String {
    let quote = |word: &String| {
        let plain = word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c));
        if plain && !word.is_empty() {
            word.clone()
        } else {
            format!("'{}'", word.replace('\'', "'\\''"))
        }
    };
    let mut out = String::from("timerbench run");
    for word in words.iter().skip(1) {
        out.push(' ');
        out.push_str(&quote(word));
    }
    out
}

/// `results/reproduce-<date>-<host>-<git rev>`, `-2`, `-3`... when it exists.
fn default_folder() -> PathBuf {
    crate::folders::free_folder("reproduce-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_id_is_one_error_listing_the_ids() {
        let all = experiments::load(None).unwrap();
        let error = select(&all, &["nope".to_string()]).unwrap_err().to_string();
        assert!(
            error.starts_with("--only nope: no such experiment"),
            "{error}"
        );
        assert!(error.contains(&all[0].id), "{error}");
        assert_eq!(select(&all, &[]).unwrap().len(), all.len());
    }

    #[test]
    fn a_printed_run_is_the_run_subcommand_as_one_would_paste_it() {
        let words: Vec<String> = ["timerbench", "--suite", "full", "--out", "a b/it's"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert_eq!(
            pasteable(&words),
            "timerbench run --suite full --out 'a b/it'\\''s'"
        );
    }
}
