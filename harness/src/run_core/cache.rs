//! The workload cache of `timerbench run`: every workload a run needs is generated once,
//! checked by the reference model, and kept in the results root's `results/.cache` under
//! the hash of its generator command, with the model's summary beside it, so that later
//! runs skip both the generation and the model.

use super::files;
use crate::table::duration;
use anyhow::{Context, anyhow};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use timerbench_workloads::families::{GENERATORS_REVISION, command_line, generate};
use timerbench_workloads::reach::Reach;
use timerbench_workloads::reference::Summary;
use timerbench_workloads::suite::Case;
use timerbench_workloads::{compile, writer};

/// The generator command of a case: its identity in the cache; for a file, its hash.
pub(super) fn case_id(case: &Case) -> String {
    if files::is_file(case) {
        let sha256 = case.spec.params.iter().find(|(k, _)| k == "sha256");
        return files::id(sha256.map_or("", |(_, v)| v.as_str()));
    }
    command_line(&case.family, &case.spec)
}

/// A generated, checked workload on disk.
pub(super) struct Prepared {
    /// The workload file.
    pub path: PathBuf,
    /// The reference model's summary of it.
    pub reference: Summary,
    /// Its largest delay, deadline and clock.
    pub reach: Reach,
}

/// What the cache keeps beside each workload file.
#[derive(serde::Serialize, serde::Deserialize)]
struct CacheEntry {
    generator: String,
    revision: u32,
    reference: Summary,
    reach: Reach,
}

/// The workload cache: `results/.cache` (from the working directory), whatever `--out`
/// says, so that every run shares its workloads and a run written elsewhere leaves nothing
/// beside its folder (a folder's parent may be any directory of the user's). The default
/// run folders live in `results/` too, so the cache sits beside them.
pub(super) fn folder() -> PathBuf {
    Path::new("results").join(".cache")
}

/// Generates (or finds in the cache) the workload of every case, in parallel, by case id.
pub(super) fn prepare_workloads(
    all: &[&Case],
    cache: &Path,
) -> anyhow::Result<BTreeMap<String, Prepared>> {
    let mut cases: BTreeMap<String, &Case> = BTreeMap::new();
    for case in all {
        cases.entry(case_id(case)).or_insert(case);
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
        let (reference, reach) = (entry.reference, entry.reach);
        return Ok((
            Prepared {
                path,
                reference,
                reach,
            },
            false,
        ));
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
        reach: program.reach,
    };
    write_json(&entry_path, &entry)?;
    Ok((
        Prepared {
            path,
            reference: program.summary,
            reach: program.reach,
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

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value).context("cannot encode a cache entry")? + "\n";
    timerbench_results::write_atomically(path, text.as_bytes())
}
