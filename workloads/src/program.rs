//! A workload loaded for replay: parsed, checked by running the reference model, and
//! compiled to dense timer numbers, with the model's expiry log kept as the expected
//! outcome.
//!
//! Workload files name timers by any `u64`. A replay must turn each name into the handle
//! its queue gave, in the measured loop, so names are numbered `0..timers` in order of first
//! appearance here, once, and the replay keeps handles in a plain vector indexed by number.

use crate::Workload;
use crate::metadata::Metadata;
use crate::op::{Op, TimerKey};
use crate::reach::Reach;
use crate::reader::{Reader, WorkloadError};
use crate::reference::{Expiry, ReferenceModel, Summary};
use rustc_hash::FxHashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// A timer's dense number in a [`Program`].
pub type Slot = u32;

/// An operation with its timer renamed to a [`Slot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `s`.
    Start {
        /// The timer.
        slot: Slot,
        /// Ticks from now.
        delay: u64,
    },
    /// `x`.
    Stop {
        /// The timer.
        slot: Slot,
    },
    /// `r`.
    Restart {
        /// The timer.
        slot: Slot,
        /// Ticks from now.
        delay: u64,
    },
    /// `a`.
    Advance {
        /// Ticks.
        ticks: u64,
    },
    /// `t`.
    Tick {
        /// Calls of one tick each.
        ticks: u64,
    },
    /// `n`.
    Next,
}

/// A workload ready to replay. See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Program {
    /// Where it came from, for messages.
    pub path: PathBuf,
    /// The `@KEY VALUE` lines.
    pub metadata: Metadata,
    /// The operations, timers renamed.
    pub steps: Vec<Step>,
    /// The file line of each step.
    pub lines: Vec<u64>,
    /// Each slot's name in the file.
    pub keys: Vec<TimerKey>,
    /// What the reference model fired, in log order, with slots for names.
    pub expected: Vec<Firing>,
    /// The reference model's summary.
    pub summary: Summary,
    /// The most timers pending at once.
    pub peak_pending: u64,
    /// The largest delay, deadline and clock (with the model; zero without).
    pub reach: Reach,
    /// Bytes read from the file (0 when built in memory).
    pub bytes: u64,
}

/// One fired timer, as a replay records it: the clock at the end of the clock move that
/// fired it (the operation's end, or for `t N` the tick), its deadline, its slot, and the
/// index of that operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Firing {
    /// The clock at the end of the clock move that fired it: the end of an `a` or `n`, the
    /// tick of a `t N` that fired it.
    pub now: u64,
    /// The timer's deadline.
    pub deadline: u64,
    /// The timer.
    pub slot: Slot,
    /// Index of the operation in [`Program::steps`].
    pub step: u32,
}

impl Program {
    /// The fill: how many steps the workload opens with that are starts (`s` lines). What
    /// the resident timers cost to put in place, which a figure "after the fill" leaves
    /// out; the same definition for `timerbench run` and `cargo bench`.
    pub fn fill_steps(&self) -> usize {
        self.steps
            .iter()
            .position(|step| !matches!(step, Step::Start { .. }))
            .unwrap_or(self.steps.len())
    }
}

/// Timer names to slots. The standard families name their timers 0, 1, 2, ..., so a
/// name below twice the names seen so far (plus 1024) is looked up in a plain array, and
/// any other in a hash map: the hash map's probes are random, the array's in order, and
/// loading a 1M-timer file spent a large share of a `samples` process in those probes
/// (METHODOLOGY.md, *How a cell is measured*).
#[derive(Default)]
struct Names {
    dense: Vec<Slot>,
    sparse: FxHashMap<TimerKey, Slot>,
}

impl Names {
    /// `dense` holds this for a name not yet given a slot.
    const NONE: Slot = Slot::MAX;

    fn get(&self, key: TimerKey) -> Option<Slot> {
        match self.dense.get(key as usize) {
            Some(&slot) if slot != Self::NONE => Some(slot),
            // Not in the array: in the map, if it was named before the array reached it.
            _ => self.sparse.get(&key).copied(),
        }
    }

    /// Gives `key`, which has none yet, `slot` (never `Slot::MAX`).
    fn insert(&mut self, key: TimerKey, slot: Slot) {
        let dense_reach = 2 * (self.dense.len() as u64 + self.sparse.len() as u64) + 1024;
        if key < dense_reach && usize::try_from(key).is_ok() {
            let index = key as usize;
            if index >= self.dense.len() {
                self.dense.resize(index + 1, Self::NONE);
            }
            self.dense[index] = slot;
        } else {
            self.sparse.insert(key, slot);
        }
    }
}

/// Builds a program one operation at a time, running the model as it goes.
struct Compiler {
    path: PathBuf,
    /// `None` when the outcome is already known and only the operations are wanted.
    model: Option<ReferenceModel>,
    /// Each timer name's slot.
    slots: Names,
    program: Program,
}

impl Compiler {
    fn new(path: &Path, metadata: Metadata, check: bool) -> Self {
        Compiler {
            path: path.to_path_buf(),
            model: check.then(ReferenceModel::new),
            slots: Names::default(),
            program: Program {
                path: path.to_path_buf(),
                metadata,
                ..Program::default()
            },
        }
    }

    fn slot(&mut self, key: TimerKey) -> Result<Slot, String> {
        if let Some(slot) = self.slots.get(key) {
            return Ok(slot);
        }
        let slot = Slot::try_from(self.program.keys.len())
            .ok()
            .filter(|&s| s != Slot::MAX)
            .ok_or("more than 2^32 - 1 distinct timers in one workload")?;
        self.slots.insert(key, slot);
        self.program.keys.push(key);
        Ok(slot)
    }

    fn push(&mut self, line: u64, op: Op) -> Result<(), WorkloadError> {
        let step_index = u32::try_from(self.program.steps.len())
            .map_err(|_| WorkloadError::at(&self.path, line, "more than 2^32 operations"))?;
        if let Some(model) = &mut self.model {
            if let Op::Start { delay, .. } | Op::Restart { delay, .. } = op {
                self.program.reach.start(model.now(), delay);
            }
            let slots = &self.slots;
            let expected = &mut self.program.expected;
            model
                .apply(op, |Expiry { now, deadline, id }| {
                    expected.push(Firing {
                        now,
                        deadline,
                        slot: slots.get(id).expect("a fired timer was started"),
                        step: step_index,
                    })
                })
                .map_err(|e| WorkloadError::at(&self.path, line, format!("{e}: `{op}`")))?;
            self.program.peak_pending = self.program.peak_pending.max(model.pending() as u64);
        }
        let step = match op {
            Op::Start { id, delay } => Step::Start {
                slot: self
                    .slot(id)
                    .map_err(|m| WorkloadError::at(&self.path, line, m))?,
                delay,
            },
            Op::Stop { id } => Step::Stop {
                slot: self
                    .slot(id)
                    .map_err(|m| WorkloadError::at(&self.path, line, m))?,
            },
            Op::Restart { id, delay } => Step::Restart {
                slot: self
                    .slot(id)
                    .map_err(|m| WorkloadError::at(&self.path, line, m))?,
                delay,
            },
            Op::Advance { ticks } => Step::Advance { ticks },
            Op::Tick { ticks } => Step::Tick { ticks },
            Op::Next => Step::Next,
        };
        self.program.steps.push(step);
        self.program.lines.push(line);
        Ok(())
    }

    fn finish(mut self) -> Program {
        if let Some(model) = &self.model {
            self.program.summary = model.summary();
            self.program.reach.max_clock = model.now();
        }
        self.program
    }
}

/// Reads, checks and compiles the workload file at `path`.
pub fn load(path: &Path) -> Result<Program, WorkloadError> {
    read_file(path, true)
}

/// Reads and compiles the workload file at `path` without running the reference model:
/// for a file already checked, whose outcome is known. The program has no expected log,
/// no reference summary and no peak; `s` of a pending timer and sums past 2^63 go
/// unnoticed.
pub fn load_unchecked(path: &Path) -> Result<Program, WorkloadError> {
    read_file(path, false)
}

fn read_file(path: &Path, check: bool) -> Result<Program, WorkloadError> {
    let file = std::fs::File::open(path)
        .map_err(|e| WorkloadError::file(path, format!("cannot open: {e}")))?;
    let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut program = read(BufReader::with_capacity(1 << 16, file), path, check)?;
    program.bytes = bytes;
    Ok(program)
}

/// Reads, checks and compiles a workload from `input`; `path` names it in messages.
pub fn load_from(input: impl BufRead, path: &Path) -> Result<Program, WorkloadError> {
    read(input, path, true)
}

fn read(input: impl BufRead, path: &Path, check: bool) -> Result<Program, WorkloadError> {
    let mut reader = Reader::new(input, path)?;
    let mut compiler = Compiler::new(path, reader.metadata().clone(), check);
    while let Some((line, op)) = reader.next_op()? {
        compiler.push(line, op)?;
    }
    Ok(compiler.finish())
}

/// Checks and compiles an in-memory workload (a generated one, say); errors name `path`
/// and the operation's line as it would be written (header and metadata first).
pub fn compile(workload: &Workload, path: &Path) -> Result<Program, WorkloadError> {
    let mut compiler = Compiler::new(path, workload.metadata.clone(), true);
    let first_line = 2 + workload.metadata.entries().count() as u64;
    for (index, &op) in workload.ops.iter().enumerate() {
        compiler.push(first_line + index as u64, op)?;
    }
    Ok(compiler.finish())
}

#[cfg(test)]
mod tests {
    use super::Names;

    #[test]
    fn names_keep_their_slots_whether_dense_or_sparse() {
        let mut names = Names::default();
        // 5000 is beyond the array's first reach (1024), so it goes to the map; the
        // array then grows past it, and it must still be found there.
        let early = [3, 5000, u64::MAX];
        let keys: Vec<u64> = early
            .into_iter()
            .chain((0..6000).filter(|k| !early.contains(k)))
            .collect();
        for (slot, &key) in keys.iter().enumerate() {
            assert_eq!(names.get(key), None, "key {key} before it is named");
            names.insert(key, slot as u32);
        }
        assert!(
            names.dense.len() > 5000,
            "the array grew past the early sparse key"
        );
        for (slot, &key) in keys.iter().enumerate() {
            assert_eq!(names.get(key), Some(slot as u32), "key {key}");
        }
        assert_eq!(names.get(6000), None);
        assert_eq!(names.get(1 << 40), None);
    }
}
