//! Runtimes experiments (`kind = "runtimes"`): the idle timeout in deployed runtimes. At
//! each point (connections), one `timerbench live --tcp` runs timerbench's loop around
//! each of the experiment's implementations and every engine's keepalive server (the
//! experiment's `engines`, or every engine of the registry with a live server), on the
//! same client and schedule, into `DIR/<id>/live.jsonl`. The records are read back into
//! the rows of `timerbench live`'s runtimes table ([`timerbench_report::runtimes`]) and
//! two figures are computed from them:
//!
//! - **closed wrongly**, for every server that ran: its connections closed although a
//!   keepalive came within the timeout, summed over its runs;
//! - **CPU over timerbench's loop**, for every runtime that ran: its CPU milliseconds per
//!   second over those of timerbench's loop around its best exact structure (the exact
//!   structure with the least CPU of those verified at that size) and around the ring.
//!
//! The rule names each figure by its name: `rule.implementation."closed wrongly"` judges
//! the wrong closes, and the built-in experiment lists `CPU over timerbench's loop` in
//! `rule.reported`, so the ratios are shown as measured and judged by no band (no claim
//! is made on which server is cheaper). An engine whose toolchain is missing is listed
//! `unsupported` with its package, and judged on nothing: a point where no runtime ran
//! has no ratio, so it is "not measured", the machine's limit.

use super::experiments::Experiment;
use super::figures::{Computed, Payload};
use super::sources::{Measured, Reading, param_words};
use crate::flags::parse_duration;
use anyhow::Context;
use clap::Parser;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use timerbench_report::runtimes::{self, RuntimeRow, Side};
use timerbench_results::Finding;
use timerbench_results::live::{LIVE_FILE, LiveRecord, read_live};

/// The figure of each server: its wrong closes.
pub const WRONGLY: &str = "closed wrongly";

/// The figure of each runtime: its CPU per second over timerbench's loop's.
pub const CPU_RATIO: &str = "CPU over timerbench's loop";

/// The field the ratio is of: the rows' CPU per second.
const FIELD: &str = "workload_phase.cpu_ms_per_second";

/// The series a runtimes experiment's rule names: its two figures.
pub fn series() -> Vec<String> {
    vec![WRONGLY.to_string(), CPU_RATIO.to_string()]
}

/// The `runtimes` table of an experiment: the keepalive workload and the run's flags.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimesSource {
    /// The keepalive family's parameters (`--param KEY=VALUE`).
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// `--duration`, full and `--quick`.
    pub duration: String,
    pub quick_duration: Option<String>,
    /// `--idle`, full and `--quick` (default: live's 1s).
    pub idle: Option<String>,
    pub quick_idle: Option<String>,
}

/// `timerbench live`'s flags, parsed from the words [`RuntimesSource::words`] builds.
#[derive(Parser)]
#[command(name = "timerbench")]
struct LiveCommand {
    #[command(flatten)]
    args: crate::live_run::Args,
}

impl RuntimesSource {
    /// `live --tcp keepalive timeout=2000`: what runs, in `--list`.
    pub fn workload_words(&self) -> String {
        let mut words = vec!["live --tcp keepalive".to_string()];
        words.extend(param_words(&self.params));
        words.join(" ")
    }

    /// The `--list` lines: the servers, what they run, the points.
    pub fn list_words(&self, experiment: &Experiment) -> String {
        let engines = match experiment.engines.is_empty() {
            true => "every engine's keepalive server".to_string(),
            false => experiment.engines.join(", "),
        };
        format!(
            "{}: {}\n    timerbench's loop around {} beside {engines} on {}; connections \
             {} (--quick: {}); figures: {}",
            experiment.id,
            experiment.title,
            experiment.implementations.join(", "),
            self.workload_words(),
            super::sources::comma_list(&experiment.sizes),
            super::sources::comma_list(&experiment.quick_sizes),
            series().join(", "),
        )
    }

    /// The checks when the file is read.
    pub fn check(&self, experiment: &Experiment) -> Result<(), String> {
        for implementation in &experiment.implementations {
            timerbench_impls::Variant::parse(implementation)
                .map_err(|why| format!("implementations: {why}"))?;
        }
        crate::live_run::live_tcp::check_engines(&experiment.engines)
            .map_err(|why| format!("engines: {why:#}"))?;
        for (name, value) in [
            ("duration", Some(&self.duration)),
            ("quick_duration", self.quick_duration.as_ref()),
            ("idle", self.idle.as_ref()),
            ("quick_idle", self.quick_idle.as_ref()),
        ] {
            if let Some(text) = value {
                parse_duration(text).map_err(|why| format!("runtimes.{name}: {why}"))?;
            }
        }
        if experiment.sizes.is_empty() || experiment.quick_sizes.is_empty() {
            return Err("needs sizes and quick_sizes (connections)".to_string());
        }
        if experiment
            .sizes
            .iter()
            .chain(&experiment.quick_sizes)
            .any(|&s| s == 0)
        {
            return Err("a size is at least 1".to_string());
        }
        if experiment.field != FIELD || !experiment.shown.is_empty() {
            return Err(format!(
                "a runtimes experiment's field is `{FIELD}` (the ratio's), and it shows no \
                 other"
            ));
        }
        if !matches!(experiment.figure, super::experiments::FigureSpec::Value) {
            return Err("a runtimes experiment's figure is `value`: each computed one".into());
        }
        Ok(())
    }

    /// The engines to run: the experiment's, or every one with a live server.
    fn engines(experiment: &Experiment) -> Vec<String> {
        if !experiment.engines.is_empty() {
            return experiment.engines.clone();
        }
        crate::engines::ENGINES
            .iter()
            .filter(|e| e.live)
            .map(|e| e.name.to_string())
            .collect()
    }

    /// The `timerbench live` words of the run at `connections`.
    fn words(
        &self,
        experiment: &Experiment,
        connections: u64,
        quick: bool,
        (out, build): (&Path, &Path),
    ) -> Vec<String> {
        let pick = |quick_value: &Option<String>, full: &str| match (quick, quick_value) {
            (true, Some(value)) => value.clone(),
            _ => full.to_string(),
        };
        let mut words: Vec<String> = vec!["timerbench".into(), "--tcp".into()];
        words.extend(["--timers".into(), connections.to_string()]);
        for implementation in &experiment.implementations {
            words.extend(["--impl".into(), implementation.clone()]);
        }
        for engine in Self::engines(experiment) {
            words.extend(["--engine".into(), engine]);
        }
        for param in param_words(&self.params) {
            words.extend(["--param".into(), param]);
        }
        let idle = self.idle.clone().unwrap_or_else(|| "1s".to_string());
        words.extend([
            "--duration".into(),
            pick(&self.quick_duration, &self.duration),
        ]);
        words.extend(["--idle".into(), pick(&self.quick_idle, &idle)]);
        words.extend(["--build-dir".into(), build.display().to_string()]);
        words.extend(["--out".into(), out.display().to_string()]);
        words
    }

    /// Runs every point into `run_folder` (engines built into `build`), reads the records
    /// back and judges them; never fails (an error is the reason).
    pub fn reproduce(
        &self,
        experiment: &Experiment,
        run_folder: &Path,
        build: &Path,
        quick: bool,
    ) -> Finding {
        match self.measure(experiment, run_folder, build, quick) {
            Ok(records) => judge(experiment, &records),
            Err(error) => {
                let failure = format!("the run failed: {error:#}");
                super::sources::finding(experiment, &Measured::default(), &failure)
            }
        }
    }

    /// Each point's run; every record of the folder, at each point.
    fn measure(
        &self,
        experiment: &Experiment,
        run_folder: &Path,
        build: &Path,
        quick: bool,
    ) -> anyhow::Result<Vec<(u64, Vec<LiveRecord>)>> {
        std::fs::create_dir_all(run_folder)
            .with_context(|| format!("cannot create {}", run_folder.display()))?;
        let file = run_folder.join(LIVE_FILE);
        let mut points = Vec::new();
        for &connections in experiment.sizes(quick) {
            let before = match file.is_file() {
                true => read_live(&file)?.len(),
                false => 0,
            };
            let words = self.words(experiment, connections, quick, (run_folder, build));
            println!("  timerbench live {}", words[1..].join(" "));
            let command = LiveCommand::try_parse_from(&words)
                .map_err(|e| anyhow::anyhow!("the run's flags {}: {e}", words[1..].join(" ")))?;
            // A run that closed a connection wrongly or did not verify still wrote its
            // records, which say so: they are read and judged, not the exit status.
            if let Err(error) = crate::live_run::run(&command.args) {
                println!("  -> {error:#}");
            }
            let records = match file.is_file() {
                true => read_live(&file)?.split_off(before),
                false => Vec::new(),
            };
            if records.is_empty() {
                anyhow::bail!("timerbench live wrote no record at {connections} connections");
            }
            points.push((connections, records));
        }
        Ok(points)
    }
}

/// The finding from each point's records: the rows, their figures judged by the rule.
pub fn judge(experiment: &Experiment, points: &[(u64, Vec<LiveRecord>)]) -> Finding {
    let mut computed = Vec::new();
    let mut readings = Vec::new();
    let mut notes = Vec::new();
    for (connections, records) in points {
        let rows = runtimes::rows(records);
        let words = format!("{connections} connections");
        computed.extend(figures(&rows, &words));
        for row in &rows {
            let value = row
                .cpu_ms_per_second
                .ok_or_else(|| format!("{}: {}", row.status, row.why));
            let value = match row.status.as_str() {
                "verified" => value,
                other => Err(format!("{other}: {}", row.why)),
            };
            let series = format!("{} ({})", row.server, row.side.words());
            readings.push(Reading::new(*connections, &series, &row.status, value));
        }
        if let Some(best) = rows.iter().find(|r| r.side == Side::BestExact) {
            notes.push(format!("best exact at {words}: {}", best.server));
        }
        let missing: Vec<String> = rows
            .iter()
            .filter(|r| r.status == "unsupported")
            .map(|r| format!("{} ({})", r.server, r.why))
            .collect();
        if !missing.is_empty() {
            notes.push(format!("unsupported here: {}", missing.join(", ")));
        }
    }
    let measured = Measured {
        workload: points
            .iter()
            .flat_map(|(_, records)| records.first())
            .map(|r| r.workload.clone())
            .next()
            .unwrap_or_default(),
        points: points.iter().map(|(p, _)| *p).collect(),
        readings,
        point_words: points
            .iter()
            .map(|(p, _)| (*p, format!("{p} connections")))
            .collect(),
        note: notes.join("; "),
        detail: "transport tcp; the same client, schedule and checks for every server".into(),
        axis: "connections".into(),
        ..Measured::default()
    };
    let judged = super::verdict::judge(&experiment.figure, &experiment.rule, &computed);
    super::sources::judged_finding(experiment, &measured, judged)
}

/// The figures of one point's rows: each server's wrong closes, each runtime's CPU over
/// the loop's best exact structure's and over the ring's. A server that ran but did not
/// verify has no figure (the reason instead); a point where no runtime ran, or without a
/// best exact structure to set a runtime against, has a reason instead of its ratios.
pub fn figures(rows: &[RuntimeRow], at: &str) -> Vec<Computed> {
    let mut out = Vec::new();
    let ran: Vec<&RuntimeRow> = rows
        .iter()
        .filter(|r| r.cpu_ms_per_second.is_some())
        .collect();
    for row in &ran {
        out.push(Computed {
            label: format!("{} at {at}: {WRONGLY}", row.server),
            implementation: Some(WRONGLY.to_string()),
            payload: match row.status.as_str() {
                "verified" => Ok(Payload::Number(row.closed_wrongly as f64)),
                other => Err(format!("{other}: {}", row.why)),
            },
        });
    }
    let runtimes: Vec<&&RuntimeRow> = ran.iter().filter(|r| r.side == Side::Runtime).collect();
    if runtimes.is_empty() {
        out.push(Computed {
            label: format!("{CPU_RATIO} at {at}"),
            implementation: Some(CPU_RATIO.to_string()),
            payload: Err("no runtime's server ran here".to_string()),
        });
    }
    for side in [Side::BestExact, Side::Ring] {
        let base = rows.iter().find(|r| r.side == side);
        // The ring is set beside the runtimes where it ran; the best exact structure must.
        if side == Side::Ring && base.is_none() {
            continue;
        }
        for runtime in &runtimes {
            let label = format!(
                "{} at {at}: CPU over timerbench's {}",
                runtime.server,
                match side {
                    Side::Ring => "ring",
                    _ => "best exact structure",
                }
            );
            let payload = match (
                base.and_then(|b| b.cpu_ms_per_second),
                runtime.cpu_ms_per_second,
            ) {
                (Some(base), Some(cpu)) if base > 0.0 => Ok(Payload::Number(cpu / base)),
                (Some(_), _) => Err("timerbench's loop took no CPU to set it against".into()),
                (None, _) => Err(format!("timerbench's {} did not run at {at}", side.words())),
            };
            out.push(Computed {
                label,
                implementation: Some(CPU_RATIO.to_string()),
                payload,
            });
        }
    }
    out
}

#[cfg(test)]
#[path = "runtimes_source_tests.rs"]
mod tests;
