//! The folders of one plan read as runs: a run split into shards (`timerbench run --shard
//! K/N`, each shard a folder of its own, perhaps from another machine of a batch
//! scheduler) is one run again here, and runs of one plan from different hosts stay apart,
//! one run per host, for the readers to set side by side.
//!
//! The rule every reader (`report`, `rank`, `combine`, `compare`) applies through
//! [`group_runs`]:
//!
//! - Folders that are not shards are runs of their own, as they always were.
//! - Once any folder given is a shard, every folder must carry the same plan digest
//!   (`environment.json`'s `plan`): a folder of another plan, of another revision, or of
//!   an older timerbench that wrote no plan cannot be part of the same measurement, and
//!   merging it would make a report no machine would have written. Refused, naming both.
//! - The shards of one host (its `--host-label`, else its CPU model: [`host_of`]) are
//!   one run: all N of them, each once, none out of range. A missing or repeated shard is
//!   refused with its number, since a run with a hole reads as one whose structures failed
//!   nothing there, and a repeated one would count a cell twice.
//!
//! Refusing happens before anything is read beyond the environments, so a reader that
//! refuses writes nothing.

use crate::folder::{ENVIRONMENT_FILE, RESULTS_FILE, RecordLine, RunFiles, read_run};
use crate::schema::{CellKey, Environment};
use anyhow::bail;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// One shard of a plan's N: `index` from 1 to `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, from 1.
    pub index: u32,
    /// How many shards the plan was split into.
    pub count: u32,
}

impl Shard {
    /// Reads `K/N` (1 ≤ K ≤ N); the error says what is wrong, for the flag's message.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not K/N (e.g. 2/3: the second of 3 shards)"))?;
        let number = |word: &str| {
            word.trim()
                .parse::<u32>()
                .map_err(|_| format!("`{text}` is not K/N: `{word}` is not a whole number"))
        };
        let shard = Shard {
            index: number(index)?,
            count: number(count)?,
        };
        shard.check()?;
        Ok(shard)
    }

    /// Whether K is within 1..=N and N at least 1.
    pub fn check(&self) -> Result<(), String> {
        if self.count == 0 {
            return Err(format!("{self}: a plan splits into 1 shard or more"));
        }
        if self.index == 0 || self.index > self.count {
            return Err(format!(
                "{self}: shard numbers run from 1 to {} (K/N is 1-based)",
                self.count
            ));
        }
        Ok(())
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The host a run is of, as readers tell hosts apart: its `--host-label`, else its CPU
/// model. Not its host name: the shards of one run land on whichever nodes a scheduler
/// gives them, each with a name of its own, and they are one run all the same; what
/// makes a ranking another machine's is the processor (or what the label says).
pub fn host_of(environment: &Environment) -> String {
    match &environment.host_label {
        Some(label) => label.clone(),
        None => environment.cpu.clone(),
    }
}

/// One run as the readers take it: one folder, or every shard of one plan from one host,
/// in shard order.
#[derive(Debug, Clone)]
pub struct RunGroup {
    /// The folders, in shard order.
    pub folders: Vec<PathBuf>,
    /// The first folder's `environment.json`, when it has one.
    pub environment: Option<Environment>,
}

impl RunGroup {
    /// The first folder: where a reader writes what it writes by default.
    pub fn first(&self) -> &Path {
        &self.folders[0]
    }

    /// Whether the run is the shards of a plan merged.
    pub fn is_merged(&self) -> bool {
        self.environment.as_ref().is_some_and(|e| e.shard.is_some())
    }

    /// The host, when the run has an environment ([`host_of`]).
    pub fn host(&self) -> Option<String> {
        self.environment.as_ref().map(host_of)
    }

    /// The plan's digest, when the run recorded one.
    pub fn plan(&self) -> Option<&str> {
        self.environment.as_ref()?.plan.as_deref()
    }

    /// The folders as a message names them: the one, or every shard's and how many.
    pub fn describe(&self) -> String {
        match self.folders.as_slice() {
            [one] if !self.is_merged() => one.display().to_string(),
            folders => format!(
                "{} ({} shards)",
                folders
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                folders.len()
            ),
        }
    }

    /// Reads every folder of the run ([`read_run`]) as one: their records in shard order
    /// (each [`RecordLine`] with the folder it came from), the first's environment without
    /// its shard. A cell in two shards is refused: the shards of a plan are disjoint, so
    /// such folders were not split by one plan.
    pub fn read(&self) -> anyhow::Result<MergedRun> {
        let mut records = Vec::new();
        let mut seen: BTreeMap<CellKey, &Path> = BTreeMap::new();
        let mut environment = None;
        for folder in &self.folders {
            let RunFiles {
                records: lines,
                environment: own,
            } = read_run(folder)?;
            if self.is_merged() {
                for line in &lines {
                    if let Some(other) = seen.get(&line.record.key)
                        && *other != folder.as_path()
                    {
                        bail!(
                            "{}:{}: the cell {}/{}/{} is also in {}: the shards of one plan \
                             hold disjoint cells, so these were not split by one plan",
                            folder.join(RESULTS_FILE).display(),
                            line.line,
                            line.record.key.workload,
                            line.record.key.timers,
                            line.record.key.implementation,
                            other.display()
                        );
                    }
                }
                for line in &lines {
                    seen.insert(line.record.key.clone(), folder.as_path());
                }
            }
            if environment.is_none() {
                environment = own.map(|mut e: Environment| {
                    e.shard = None;
                    e
                });
            }
            records.extend(lines.into_iter().map(|line| (folder.clone(), line)));
        }
        Ok(MergedRun {
            records,
            environment,
        })
    }
}

/// A run's folders read as one ([`RunGroup::read`]).
#[derive(Debug, Clone)]
pub struct MergedRun {
    /// Every record with the folder it was read from, in shard order then file order.
    pub records: Vec<(PathBuf, RecordLine)>,
    /// The first folder's environment, its `shard` cleared: the run's.
    pub environment: Option<Environment>,
}

/// The environment of `folder`, after the checks [`read_run`] makes of the folder (it
/// exists, it holds `results.jsonl`), without reading the records.
fn environment_of(folder: &Path) -> anyhow::Result<Option<Environment>> {
    if !folder.is_dir() || !folder.join(RESULTS_FILE).is_file() {
        // The same message as reading the folder gives.
        read_run(folder)?;
    }
    let path = folder.join(ENVIRONMENT_FILE);
    if !path.exists() {
        return Ok(None);
    }
    crate::folder::read_environment(&path).map(Some)
}

/// Groups `folders` into runs by the module's rule: each folder that is not a shard a run
/// of its own, each host's shards of the plan one run; in the order their first folder
/// was given. Refuses, naming the folders, shards of different plans or revisions, a
/// folder without a plan beside shards, and a shard missing, repeated or out of range.
pub fn group_runs(folders: &[PathBuf]) -> anyhow::Result<Vec<RunGroup>> {
    let mut read = Vec::new();
    for folder in folders {
        let environment = environment_of(folder)?;
        read.push((folder.clone(), environment));
    }
    let Some((first_shard, first_environment)) = read
        .iter()
        .find(|(_, e)| e.as_ref().is_some_and(|e| e.shard.is_some()))
        .map(|(f, e)| (f.clone(), e.clone().expect("found with an environment")))
    else {
        return Ok(read
            .into_iter()
            .map(|(folder, environment)| RunGroup {
                folders: vec![folder],
                environment,
            })
            .collect());
    };
    let plan = first_environment.plan.clone().unwrap_or_default();
    for (folder, environment) in &read {
        let Some(environment) = environment else {
            bail!(
                "{} has no {ENVIRONMENT_FILE}, so no plan: it cannot be merged with the shards \
                 of {} (plan {plan})",
                folder.display(),
                first_shard.display()
            );
        };
        let Some(other) = &environment.plan else {
            bail!(
                "{}'s {ENVIRONMENT_FILE} has no `plan` (a run of a timerbench older than \
                 sharding): it cannot be merged with the shards of {} (plan {plan})",
                folder.display(),
                first_shard.display()
            );
        };
        if *other != plan {
            if environment.git_revision != first_environment.git_revision {
                bail!(
                    "{} and {} are of different revisions ({} and {}): shards merge only \
                     with the shards of their own plan",
                    first_shard.display(),
                    folder.display(),
                    first_environment.git_revision,
                    environment.git_revision
                );
            }
            bail!(
                "{} and {} are of different plans ({plan} and {other}: another suite, \
                 filter, setting or workload): shards merge only with the shards of their \
                 own plan",
                first_shard.display(),
                folder.display()
            );
        }
        if let Some(shard) = environment.shard {
            shard.check().map_err(|e| {
                anyhow::anyhow!(
                    "{}: its {ENVIRONMENT_FILE} says shard {e}",
                    folder.display()
                )
            })?;
        }
    }
    // Each host's shards, by shard number; each whole run alone.
    let mut groups: Vec<RunGroup> = Vec::new();
    let mut by_host: BTreeMap<String, BTreeMap<u32, PathBuf>> = BTreeMap::new();
    let mut counts: BTreeMap<String, (u32, PathBuf)> = BTreeMap::new();
    let mut host_group: BTreeMap<String, usize> = BTreeMap::new();
    for (folder, environment) in read {
        let environment = environment.expect("checked above");
        let Some(shard) = environment.shard else {
            groups.push(RunGroup {
                folders: vec![folder],
                environment: Some(environment),
            });
            continue;
        };
        let host = host_of(&environment);
        match counts.get(&host) {
            Some((count, other)) if *count != shard.count => bail!(
                "{} is shard {shard} and {} a shard of {count}: one plan's run on {host} \
                 is split one way",
                folder.display(),
                other.display()
            ),
            Some(_) => {}
            None => {
                counts.insert(host.clone(), (shard.count, folder.clone()));
            }
        }
        let shards = by_host.entry(host.clone()).or_default();
        if let Some(other) = shards.get(&shard.index) {
            bail!(
                "shard {shard} of {host}'s run is given twice: {} and {} (a second run of \
                 the plan on one host needs its own --host-label)",
                other.display(),
                folder.display()
            );
        }
        shards.insert(shard.index, folder.clone());
        if !host_group.contains_key(&host) {
            host_group.insert(host.clone(), groups.len());
            groups.push(RunGroup {
                folders: Vec::new(),
                environment: Some(environment),
            });
        }
    }
    for (host, shards) in by_host {
        let (count, _) = counts[&host];
        let missing: Vec<String> = (1..=count)
            .filter(|k| !shards.contains_key(k))
            .map(|k| format!("{k}/{count}"))
            .collect();
        if !missing.is_empty() {
            bail!(
                "{host}'s run of plan {plan} lacks shard{} {}: give every shard's folder \
                 (a run with a hole would read as a whole one)",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            );
        }
        let group = &mut groups[host_group[&host]];
        group.folders = shards.into_values().collect();
        // The environment of shard 1: the run's header.
        let first = group.first().to_path_buf();
        group.environment = environment_of(&first)?;
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_reads_as_k_of_n_from_1() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(Shard::parse("1/1").map(|s| s.to_string()), Ok("1/1".into()));
        for bad in ["0/3", "4/3", "1/0", "3", "a/3", "1/b"] {
            assert!(Shard::parse(bad).is_err(), "{bad} read");
        }
    }
}
