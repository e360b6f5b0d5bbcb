//! One measured run: producers replay their streams through a scheme while the ticker
//! moves the clock; then the logs are verified.
//!
//! Phases: every producer starts its resident timers; the scheme settles (the owner has
//! applied them); then, timed, the producers replay their streams, each call timed on its
//! own thread, while the ticker takes each clock move once the producers have done the
//! operations before it. A producer that is done keeps servicing its shard until all are
//! done, as an event loop keeps running. Finally the scheme applies what is queued and
//! moves every shard to the final clock.

use crate::log::{Offence, verify};
use crate::shard::{Finished, Handle, Scheme, StopCall, latency_histogram, record_since};
use crate::streams::{StreamOp, Streams};
use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// One producer's call latencies, in ns.
pub struct ThreadLatency {
    pub start: Histogram<u64>,
    pub restart: Histogram<u64>,
    /// Stops of its own timers, and of another thread's timer applied inside the call.
    pub stop: Histogram<u64>,
}

impl ThreadLatency {
    fn new() -> Self {
        ThreadLatency {
            start: latency_histogram(),
            restart: latency_histogram(),
            stop: latency_histogram(),
        }
    }
}

/// What one run measured and whether its logs verified.
pub struct Outcome {
    /// Producer operations in the measured part.
    pub operations: u64,
    /// From the first producer's start of its measured part until every shard has applied
    /// everything and reached the final clock (the end of the scheme's `finish`).
    pub wall_ns: u64,
    pub per_thread: Vec<ThreadLatency>,
    /// Cross-thread stops: from the call until the timer can no longer fire (the call's
    /// end for a stop applied inside it; the owner's apply for a queued one).
    pub cross_stop: Histogram<u64>,
    pub finished: Finished,
    pub verdict: Result<(), Offence>,
}

/// Shared state of one run.
struct Run<'a, S> {
    scheme: &'a S,
    streams: &'a Streams,
    /// Starts and restarts issued so far, per key.
    issued: Vec<AtomicU32>,
    progress: Vec<CachePadded<AtomicU64>>,
    producers_done: AtomicUsize,
    barrier: Barrier,
}

/// Runs `streams` through `scheme` and verifies the logs.
pub fn drive<S: Scheme>(scheme: S, streams: &Streams) -> Outcome {
    let threads = streams.ops.len();
    let run = Run {
        scheme: &scheme,
        streams,
        issued: (0..streams.keys).map(|_| AtomicU32::new(0)).collect(),
        progress: (0..threads)
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect(),
        producers_done: AtomicUsize::new(0),
        barrier: Barrier::new(threads + 2),
    };
    let (per_thread, cross, began) = std::thread::scope(|scope| {
        let producers: Vec<_> = (0..threads)
            .map(|thread| {
                let run = &run;
                scope.spawn(move || run.producer(thread))
            })
            .collect();
        let ticker = scope.spawn(|| run.ticker());
        run.barrier.wait();
        scheme.settle();
        run.barrier.wait();
        let mut per_thread = Vec::new();
        let mut cross = latency_histogram();
        let mut began: Option<Instant> = None;
        for producer in producers {
            let (latency, crossing, start) = producer.join().expect("a producer does not panic");
            per_thread.push(latency);
            let _ = cross.add(&crossing);
            began = Some(began.map_or(start, |b| b.min(start)));
        }
        ticker.join().expect("the ticker does not panic");
        (per_thread, cross, began.unwrap_or_else(Instant::now))
    });
    let finished = scheme.finish(streams.final_clock);
    let wall_ns = began.elapsed().as_nanos() as u64;
    let mut cross_stop = cross;
    let _ = cross_stop.add(&finished.queued_stops);
    Outcome {
        operations: streams.ops.iter().map(|s| s.len() as u64).sum(),
        wall_ns,
        per_thread,
        cross_stop,
        verdict: verify(&finished.logs),
        finished,
    }
}

impl<S: Scheme> Run<'_, S> {
    /// Returns the producer's latencies, its cross-thread stops, and when its measured part
    /// began (taken by each producer, since a waker may run late on a full machine).
    fn producer(&self, thread: usize) -> (ThreadLatency, Histogram<u64>, Instant) {
        for op in &self.streams.fill[thread] {
            if let StreamOp::Start { key, delay } = *op {
                self.scheme.start(thread, key, delay);
                self.issued[key as usize].fetch_add(1, Ordering::Release);
            }
        }
        self.barrier.wait();
        self.barrier.wait();
        let began = Instant::now();
        let mut latency = ThreadLatency::new();
        let mut cross = latency_histogram();
        for op in &self.streams.ops[thread] {
            self.apply(thread, *op, &mut latency, &mut cross);
            self.progress[thread].fetch_add(1, Ordering::Release);
        }
        self.producers_done.fetch_add(1, Ordering::AcqRel);
        while self.producers_done.load(Ordering::Acquire) < self.progress.len() {
            self.scheme.service(thread);
            std::thread::yield_now();
        }
        (latency, cross, began)
    }

    fn apply(
        &self,
        thread: usize,
        op: StreamOp,
        latency: &mut ThreadLatency,
        cross: &mut Histogram<u64>,
    ) {
        match op {
            StreamOp::Start { key, delay } => {
                let began = Instant::now();
                self.scheme.start(thread, key, delay);
                record_since(&mut latency.start, began);
                self.issued[key as usize].fetch_add(1, Ordering::Release);
            }
            StreamOp::Restart { key, delay } => {
                let handle = self.handle(key, thread);
                let began = Instant::now();
                self.scheme.restart(thread, handle, delay);
                record_since(&mut latency.restart, began);
                self.issued[key as usize].fetch_add(1, Ordering::Release);
            }
            StreamOp::Stop {
                key,
                starter,
                after,
            } => {
                // The caller holds the handle only once the start has returned.
                while self.issued[key as usize].load(Ordering::Acquire) < after {
                    self.scheme.service(thread);
                    std::thread::yield_now();
                }
                let handle = self.handle(key, starter as usize);
                let began = Instant::now();
                let call = self.scheme.stop(thread, handle);
                record_since(&mut latency.stop, began);
                if starter as usize != thread && call == StopCall::Applied {
                    record_since(cross, began);
                }
            }
        }
    }

    fn handle(&self, key: u64, starter: usize) -> Handle {
        Handle {
            shard: self.scheme.shard_of(key, starter),
            key,
        }
    }

    fn ticker(&self) {
        self.barrier.wait();
        self.barrier.wait();
        for &(before, to) in &self.streams.moves {
            while self.done() < before {
                std::thread::yield_now();
            }
            self.scheme.advance(to);
        }
    }

    fn done(&self) -> u64 {
        self.progress
            .iter()
            .map(|p| p.load(Ordering::Acquire))
            .sum()
    }
}
