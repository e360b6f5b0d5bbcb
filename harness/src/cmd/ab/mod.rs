//! `timerbench ab`: A and B compared as a duet (Bulej et al., ICPE 2020) on chosen cells.
//!
//! A and B are two builds of one structure (`--a-bin`, `--b-bin`: two `timerbench`
//! binaries; or `--a-rev`, `--b-rev`: two git revisions, built by [`build`]) or two
//! parameter variants (`--a`, `--b`), or both. Each cell starts one child
//! per side ([`side`], the hidden `ab-side` subcommand of each side's binary), which
//! verifies its side before anything is timed. Every round arms both (each pinned to its
//! own core, a fresh queue, the fill replayed), waits for both, then starts both timed
//! replays at once, so that whatever else the machine does in that interval (the host's
//! memory state, a neighbour's burst) hits both; the cores swap every round, so that a
//! faster core favours neither. The ratio B/A of each round is the sample: its median, a
//! bootstrap 95% interval and the verdict ([`crate::stats`], [`verdict`]) go into one record per cell in
//! `ab.jsonl` (`results/FORMAT.md`, *A/B records*). `--solo` adds a phase that times each
//! side alone, to state how much the partner (shared cache, memory bandwidth) moves the
//! absolute figure: the duet's ratio is what it resolves, not the absolute time.

pub mod side;
pub mod verdict;

mod build;
mod counted;
mod duet;

use anyhow::{Context, bail};
use duet::{Duet, SideSpec, Until};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use timerbench_impls::Variant;
use timerbench_results::ab::{AB_FILE, AbRecord, AbSide, AbSolo};
use timerbench_results::counts::Metric;
use timerbench_workloads::families::{self, GenSpec};
use timerbench_workloads::suite::{LEVELS, SuiteFile};
use timerbench_workloads::writer;

/// Compare A and B as a duet: both timed at once, one per core, cores swapped every round.
#[derive(clap::Args)]
pub struct Args {
    /// A workload of the standard suite (`hold-exponential`: its family, parameters and
    /// seed), or a family with its defaults (`hold`).
    #[arg(long)]
    workload: String,
    /// The number of timers (repeatable: one duet per size).
    #[arg(long, required = true, value_parser = clap::value_parser!(u64).range(1..))]
    timers: Vec<u64>,
    /// The seed the workload is generated with (default: the suite workload's, or 1).
    #[arg(long)]
    seed: Option<u64>,
    /// A's implementation and parameters (`NAME` or `NAME:key=value,...`).
    #[arg(long, value_name = "VARIANT")]
    a: String,
    /// B's (default: A's, for two builds of one structure).
    #[arg(long, value_name = "VARIANT")]
    b: Option<String>,
    /// The binary that runs A (default: this one).
    #[arg(long, value_name = "PATH")]
    a_bin: Option<PathBuf>,
    /// The binary that runs B (default: this one).
    #[arg(long, value_name = "PATH")]
    b_bin: Option<PathBuf>,
    /// A git revision of this repository that runs A: built with `cargo build --release`
    /// into a target directory of its own under `--out`.
    #[arg(long, value_name = "REV", conflicts_with = "a_bin")]
    a_rev: Option<String>,
    /// The git revision that runs B, built likewise.
    #[arg(long, value_name = "REV", conflicts_with = "b_bin")]
    b_rev: Option<String>,
    /// Rounds per cell, at least: one timed replay of each side per round. A single
    /// round's ratio is noisy at a million timers (a replay alone varies from one second
    /// to the next), so resolving a few percent takes many rounds; short replays get more
    /// through --min-seconds (METHODOLOGY.md, *Duets: `timerbench ab`*).
    #[arg(long, default_value_t = 80, value_parser = clap::value_parser!(u32).range(2..))]
    rounds: u32,
    /// After --rounds, go on in pairs of rounds until each side has this much timed
    /// replay: short replays are noisier per round, so a duet of them needs more rounds
    /// for the same resolution. `30s` (the default, where detection of a small change met
    /// its target: METHODOLOGY.md, *Duets: `timerbench ab`*), `500ms`; 0 lets --rounds
    /// decide alone.
    #[arg(long, default_value = "30s", value_parser = parse_seconds)]
    min_seconds: u64,
    /// The most rounds a cell may take, whatever --min-seconds asks.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(2..))]
    max_rounds: u32,
    /// Pairs of processes per cell: the rounds (and --min-seconds, --max-rounds) are split
    /// among this many pairs of children, started one pair after the other. Two processes
    /// of one binary can differ by a few percent for their whole life (where their memory
    /// landed), which one pair's rounds cannot show: several pairs sample that difference,
    /// and the interval becomes a two-level bootstrap over the pairs and the rounds within
    /// them (METHODOLOGY.md, *Process pairs* under *Duets*). 8 by default: fewer pairs
    /// missed a small injected slowdown too often, and one pair's interval is too narrow.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pairs: u32,
    /// The two CPUs, `FIRST,SECOND`.
    #[arg(long, default_value = "0,1", value_parser = parse_cores)]
    cores: [usize; 2],
    /// Also time each side alone on the first core, as many rounds, to state the
    /// partner's effect on the absolute figure.
    #[arg(long)]
    solo: bool,
    /// The equivalence margin, percent: an interval within 1 ± margin is "no change".
    #[arg(long, default_value_t = 0.0, value_parser = parse_margin)]
    margin: f64,
    /// Bootstrap resamples of the ratios.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(100..))]
    resamples: u32,
    /// The seed of the bootstrap's generator.
    #[arg(long, default_value_t = 1)]
    bootstrap_seed: u64,
    /// The folder the records (`ab.jsonl`, appended) and the workloads go to (default:
    /// results/ab-<date>-<host>-<git rev>, a new folder, as `run` and `live` choose theirs).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// What to compare: `ns` (the default), the time, as a duet; or a count per line
    /// (`instructions`, `est-cycles`, `ll-misses`, `d1-misses`, `branch-mispredicts`): each
    /// side counted once under Callgrind (after it verifies), no duet and no rounds, the
    /// change stated exactly. A count needs valgrind and both binaries from a revision
    /// that counts; the duet's flags (--rounds, --pairs, --solo...) are refused beside it.
    #[arg(long, default_value = "ns", value_parser = |s: &str| s.parse::<Metric>())]
    metric: Metric,
    /// With a count metric: the simulated caches, as `run --counts --cache-geometry`.
    #[arg(long, value_name = "LEVELS", default_value = crate::counts_core::DEFAULT_GEOMETRY_TEXT,
          value_parser = crate::counts_core::parse_geometry)]
    cache_geometry: timerbench_results::counts::CacheGeometry,
    /// For studies of the method: B spins this percentage of its own measured replay
    /// time inside every timed replay (sets `TIMERBENCH_AB_SLOWDOWN_PERCENT` for B).
    #[arg(long, hide = true, value_name = "PERCENT", value_parser = parse_margin)]
    inject_b_slowdown: Option<f64>,
}

/// `FIRST,SECOND`: two different CPU numbers.
fn parse_cores(text: &str) -> Result<[usize; 2], String> {
    let parse = |part: &str| {
        part.trim()
            .parse::<usize>()
            .map_err(|_| format!("expected two CPU numbers FIRST,SECOND, got {text:?}"))
    };
    match text.split_once(',') {
        Some((first, second)) => {
            let cores = [parse(first)?, parse(second)?];
            if cores[0] == cores[1] {
                return Err(format!("the two CPUs must differ, got {text:?}"));
            }
            Ok(cores)
        }
        None => Err(format!(
            "expected two CPU numbers FIRST,SECOND, got {text:?}"
        )),
    }
}

/// A percentage of 0 or more.
/// `--min-seconds`: a duration with its unit (`30s`, `500ms`), or 0.
fn parse_seconds(text: &str) -> Result<u64, String> {
    if text.trim_end_matches(|c: char| c.is_ascii_alphabetic()) == "0" {
        return Ok(0);
    }
    crate::flags::parse_duration(text)
}

fn parse_margin(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value >= 0.0 && value.is_finite() => Ok(value),
        _ => Err(format!("expected a percentage of 0 or more, got {text:?}")),
    }
}

/// The duet's flags, which mean nothing to a count: refused beside a count metric rather
/// than ignored, since a reader of the command would think they shaped the result.
const DUET_ONLY: [&str; 8] = [
    "--rounds",
    "--min-seconds",
    "--max-rounds",
    "--pairs",
    "--cores",
    "--solo",
    "--resamples",
    "--inject-b-slowdown",
];

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let b = args.b.clone().unwrap_or_else(|| args.a.clone());
    for (flag, label) in [("--a", &args.a), ("--b", &b)] {
        Variant::parse(label).map_err(|why| anyhow::anyhow!("{flag} {label}: {why}"))?;
    }
    let given: Vec<String> = std::env::args()
        .skip(1)
        .filter_map(|w| w.split('=').next().map(str::to_string))
        .collect();
    // Valgrind is found and checked before anything is built or written.
    let valgrind = if args.metric.is_count() {
        if let Some(flag) = given.iter().find(|f| DUET_ONLY.contains(&f.as_str())) {
            bail!(
                "{flag} is a duet's: --metric {} counts each side once, with no rounds",
                args.metric
            );
        }
        match crate::counts_core::Valgrind::check(args.cache_geometry)? {
            Some(valgrind) => Some(valgrind),
            None => {
                eprintln!("timerbench: error: {}", crate::counts_core::NO_VALGRIND);
                return Ok(ExitCode::from(crate::counts_core::NO_VALGRIND_EXIT));
            }
        }
    } else {
        if given.iter().any(|f| f == "--cache-geometry") {
            bail!("--cache-geometry needs a count metric (--metric instructions, ...)");
        }
        None
    };
    let this = std::env::current_exe().context("cannot find this binary's path")?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| crate::folders::free_folder("ab-"));
    let builds = out.join("builds");
    let binary =
        |given: &Option<PathBuf>, revision: &Option<String>, side: &str| match (given, revision) {
            (Some(path), _) if !path.is_file() => {
                bail!("--{side}-bin {}: no such file", path.display())
            }
            (Some(path), _) => Ok(path.clone()),
            (None, Some(revision)) => {
                build::build_revision(&format!("--{side}-rev"), revision, &builds)
            }
            (None, None) => Ok(this.clone()),
        };
    let sides = [
        SideSpec {
            variant: args.a.clone(),
            binary: binary(&args.a_bin, &args.a_rev, "a")?,
            slowdown: None,
        },
        SideSpec {
            variant: b,
            binary: binary(&args.b_bin, &args.b_rev, "b")?,
            slowdown: args.inject_b_slowdown,
        },
    ];
    let workloads = out.join("workloads");
    std::fs::create_dir_all(&workloads)
        .with_context(|| format!("cannot create {}", workloads.display()))?;
    let mut records = Vec::new();
    for &timers in &args.timers {
        let (path, seed) = generate(&args.workload, timers, args.seed, &workloads)?;
        let record = match &valgrind {
            Some(valgrind) => {
                let (family, spec) = gen_spec(&args.workload, timers, args.seed);
                let cell = counted::CountedCell {
                    workload_name: &args.workload,
                    family: &family,
                    spec: &spec,
                    path: &path,
                    metric: args.metric,
                    margin: args.margin / 100.0,
                    bootstrap_seed: args.bootstrap_seed,
                    cores: args.cores,
                };
                let record = counted::count_sides(valgrind, &sides, &cell)?;
                println!("{}", counted::summary_line(&record));
                record
            }
            None => {
                let record = duet_cell(args, &sides, &path, timers, seed)?;
                println!("{}", summary_line(&record));
                let what = format!("the duet at {timers} timers");
                if let Some(warning) = record
                    .others_load
                    .as_ref()
                    .and_then(|load| crate::machine_load::warning(load, &what))
                {
                    println!("{warning}");
                }
                record
            }
        };
        records.push(record);
    }
    let file = out.join(AB_FILE);
    append_records(&file, &records)?;
    println!("records: {}", file.display());
    Ok(ExitCode::SUCCESS)
}

/// What `--workload NAME` generates at `timers`: the standard suite's workload of that
/// name (its family, parameters, operations and seed), else the family `NAME` with its
/// defaults; `seed` replaces the seed when given.
fn gen_spec(name: &str, timers: u64, seed: Option<u64>) -> (String, GenSpec) {
    let suite = SuiteFile::standard();
    let defined = LEVELS
        .iter()
        .filter_map(|level| suite.cases(level).ok())
        .flatten()
        .find(|case| case.workload == name);
    let (family, mut spec) = match defined {
        Some(case) => (case.family, case.spec),
        None => (
            name.to_string(),
            GenSpec {
                timers,
                ops: None,
                seed: 1,
                params: Vec::new(),
            },
        ),
    };
    spec.timers = timers;
    spec.seed = seed.unwrap_or(spec.seed);
    (family, spec)
}

/// Writes the workload `name` at `timers` into `dir`; its path and seed.
fn generate(
    name: &str,
    timers: u64,
    seed: Option<u64>,
    dir: &Path,
) -> anyhow::Result<(PathBuf, u64)> {
    let (family, spec) = gen_spec(name, timers, seed);
    let workload = families::generate(&family, &spec)
        .map_err(|why| anyhow::anyhow!("--workload {name}: {why}"))?;
    let path = dir.join(format!("{name}-{timers}-seed{}.tw", spec.seed));
    writer::write_file(&path, &workload)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok((path, spec.seed))
}

/// One cell's duet (and solo phase), as its record.
fn duet_cell(
    args: &Args,
    sides: &[SideSpec; 2],
    workload: &Path,
    timers: u64,
    seed: u64,
) -> anyhow::Result<AbRecord> {
    let until = per_pair(args);
    // Every pair's processes are waited for before the window ends, so their CPU is ours.
    let window = crate::machine_load::Window::start();
    let mut solo = None;
    let mut groups: Vec<Vec<f64>> = Vec::new();
    let mut pair_sides: Vec<[AbSide; 2]> = Vec::new();
    for pair in 0..args.pairs {
        // Which side's child starts first alternates from pair to pair.
        let mut duet = Duet::start(sides, workload, pair % 2 == 1)?;
        let (a_ns, b_ns) = duet.rounds(until, args.cores)?;
        if args.solo && pair == 0 {
            solo = Some((
                a_ns.clone(),
                b_ns.clone(),
                duet.solo(a_ns.len() as u32, args.cores[0])?,
            ));
        }
        groups.push(ratios(&a_ns, &b_ns));
        pair_sides.push(duet.finish(a_ns, b_ns)?);
    }
    let others_load = window.end();
    let [a, b] = merge_pairs(pair_sides);
    let ratios: Vec<f64> = groups.concat();
    let median_ratio = crate::stats::median(&ratios);
    let interval =
        crate::stats::bootstrap_interval_grouped(&groups, args.resamples, args.bootstrap_seed);
    let verdict = verdict::verdict(interval, args.margin / 100.0);
    let solo = solo.map(|(a_ns, b_ns, (solo_a, solo_b))| solo_record(&a_ns, &b_ns, solo_a, solo_b));
    Ok(AbRecord {
        workload: args.workload.clone(),
        timers,
        seed,
        a,
        b,
        cores: args.cores,
        median_ratio,
        interval,
        resamples: args.resamples,
        bootstrap_seed: args.bootstrap_seed,
        margin: args.margin / 100.0,
        verdict: verdict.name().to_string(),
        change_percent: (median_ratio - 1.0) * 100.0,
        pairs: (args.pairs > 1).then(|| groups.iter().map(|g| g.len() as u32).collect()),
        ratios,
        solo,
        others_load,
        written_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        metric: None,
        counts: None,
    })
}

/// What each pair of processes runs: its share of `--rounds` (even, so that each core
/// serves each side equally often), of `--min-seconds` and of `--max-rounds`.
fn per_pair(args: &Args) -> Until {
    let share = |rounds: u32| rounds.div_ceil(args.pairs).next_multiple_of(2);
    Until {
        rounds: share(args.rounds),
        min_ns: args.min_seconds / u64::from(args.pairs),
        max_rounds: share(args.max_rounds.max(args.rounds)),
    }
}

/// One record per side from the pairs' records: the first pair's, with every pair's
/// times in order and the mean of the delays each pair injected (each calibrates its own).
fn merge_pairs(pairs: Vec<[AbSide; 2]>) -> [AbSide; 2] {
    let mut pairs = pairs.into_iter();
    let mut merged = pairs.next().expect("at least one pair");
    let mut delays = [merged[0].injected_delay_ns, merged[1].injected_delay_ns]
        .map(|d| d.into_iter().collect::<Vec<u64>>());
    for pair in pairs {
        for (side, (into, delays)) in pair.into_iter().zip(merged.iter_mut().zip(&mut delays)) {
            into.duet_ns.extend(side.duet_ns);
            delays.extend(side.injected_delay_ns);
        }
    }
    for (side, delays) in merged.iter_mut().zip(delays) {
        if !delays.is_empty() {
            side.injected_delay_ns = Some(delays.iter().sum::<u64>() / delays.len() as u64);
        }
    }
    merged
}

/// The per-round ratios B/A.
fn ratios(a_ns: &[u64], b_ns: &[u64]) -> Vec<f64> {
    a_ns.iter()
        .zip(b_ns)
        .map(|(&a, &b)| b as f64 / a.max(1) as f64)
        .collect()
}

/// The solo phase's record: each side's duet median over its solo median.
fn solo_record(a_ns: &[u64], b_ns: &[u64], solo_a: Vec<u64>, solo_b: Vec<u64>) -> AbSolo {
    let as_f64 = |ns: &[u64]| ns.iter().map(|&n| n as f64).collect::<Vec<_>>();
    let effect = |duet: &[u64], solo: &[u64]| {
        (crate::stats::median(&as_f64(duet)) / crate::stats::median(&as_f64(solo)) - 1.0) * 100.0
    };
    AbSolo {
        a_partner_effect_percent: effect(a_ns, &solo_a),
        b_partner_effect_percent: effect(b_ns, &solo_b),
        solo_median_ratio: crate::stats::median(&ratios(&solo_a, &solo_b)),
        a_ns: solo_a,
        b_ns: solo_b,
    }
}

/// What the terminal shows of one record.
fn summary_line(record: &AbRecord) -> String {
    let verdict = match record.verdict.as_str() {
        "slower" => verdict::Verdict::Slower,
        "faster" => verdict::Verdict::Faster,
        _ => verdict::Verdict::NoChange,
    };
    let pairs = match &record.pairs {
        Some(pairs) => format!(" in {} pairs of processes", pairs.len()),
        None => String::new(),
    };
    let mut line = format!(
        "{} {} ({} vs {}, {} rounds{pairs}): {}",
        record.workload,
        record.timers,
        record.a.variant,
        record.b.variant,
        record.ratios.len(),
        verdict::describe(record.median_ratio, record.interval, verdict)
    );
    if let Some(solo) = &record.solo {
        line.push_str(&format!(
            "\n  beside its partner: A {:+.1}%, B {:+.1}% against alone; B/A alone {:+.2}%",
            solo.a_partner_effect_percent,
            solo.b_partner_effect_percent,
            (solo.solo_median_ratio - 1.0) * 100.0
        ));
    }
    line
}

/// Appends `records` to `path`, one JSON line each, in one write.
fn append_records(path: &Path, records: &[AbRecord]) -> anyhow::Result<()> {
    let mut text = String::new();
    for record in records {
        text.push_str(&serde_json::to_string(record)?);
        text.push('\n');
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_workload_brings_its_family_and_parameters_and_a_family_its_defaults() {
        let (family, spec) = gen_spec("hold-exponential", 1000, None);
        assert_eq!(family, "hold");
        assert_eq!(spec.timers, 1000);
        assert!(!spec.params.is_empty(), "{spec:?}");
        let (family, spec) = gen_spec("hold", 10, Some(9));
        assert_eq!(
            (family.as_str(), spec.seed, spec.params.len()),
            ("hold", 9, 0)
        );
    }

    #[test]
    fn min_seconds_takes_zero_or_a_duration_with_its_unit() {
        assert_eq!(parse_seconds("0"), Ok(0));
        assert_eq!(parse_seconds("0s"), Ok(0));
        assert_eq!(parse_seconds("30s"), Ok(30_000_000_000));
        assert!(parse_seconds("30").is_err());
    }

    /// The README's `ab` example, as a newcomer would type it, parses: every flag it leaves
    /// out (`--out` among them) has a default.
    #[test]
    fn the_readmes_ab_example_parses_and_chooses_its_own_folder() {
        use clap::{Args as _, FromArgMatches as _};
        let readme = include_str!("../../../../README.md");
        let line = readme
            .lines()
            .find(|line| line.starts_with("timerbench ab "))
            .expect("README.md shows a `timerbench ab` command line");
        let command = line.split('#').next().unwrap_or(line);
        // The words after `timerbench ab`.
        let words: Vec<&str> = command.split_whitespace().skip(2).collect();
        let matches = Args::augment_args(clap::Command::new("timerbench"))
            .no_binary_name(true)
            .try_get_matches_from(&words)
            .unwrap_or_else(|e| panic!("README.md's `{}`: {e}", command.trim()));
        let args = Args::from_arg_matches(&matches).expect("the matches make Args");
        assert!(args.out.is_none(), "{:?}", args.out);
        assert!(!args.timers.is_empty());
    }
}
