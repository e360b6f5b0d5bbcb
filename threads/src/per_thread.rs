//! Per-thread shards: each producer owns a queue of its own and starts, restarts and stops
//! its own timers there; a stop of another thread's timer is sent to that thread's inbox
//! and applied by its owner on its next operation. Each owner moves its own queue to the
//! clock the ticker publishes, between its operations. This is Go's per-P heaps (1.14) and
//! tokio's per-worker wheel with its cancellation queue (#7467), and Linux's per-CPU bases.
//!
//! A shard's mutex is taken only by its owner (and at the end), so it is never contended;
//! it is there so that the type system lets the shards sit in one shared structure, as
//! Go's per-P `timersLock` is.

use crate::log::Key;
use crate::shard::{
    Finished, Handle, Ids, Scheme, Shard, StopCall, latency_histogram, record_since,
};
use crossbeam_channel::{Receiver, Sender, unbounded};
use hdrhistogram::Histogram;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use timerbench_impls::{Tick, TimerQueue};

/// A stop sent to a timer's owner: the key and when it was sent.
type Message = (Key, Instant);

struct Owned<Q> {
    shard: Shard<Q>,
    queued_stops: Histogram<u64>,
    peak: u64,
}

/// The per-thread scheme.
pub struct PerThread<Q> {
    shards: Vec<Mutex<Owned<Q>>>,
    inboxes: Vec<(Sender<Message>, Receiver<Message>)>,
    clock: AtomicU64,
    ids: Ids,
}

impl<Q: TimerQueue<u64> + Send> PerThread<Q> {
    /// One shard per producer (`threads`), made by `build`, for keys `0..keys`.
    pub fn new(threads: usize, keys: usize, build: impl Fn() -> Q) -> Self {
        let threads = threads.max(1);
        PerThread {
            shards: (0..threads)
                .map(|s| {
                    Mutex::new(Owned {
                        shard: Shard::new(s as u32, build()),
                        queued_stops: latency_histogram(),
                        peak: 0,
                    })
                })
                .collect(),
            inboxes: (0..threads).map(|_| unbounded()).collect(),
            clock: AtomicU64::new(0),
            ids: Ids::new(keys),
        }
    }

    /// Runs `apply` on shard `shard` after applying its inbox and moving it to the clock.
    fn owned<R>(&self, shard: u32, apply: impl FnOnce(&mut Shard<Q>, &Ids) -> R) -> R {
        let mut owned = self.shards[shard as usize]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let owned = &mut *owned;
        let inbox = &self.inboxes[shard as usize].1;
        owned.peak = owned.peak.max(inbox.len() as u64);
        for (key, sent) in inbox.try_iter() {
            owned.shard.stop(&self.ids, key);
            record_since(&mut owned.queued_stops, sent);
        }
        owned.shard.advance(self.clock.load(Ordering::Acquire));
        apply(&mut owned.shard, &self.ids)
    }
}

impl<Q: TimerQueue<u64> + Send> Scheme for PerThread<Q> {
    fn shard_of(&self, _key: Key, starter: usize) -> u32 {
        (starter % self.shards.len()) as u32
    }

    fn start(&self, thread: usize, key: Key, delay: Tick) -> Handle {
        let shard = self.shard_of(key, thread);
        self.owned(shard, |s, ids| s.start(ids, key, delay));
        Handle { shard, key }
    }

    fn restart(&self, thread: usize, handle: Handle, delay: Tick) -> Handle {
        if handle.shard as usize == thread {
            self.owned(handle.shard, |s, ids| s.restart(ids, handle.key, delay));
            return handle;
        }
        // A restart from another thread moves the timer to the caller's shard, as a Go
        // `Reset` of a stopped timer lands on the calling P: stop at the owner, start here.
        let _ = self.stop(thread, handle);
        self.start(thread, handle.key, delay)
    }

    fn stop(&self, thread: usize, handle: Handle) -> StopCall {
        if handle.shard as usize == thread {
            self.owned(handle.shard, |s, ids| s.stop(ids, handle.key));
            return StopCall::Applied;
        }
        let _ = self.inboxes[handle.shard as usize]
            .0
            .send((handle.key, Instant::now()));
        StopCall::Sent
    }

    fn advance(&self, to: Tick) {
        self.clock.fetch_max(to, Ordering::Release);
    }

    fn service(&self, thread: usize) {
        self.owned(thread as u32, |_, _| ());
    }

    fn finish(self, clock: Tick) -> Finished {
        self.advance(clock);
        for shard in 0..self.shards.len() {
            self.owned(shard as u32, |_, _| ());
        }
        let mut finished = Finished {
            logs: Vec::new(),
            queued_stops: latency_histogram(),
            peak_queued: 0,
            peak_queued_bytes: 0,
            owner_cpu_ns: None,
        };
        for owned in self.shards {
            let owned = owned.into_inner().unwrap_or_else(|p| p.into_inner());
            finished.logs.push(owned.shard.log);
            let _ = finished.queued_stops.add(&owned.queued_stops);
            finished.peak_queued = finished.peak_queued.max(owned.peak);
        }
        finished.peak_queued_bytes = finished.peak_queued * std::mem::size_of::<Message>() as u64;
        finished
    }
}
