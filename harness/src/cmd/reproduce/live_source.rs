//! Live experiments (`kind = "live"`): each implementation with each wait strategy is a
//! series, run by `timerbench live` (its own flags, parsed as a typed command would be)
//! once per point, into `DIR/<id>/live.jsonl`; the experiment's field is read from each
//! record (`results/FORMAT.md`, "`live.jsonl`").
//!
//! One `timerbench live` per series and point, so that a strategy the kernel refuses (no
//! `epoll_pwait2`) leaves that series "not measured" with the reason and the others
//! measured.

use super::experiments::Experiment;
use super::sources::{
    Measured, Reading, check_family_and_choices, derived_names, finite, param_words, record_path,
    unknown_field,
};
use crate::flags::parse_duration;
use anyhow::Context;
use clap::Parser;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use timerbench_impls::Variant;
use timerbench_results::live::{LIVE_FILE, LiveRecord, read_live};

/// The wait strategies of `timerbench live --wait`.
const WAITS: &[&str] = &["pwait2", "wait", "timerfd", "tick"];

/// The transport `timerbench live` uses when none is named: a Unix socketpair.
const DEFAULT_TRANSPORT: &str = "socketpair";

/// The record's top-level objects and numbers a dotted live field may start with.
const FIELD_ROOTS: &[&str] = &[
    "lateness",
    "baseline",
    "workload_phase",
    "idle_phase",
    "arrivals",
    "firings",
    "timerfd_rearms",
    "missed_ticks",
];

/// Live fields computed from a record, with what they are.
pub const DERIVED_FIELDS: &[(&str, &str)] = &[(
    "wake_p50_fraction_of_tick",
    "lateness.wake.p50_ns / tick_ns: the median wake-up error as a share of one tick (of \
     each wait, when every wait is one tick long: `sparse` with gap=1)",
)];

/// The `live` table of an experiment: the workload and the flags of its runs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveSource {
    /// The workload family (`timerbench list`).
    pub family: String,
    /// Its parameters (`--param KEY=VALUE`).
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// `--ops`, of the full run and of `--quick` (default: the family's).
    pub ops: Option<u64>,
    pub quick_ops: Option<u64>,
    /// Wait strategies: each implementation with each is one series.
    pub waits: Vec<String>,
    /// What the points (`sizes`, `quick_sizes`) are: `--timers` (default) or `--tick` in
    /// milliseconds.
    #[serde(default)]
    pub sweep: Sweep,
    /// `--timers` when the sweep is the tick, full and `--quick`.
    pub timers: Option<u64>,
    pub quick_timers: Option<u64>,
    /// `--tick` when the sweep is the number of timers (default 1ms).
    pub tick: Option<String>,
    /// `--duration` and `--idle`, full and `--quick` (default: live's 10s and 1s; the quick
    /// ones default to the full ones).
    pub duration: Option<String>,
    pub quick_duration: Option<String>,
    pub idle: Option<String>,
    pub quick_idle: Option<String>,
    /// `--slack` in ns (default: leave the thread's).
    pub slack: Option<u64>,
    /// How operations arrive: `socketpair` (the default, no flag) or `tcp` (`timerbench
    /// live --tcp`: real connections from a client process on loopback).
    pub transport: Option<String>,
}

/// What an experiment's points are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sweep {
    /// `--timers` (connections, for keepalive).
    #[default]
    Timers,
    /// `--tick`, in milliseconds.
    TickMs,
}

/// `timerbench live`'s flags, parsed from the words [`LiveSource::words`] builds.
#[derive(Parser)]
#[command(name = "timerbench")]
struct LiveCommand {
    #[command(flatten)]
    args: crate::live_run::Args,
}

impl LiveSource {
    /// The series: each implementation with each wait, `LABEL with WAIT`.
    pub fn series(&self, experiment: &Experiment) -> Vec<String> {
        self.pairs(experiment)
            .into_iter()
            .map(|(implementation, wait)| {
                series_label(&super::figures::label(implementation), wait)
            })
            .collect()
    }

    fn pairs<'a>(&'a self, experiment: &'a Experiment) -> Vec<(&'a str, &'a str)> {
        let mut pairs = Vec::new();
        for implementation in &experiment.implementations {
            for wait in &self.waits {
                pairs.push((implementation.as_str(), wait.as_str()));
            }
        }
        pairs
    }

    /// `keepalive timeout=200`: the family and its parameters.
    pub fn workload_words(&self) -> String {
        let mut words = vec![self.family.clone()];
        words.extend(param_words(&self.params));
        words.join(" ")
    }

    /// What a point is, in `--list`.
    pub fn point_name(&self) -> &'static str {
        match self.sweep {
            Sweep::Timers => "timers",
            Sweep::TickMs => "tick ms",
        }
    }

    /// The checks when the file is read: implementations, waits, durations, the sweep's
    /// sizes, the fields.
    pub fn check(&self, experiment: &Experiment) -> Result<(), String> {
        for implementation in &experiment.implementations {
            Variant::parse(implementation).map_err(|why| format!("implementations: {why}"))?;
        }
        check_family_and_choices("live", &self.family, ("waits", &self.waits), WAITS)?;
        for (name, value) in [
            ("tick", &self.tick),
            ("duration", &self.duration),
            ("quick_duration", &self.quick_duration),
            ("idle", &self.idle),
            ("quick_idle", &self.quick_idle),
        ] {
            if let Some(text) = value {
                parse_duration(text).map_err(|why| format!("live.{name}: {why}"))?;
            }
        }
        if experiment.sizes.is_empty() || experiment.quick_sizes.is_empty() {
            return Err(format!(
                "needs sizes and quick_sizes ({})",
                self.point_name()
            ));
        }
        if experiment
            .sizes
            .iter()
            .chain(&experiment.quick_sizes)
            .any(|&s| s == 0)
        {
            return Err("a size is at least 1".to_string());
        }
        match self.sweep {
            Sweep::TickMs if self.timers.is_none() || self.quick_timers.is_none() => {
                return Err("a sweep of the tick needs live.timers and live.quick_timers".into());
            }
            Sweep::TickMs if self.tick.is_some() => {
                return Err("a sweep of the tick takes its ticks from sizes, not live.tick".into());
            }
            Sweep::Timers if self.timers.is_some() || self.quick_timers.is_some() => {
                return Err(
                    "live.timers is for a sweep of the tick; the sizes are the timers".into(),
                );
            }
            _ => {}
        }
        for field in std::iter::once(&experiment.field).chain(&experiment.shown) {
            check_field(field)?;
        }
        Ok(())
    }

    /// The `timerbench live` words of one series at one point.
    fn words(
        &self,
        (implementation, wait): (&str, &str),
        point: u64,
        quick: bool,
        out: &Path,
    ) -> Vec<String> {
        let pick = |quick_value: &Option<String>, full: &Option<String>, default: &str| {
            let full = full.clone().unwrap_or_else(|| default.to_string());
            if quick {
                quick_value.clone().unwrap_or(full)
            } else {
                full
            }
        };
        let (timers, tick) = match self.sweep {
            Sweep::Timers => (
                point,
                self.tick.clone().unwrap_or_else(|| "1ms".to_string()),
            ),
            Sweep::TickMs => {
                let timers = if quick {
                    self.quick_timers
                } else {
                    self.timers
                };
                (timers.unwrap_or(1), format!("{point}ms"))
            }
        };
        let mut words: Vec<String> = ["timerbench", "--impl", implementation, "--wait", wait]
            .iter()
            .map(|w| w.to_string())
            .collect();
        words.extend(["--workload".into(), self.family.clone()]);
        words.extend(["--timers".into(), timers.to_string()]);
        if let Some(ops) = if quick {
            self.quick_ops.or(self.ops)
        } else {
            self.ops
        } {
            words.extend(["--ops".into(), ops.to_string()]);
        }
        for param in param_words(&self.params) {
            words.extend(["--param".into(), param]);
        }
        words.extend(["--tick".into(), tick]);
        words.extend([
            "--duration".into(),
            pick(&self.quick_duration, &self.duration, "10s"),
        ]);
        words.extend(["--idle".into(), pick(&self.quick_idle, &self.idle, "1s")]);
        if let Some(slack) = self.slack {
            words.extend(["--slack".into(), slack.to_string()]);
        }
        if let Some(transport) = self
            .transport
            .as_deref()
            .filter(|t| *t != DEFAULT_TRANSPORT)
        {
            // `timerbench live` names its one other transport by a flag of its own.
            match transport {
                "tcp" => words.push("--tcp".into()),
                other => words.extend(["--transport".into(), other.to_string()]),
            }
        }
        words.extend(["--out".into(), out.display().to_string()]);
        words
    }

    /// Runs every series at every point into `run_folder` and reads the records back.
    pub fn measure(
        &self,
        experiment: &Experiment,
        run_folder: &Path,
        quick: bool,
    ) -> anyhow::Result<Measured> {
        std::fs::create_dir_all(run_folder)
            .with_context(|| format!("cannot create {}", run_folder.display()))?;
        let points = experiment.sizes(quick).to_vec();
        let mut runs: Vec<(u64, String, Result<LiveRecord, String>)> = Vec::new();
        for &point in &points {
            for pair in self.pairs(experiment) {
                let words = self.words(pair, point, quick, run_folder);
                println!("  timerbench live {}", words[1..].join(" "));
                let record = run_one(&words, run_folder);
                if let Err(why) = &record {
                    println!("  -> no record: {why}");
                }
                let label = series_label(&super::figures::label(pair.0), pair.1);
                runs.push((point, label, record));
            }
        }
        let read = |field: &str| -> Vec<Reading> {
            runs.iter()
                .map(|(point, series, record)| reading(*point, series, record, field))
                .collect()
        };
        let workload = runs
            .iter()
            .find_map(|(_, _, r)| r.as_ref().ok().map(|r| r.workload.clone()))
            .unwrap_or_else(|| self.workload_words());
        let transport = self.transport.as_deref().unwrap_or(DEFAULT_TRANSPORT);
        Ok(Measured {
            workload,
            readings: read(&experiment.field),
            shown: experiment
                .shown
                .iter()
                .map(|field| (field.clone(), read(field)))
                .collect(),
            point_words: points.iter().map(|&p| (p, self.point_words(p))).collect(),
            points,
            detail: format!("transport {transport}"),
            axis: match self.sweep {
                Sweep::Timers => "timers",
                Sweep::TickMs => "tick (ms)",
            }
            .to_string(),
            ..Measured::default()
        })
    }

    fn point_words(&self, point: u64) -> String {
        match self.sweep {
            Sweep::Timers => format!("{point} timers"),
            Sweep::TickMs => format!("{point} ms tick"),
        }
    }
}

/// `hierarchical-wheel with pwait2`.
pub fn series_label(implementation: &str, wait: &str) -> String {
    format!("{implementation} with {wait}")
}

/// One `timerbench live` in this process; its record (the one it appended), or why none.
pub(super) fn run_one(words: &[String], run_folder: &Path) -> Result<LiveRecord, String> {
    let file = run_folder.join(LIVE_FILE);
    let before = if file.is_file() {
        read_live(&file).map_err(|e| format!("{e:#}"))?.len()
    } else {
        0
    };
    let outcome = LiveCommand::try_parse_from(words)
        .map_err(|e| format!("the run's flags {}: {e}", words[1..].join(" ")))
        .and_then(|command| crate::live_run::run(&command.args).map_err(|e| format!("{e:#}")));
    // A run that did not verify still appends its record, and then fails: the record says
    // why, so it is read first.
    let records = if file.is_file() {
        read_live(&file).map_err(|e| format!("{e:#}"))?
    } else {
        Vec::new()
    };
    match (records.into_iter().nth(before), outcome) {
        (Some(record), _) => Ok(record),
        (None, Err(why)) => Err(why),
        (None, Ok(_)) => Err("timerbench live wrote no record".to_string()),
    }
}

/// A live field is a dotted path under [`FIELD_ROOTS`] or one of [`DERIVED_FIELDS`].
pub fn check_field(field: &str) -> Result<(), String> {
    let root = field.split('.').next().unwrap_or("");
    if DERIVED_FIELDS.iter().any(|(name, _)| *name == field) || FIELD_ROOTS.contains(&root) {
        return Ok(());
    }
    Err(unknown_field(
        field,
        "live",
        FIELD_ROOTS,
        &derived_names(DERIVED_FIELDS),
    ))
}

/// The field's value in a record; a run that did not verify, or an exact structure that
/// fired early, has none.
pub fn read_value(record: &LiveRecord, field: &str) -> Result<f64, String> {
    if record.status != "verified" {
        return Err(format!("{}: {}", record.status, record.reasons.join("; ")));
    }
    if record.precision == "exact" && record.lateness.early > 0 {
        return Err(format!(
            "{} early firings of an exact structure",
            record.lateness.early
        ));
    }
    let value = match field {
        "wake_p50_fraction_of_tick" => {
            record.lateness.wake.p50_ns as f64 / record.tick_ns.max(1) as f64
        }
        path => record_path(record, path)?,
    };
    finite(field, value)
}

fn reading(point: u64, series: &str, record: &Result<LiveRecord, String>, field: &str) -> Reading {
    match record {
        Ok(record) => Reading::new(point, series, &record.status, read_value(record, field)),
        Err(why) => Reading::new(point, series, "missing", Err(why.clone())),
    }
}

#[cfg(test)]
#[path = "live_source_tests.rs"]
mod tests;
