//! What every scheme shares: the [`Scheme`] trait the driver calls, a [`Handle`], the table
//! from timer key to the structure's handle, and one [`Shard`]: a queue with its log.

use crate::log::{Entry, Key, ShardLog};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use timerbench_impls::{Tick, TimerId, TimerQueue};

/// A started timer as a producer holds it: which shard owns it, and its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handle {
    pub shard: u32,
    pub key: Key,
}

/// What a stop call did: applied before it returned (a lock was taken), or sent to the
/// shard's owner, who applies it later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCall {
    Applied,
    Sent,
}

/// What a scheme hands back when the run is over.
pub struct Finished {
    pub logs: Vec<ShardLog>,
    /// Send-to-apply times of the stops that went through a queue, in ns (empty for the
    /// lock schemes, whose stops are applied inside the call).
    pub queued_stops: Histogram<u64>,
    /// The most commands waiting in any one queue at a drain, and their bytes.
    pub peak_queued: u64,
    pub peak_queued_bytes: u64,
    /// The owner thread's CPU time (CLOCK_THREAD_CPUTIME_ID) from the settle after the
    /// resident timers to the end, for the owner scheme.
    pub owner_cpu_ns: Option<u64>,
}

/// A sharing scheme: any [`TimerQueue`] made usable from several threads.
///
/// `thread` is the calling producer (`0..threads`). Delays are relative to the owning
/// shard's clock when the operation is applied, as a workload's are.
pub trait Scheme: Sync {
    /// The shard a timer started by producer `starter` lives in.
    fn shard_of(&self, key: Key, starter: usize) -> u32;
    fn start(&self, thread: usize, key: Key, delay: Tick) -> Handle;
    fn restart(&self, thread: usize, handle: Handle, delay: Tick) -> Handle;
    fn stop(&self, thread: usize, handle: Handle) -> StopCall;
    /// The ticker moves the clock to `to`.
    fn advance(&self, to: Tick);
    /// A producer with nothing to do lets its shard catch up (per-thread shards).
    fn service(&self, thread: usize) {
        let _ = thread;
    }
    /// Returns once every command sent so far is applied.
    fn settle(&self) {}
    /// Applies what is still queued, moves every shard to `clock`, and hands back the logs.
    fn finish(self, clock: Tick) -> Finished
    where
        Self: Sized;
}

/// Key to the structure's handle, bits of [`TimerId::to_bits`]; written only by whoever
/// owns the key's shard at that moment (under its lock, or the owner thread).
pub struct Ids(Vec<AtomicU64>);

impl Ids {
    pub fn new(keys: usize) -> Self {
        Ids((0..keys).map(|_| AtomicU64::new(0)).collect())
    }

    fn get(&self, key: Key) -> TimerId {
        TimerId::from_bits(self.0[key as usize].load(Ordering::Relaxed))
    }

    fn set(&self, key: Key, id: TimerId) {
        self.0[key as usize].store(id.to_bits(), Ordering::Relaxed);
    }
}

/// One queue and its log.
pub struct Shard<Q> {
    pub queue: Q,
    pub log: ShardLog,
}

impl<Q: TimerQueue<u64>> Shard<Q> {
    pub fn new(shard: u32, queue: Q) -> Self {
        Shard {
            queue,
            log: ShardLog {
                shard,
                entries: Vec::new(),
            },
        }
    }

    fn log_start(&mut self, key: Key, deadline: Tick) {
        let window = self.queue.window(deadline);
        self.log.entries.push(Entry::Start {
            key,
            deadline,
            window,
        });
    }

    pub fn start(&mut self, ids: &Ids, key: Key, delay: Tick) {
        let deadline = self.queue.now().saturating_add(delay);
        ids.set(key, self.queue.start(deadline, key));
        self.log_start(key, deadline);
    }

    pub fn restart(&mut self, ids: &Ids, key: Key, delay: Tick) {
        let deadline = self.queue.now().saturating_add(delay);
        let (id, old) = self.queue.restart(ids.get(key), deadline, key);
        ids.set(key, id);
        let found = old.is_some();
        self.log.entries.push(Entry::Stop { key, found });
        self.log_start(key, deadline);
    }

    pub fn stop(&mut self, ids: &Ids, key: Key) {
        let found = self.queue.stop(ids.get(key)).is_some();
        self.log.entries.push(Entry::Stop { key, found });
    }

    /// Moves the clock to `to` if it is ahead, logging what fired.
    pub fn advance(&mut self, to: Tick) {
        if to <= self.queue.now() {
            return;
        }
        let mut fired = Vec::new();
        self.queue
            .advance(to, |_, key, deadline| fired.push((key, deadline)));
        self.log.entries.push(Entry::Advance { to, fired });
    }
}

/// An empty latency histogram in ns, 1 ns to 60 s at three significant figures.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

/// Records the ns since `since`, at least 1.
pub fn record_since(histogram: &mut Histogram<u64>, since: Instant) {
    let ns = since.elapsed().as_nanos().clamp(1, 60_000_000_000) as u64;
    histogram.saturating_record(ns);
}
