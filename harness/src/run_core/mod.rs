//! The core of `timerbench run` (its flags, its plan and its loop), beside `cmd/` because
//! `run`, `layouts` and `reproduce` all run through it: the main job. Runs a suite of
//! workloads through the implementations, one cell (workload, size, implementation) at a
//! time, each in its own child process with a time limit, and appends each finished cell
//! to the results at once.
//!
//! The steps:
//!
//! 1. Check every flag and name, read and check every workload file (`--file`,
//!    [`files`]), and plan the cells ([`plan`]), before anything runs or is created.
//! 2. Generate the workloads the cells need, in parallel (rayon), each checked by the
//!    reference model; cache them by their generator command in `results/.cache`, so
//!    a later run reuses them.
//! 3. Run the cells in turn. Each is `timerbench cell` in a child process, handed a
//!    [`CellSpec`] on its standard input; it verifies the replay against the reference
//!    outcome before it times anything and answers with one [`CellRecord`]. A panic, an
//!    abort, a kill (out of memory) or the time limit marks the cell failed with its reason,
//!    and the run goes on.
//! 4. Write `summary.csv` and the HTML report (`report.html`) from all the records.
//!
//! A workload file is a workload like the suite's: its cells are planned, grouped and
//! measured the same way; only where it comes from differs (read and hashed instead of
//! generated, its shape written to the folder's `workloads.json`).
//!
//! `--resume DIR` skips the cells `DIR/results.jsonl` already holds, so an interrupted run
//! loses nothing it finished.
//!
//! `timerbench reproduce` runs each experiment through [`Planned`] too, handing it the
//! records of cells an earlier experiment measured: they are copied into the folder
//! before step 2 and not measured again.
//!
//! The folder's files are read and written by the results crate (`timerbench-results`),
//! the report by the report crate; here are the plan and the loop, with the workload cache
//! ([`cache`]), the child processes ([`child`]) and the progress display ([`progress`], its
//! time left learned in [`estimate`]) in
//! modules of their own.

mod cache;
mod child;
mod counts;
pub(crate) mod engines;
mod estimate;
mod files;
mod finish;
mod group;
mod memory_probe;
mod plan;
mod progress;
mod resume;
mod shard;

use crate::counts_core;
use crate::engines::Engine;
use crate::environment;
use crate::folders::{free_folder, free_folder_with};
use crate::schema::{CellDefinition, CellKey, CellRecord, Status};
use crate::selection::Selection;
use anyhow::{Context, bail};
use cache::case_id;
use files::is_file;
use finish::finish;
use plan::{Cell, StructureCell};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use timerbench_results::{Appender, recorded_so_far, write_environment};
use timerbench_workloads::suite::{Case, LEVELS, SuiteFile};

/// Run a suite: every workload at every size through every implementation, verified,
/// then timed (throughput, latency, memory). The main job.
#[derive(clap::Args, Clone)]
pub struct Args {
    /// The suite: `smoke` (every family at about 10k timers, under a minute), `default`
    /// (1k, 100k and 1M timers), or `full` (adds 10M where it is studied). Default:
    /// `default`, or none with --file (give --suite or --workload to add suite workloads).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(LEVELS))]
    suite: Option<String>,
    /// Also measure this workload file (repeatable): verified, timed, latency and memory
    /// like a suite workload, named by its @name (else its file stem), its size its peak
    /// of pending timers. With --file alone the run holds only the files.
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    selection: Selection,
    /// Only this suite workload (repeatable; default: all; see `timerbench list`).
    #[arg(long = "workload", value_name = "NAME")]
    workloads: Vec<String>,
    /// Also run the floor beside the implementations: not a queue, only the bookkeeping any
    /// queue that fires does (an arena slot per start, freed on stop and on firing, what
    /// fires read from a list recorded before the timed part), never verified, so that
    /// every figure can be read as a multiple of it.
    #[arg(long)]
    floor: bool,
    /// Also run this engine (repeatable, or a comma-separated list) beside the
    /// implementations, on the same workloads and sizes: another runtime's timers through
    /// the engine protocol (docs/engines.md). `go-runtime`, `jdk-scheduled-executor` and
    /// `netty-hashed-wheel` run only on `start-stop` (their microbenchmark); a missing
    /// toolchain makes its cells `unsupported` with the package to install.
    #[arg(long = "engine", value_name = "NAME", value_delimiter = ',')]
    engines: Vec<String>,
    /// Test hook: run the shell script SCRIPT in place of ENGINE's build (repeatable).
    #[arg(long = "engine-script", value_name = "ENGINE=SCRIPT", hide = true)]
    engine_scripts: Vec<String>,
    /// Run at this number of timers instead of the suite's sizes (repeatable).
    #[arg(long = "timers", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    timers: Vec<u64>,
    /// Timed samples per process of a cell (so `--repeat` × `--processes` in all), after
    /// a warm-up replay that also verifies; at most 2 when one replay takes half a second
    /// or more.
    #[arg(conflicts_with = "counts", long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// The least time one timed sample runs, milliseconds: it repeats the replay until
    /// then, so that a small workload is timed over many replays, not one short reading.
    #[arg(
        conflicts_with = "counts",
        long,
        value_name = "MS",
        default_value_t = 10
    )]
    min_sample_ms: u64,
    /// Processes that take each cell's samples (each verifies on its own), interleaved
    /// with the other implementations' in rotating order; the figure is the median over
    /// all their samples, and the spread between processes is recorded.
    #[arg(conflicts_with = "counts", long, value_name = "P", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    processes: u32,
    /// Processes per cell in the groups of 1M timers or more, in place of --processes: at
    /// that size a whole run moves against another while a cell's processes agree within
    /// a few percent (METHODOLOGY.md, *Processes and extra processes*), so a third process
    /// buys little for the time a 1M replay takes.
    #[arg(conflicts_with = "counts", long = "processes-at-1m", value_name = "P", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    processes_at_1m: u32,
    /// The most processes a cell takes: after the first P, a cell below 1M timers whose
    /// process medians still differ by more than 2% (their MAD over their median) and
    /// whose replay takes under half a second takes more, one round at a time, up to this
    /// many (at least P).
    #[arg(conflicts_with = "counts", long, value_name = "N", default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..))]
    max_processes: u32,
    /// A study switch, off (0) by default: the groups (one workload at one size) with at
    /// least this many timers are measured last, together: every group's first process,
    /// then every group's second, and so on, so that each cell's processes are spread over
    /// the whole block rather than a few minutes of it. It made two runs agree no better at
    /// 1M than without it (METHODOLOGY.md, *Between runs at 1M*). A block's records are
    /// written when the whole block is done, so an interrupted run resumes it from its start.
    #[arg(
        conflicts_with = "counts",
        long,
        value_name = "TIMERS",
        default_value_t = 0
    )]
    spread_from: u64,
    /// The results folder (default: results/<date>-<host>-<git rev>). The workload cache
    /// stays in results/.cache whatever DIR is, shared by every run.
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    out: Option<PathBuf>,
    /// Continue the run in DIR, skipping the cells it already holds: with the suite,
    /// filters, implementations and settings DIR's run was started with (a flag given
    /// beside it must agree with them).
    #[arg(long, value_name = "DIR")]
    resume: Option<PathBuf>,
    /// Time limit per cell, seconds.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Count instead of time: each cell's lines after the fill replayed once under
    /// Valgrind's Callgrind (instructions, simulated cache and branch misses per line),
    /// after a verification; no samples, no latency or memory pass. Deterministic, so
    /// unmoved by the machine's load; slow (Valgrind), so two cells count at once (--jobs)
    /// and a cell estimated above --counts-limit is skipped with its estimate.
    #[arg(long)]
    counts: bool,
    /// With --counts: the simulated caches, `I1=SIZE,ASSOC,LINE:D1=...:LL=...` in bytes
    /// (a level left out keeps the default). Fixed rather than read from this host, so that
    /// two machines' counts of one build compare; recorded in each record.
    #[arg(requires = "counts", long, value_name = "LEVELS", default_value = crate::counts_core::DEFAULT_GEOMETRY_TEXT,
          value_parser = crate::counts_core::parse_geometry)]
    cache_geometry: timerbench_results::counts::CacheGeometry,
    /// With --counts: cells counted at once, one process each (default: the CPUs). A
    /// count does not depend on what else runs, so the cores can be shared.
    #[arg(requires = "counts", long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    jobs: Option<u64>,
    /// With --counts: the most seconds a cell's counting may be estimated to take; a cell
    /// above it is skipped with its estimate, never cut. The default lets the default
    /// suite's cells up to 100k timers through and skips its 1M ones.
    #[arg(requires = "counts", long, value_name = "SECONDS", default_value_t = counts::DEFAULT_LIMIT_SECONDS)]
    counts_limit: u64,
    /// Run only shard K of N (1-based: 1/3, 2/3, 3/3): the plan's cells split into N
    /// disjoint shards by a rule of the plan alone (the longest expected cell first, each
    /// into the least loaded shard), so every host splits it alike; the folder records the
    /// plan's digest and its shard, and `report`, `rank`, `combine` and `compare` given all
    /// N folders read them as one run (docs/scale-out.md).
    #[arg(long, value_name = "K/N", value_parser = timerbench_results::shards::Shard::parse)]
    shard: Option<timerbench_results::shards::Shard>,
    /// Print the plan (its digest, every cell with its shard and expected seconds, each
    /// shard's cells and expected time) and exit, running and writing nothing.
    #[arg(long)]
    plan: bool,
    /// With --plan: the shards to split the plan into (default: N of --shard, else 1).
    #[arg(long, value_name = "N", requires = "plan", conflicts_with = "shard",
          value_parser = clap::value_parser!(u32).range(1..))]
    shard_count: Option<u32>,
    /// Name this host in the results (`environment.json`'s `host_label`): readers tell
    /// hosts apart by it in place of the CPU model (the shards of a run on nodes of one
    /// model are one host), e.g. to set two machines of one model side by side, or to keep
    /// two runs of one plan on one machine apart.
    #[arg(long, value_name = "NAME")]
    host_label: Option<String>,
    /// Test hook: make the cell WORKLOAD/TIMERS/IMPL panic mid-measurement.
    #[arg(long, value_name = "CELL", hide = true)]
    inject_panic: Option<String>,
}

/// Runs the subcommand: plans, prepares the workloads, runs every cell, writes the summary
/// and the report.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let planned = Planned::new(args, &SuiteFile::standard())?;
    if planned.args.plan {
        let count = match (planned.args.shard_count, planned.args.shard) {
            (Some(count), _) => count,
            (None, Some(shard)) => shard.count,
            (None, None) => 1,
        };
        print!(
            "{}",
            shard::describe(&planned.args, &planned.cells, &planned.digest, count)
        );
        return Ok(ExitCode::SUCCESS);
    }
    planned.run(None, &[])
}

/// A run planned (step 1): its settings (those its folder was started with, for
/// `--resume`), its files read and checked, its cells; nothing created yet. `timerbench
/// reproduce` plans each experiment's own suite (its workloads and sizes) this way, to run
/// it through the same loop and records.
pub(crate) struct Planned {
    args: Args,
    inputs: Vec<files::FileInput>,
    /// The structures' cells, then the engines' ([`plan::plan`]): the whole plan, even
    /// with `--shard` (whose cells [`Planned::run`] picks).
    cells: Vec<Cell>,
    /// The plan's digest ([`shard::digest`]).
    digest: String,
}

impl Planned {
    /// Plans `args` over `suite`; one error naming the flag or file when anything is wrong.
    pub(crate) fn new(args: &Args, suite: &SuiteFile) -> anyhow::Result<Planned> {
        let args = match &args.resume {
            Some(folder) => resume::settings_of(folder, args, &resume::given_flags())?,
            None => args.clone(),
        };
        // Every file is read and checked before anything is created.
        let inputs = files::read_all(&args.files)?;
        let cells = plan::plan(&args, suite, &inputs)?;
        let digest = shard::digest(&args, &cells);
        Ok(Planned {
            args,
            inputs,
            cells,
            digest,
        })
    }

    /// Each planned cell's definition, in the plan's order (the engine cells last).
    pub(crate) fn definitions(&self) -> Vec<CellDefinition> {
        self.cells.iter().map(Cell::definition).collect()
    }

    /// Runs the plan (steps 2 to 4). `command`, when given, is recorded in
    /// `environment.json` instead of this process's command line (`reproduce`: the command
    /// that makes the experiment's folder again). `copied` are records of planned cells an
    /// earlier run measured (`reproduce`: an earlier experiment, with the same settings):
    /// appended as they are, not measured again; with every cell copied, no workload is
    /// prepared and no cell process started.
    pub(crate) fn run(
        &self,
        command: Option<&str>,
        copied: &[CellRecord],
    ) -> anyhow::Result<ExitCode> {
        let Planned {
            args,
            inputs,
            cells,
            digest,
        } = self;
        // The shard's cells (with --shard), in the plan's order.
        let cells: Vec<&Cell> = cells
            .iter()
            .zip(shard::members(cells, args.shard))
            .filter_map(|(cell, mine)| mine.then_some(cell))
            .collect();
        // Valgrind is found and checked before anything is written.
        let valgrind = match args.counts {
            true => match counts::check(args)? {
                Some(valgrind) => Some(valgrind),
                None => {
                    eprintln!("timerbench: error: {}", counts_core::NO_VALGRIND);
                    return Ok(ExitCode::from(counts_core::NO_VALGRIND_EXIT));
                }
            },
            false => None,
        };
        let folder = match (&args.resume, &args.out) {
            // Checked by `resume::settings_of`.
            (Some(folder), _) => folder.clone(),
            (None, Some(folder)) => folder.clone(),
            (None, None) if args.counts => free_folder_with("", counts::FOLDER_SUFFIX),
            (None, None) => free_folder(""),
        };
        std::fs::create_dir_all(&folder)
            .with_context(|| format!("cannot create the results folder {}", folder.display()))?;
        let recorded = recorded_so_far(&folder)?;
        if args.resume.is_some() {
            files::check_recorded(inputs, &recorded, &folder)?;
        }
        let mut done: BTreeSet<CellKey> = recorded.into_iter().map(|r| r.key).collect();
        if args.resume.is_none() {
            if !done.is_empty() {
                bail!(
                    "{} already holds results; use --resume {} to continue it, or another --out",
                    folder.display(),
                    folder.display()
                );
            }
            let sampling = environment::Sampling {
                repeat: args.repeat,
                processes: args.processes,
                processes_at_1m: args.processes_at_1m,
                min_sample_ms: args.min_sample_ms,
                max_processes: args.max_processes.max(args.processes),
                spread_from: args.spread_from,
            };
            let mut environment = environment::capture(&suite_word(args), sampling, args.timeout);
            if let Some(command) = command {
                environment.command = command.to_string();
            }
            environment.plan = Some(digest.clone());
            environment.shard = args.shard;
            environment.host_label.clone_from(&args.host_label);
            write_environment(&folder, &environment)?;
        }
        files::record(inputs, &folder)?;
        let mut results = Appender::open(&folder)?;
        let planned: BTreeSet<CellKey> = cells.iter().map(|c| c.key()).collect();
        let mut copies = 0;
        for record in copied {
            if planned.contains(&record.key) && done.insert(record.key.clone()) {
                results.append(record)?;
                copies += 1;
            }
        }
        let todo: Vec<&Cell> = cells
            .iter()
            .copied()
            .filter(|c| !done.contains(&c.key()))
            .collect();
        let total = cells.len();
        if todo.is_empty() && copies > 0 {
            println!(
                "{}: all {copies} cells copied from an earlier run, none measured",
                folder.display()
            );
            return finish(&folder, &results, 0, args.shard);
        }
        println!(
            "timerbench run{} --suite {}{}{}: {} cells ({} already done{}), results in {}",
            if args.counts { " --counts" } else { "" },
            suite_word(args),
            match args.shard {
                Some(shard) => format!(" --shard {shard} of plan {digest}"),
                None => String::new(),
            },
            match inputs.len() {
                0 => String::new(),
                1 => " and 1 file".to_string(),
                n => format!(" and {n} files"),
            },
            total,
            total - todo.len() - copies,
            if copies > 0 {
                format!(", {copies} copied from an earlier run")
            } else {
                String::new()
            },
            folder.display()
        );
        let not_ok = match &valgrind {
            Some(valgrind) => counts::measure(args, valgrind, inputs, &todo, &mut results)?,
            None => measure(args, inputs, &todo, &mut results)?,
        };
        finish(&folder, &results, not_ok, args.shard)
    }
}

/// Steps 2 and 3: prepares the workloads of `todo` and measures its cells into `results`,
/// the structures' in groups, then the engines'; gives the number that failed (not
/// counting those left out by design).
fn measure(
    args: &Args,
    inputs: &[files::FileInput],
    todo: &[&Cell],
    results: &mut Appender,
) -> anyhow::Result<usize> {
    let cache_folder = cache::folder();
    let prepared = prepare(todo, inputs, &cache_folder)?;

    let structures: Vec<StructureCell> = todo.iter().filter_map(|cell| cell.structure()).collect();
    let engine_cells: Vec<(&Cell, &'static Engine)> = todo
        .iter()
        .filter_map(|cell| Some((*cell, cell.engine()?)))
        .collect();
    let planned = structures
        .iter()
        .map(|StructureCell { cell, structure }| estimate::CellShape {
            workload: cell.key().workload,
            implementation: cell.key().implementation,
            timers: cell.key().timers,
            lines: prepared[&case_id(&cell.case)].reference.operations,
            skipped: structure.skip.is_some(),
        })
        .collect();
    let progress = progress::Progress::new(planned);
    let settings = group::Settings {
        sampling: child::Sampling {
            repeat: args.repeat,
            min_sample: Duration::from_millis(args.min_sample_ms),
        },
        processes: args.processes,
        max_processes: args.max_processes.max(args.processes),
        limit: Duration::from_secs(args.timeout),
        inject_panic: args.inject_panic.clone(),
    };
    // The plan lists each (workload, size)'s implementations together: one group each.
    // The groups at `--spread-from` timers or more are measured last, as one block whose
    // rounds are spread over all of them (`group::measure_block`).
    let spread = |cells: &[StructureCell]| {
        args.spread_from > 0 && cells[0].cell.key().timers >= args.spread_from
    };
    let groups: Vec<&[StructureCell]> = structures
        .chunk_by(|a, b| case_id(&a.cell.case) == case_id(&b.cell.case))
        .collect();
    let (spread_groups, alone): (Vec<&[StructureCell]>, Vec<&[StructureCell]>) =
        groups.into_iter().partition(|cells| spread(cells));
    let mut blocks: Vec<Vec<&[StructureCell]>> =
        alone.into_iter().map(|cells| vec![cells]).collect();
    if !spread_groups.is_empty() {
        blocks.push(spread_groups);
    }
    let mut not_ok = 0;
    let mut first = 0;
    for block in blocks {
        let block_first = first;
        let large = block
            .iter()
            .all(|cells| group::is_large(cells[0].cell.key().timers));
        let groups = block
            .into_iter()
            .map(|cells| {
                let workload = &prepared[&case_id(&cells[0].cell.case)];
                let group = group::Group::new(cells, workload, first);
                first += cells.len();
                group
            })
            .collect();
        let settings = group::Settings {
            processes: if large {
                args.processes_at_1m
            } else {
                args.processes
            },
            ..settings.clone()
        };
        progress.start_block(block_first);
        // The block's processes are all waited for when it returns: their CPU is ours,
        // and what else the machine did over the block is the others'.
        let window = crate::machine_load::Window::start();
        let mut records = group::measure_block(groups, &settings, &progress);
        let others_load = window.end();
        warn_of_load(others_load.as_ref(), records.iter().flatten());
        for record in records.iter_mut().flatten() {
            record.others_load.clone_from(&others_load);
        }
        progress.finish_block(block_first, records.iter().flatten());
        for record in records.into_iter().flatten() {
            results.append(&record)?;
            if record.status != Status::Ok && !record.status.left_out() {
                not_ok += 1;
            }
        }
    }
    not_ok += measure_engines(args, &engine_cells, &prepared, &cache_folder, results)?;
    progress.done();
    Ok(not_ok)
}

/// Warns when other processes competed for the cores while a block of cells was measured,
/// naming its cells (the first and how many more).
fn warn_of_load<'r>(
    load: Option<&timerbench_results::load::OthersLoad>,
    records: impl Iterator<Item = &'r CellRecord>,
) {
    let names: Vec<String> = records.map(|r| cell_name(&r.key)).collect();
    let what = match names.as_slice() {
        [] => return,
        [one] => one.clone(),
        [first, rest @ ..] => format!(
            "{first} and {} other cell{}",
            rest.len(),
            if rest.len() == 1 { "" } else { "s" }
        ),
    };
    if let Some(warning) = load.and_then(|l| crate::machine_load::warning(l, &what)) {
        println!("  {warning}");
    }
}

/// The workloads of `todo`'s cells, generated or taken from the cache in `cache_folder`,
/// and the workload files of `inputs`: by case id.
fn prepare(
    todo: &[&Cell],
    inputs: &[files::FileInput],
    cache_folder: &Path,
) -> anyhow::Result<std::collections::BTreeMap<String, cache::Prepared>> {
    let cases: Vec<&Case> = todo
        .iter()
        .map(|cell| &cell.case)
        .filter(|case| !is_file(case))
        .collect();
    let mut prepared = cache::prepare_workloads(&cases, cache_folder)?;
    prepared.extend(files::prepare(inputs, cache_folder)?);
    Ok(prepared)
}

/// The engine cells, after every Rust cell, each with the processes of a Rust cell of its
/// size; gives the number that failed.
fn measure_engines(
    args: &Args,
    todo: &[(&Cell, &'static Engine)],
    prepared: &std::collections::BTreeMap<String, cache::Prepared>,
    cache_folder: &Path,
    results: &mut Appender,
) -> anyhow::Result<usize> {
    let mut not_ok = 0;
    let mut built = engines::Engines::new(args, cache_folder)?;
    for &(cell, engine) in todo {
        let processes = if group::is_large(cell.case.spec.timers) {
            args.processes_at_1m
        } else {
            args.processes
        };
        let settings = engines::Settings::of(args, processes);
        let workload = &prepared[&case_id(&cell.case)];
        let record = engines::measure(cell, engine, workload, &settings, &mut built);
        // The exchange (process and runtime start included) is the protocol's cost, shown
        // beside the engine's own figure and never mistaken for it.
        let exchange = record
            .engine
            .as_ref()
            .map(|e| e.median_exchange_seconds())
            .filter(|s| s.is_finite())
            .map_or(String::new(), |s| format!(", exchange {:.0} ms", s * 1e3));
        println!(
            "  {} (engine): {}{}{exchange}",
            cell_name(&record.key),
            record.status.as_str(),
            match &record.throughput {
                Some(t) => format!(", {:.1} ns/op", t.ns_per_op.median),
                None => String::new(),
            }
        );
        results.append(&record)?;
        if record.status != Status::Ok && !record.status.left_out() {
            not_ok += 1;
        }
    }
    Ok(not_ok)
}

/// The suite level of the run: `--suite`, else `default`, or `none` for a run of files
/// only.
fn suite_word(args: &Args) -> String {
    match &args.suite {
        Some(level) => level.clone(),
        None if with_suite(args) => "default".to_string(),
        None => "none".to_string(),
    }
}

/// Whether the run holds suite workloads: always without --file; with it, only when
/// --suite or --workload asks for them.
fn with_suite(args: &Args) -> bool {
    args.files.is_empty() || args.suite.is_some() || !args.workloads.is_empty()
}

/// `WORKLOAD/TIMERS/IMPL`.
fn cell_name(key: &CellKey) -> String {
    format!("{}/{}/{}", key.workload, key.timers, key.implementation)
}
