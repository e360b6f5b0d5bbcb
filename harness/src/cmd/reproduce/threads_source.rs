//! Threads experiments (`kind = "threads"`): each implementation inside each sharing
//! scheme is a series, its points the producer thread counts (`sizes`), run by one
//! `timerbench threads` (its own flags) into `DIR/<id>/threads.jsonl`; the experiment's
//! field is read from each record (`results/FORMAT.md`, "`threads.jsonl`").
//!
//! Only the counts this machine allows are run: a count above its cores would measure the
//! scheduler, not the scheme (`docs/threads.md`), so it is left out and the finding says
//! at which counts its verdict was computed, and which of them were oversubscribed anyway
//! (producers plus the ticker and owner threads above the cores).

use super::experiments::Experiment;
use super::sources::{
    Measured, Reading, and_list, check_family_and_choices, derived_names, finite, param_words,
    record_path, unknown_field,
};
use anyhow::Context;
use clap::Parser;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use timerbench_impls::Variant;
use timerbench_results::threads::{THREADS_FILE, ThreadsRecord, read_threads_records};

/// The sharing schemes of `timerbench threads --scheme`.
const SCHEMES: &[&str] = &["global-lock", "owner", "per-thread", "locked-shards"];

/// The record's fields a dotted threads field may start with.
const FIELD_ROOTS: &[&str] = &[
    "ops_per_second",
    "wall_ns",
    "cross_stop",
    "peak_queued",
    "peak_queued_bytes",
    "owner_cpu_share",
    "latency",
];

/// Threads fields computed from a record, with what they are.
pub const DERIVED_FIELDS: &[(&str, &str)] = &[
    (
        "ns_per_op",
        "1e9 / ops_per_second: wall nanoseconds per producer operation over all threads, as \
         Go's parallel benchmarks give ns/op",
    ),
    (
        "calls.KIND.PCT",
        "the slowest producer thread's PCT (p50, p99, p99.9, p99.99, max) of its KIND calls \
         (start, stop, restart), ns",
    ),
];

/// The `threads` table of an experiment: the schemes and the workload.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadsSource {
    /// Sharing schemes: each implementation inside each is one series.
    pub schemes: Vec<String>,
    /// The workload family split over the producers (default start-stop).
    #[serde(default = "start_stop")]
    pub family: String,
    /// Its parameters.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// `--timers` and `--ops`, of the full run and of `--quick`.
    pub timers: u64,
    pub quick_timers: u64,
    pub ops: u64,
    pub quick_ops: u64,
    /// `--cross`: the share of stops issued by another producer (default threads' 0.5).
    pub cross: Option<f64>,
    /// `--shards` of locked-shards.
    pub shards: Option<u64>,
}

fn start_stop() -> String {
    "start-stop".to_string()
}

/// `timerbench threads`' flags, parsed from the words [`ThreadsSource::words`] builds.
#[derive(Parser)]
#[command(name = "timerbench")]
struct ThreadsCommand {
    #[command(flatten)]
    args: crate::threads_run::Args,
}

impl ThreadsSource {
    /// The series: each implementation inside each scheme, `LABEL under SCHEME`.
    pub fn series(&self, experiment: &Experiment) -> Vec<String> {
        let mut series = Vec::new();
        for implementation in &experiment.implementations {
            for scheme in &self.schemes {
                series.push(series_label(&super::figures::label(implementation), scheme));
            }
        }
        series
    }

    /// `start-stop 65536 timers, 200000 ops`.
    pub fn workload_words(&self) -> String {
        let mut words = vec![format!(
            "{}, {} timers, {} ops",
            self.family, self.timers, self.ops
        )];
        words.extend(param_words(&self.params));
        words.join(" ")
    }

    /// The checks when the file is read.
    pub fn check(&self, experiment: &Experiment) -> Result<(), String> {
        for implementation in &experiment.implementations {
            Variant::parse(implementation).map_err(|why| format!("implementations: {why}"))?;
            // `timerbench threads --impl` splits its values on commas.
            if implementation.contains(',') {
                return Err(format!(
                    "implementations: `{implementation}`: a threads experiment's variant has at \
                     most one parameter (timerbench threads --impl splits on commas)"
                ));
            }
        }
        check_family_and_choices("threads", &self.family, ("schemes", &self.schemes), SCHEMES)?;
        if [self.timers, self.quick_timers, self.ops, self.quick_ops].contains(&0) {
            return Err("threads: timers, quick_timers, ops and quick_ops are at least 1".into());
        }
        if self.cross.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
            return Err("threads.cross: a share from 0 to 1".to_string());
        }
        if experiment.sizes.is_empty() || experiment.quick_sizes.is_empty() {
            return Err("needs sizes and quick_sizes (producer thread counts)".to_string());
        }
        if experiment
            .sizes
            .iter()
            .chain(&experiment.quick_sizes)
            .any(|&s| s == 0 || s > 1024)
        {
            return Err("a thread count is 1 to 1024".to_string());
        }
        for field in std::iter::once(&experiment.field).chain(&experiment.shown) {
            check_field(field)?;
        }
        Ok(())
    }

    /// The `timerbench threads` words of the experiment at `counts`.
    fn words(
        &self,
        experiment: &Experiment,
        counts: &[u64],
        quick: bool,
        out: &Path,
    ) -> Vec<String> {
        let join = |items: Vec<String>| items.join(",");
        let mut words: Vec<String> = vec!["timerbench".into()];
        words.extend(["--scheme".into(), self.schemes.join(",")]);
        for implementation in &experiment.implementations {
            words.extend(["--impl".into(), implementation.clone()]);
        }
        words.extend([
            "--threads".into(),
            join(counts.iter().map(|c| c.to_string()).collect()),
        ]);
        words.extend(["--family".into(), self.family.clone()]);
        let (timers, ops) = if quick {
            (self.quick_timers, self.quick_ops)
        } else {
            (self.timers, self.ops)
        };
        words.extend(["--timers".into(), timers.to_string()]);
        words.extend(["--ops".into(), ops.to_string()]);
        for param in param_words(&self.params) {
            words.extend(["--param".into(), param]);
        }
        if let Some(cross) = self.cross {
            words.extend(["--cross".into(), cross.to_string()]);
        }
        if let Some(shards) = self.shards {
            words.extend(["--shards".into(), shards.to_string()]);
        }
        words.extend(["--out".into(), out.display().to_string()]);
        words
    }

    /// Runs the experiment at the counts this machine allows and reads the records back.
    pub fn measure(
        &self,
        experiment: &Experiment,
        run_folder: &Path,
        quick: bool,
    ) -> anyhow::Result<Measured> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let (counts, left_out): (Vec<u64>, Vec<u64>) = experiment
            .sizes(quick)
            .iter()
            .partition(|&&count| count <= cores);
        std::fs::create_dir_all(run_folder)
            .with_context(|| format!("cannot create {}", run_folder.display()))?;
        let mut records = Vec::new();
        if !counts.is_empty() {
            let words = self.words(experiment, &counts, quick, run_folder);
            println!("  timerbench threads {}", words[1..].join(" "));
            let command = ThreadsCommand::try_parse_from(&words)
                .map_err(|e| anyhow::anyhow!("the run's flags {}: {e}", words[1..].join(" ")))?;
            // A run that did not verify is a record with its offence, read below.
            crate::threads_run::run(&command.args)?;
            records = read_threads_records(&run_folder.join(THREADS_FILE))?;
        }
        let series = self.series(experiment);
        let read = |field: &str| -> Vec<Reading> {
            let mut readings = Vec::new();
            for &count in &counts {
                for name in &series {
                    let record = records
                        .iter()
                        .rev()
                        .find(|r| r.threads as u64 == count && &series_of(r) == name);
                    readings.push(reading(count, name, record, field));
                }
            }
            readings
        };
        let over: Vec<String> = counts
            .iter()
            .filter(|&&c| {
                records
                    .iter()
                    .any(|r| r.threads as u64 == c && r.oversubscribed)
            })
            .map(|c| c.to_string())
            .collect();
        let words =
            |counts: &[u64]| and_list(&counts.iter().map(|c| c.to_string()).collect::<Vec<_>>());
        let mut note = format!(
            "computed at {} producer thread{} on this {cores}-core machine",
            words(&counts),
            if counts.len() == 1 { "" } else { "s" }
        );
        if !over.is_empty() {
            note.push_str(&format!(
                "; oversubscribed at {} (producers plus the ticker and owner threads exceed the \
                 cores)",
                and_list(&over)
            ));
        }
        if !left_out.is_empty() {
            note.push_str(&format!("; {} not run: above the cores", words(&left_out)));
        }
        Ok(Measured {
            workload: records
                .first()
                .map_or_else(|| self.workload_words(), |r| r.workload.clone()),
            readings: read(&experiment.field),
            shown: experiment
                .shown
                .iter()
                .map(|field| (field.clone(), read(field)))
                .collect(),
            point_words: counts.iter().map(|&c| (c, thread_words(c))).collect(),
            points: counts,
            note,
            axis: "producer threads".to_string(),
            ..Measured::default()
        })
    }
}

/// `1 thread`, `2 threads`.
fn thread_words(count: u64) -> String {
    format!("{count} thread{}", if count == 1 { "" } else { "s" })
}

/// `quad-heap under global-lock`.
pub fn series_label(implementation: &str, scheme: &str) -> String {
    format!("{implementation} under {scheme}")
}

fn series_of(record: &ThreadsRecord) -> String {
    series_label(&record.implementation, &record.scheme)
}

/// A threads field is a dotted path under [`FIELD_ROOTS`], `ns_per_op`, or `calls.KIND.PCT`.
pub fn check_field(field: &str) -> Result<(), String> {
    let root = field.split('.').next().unwrap_or("");
    let calls = match field.split('.').collect::<Vec<_>>()[..] {
        ["calls", kind, _] => ["start", "stop", "restart"].contains(&kind),
        _ => false,
    };
    if field == "ns_per_op" || calls || FIELD_ROOTS.contains(&root) {
        return Ok(());
    }
    let others = format!(
        "{} (KIND start, stop or restart)",
        derived_names(DERIVED_FIELDS)
    );
    Err(unknown_field(field, "threads", FIELD_ROOTS, &others))
}

/// The field's value in a record; a run that did not verify has none.
pub fn read_value(record: &ThreadsRecord, field: &str) -> Result<f64, String> {
    if !record.verified {
        return Err(format!(
            "unverified: {}",
            record.offence.as_deref().unwrap_or("no offence given")
        ));
    }
    let value = match field.split('.').collect::<Vec<_>>()[..] {
        ["ns_per_op"] if record.ops_per_second > 0.0 => 1e9 / record.ops_per_second,
        ["ns_per_op"] => return Err("no operation was measured".to_string()),
        ["calls", kind, percentile] => record
            .latency
            .iter()
            .filter_map(|thread| thread.get(kind)?.get(percentile))
            .max()
            .ok_or_else(|| format!("no producer made a {kind} call with a {percentile}"))?
            as f64,
        _ => record_path(record, field)?,
    };
    finite(field, value)
}

fn reading(point: u64, series: &str, record: Option<&ThreadsRecord>, field: &str) -> Reading {
    match record {
        Some(record) => {
            let status = if record.verified {
                "verified"
            } else {
                "unverified"
            };
            Reading::new(point, series, status, read_value(record, field))
        }
        None => Reading::new(point, series, "missing", Err("no record of the run".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::super::experiments::built_in as experiment;
    use super::super::sources::{self, Measured};
    use super::*;
    use timerbench_results::Verdict;
    use timerbench_results::threads::{Latency, THREADS_SCHEMA};

    fn latency(p50: u64, p99: u64) -> Latency {
        Latency {
            count: 10,
            percentiles: BTreeMap::from([("p50".to_string(), p50), ("p99".to_string(), p99)]),
            histogram_v2: String::new(),
        }
    }

    /// A verified record of `implementation` under `scheme` at `threads`, with its
    /// throughput and every producer's start p99.
    fn record(
        scheme: &str,
        implementation: &str,
        threads: usize,
        ops: f64,
        p99: u64,
    ) -> ThreadsRecord {
        ThreadsRecord {
            schema: THREADS_SCHEMA,
            scheme: scheme.into(),
            shards: 1,
            implementation: implementation.into(),
            threads,
            helper_threads: 1,
            cores: 2,
            oversubscribed: threads + 1 > 2,
            workload: "start-stop".into(),
            seed: 1,
            cross_share: 0.5,
            operations: 1000,
            cross_stops: 0,
            wall_ns: 1,
            ops_per_second: ops,
            latency: (0..threads)
                .map(|_| BTreeMap::from([("start".to_string(), latency(p99 / 2, p99))]))
                .collect(),
            cross_stop: latency(0, 0),
            peak_queued: 0,
            peak_queued_bytes: 0,
            owner_cpu_share: None,
            verified: true,
            offence: None,
        }
    }

    fn judge(experiment: &Experiment, records: &[ThreadsRecord]) -> (Verdict, String) {
        let series = sources::series_labels(experiment);
        let mut points: Vec<u64> = records.iter().map(|r| r.threads as u64).collect();
        points.dedup();
        let measured = Measured {
            workload: "start-stop".into(),
            readings: points
                .iter()
                .flat_map(|&count| {
                    series.iter().map(move |name| {
                        let record = records
                            .iter()
                            .find(|r| r.threads as u64 == count && &series_of(r) == name);
                        reading(count, name, record, &experiment.field)
                    })
                })
                .collect(),
            points,
            ..Measured::default()
        };
        let computed = sources::compute(&experiment.figure, &series, &measured);
        let (_, verdict, reason) =
            super::super::verdict::judge(&experiment.figure, &experiment.rule, &computed);
        (verdict, reason)
    }

    #[test]
    fn go_s_global_lock_holds_when_ns_per_op_grows_with_threads() {
        let go = experiment("go-global-timer-lock");
        let at = |one: f64, two: f64| {
            judge(
                &go,
                &[
                    record("global-lock", "quad-heap", 1, one, 0),
                    record("global-lock", "quad-heap", 2, two, 0),
                ],
            )
        };
        // 10 M ops/s at one thread, 5 at two: ns/op doubles, a slope of 1.
        let (verdict, reason) = at(10e6, 5e6);
        assert_eq!(verdict, Verdict::Holds);
        assert!(reason.contains("= 1.00"), "{reason}");
        assert_eq!(at(10e6, 10e6).0, Verdict::HoldsWithCaveat);
        assert_eq!(at(10e6, 20e6).0, Verdict::DoesNotHold);
        // One count is no slope: not measured, with the reason.
        let (verdict, reason) = judge(&go, &[record("global-lock", "quad-heap", 1, 1e6, 0)]);
        assert_eq!(verdict, Verdict::NotMeasured);
        assert!(reason.contains("a slope needs two points"), "{reason}");
    }

    #[test]
    fn netty_s_owner_holds_when_its_producers_calls_are_cheaper_at_every_count() {
        let netty = experiment("netty-queue-to-owner");
        let at = |owner: [u64; 2], lock: [u64; 2]| {
            let mut records = Vec::new();
            for (index, threads) in [1, 2].into_iter().enumerate() {
                records.push(record(
                    "global-lock",
                    "netty-wheel",
                    threads,
                    1e6,
                    lock[index],
                ));
                records.push(record("owner", "netty-wheel", threads, 1e6, owner[index]));
            }
            judge(&netty, &records)
        };
        assert_eq!(at([100, 200], [400, 4000]).0, Verdict::Holds);
        assert_eq!(at([100, 200], [101, 4000]).0, Verdict::HoldsWithCaveat);
        assert_eq!(at([400, 200], [100, 4000]).0, Verdict::DoesNotHold);
        let mut records = vec![
            record("global-lock", "netty-wheel", 1, 1e6, 400),
            record("owner", "netty-wheel", 1, 1e6, 100),
        ];
        records[1].verified = false;
        records[1].offence = Some("timer 4 lost".into());
        let (verdict, reason) = judge(&netty, &records);
        assert_eq!(verdict, Verdict::NotMeasured);
        assert!(reason.contains("unverified: timer 4 lost"), "{reason}");
    }

    #[test]
    fn the_words_are_threads_flags() {
        let go = experiment("go-global-timer-lock");
        let threads = go.threads.as_ref().unwrap();
        let words = threads.words(&go, &[1, 2], true, Path::new("out"));
        let line = words.join(" ");
        assert!(
            line.contains("--scheme global-lock --impl quad-heap --threads 1,2"),
            "{line}"
        );
        assert!(ThreadsCommand::try_parse_from(&words).is_ok(), "{line}");
        assert!(check_field("calls.stop.p99").is_ok());
        assert!(check_field("calls.fire.p99").is_err());
        assert!(check_field("speed").unwrap_err().contains("ns_per_op"));
    }
}
