//! What the parser targets (`reader`, `import_ftrace`, `import_csv`) share: reading a
//! workload's text the way the loader does, the checks every accepted workload must pass
//! (a round trip through the writer, the reference model's summary, a small replay), and
//! the scratch file an importer reads (the importers take paths, not bytes).

#![allow(dead_code)] // Each target uses its own part.

use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use timerbench_impls::TimerQueue;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_workloads::program::{Program, Step, load_from};
use timerbench_workloads::reader::Reader;
use timerbench_workloads::{Op, Workload, WorkloadError, compile, replay, writer};

/// The most work a replay through the reference queue may cost, in pending-timer visits
/// (it is O(pending) per operation and per tick of a `t N`); a bigger program is checked
/// without it. Keeps every input's run in milliseconds.
pub const REPLAY_WORK: u64 = 1 << 22;

/// Reads `bytes` as a workload with the streaming reader alone (syntax, no model).
pub fn read_workload(bytes: &[u8], path: &Path) -> Result<Workload, WorkloadError> {
    let mut reader = Reader::new(bytes, path)?;
    let mut ops = Vec::new();
    while let Some((_, op)) = reader.next_op()? {
        ops.push(op);
    }
    Ok(Workload {
        metadata: reader.metadata().clone(),
        ops,
    })
}

/// The workload's operations as the program holds them, names restored.
pub fn ops_of(program: &Program) -> Vec<Op> {
    let key = |slot: u32| program.keys[slot as usize];
    program
        .steps
        .iter()
        .map(|&step| match step {
            Step::Start { slot, delay } => Op::Start {
                id: key(slot),
                delay,
            },
            Step::Stop { slot } => Op::Stop { id: key(slot) },
            Step::Restart { slot, delay } => Op::Restart {
                id: key(slot),
                delay,
            },
            Step::Advance { ticks } => Op::Advance { ticks },
            Step::Tick { ticks } => Op::Tick { ticks },
            Step::Next => Op::Next,
        })
        .collect()
}

/// What the writer is documented to do to a metadata value (line breaks become spaces),
/// and what the reader then does (spaces and tabs at either end are trimmed).
pub fn written_value(value: &str) -> String {
    value
        .replace(['\n', '\r'], " ")
        .trim_matches([' ', '\t'])
        .to_string()
}

/// The tick units the importer targets choose from (by a hash of the input), with the
/// text `--tick` takes.
pub const TICKS: [(u64, &str); 6] = [
    (1, "1ns"),
    (1_000, "1us"),
    (1_000_000, "1ms"),
    (4_000_000, "4ms"),
    (1_000_000_000, "1s"),
    (1_000_000_000_000, "1000s"),
];

/// What every importer target checks last: the import is a valid workload (`compile`, as
/// the command checks before writing, under the file name `name`), its `x` lines of timers
/// the model already fired are the replay's misses (`model_fired_stops`, the importer's
/// count), and everything [`check_accepted`] checks.
pub fn check_import(workload: &Workload, name: &str, model_fired_stops: u64) {
    let path = Path::new(name);
    let program = compile(workload, path)
        .unwrap_or_else(|e| panic!("the import is invalid (an importer bug): {e}"));
    assert_eq!(
        program.summary.misses, model_fired_stops,
        "misses in the replay"
    );
    check_accepted(workload, &program, path);
}

/// Every check of a workload the model accepted as `program` (`workload` is the same
/// file read by the reader alone, or built in memory by an importer):
/// - the program holds the workload's operations and metadata, each step with a line;
/// - the summary adds up: one operation per line, `started == fired + stopped + pending`,
///   one expected firing per fired timer, in `(now, deadline, name)` order, none before
///   its deadline, the final clock below 2^63;
/// - `compile` of the workload in memory gives the same outcome;
/// - written by the writer and read back, the workload is the same (metadata values as
///   the writer documents) and loads to the same outcome;
/// - when small enough ([`REPLAY_WORK`]), replayed through the reference queue of the
///   impls crate it verifies exactly against the model.
pub fn check_accepted(workload: &Workload, program: &Program, path: &Path) {
    assert_eq!(
        ops_of(program),
        workload.ops,
        "the program's steps are not the workload's operations"
    );
    assert_eq!(program.metadata, workload.metadata, "metadata differs");
    assert_eq!(
        program.lines.len(),
        program.steps.len(),
        "a step without a line"
    );
    assert!(
        program.lines.windows(2).all(|w| w[0] < w[1]),
        "step lines not increasing: {:?}",
        program.lines
    );

    let summary = &program.summary;
    assert_eq!(summary.operations, workload.ops.len() as u64, "{summary:?}");
    assert_eq!(
        summary.started,
        summary.fired + summary.stopped + summary.pending,
        "the summary does not add up: {summary:?}"
    );
    assert_eq!(program.expected.len() as u64, summary.fired, "{summary:?}");
    assert!(summary.final_clock < 1 << 63, "{summary:?}");
    let log_key = |f: &timerbench_workloads::program::Firing| {
        (f.now, f.deadline, program.keys[f.slot as usize])
    };
    // Each operation's firings are in log order and the clock never goes back; two
    // operations can fire at one clock (an `n` that stays put), and the digest is of the
    // whole log sorted, as the spec says (checked below).
    let in_order = |w: &[timerbench_workloads::program::Firing]| {
        log_key(&w[0]) <= log_key(&w[1]) || (w[0].step != w[1].step && w[0].now == w[1].now)
    };
    if let Some(w) = program.expected.windows(2).find(|w| !in_order(w)) {
        panic!(
            "the expected log is not in (now, deadline, name) order: {:?} (line {}) before {:?} (line {})",
            log_key(&w[0]),
            program.lines[w[0].step as usize],
            log_key(&w[1]),
            program.lines[w[1].step as usize],
        );
    }
    assert!(
        program.expected.iter().all(|f| f.deadline <= f.now),
        "a firing before its deadline"
    );
    let mut sorted: Vec<_> = program.expected.iter().map(log_key).collect();
    sorted.sort_unstable();
    let mut hasher = Sha256::new();
    for (now, deadline, id) in sorted {
        hasher.update(format!("{now} {id} {deadline}\n").as_bytes());
    }
    let digest: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        summary.digest, digest,
        "the digest is not of the sorted log"
    );
    assert!(program.peak_pending <= summary.started, "{summary:?}");

    let compiled = compile(workload, path)
        .unwrap_or_else(|e| panic!("compile rejects what load accepted: {e}"));
    assert_eq!(compiled.summary, program.summary, "compile and load differ");
    assert_eq!(
        compiled.expected, program.expected,
        "compile and load differ"
    );

    let text = match writer::write_to(Vec::new(), workload) {
        Ok(text) => text,
        Err(e) => panic!("the writer cannot write back what was read: {e}"),
    };
    let reread = read_workload(&text, path).unwrap_or_else(|e| {
        panic!(
            "the writer's output does not read back: {e}\n{}",
            String::from_utf8_lossy(&text)
        )
    });
    assert_eq!(
        reread.ops, workload.ops,
        "operations differ after a round trip"
    );
    let expected_metadata: Vec<(String, String)> = workload
        .metadata
        .entries()
        .map(|(k, v)| (k.to_string(), written_value(v)))
        .collect();
    let got_metadata: Vec<(String, String)> = reread
        .metadata
        .entries()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(
        got_metadata, expected_metadata,
        "metadata differs after a round trip"
    );
    let reloaded = load_from(BufReader::new(&text[..]), path)
        .unwrap_or_else(|e| panic!("the written workload does not load: {e}"));
    assert_eq!(
        reloaded.summary, program.summary,
        "the round trip changed the outcome"
    );
    assert_eq!(
        reloaded.expected, program.expected,
        "the round trip changed the log"
    );

    replay_small(program);
}

/// Replays `program` through the impls crate's reference queue and verifies it exactly,
/// when the work is at most [`REPLAY_WORK`]; larger programs (many `t` ticks or many
/// pending timers) are skipped.
pub fn replay_small(program: &Program) {
    let ticks: u64 = program
        .steps
        .iter()
        .map(|s| match *s {
            Step::Tick { ticks } => ticks,
            _ => 1,
        })
        .fold(0u64, u64::saturating_add);
    let work = ticks.saturating_mul(program.peak_pending + 1);
    if work > REPLAY_WORK {
        return;
    }
    let queue = ReferenceQueue::<u64>::with_capacity(program.peak_pending as usize);
    let mut log = Vec::new();
    match replay::replay(queue, program, &mut log) {
        Ok(done) => assert_eq!(done.summary, program.summary),
        Err(e) => panic!("the reference queue's replay does not verify: {e}"),
    }
}

thread_local! {
    /// What the current input was run with, printed if it panics.
    static CONTEXT: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Sets the line the panic hook prints before the panic (the options an input chose).
pub fn set_context(text: String) {
    CONTEXT.with_borrow_mut(|c| *c = text);
}

/// Prints [`set_context`]'s line after any panic, then hands over to libFuzzer's hook.
pub fn install_context_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        CONTEXT.with(|c| {
            if let Ok(c) = c.try_borrow()
                && !c.is_empty()
            {
                eprintln!("\n{c}");
            }
        });
        previous(info);
    }));
}

/// Where scratch files go: /dev/shm when there is one, else the temporary folder.
fn scratch_folder() -> PathBuf {
    let folder = Path::new("/dev/shm");
    if folder.is_dir() {
        folder.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// A file of this process's own for an importer to read (`name` gives its extension and
/// stem, never `.gz`).
pub fn scratch_path(name: &str) -> PathBuf {
    scratch_folder().join(format!("timerbench-fuzz-{}-{name}", std::process::id()))
}

/// Removes the scratch files of processes that are gone: a crash aborts before its file is
/// removed (its input is in libFuzzer's artifact). For the targets' `init`.
pub fn remove_stale_scratch() {
    let Ok(entries) = std::fs::read_dir(scratch_folder()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("timerbench-fuzz-"))
            .and_then(|n| n.split('-').next())
        else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Writes `data` to `path`, runs `f` on it, and removes the file again (also on a panic,
/// which leaves the input in libFuzzer's artifact anyway).
pub fn with_file<T>(path: &Path, data: &[u8], f: impl FnOnce(&Path) -> T) -> T {
    struct Remove<'a>(&'a Path);
    impl Drop for Remove<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(self.0);
        }
    }
    std::fs::write(path, data).expect("cannot write the scratch file");
    let _remove = Remove(path);
    f(path)
}

/// A small, stable choice from the input's bytes (FNV-1a), for options that are not part
/// of the file's text: a reproducer needs only its bytes.
pub fn choice(data: &[u8], salt: u64, count: usize) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ salt;
    for &b in data {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash % count as u64) as usize
}

/// The leading whole number of a tally line such as `12 (wheel 7, hrtimer 5)`.
pub fn total(workload: &Workload, key: &str) -> u64 {
    let value = workload
        .metadata
        .get(key)
        .unwrap_or_else(|| panic!("no @{key} in the imported metadata"));
    value
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("@{key} {value}: no leading count"))
}

/// The count after `class ` in a tally line such as `12 (wheel 7, hrtimer 5)`.
pub fn part(workload: &Workload, key: &str, class: &str) -> u64 {
    let value = workload.metadata.get(key).unwrap_or_default();
    let from = value
        .find(&format!("{class} "))
        .unwrap_or_else(|| panic!("@{key} {value}: no {class} count"));
    value[from + class.len() + 1..]
        .split([',', ')'])
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("@{key} {value}: no {class} count"))
}

/// How many operations of each kind: `s`, `r`, `x`, `a`.
pub fn op_counts(ops: &[Op]) -> [u64; 4] {
    let mut counts = [0; 4];
    for op in ops {
        match op {
            Op::Start { .. } => counts[0] += 1,
            Op::Restart { .. } => counts[1] += 1,
            Op::Stop { .. } => counts[2] += 1,
            Op::Advance { .. } => counts[3] += 1,
            Op::Tick { .. } | Op::Next => panic!("an importer wrote `{op}`"),
        }
    }
    counts
}
