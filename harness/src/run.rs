//! `timerbench run`: the main job. Runs a suite of workloads through the implementations,
//! one cell (workload, size, implementation) at a time, each in its own child process with
//! a time limit, and appends each finished cell to the results at once.
//!
//! The steps:
//!
//! 1. Check every flag and name, and plan the cells, before anything runs.
//! 2. Generate the workloads the cells need, in parallel (rayon), each checked by the
//!    reference model; cache them by their generator command beside the results folder, so
//!    a later run reuses them.
//! 3. Run the cells in turn. Each is `timerbench cell` in a child process, handed a
//!    [`CellSpec`] on its standard input; it verifies the replay against the reference
//!    outcome before it times anything and answers with one [`CellRecord`]. A panic, an
//!    abort, a kill (out of memory) or the time limit marks the cell failed with its reason,
//!    and the run goes on.
//! 4. Write `summary.csv` and the HTML report (`report.html`) from all the records.
//!
//! `--resume DIR` skips the cells `DIR/results.jsonl` already holds, so an interrupted run
//! loses nothing it finished.

use crate::environment;
use crate::schema::{CellKey, CellRecord, CellSpec, Status, SummaryRow};
use crate::selection::Selection;
use crate::table::duration;
use anyhow::{Context, anyhow, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, IsTerminal, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use timerbench_workloads::families::{GENERATORS_REVISION, command_line, generate};
use timerbench_workloads::reference::Summary;
use timerbench_workloads::suite::{Case, LEVELS, SuiteFile};
use timerbench_workloads::{compile, writer};

/// Run a suite: every workload at every size through every implementation, verified,
/// then timed (throughput, latency, memory). The main job.
#[derive(clap::Args)]
pub struct Args {
    /// The suite: `smoke` (every family at about 10k timers, under a minute), `default`
    /// (1k, 100k and 1M timers), or `full` (adds 10M where it is studied).
    #[arg(long, default_value = "default", value_parser = clap::builder::PossibleValuesParser::new(LEVELS))]
    suite: String,
    #[command(flatten)]
    selection: Selection,
    /// Only this suite workload (repeatable; default: all; see `timerbench list`).
    #[arg(long = "workload", value_name = "NAME")]
    workloads: Vec<String>,
    /// Run at this number of timers instead of the suite's sizes (repeatable).
    #[arg(long = "timers", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    timers: Vec<u64>,
    /// Timed repeats per cell, after a warm-up replay that also verifies.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// The results folder (default: results/<date>-<host>-<git rev>).
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    out: Option<PathBuf>,
    /// Continue the run in DIR, skipping the cells it already holds.
    #[arg(long, value_name = "DIR")]
    resume: Option<PathBuf>,
    /// Time limit per cell, seconds.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Test hook: make the cell WORKLOAD/TIMERS/IMPL panic mid-measurement.
    #[arg(long, value_name = "CELL", hide = true)]
    inject_panic: Option<String>,
}

/// One planned cell: its case (what to generate) and its implementation.
struct Cell {
    case: Case,
    implementation: String,
}

impl Cell {
    fn key(&self) -> CellKey {
        CellKey {
            workload: self.case.workload.clone(),
            timers: self.case.spec.timers,
            implementation: self.implementation.clone(),
        }
    }
}

/// A generated, checked workload on disk.
struct Prepared {
    path: PathBuf,
    reference: Summary,
}

/// What the cache keeps beside each workload file.
#[derive(serde::Serialize, serde::Deserialize)]
struct CacheEntry {
    generator: String,
    revision: u32,
    reference: Summary,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let suite = SuiteFile::standard();
    let cells = plan(args, &suite)?;
    let folder = match (&args.resume, &args.out) {
        (Some(folder), _) => {
            if !folder.join("results.jsonl").exists() {
                bail!(
                    "--resume {}: no results.jsonl there to resume",
                    folder.display()
                );
            }
            folder.clone()
        }
        (None, Some(folder)) => folder.clone(),
        (None, None) => default_folder()?,
    };
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create the results folder {}", folder.display()))?;
    let results_path = folder.join("results.jsonl");
    let done = finished_cells(&results_path)?;
    if args.resume.is_none() {
        if !done.is_empty() {
            bail!(
                "{} already holds results; use --resume {} to continue it, or another --out",
                folder.display(),
                folder.display()
            );
        }
        let environment = environment::capture(&args.suite, args.repeat, args.timeout);
        write_json(&folder.join("environment.json"), &environment)?;
    }
    let todo: Vec<&Cell> = cells.iter().filter(|c| !done.contains(&c.key())).collect();
    println!(
        "timerbench run --suite {}: {} cells ({} already done), results in {}",
        args.suite,
        cells.len(),
        cells.len() - todo.len(),
        folder.display()
    );

    let cache = cache_folder(&folder);
    let prepared = prepare_workloads(&todo, &cache)?;

    let mut results = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results_path)
        .with_context(|| format!("cannot open {}", results_path.display()))?;
    let progress = Progress::new(todo.len() as u64);
    let mut not_ok = 0;
    for (index, cell) in todo.iter().enumerate() {
        let key = cell.key();
        let label = format!("{} {} {}", key.workload, key.timers, key.implementation);
        progress.start(index, &label);
        let workload = &prepared[&case_id(&cell.case)];
        let inject = args.inject_panic.as_deref() == Some(&cell_name(&key));
        let record = run_cell(
            cell,
            workload,
            args.repeat,
            Duration::from_secs(args.timeout),
            inject,
        );
        let line = serde_json::to_string(&record).expect("records serialise");
        results
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| results.sync_data())
            .with_context(|| format!("cannot append to {}", results_path.display()))?;
        if record.status != Status::Ok {
            not_ok += 1;
        }
        progress.finish_cell(index, &label, &record);
    }
    progress.done();

    let records = read_records(&results_path)?;
    write_summary_csv(&folder.join("summary.csv"), &records)?;
    let report = folder.join("report.html");
    crate::report::write_report(std::slice::from_ref(&folder), &report, None)?;
    println!("report: {}", report.display());
    let failed: Vec<&CellRecord> = records.iter().filter(|r| r.status != Status::Ok).collect();
    println!(
        "{} cells recorded in {}: {} ok, {} not ok",
        records.len(),
        results_path.display(),
        records.len() - failed.len(),
        failed.len()
    );
    for record in &failed {
        println!(
            "  {}: {:?}: {}",
            cell_name(&record.key),
            record.status,
            record.reason.as_deref().unwrap_or("")
        );
    }
    Ok(if not_ok == 0 && failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The cells of the selected suite, checked against every filter.
fn plan(args: &Args, suite: &SuiteFile) -> anyhow::Result<Vec<Cell>> {
    let known: BTreeSet<&str> = suite.workloads.iter().map(|w| w.name.as_str()).collect();
    for name in &args.workloads {
        if !known.contains(name.as_str()) {
            bail!(
                "--workload {name}: no such workload in the suite (workloads: {})",
                known.iter().copied().collect::<Vec<_>>().join(", ")
            );
        }
    }
    let mut cases = suite.cases(&args.suite).map_err(|e| anyhow!(e))?;
    cases.retain(|c| args.workloads.is_empty() || args.workloads.contains(&c.workload));
    if !args.timers.is_empty() {
        // Replace each selected workload's sizes by the ones asked for.
        let mut resized = Vec::new();
        let mut seen = BTreeSet::new();
        for case in cases {
            if seen.insert(case.workload.clone()) {
                for &timers in &args.timers {
                    let mut case = case.clone();
                    case.spec.timers = timers;
                    resized.push(case);
                }
            }
        }
        cases = resized;
    }
    let implementations = args.selection.names();
    if let Some(target) = &args.inject_panic {
        let exists = cases.iter().any(|c| {
            implementations.iter().any(|i| {
                cell_name(&CellKey {
                    workload: c.workload.clone(),
                    timers: c.spec.timers,
                    implementation: i.to_string(),
                }) == *target
            })
        });
        if !exists {
            bail!("--inject-panic {target}: no such cell in this run");
        }
    }
    Ok(cases
        .iter()
        .flat_map(|case| {
            implementations.iter().map(move |name| Cell {
                case: case.clone(),
                implementation: name.to_string(),
            })
        })
        .collect())
}

/// `WORKLOAD/TIMERS/IMPL`.
fn cell_name(key: &CellKey) -> String {
    format!("{}/{}/{}", key.workload, key.timers, key.implementation)
}

/// The generator command of a case: its identity in the cache.
fn case_id(case: &Case) -> String {
    command_line(&case.family, &case.spec)
}

fn default_folder() -> anyhow::Result<PathBuf> {
    let date = chrono::Utc::now().format("%Y-%m-%d");
    let base = format!(
        "{date}-{}-{}",
        environment::host(),
        environment::git_revision()
    );
    let root = Path::new("results");
    let mut folder = root.join(&base);
    let mut n = 2;
    while folder.exists() {
        folder = root.join(format!("{base}-{n}"));
        n += 1;
    }
    Ok(folder)
}

/// Generated workloads are shared by the runs beside each other.
fn cache_folder(results: &Path) -> PathBuf {
    let parent = results.parent().filter(|p| !p.as_os_str().is_empty());
    parent.unwrap_or(Path::new(".")).join(".cache")
}

/// Generates (or finds in the cache) every workload the cells need, in parallel.
fn prepare_workloads(cells: &[&Cell], cache: &Path) -> anyhow::Result<BTreeMap<String, Prepared>> {
    let mut cases: BTreeMap<String, &Case> = BTreeMap::new();
    for cell in cells {
        cases.entry(case_id(&cell.case)).or_insert(&cell.case);
    }
    std::fs::create_dir_all(cache)
        .with_context(|| format!("cannot create the workload cache {}", cache.display()))?;
    let started = Instant::now();
    let prepared: Vec<anyhow::Result<(String, Prepared, bool)>> = cases
        .par_iter()
        .map(|(id, case)| {
            let (prepared, generated) = prepare(case, cache)?;
            Ok((id.clone(), prepared, generated))
        })
        .collect();
    let mut map = BTreeMap::new();
    let mut generated = 0;
    for result in prepared {
        let (id, workload, fresh) = result?;
        generated += usize::from(fresh);
        map.insert(id, workload);
    }
    if !map.is_empty() {
        println!(
            "{} workloads ready ({generated} generated, {} from the cache {}) in {}",
            map.len(),
            map.len() - generated,
            cache.display(),
            duration(started.elapsed())
        );
    }
    Ok(map)
}

/// One workload: from the cache if its entry matches, else generated, checked and stored.
fn prepare(case: &Case, cache: &Path) -> anyhow::Result<(Prepared, bool)> {
    let generator = case_id(case);
    let stem = format!(
        "{}-{}-{:016x}",
        case.workload,
        case.spec.timers,
        fnv1a(&generator)
    );
    let path = cache.join(format!("{stem}.tw"));
    let entry_path = cache.join(format!("{stem}.json"));
    if let Ok(text) = std::fs::read_to_string(&entry_path)
        && let Ok(entry) = serde_json::from_str::<CacheEntry>(&text)
        && entry.generator == generator
        && entry.revision == GENERATORS_REVISION
        && path.exists()
    {
        let reference = entry.reference;
        return Ok((Prepared { path, reference }, false));
    }
    let workload = generate(&case.family, &case.spec)
        .with_context(|| format!("cannot generate {}", case.workload))?;
    let program = compile(&workload, &path).map_err(|e| {
        anyhow!(
            "the generated workload {} is invalid (a bug in its family): {e}",
            case.workload
        )
    })?;
    writer::write_file(&path, &workload)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let entry = CacheEntry {
        generator,
        revision: GENERATORS_REVISION,
        reference: program.summary.clone(),
    };
    write_json(&entry_path, &entry)?;
    Ok((
        Prepared {
            path,
            reference: program.summary,
        },
        true,
    ))
}

/// A stable 64-bit hash for cache file names (std's hasher may change between releases).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs one cell in a child process and returns its record, whatever happens to it.
fn run_cell(
    cell: &Cell,
    workload: &Prepared,
    repeat: u32,
    limit: Duration,
    inject_panic: bool,
) -> CellRecord {
    let started = Instant::now();
    let spec = CellSpec {
        key: cell.key(),
        family: cell.case.family.clone(),
        params: cell.case.spec.params.iter().cloned().collect(),
        ops: cell.case.spec.ops,
        seed: cell.case.spec.seed,
        generator: case_id(&cell.case),
        workload_path: workload.path.clone(),
        reference: workload.reference.clone(),
        repeat,
        inject_panic,
    };
    let outcome = spawn_cell(&spec, limit);
    let elapsed = started.elapsed().as_secs_f64();
    match outcome {
        Ok(record) => record,
        Err((status, reason)) => failure_record(&spec, status, reason, elapsed),
    }
}

/// The record of a cell that produced none.
fn failure_record(spec: &CellSpec, status: Status, reason: String, elapsed: f64) -> CellRecord {
    CellRecord {
        elapsed_seconds: elapsed,
        ..CellRecord::for_spec(spec, status, Some(reason))
    }
}

/// Runs `timerbench cell` with `spec`, killing it at `limit`.
fn spawn_cell(spec: &CellSpec, limit: Duration) -> Result<CellRecord, (Status, String)> {
    let fail = |reason: String| (Status::Failed, reason);
    let executable =
        std::env::current_exe().map_err(|e| fail(format!("cannot find timerbench itself: {e}")))?;
    let mut child = Command::new(executable)
        .arg("cell")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot start the cell process: {e}")))?;
    let input = serde_json::to_vec(spec).expect("specs serialise");
    if let Some(mut stdin) = child.stdin.take() {
        // A child that dies at once closes its end; its exit status tells why.
        let _ = stdin.write_all(&input);
    }
    // Drain both pipes on their own threads so a chatty child never blocks on a full pipe.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_with_limit(&mut child, limit);
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let status = match status {
        Some(status) => status,
        None => {
            return Err((
                Status::Timeout,
                format!("killed after the {} s time limit", limit.as_secs()),
            ));
        }
    };
    if !status.success() {
        return Err(fail(describe_exit(status, &stderr)));
    }
    let text = String::from_utf8_lossy(&stdout);
    serde_json::from_str::<CellRecord>(text.trim()).map_err(|e| {
        fail(format!(
            "the cell process answered something unreadable ({e}): {}",
            excerpt(&text)
        ))
    })
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child`, killing it once `limit` has passed; `None` when it was killed.
fn wait_with_limit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => return child.wait().ok(),
        }
    }
}

/// Why a child ended badly: its signal or exit code, and the panic message if it printed one.
fn describe_exit(status: std::process::ExitStatus, stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let panic = text
        .lines()
        .skip_while(|l| !l.contains("panicked at"))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    let how = match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                match status.signal() {
                    Some(9) => "killed by SIGKILL (out of memory?)".to_string(),
                    Some(6) => "aborted (SIGABRT)".to_string(),
                    Some(signal) => format!("killed by signal {signal}"),
                    None => "ended abnormally".to_string(),
                }
            }
            #[cfg(not(unix))]
            {
                "ended abnormally".to_string()
            }
        }
    };
    if !panic.is_empty() {
        format!("{how}: {}", excerpt(&panic))
    } else if let Some(last) = text.lines().rev().find(|l| !l.trim().is_empty()) {
        format!("{how}: {}", excerpt(last))
    } else {
        how
    }
}

fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(300) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// The cells a results file already holds. A last line cut short by an interruption is
/// removed, so that appending goes on cleanly.
fn finished_cells(path: &Path) -> anyhow::Result<BTreeSet<CellKey>> {
    if !path.exists() {
        return Ok(BTreeSet::new());
    }
    truncate_partial_line(path)?;
    Ok(read_records(path)?.into_iter().map(|r| r.key).collect())
}

fn truncate_partial_line(path: &Path) -> anyhow::Result<()> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    if bytes.last().is_some_and(|&b| b != b'\n') {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        file.set_len(keep as u64)?;
        file.seek(SeekFrom::End(0))?;
    }
    Ok(())
}

/// Every record of a results file, with its line number in errors.
pub fn read_records(path: &Path) -> anyhow::Result<Vec<CellRecord>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut records = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: CellRecord = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: not a cell record", path.display(), index + 1))?;
        records.push(record);
    }
    Ok(records)
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value).expect("serialisable") + "\n";
    writer::write_atomically(path, |file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// `summary.csv`: one row per cell, the latest record of each.
fn write_summary_csv(path: &Path, records: &[CellRecord]) -> anyhow::Result<()> {
    let mut latest: BTreeMap<&CellKey, &CellRecord> = BTreeMap::new();
    for record in records {
        latest.insert(&record.key, record);
    }
    let mut csv = csv::Writer::from_writer(Vec::new());
    for record in latest.values() {
        let advance = ["advance", "next", "tick"]
            .iter()
            .find_map(|kind| record.latency.get(*kind));
        csv.serialize(SummaryRow {
            workload: record.key.workload.clone(),
            timers: record.key.timers,
            implementation: record.key.implementation.clone(),
            status: serde_json::to_value(record.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            ns_per_op_median: record.throughput.as_ref().map(|t| t.ns_per_op.median),
            ns_per_op_mad: record.throughput.as_ref().map(|t| t.ns_per_op.mad),
            advance_p99_ns: advance.and_then(|l| l.percentiles.get("p99").copied()),
            advance_max_ns: advance.and_then(|l| l.percentiles.get("max").copied()),
            bytes_per_pending_timer: record.memory.as_ref().map(|m| m.bytes_per_pending_timer),
            peak_rss_bytes: record.memory.as_ref().map(|m| m.peak_rss_bytes),
            reason: record.reason.clone().unwrap_or_default(),
        })?;
    }
    let bytes = csv.into_inner().map_err(|e| anyhow!("csv: {e}"))?;
    writer::write_atomically(path, |file| file.write_all(&bytes))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Progress: a bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    started: Instant,
}

impl Progress {
    fn new(total: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} cells, {elapsed} elapsed, ETA {eta}  {msg}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Progress {
            bar,
            total,
            started: Instant::now(),
        }
    }

    fn start(&self, _index: usize, label: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(label.to_string());
        }
    }

    fn finish_cell(&self, index: usize, label: &str, record: &CellRecord) {
        let outcome = match (&record.status, &record.throughput) {
            (Status::Ok, Some(t)) => format!("ok, {:.1} ns/op", t.ns_per_op.median),
            (status, _) => format!(
                "{status:?}: {}",
                excerpt(record.reason.as_deref().unwrap_or(""))
                    .chars()
                    .take(120)
                    .collect::<String>()
            ),
        };
        let line = format!(
            "[{}/{}] {label}: {outcome} ({:.1} s)",
            index + 1,
            self.total,
            record.elapsed_seconds
        );
        match &self.bar {
            Some(bar) => {
                bar.println(line);
                bar.inc(1);
            }
            None => println!("{line}"),
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        println!("cells done in {}", duration(self.started.elapsed()));
    }
}
