//! What a shard applied, in the order it applied it, and the check of that log against the
//! reference model.
//!
//! Every scheme applies each shard's operations one at a time (under the shard's lock, or
//! on the owner thread), and pushes each onto the shard's log at that moment: the log's
//! order is the order the acknowledgements define. No timer moves between shards, so the
//! shards' logs are independent and each is replayed through its own reference model
//! (`timerbench_workloads::reference::ReferenceModel`); no global counter is taken, since
//! one would add a contention point that none of the modelled systems has.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use timerbench_impls::{Tick, Window};
use timerbench_workloads::reference::ReferenceModel;

/// A timer's name: the key of the workload it came from.
pub type Key = u64;

/// One applied operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A timer started at `deadline`, with the window the structure declared for it.
    Start {
        key: Key,
        deadline: Tick,
        window: Window,
    },
    /// A stop, and whether the structure said the timer was pending (the acknowledgement).
    Stop { key: Key, found: bool },
    /// A clock move to `to`, with the timers it fired and their deadlines.
    Advance { to: Tick, fired: Vec<(Key, Tick)> },
}

/// One shard's log: entry `i` is the shard's `i`-th applied operation.
#[derive(Debug, Clone, Default)]
pub struct ShardLog {
    pub shard: u32,
    pub entries: Vec<Entry>,
}

/// The first operation that breaks the contract: a timer lost, fired twice, fired after its
/// stop was acknowledged, fired early, or a stop answered wrongly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offence {
    pub shard: u32,
    /// Its place in the shard's log.
    pub sequence: usize,
    pub key: Key,
    pub why: String,
}

impl fmt::Display for Offence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timer {} (shard {}, applied operation {}): {}",
            self.key, self.shard, self.sequence, self.why
        )
    }
}

/// The verdict on every shard's log: `Ok` or the first offence (the lowest place in its
/// shard's log; shards tie-broken by number).
pub fn verify(logs: &[ShardLog]) -> Result<(), Offence> {
    let mut offences: Vec<Offence> = logs.iter().filter_map(|l| verify_shard(l).err()).collect();
    offences.sort_by_key(|o| (o.sequence, o.shard));
    match offences.into_iter().next() {
        Some(offence) => Err(offence),
        None => Ok(()),
    }
}

/// A shard's replay: the model holds the pending deadlines; `latest` holds, per pending
/// timer, the clock by which it must have fired (deadline plus its window's lateness).
struct Replay {
    shard: u32,
    model: ReferenceModel,
    windows: HashMap<Key, Window>,
    latest: BTreeSet<(Tick, Key)>,
    stopped: HashSet<Key>,
    fired: HashSet<Key>,
    sequence: usize,
}

fn verify_shard(log: &ShardLog) -> Result<(), Offence> {
    let mut replay = Replay {
        shard: log.shard,
        model: ReferenceModel::new(),
        windows: HashMap::new(),
        latest: BTreeSet::new(),
        stopped: HashSet::new(),
        fired: HashSet::new(),
        sequence: 0,
    };
    for (sequence, entry) in log.entries.iter().enumerate() {
        replay.sequence = sequence;
        match entry {
            Entry::Start {
                key,
                deadline,
                window,
            } => replay.start(*key, *deadline, *window)?,
            Entry::Stop { key, found } => replay.stop(*key, *found)?,
            Entry::Advance { to, fired } => replay.advance(*to, fired)?,
        }
    }
    Ok(())
}

impl Replay {
    fn offence(&self, key: Key, why: String) -> Offence {
        Offence {
            shard: self.shard,
            sequence: self.sequence,
            key,
            why,
        }
    }

    fn start(&mut self, key: Key, deadline: Tick, window: Window) -> Result<(), Offence> {
        if let Some(pending) = self.model.deadline(key) {
            let why = format!("started again while pending at deadline {pending}");
            return Err(self.offence(key, why));
        }
        self.model.start_at(key, deadline);
        self.windows.insert(key, window);
        self.latest
            .insert((deadline.saturating_add(window.late), key));
        self.stopped.remove(&key);
        self.fired.remove(&key);
        Ok(())
    }

    fn forget(&mut self, key: Key) {
        if let Some(deadline) = self.model.deadline(key) {
            let late = self.windows.remove(&key).map_or(0, |w| w.late);
            self.latest.remove(&(deadline.saturating_add(late), key));
            self.model.stop_now(key);
        }
    }

    fn stop(&mut self, key: Key, found: bool) -> Result<(), Offence> {
        let pending = self.model.deadline(key).is_some();
        if found != pending {
            let why = if found {
                "a stop returned it, but it was not pending".to_string()
            } else {
                "a stop said it was not pending, but it was: the stop was lost".to_string()
            };
            return Err(self.offence(key, why));
        }
        self.forget(key);
        if found {
            self.stopped.insert(key);
        }
        Ok(())
    }

    fn advance(&mut self, to: Tick, fired: &[(Key, Tick)]) -> Result<(), Offence> {
        for &(key, deadline) in fired {
            let Some(pending) = self.model.deadline(key) else {
                let why = if self.fired.contains(&key) {
                    format!("fired twice (again at the advance to {to})")
                } else if self.stopped.contains(&key) {
                    format!("fired at the advance to {to} after its stop was acknowledged")
                } else {
                    format!("fired at the advance to {to} but was never started")
                };
                return Err(self.offence(key, why));
            };
            let early = self.windows.get(&key).is_some_and(|w| w.early);
            if pending != deadline || (to < deadline && !early) {
                let why = format!(
                    "fired at the advance to {to} with deadline {deadline}; \
                     the model has deadline {pending}"
                );
                return Err(self.offence(key, why));
            }
            self.forget(key);
            self.fired.insert(key);
        }
        if let Some(&(latest, key)) = self.latest.first()
            && latest <= to
        {
            let deadline = self.model.deadline(key).unwrap_or(latest);
            let why = format!(
                "lost: deadline {deadline}, due by {latest}, still pending after the advance to {to}"
            );
            return Err(self.offence(key, why));
        }
        Ok(())
    }
}
