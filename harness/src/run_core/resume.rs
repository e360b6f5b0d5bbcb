//! `--resume DIR`: the run in DIR continued with the settings it was started with.
//!
//! The folder records its command (`environment.json`, `command`). Resuming reads the
//! suite, files, sizes, filters, implementations and sampling from it, so that
//! `timerbench run --resume DIR` alone continues exactly that run; a flag given beside
//! `--resume` must agree with the recorded one, or it is one clear error before anything
//! runs (a run of another suite into the same folder would mix two plans). The files are
//! read again from their recorded paths, and one whose hash is not the one DIR's records
//! hold is refused (`files::check_recorded`).

use super::Args;
use anyhow::{Context, anyhow, bail};
use std::path::Path;
use timerbench_results::{ENVIRONMENT_FILE, RESULTS_FILE, read_environment};

/// The `run` arguments alone, to parse a recorded command with.
#[derive(clap::Parser)]
#[command(name = "timerbench run")]
struct Recorded {
    #[command(flatten)]
    args: Args,
}

/// The settings of the run in `folder`, checked against `given` (this command's, whose
/// explicitly typed long flags are `flags`).
pub(super) fn settings_of(folder: &Path, given: &Args, flags: &[String]) -> anyhow::Result<Args> {
    if !folder.join(RESULTS_FILE).exists() {
        bail!(
            "--resume {}: no {RESULTS_FILE} there to resume",
            folder.display()
        );
    }
    let environment_path = folder.join(ENVIRONMENT_FILE);
    let environment = read_environment(&environment_path)?;
    let command = environment.command;
    let words: Vec<&str> = command.split_whitespace().collect();
    let run = words
        .iter()
        .position(|word| *word == "run")
        .ok_or_else(|| {
            anyhow!(
                "{}: `command` is not a `run`: `{command}`",
                environment_path.display()
            )
        })?;
    let recorded = <Recorded as clap::Parser>::try_parse_from(&words[run..])
        .map(|parsed| parsed.args)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| {
            format!(
                "{}: cannot read the run's command `{command}` to resume it",
                environment_path.display()
            )
        })?;
    let agreements = [
        ("--suite", given.suite == recorded.suite),
        ("--file", given.files == recorded.files),
        ("--workload", given.workloads == recorded.workloads),
        ("--timers", given.timers == recorded.timers),
        ("--impl", given.selection == recorded.selection),
        ("--engine", given.engines == recorded.engines),
        ("--peers", given.selection == recorded.selection),
        ("--repeat", given.repeat == recorded.repeat),
        (
            "--min-sample-ms",
            given.min_sample_ms == recorded.min_sample_ms,
        ),
        ("--processes", given.processes == recorded.processes),
        (
            "--processes-at-1m",
            given.processes_at_1m == recorded.processes_at_1m,
        ),
        ("--floor", given.floor == recorded.floor),
        (
            "--max-processes",
            given.max_processes == recorded.max_processes,
        ),
        ("--timeout", given.timeout == recorded.timeout),
        ("--shard", given.shard == recorded.shard),
        ("--host-label", given.host_label == recorded.host_label),
        ("--counts", given.counts == recorded.counts),
        (
            "--cache-geometry",
            given.cache_geometry == recorded.cache_geometry,
        ),
        (
            "--counts-limit",
            given.counts_limit == recorded.counts_limit,
        ),
    ];
    for (flag, agrees) in agreements {
        if !agrees && flags.iter().any(|f| f == flag) {
            bail!(
                "{flag} contradicts the run in {}, started as `{command}`: --resume continues \
                 it with its own settings; leave {flag} out, or start a new run with --out",
                folder.display()
            );
        }
    }
    Ok(Args {
        resume: given.resume.clone(),
        out: None,
        inject_panic: given.inject_panic.clone(),
        // How many count at once changes no record: this command's, or the default.
        jobs: given.jobs,
        plan: given.plan,
        shard_count: given.shard_count,
        ..recorded
    })
}

/// The long flags this process was given (`--suite`, ...), as typed, for `--resume` to
/// tell a flag given from a default.
pub(super) fn given_flags() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|word| word.starts_with("--"))
        .map(|word| word.split('=').next().unwrap_or(&word).to_string())
        .collect()
}
