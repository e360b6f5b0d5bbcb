//! `timerbench layouts --builds K -- RUN ARGUMENTS`: code layout as a measured spread.
//!
//! One binary is one sample of code layout (Mytkowicz et al., *Producing wrong data
//! without doing anything obviously wrong!*, ASPLOS 2009; Curtsinger and Berger,
//! *Stabilizer*, ASPLOS 2013): where the functions land moves a figure by more than many
//! changes a study looks for. The study builds the same source K times with a different
//! layout each ([`build`]: layout 0 linked as usual, layouts 1 to K−1 with lld's section
//! shuffle, one seed each), runs `timerbench run RUN ARGUMENTS` with each binary in turn
//! (one at a time) into `DIR/layout-k`, and summarises ([`summary`]): each cell's figure
//! in every layout with its spread, and the orders between implementations that flip from
//! one layout to another ([`spread`]).
//!
//! The build is the level above the run (METHODOLOGY.md, *Layout as a measured
//! spread*): each layout folder is an ordinary run folder, so `timerbench combine
//! DIR/layout-*` gives each cell's mean over layouts with an interval that holds the
//! layout's effect.
//!
//! A study given its folder again goes on where it stopped: a built binary is kept
//! (`DIR/bin`, written whole or not at all), a complete layout run is not run again, a
//! partial one is continued with `timerbench run --resume`. Its settings
//! (`DIR/study.json`) must agree, and a layout is never built from another source than
//! the study's first.

mod build;
pub mod spread;
pub mod summary;

use crate::run_core::{self as run, Planned};
use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use summary::layout_folder;
use timerbench_results::recorded_so_far;
use timerbench_workloads::suite::SuiteFile;

/// Code layout as a measured spread: K builds of this source, each with its functions in
/// another order, the same run with each, every cell's spread over the layouts.
#[derive(clap::Args)]
pub struct Args {
    /// Layouts to build and run, at least 2: layout 0 linked as usual (lld, unshuffled),
    /// layouts 1 to K−1 with the linker's sections shuffled, one seed each.
    #[arg(long, value_name = "K", required_unless_present = "summarize",
          value_parser = clap::value_parser!(u32).range(2..=1000))]
    builds: Option<u32>,
    /// The shuffle seed of layout 1; layout k takes FIRST_SEED + k − 1 (lld reads 0 as
    /// "a random seed", so seeds start at 1).
    #[arg(long, value_name = "FIRST_SEED", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    first_seed: u32,
    /// The study's folder: the binaries (`bin/`), one run folder per layout
    /// (`layout-K/`), the settings and the summary (default:
    /// results/layouts-<date>-<host>-<git rev>). Given again, the study goes on.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Only summarise the layout folders already in --out (no build, no run).
    #[arg(long, requires = "out", conflicts_with_all = ["builds", "run_arguments"])]
    summarize: bool,
    /// The arguments of `timerbench run` for every layout, after `--` (not --out or
    /// --resume: each layout's run goes to DIR/layout-K).
    #[arg(last = true, value_name = "RUN ARGUMENTS")]
    run_arguments: Vec<String>,
}

/// A study's settings, `DIR/study.json`: a study given its folder again must agree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Study {
    /// The layouts asked for last (a study may be given more layouts later).
    builds: u32,
    first_seed: u32,
    /// How a layout above 0 is linked: the linker flag, `SEED` standing for its seed.
    shuffle: String,
    run_arguments: Vec<String>,
    /// The source the binaries are built from (commit, and a hash of uncommitted changes).
    source: String,
}

/// The settings file in a study's folder.
const STUDY_FILE: &str = "study.json";

/// The `run` arguments alone, to check the study's before anything is built.
#[derive(clap::Parser)]
#[command(name = "timerbench run", no_binary_name = true)]
struct RunLine {
    #[command(flatten)]
    args: run::Args,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let folder = args
        .out
        .clone()
        .unwrap_or_else(|| crate::folders::free_folder("layouts-"));
    if args.summarize {
        summary::summarize(&folder)?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(builds) = args.builds else {
        bail!("--builds K is required (or --summarize)");
    };
    let planned = planned_cells(&args.run_arguments)?;
    let toolchain = build::find_toolchain()?;
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create the study folder {}", folder.display()))?;
    let study = open_study(&folder, builds, args)?;
    eprintln!(
        "timerbench layouts: {builds} layouts of `timerbench run {}` ({} cells each) in {}",
        args.run_arguments.join(" "),
        planned.len(),
        folder.display()
    );
    let binaries: Vec<PathBuf> = (0..builds)
        .map(|layout| layout_binary(&folder, layout))
        .collect();
    let mut built = 0;
    for (layout, binary) in (0..builds).zip(&binaries) {
        if build_unless_built(binary, &study, &toolchain, layout)? {
            built += 1;
        }
    }
    if built > 0 {
        eprintln!("timerbench layouts: building target/release/timerbench as usual again");
        build::restore_ordinary_build(&toolchain)?;
    }
    check_distinct(&binaries)?;
    let mut failed = Vec::new();
    for (layout, binary) in (0..builds).zip(&binaries) {
        if !run_layout(
            &folder,
            layout,
            builds,
            binary,
            &args.run_arguments,
            &planned,
        )? {
            failed.push(layout.to_string());
        }
    }
    summary::summarize(&folder)?;
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "timerbench layouts: the runs of layouts {} ended with failed cells or errors \
             (their output is above); the summary holds the cells with figures",
            failed.join(", ")
        );
        Ok(ExitCode::FAILURE)
    }
}

/// Checks `words` as `timerbench run` would, before anything is built, and gives the
/// cells they plan.
fn planned_cells(words: &[String]) -> anyhow::Result<BTreeSet<timerbench_results::CellKey>> {
    for word in words {
        let flag = word.split('=').next().unwrap_or(word);
        if flag == "--out" || flag == "--resume" {
            bail!(
                "the run arguments after `--` hold {flag}: each layout's run goes to \
                 DIR/layout-K (choose DIR with `timerbench layouts --out DIR`)"
            );
        }
    }
    let parsed = <RunLine as clap::Parser>::try_parse_from(words).map_err(|error| {
        let message = error.to_string();
        let first = message
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        anyhow!("the run arguments after `--`: {first}")
    })?;
    let planned = Planned::new(&parsed.args, &SuiteFile::standard())
        .context("the run arguments after `--`")?;
    Ok(planned.definitions().into_iter().map(|d| d.key).collect())
}

/// The study's settings: those of `folder`'s study, which must agree with `args`, or new
/// ones; written (with `builds`) before anything is built.
fn open_study(folder: &Path, builds: u32, args: &Args) -> anyhow::Result<Study> {
    let path = folder.join(STUDY_FILE);
    let mut study = Study {
        builds,
        first_seed: args.first_seed,
        shuffle: build::SHUFFLE_FLAG.to_string(),
        run_arguments: args.run_arguments.clone(),
        source: build::source_identity(),
    };
    if path.exists() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let recorded: Study = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a study's settings", path.display()))?;
        let differs = [
            ("--first-seed", recorded.first_seed != study.first_seed),
            ("the shuffle", recorded.shuffle != study.shuffle),
            (
                "the run arguments",
                recorded.run_arguments != study.run_arguments,
            ),
        ];
        if let Some((what, _)) = differs.iter().find(|(_, differs)| *differs) {
            bail!(
                "{} holds a study with other settings ({what}: not the same; it has \
                 --first-seed {}, run arguments `{}`); give the same settings to go on with \
                 it, or another --out",
                folder.display(),
                recorded.first_seed,
                recorded.run_arguments.join(" ")
            );
        }
        study.source = recorded.source;
    } else if layout_folder(folder, 0).exists() || folder.join("bin").exists() {
        bail!(
            "{} holds layouts but no {STUDY_FILE}: not a study of `timerbench layouts`; \
             give another --out",
            folder.display()
        );
    }
    let text = serde_json::to_string_pretty(&study)? + "\n";
    timerbench_results::write_atomically(&path, text.as_bytes())?;
    Ok(study)
}

/// Where the study keeps the binary of `layout`.
fn layout_binary(folder: &Path, layout: u32) -> PathBuf {
    folder
        .join("bin")
        .join(format!("timerbench-layout-{layout}"))
}

/// Builds the binary of `layout` unless the study holds it already; whether it built.
fn build_unless_built(
    binary: &Path,
    study: &Study,
    toolchain: &build::Toolchain,
    layout: u32,
) -> anyhow::Result<bool> {
    let seed = (layout > 0).then(|| study.first_seed + layout - 1);
    let what = seed.map_or("unshuffled".to_string(), |seed| format!("seed {seed}"));
    if binary.is_file() {
        eprintln!(
            "timerbench layouts: layout {layout} ({what}) built already: {}",
            binary.display()
        );
        return Ok(false);
    }
    let source = build::source_identity();
    if source != study.source {
        bail!(
            "layout {layout} is not built yet, and the source is not the one the study's \
             layouts were built from ({} then, {source} now): its figures would mix two \
             sources; restore that source, or start the study afresh with another --out",
            study.source
        );
    }
    eprintln!(
        "timerbench layouts: building layout {layout} of {} ({what})",
        study.builds
    );
    build::build_layout(toolchain, layout, seed, binary)?;
    Ok(true)
}

/// Refuses two byte-identical layouts: the shuffle did not reach the linker.
fn check_distinct(binaries: &[PathBuf]) -> anyhow::Result<()> {
    let mut seen: Vec<(String, &PathBuf)> = Vec::new();
    for binary in binaries {
        let hash = build::sha256(binary)?;
        if let Some((_, twin)) = seen.iter().find(|(h, _)| *h == hash) {
            bail!(
                "{} and {} are the same binary: the layout's link flags did not take effect \
                 (delete the study's bin/ folder and build again)",
                twin.display(),
                binary.display()
            );
        }
        eprintln!(
            "timerbench layouts: {}: sha256 {}",
            binary.display(),
            &hash[..16]
        );
        seen.push((hash, binary));
    }
    Ok(())
}

/// Runs layout `layout`'s `timerbench run` into its folder: afresh, continued (`--resume`)
/// when the folder holds some of its cells, or not at all when it holds every planned
/// cell. Its output goes to standard error, so that standard output holds the summary.
/// Whether it ended well.
fn run_layout(
    folder: &Path,
    layout: u32,
    builds: u32,
    binary: &Path,
    run_arguments: &[String],
    planned: &BTreeSet<timerbench_results::CellKey>,
) -> anyhow::Result<bool> {
    let out = layout_folder(folder, layout);
    let recorded: BTreeSet<_> = recorded_so_far(&out)?.into_iter().map(|r| r.key).collect();
    if !recorded.is_empty() && planned.is_subset(&recorded) {
        eprintln!("timerbench layouts: layout {layout} of {builds}: complete, not run again");
        return Ok(true);
    }
    let mut command = Command::new(binary);
    command.arg("run");
    if recorded.is_empty() {
        eprintln!(
            "timerbench layouts: layout {layout} of {builds}: running into {}",
            out.display()
        );
        command.args(run_arguments).arg("--out").arg(&out);
    } else {
        eprintln!(
            "timerbench layouts: layout {layout} of {builds}: continuing {} ({} of {} cells \
             recorded)",
            out.display(),
            recorded.len(),
            planned.len()
        );
        command.arg("--resume").arg(&out);
    }
    let stdout = std::io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .context("cannot pass standard error to the run")?;
    let status = command
        .stdout(Stdio::from(stdout))
        .status()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    if !status.success() {
        eprintln!(
            "timerbench layouts: layout {layout}'s run ended with {status}; the study goes on"
        );
    }
    Ok(status.success())
}
