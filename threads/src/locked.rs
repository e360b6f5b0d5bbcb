//! Locks: K queues, each behind its own mutex, the shard chosen by the timer's key. With
//! K = 1 it is the global mutex of Java's `ScheduledThreadPoolExecutor` (`DelayedWorkQueue`
//! under one `ReentrantLock`) and of Go before 1.10; with K > 1 it is Kafka's sharded
//! purgatory (512 shards, KAFKA-6431) and tokio's sharded driver lock (#6534, reverted).
//!
//! Every call takes one lock and applies at once, so a stop is acknowledged when it
//! returns; the ticker takes every shard's lock in turn to move its clock, which is what
//! made tokio revert its sharding (its `park` took every shard lock).

use crate::log::Key;
use crate::shard::{Finished, Handle, Ids, Scheme, Shard, StopCall, latency_histogram};
use std::sync::Mutex;
use timerbench_impls::{Tick, TimerQueue};

/// K locked shards.
pub struct Locked<Q> {
    shards: Vec<Mutex<Shard<Q>>>,
    ids: Ids,
}

impl<Q: TimerQueue<u64> + Send> Locked<Q> {
    /// `shards` queues made by `build` (at least one), for keys `0..keys`.
    pub fn new(shards: usize, keys: usize, build: impl Fn() -> Q) -> Self {
        Locked {
            shards: (0..shards.max(1))
                .map(|s| Mutex::new(Shard::new(s as u32, build())))
                .collect(),
            ids: Ids::new(keys),
        }
    }

    fn with<R>(&self, shard: u32, apply: impl FnOnce(&mut Shard<Q>, &Ids) -> R) -> R {
        let mut guard = self.shards[shard as usize]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        apply(&mut guard, &self.ids)
    }
}

impl<Q: TimerQueue<u64> + Send> Scheme for Locked<Q> {
    fn shard_of(&self, key: Key, _starter: usize) -> u32 {
        (key % self.shards.len() as u64) as u32
    }

    fn start(&self, _thread: usize, key: Key, delay: Tick) -> Handle {
        let shard = self.shard_of(key, 0);
        self.with(shard, |s, ids| s.start(ids, key, delay));
        Handle { shard, key }
    }

    fn restart(&self, _thread: usize, handle: Handle, delay: Tick) -> Handle {
        self.with(handle.shard, |s, ids| s.restart(ids, handle.key, delay));
        handle
    }

    fn stop(&self, _thread: usize, handle: Handle) -> StopCall {
        self.with(handle.shard, |s, ids| s.stop(ids, handle.key));
        StopCall::Applied
    }

    fn advance(&self, to: Tick) {
        for shard in 0..self.shards.len() {
            self.with(shard as u32, |s, _| s.advance(to));
        }
    }

    fn finish(self, clock: Tick) -> Finished {
        self.advance(clock);
        Finished {
            logs: self
                .shards
                .into_iter()
                .map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()).log)
                .collect(),
            queued_stops: latency_histogram(),
            peak_queued: 0,
            peak_queued_bytes: 0,
            owner_cpu_ns: None,
        }
    }
}
