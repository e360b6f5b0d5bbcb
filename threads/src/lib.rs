//! Timer queues shared between threads: four sharing schemes that wrap any implementation
//! of the contract (`docs/timer-contract.md`) without changing it, a concurrent replay of
//! a workload split over producer threads, and the check of what each scheme applied
//! against the reference model (`docs/threads.md`).
//!
//! | scheme | what it is | modelled on |
//! | --- | --- | --- |
//! | `global-lock` | one queue behind one mutex | Java's `ScheduledThreadPoolExecutor`, Go before 1.10 |
//! | `owner` | one owner thread; producers send commands over an MPSC queue | Netty's `HashedWheelTimer`, tokio's per-worker wheel |
//! | `per-thread` | a queue per producer; another thread's stop is sent to the owner | Go 1.14's per-P heaps, Linux's per-CPU bases |
//! | `locked-shards` | K queues, each behind its mutex, chosen by timer key | Kafka's 512 purgatory shards, tokio's reverted sharding |

pub mod driver;
pub mod locked;
pub mod log;
pub mod owner;
pub mod per_thread;
pub mod sendable;
pub mod shard;
pub mod streams;

use driver::{Outcome, drive};
use locked::Locked;
use owner::Owner;
use per_thread::PerThread;
use sendable::Sendable;
use streams::Streams;
use timerbench_impls::registry::visit;
use timerbench_impls::{QueueVisitor, TimerQueue, Variant};

/// The sharing schemes, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemeKind {
    GlobalLock,
    Owner,
    PerThread,
    LockedShards,
}

impl SchemeKind {
    /// Every scheme, in the order tables list them.
    pub const ALL: [SchemeKind; 4] = [
        SchemeKind::GlobalLock,
        SchemeKind::Owner,
        SchemeKind::PerThread,
        SchemeKind::LockedShards,
    ];

    /// Its name on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            SchemeKind::GlobalLock => "global-lock",
            SchemeKind::Owner => "owner",
            SchemeKind::PerThread => "per-thread",
            SchemeKind::LockedShards => "locked-shards",
        }
    }

    /// The scheme called `name`, or a message listing the names.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|s| s.name()).collect();
                format!("unknown scheme `{name}` (known: {})", known.join(", "))
            })
    }

    /// Threads besides the producers: the ticker, and the owner for the owner scheme.
    pub fn helper_threads(self) -> usize {
        match self {
            SchemeKind::Owner => 2,
            _ => 1,
        }
    }
}

/// Runs `streams` through `scheme` wrapping `variant`'s structure, with `shards` queues for
/// the locked-shards scheme.
pub fn run(variant: &Variant, scheme: SchemeKind, shards: usize, streams: &Streams) -> Outcome {
    struct Cell<'a> {
        scheme: SchemeKind,
        shards: usize,
        streams: &'a Streams,
    }
    impl QueueVisitor for Cell<'_> {
        type Output = Outcome;
        fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Outcome {
            run_with::<Q>(variant, self.scheme, self.shards, self.streams)
        }
    }
    visit(
        variant,
        Cell {
            scheme,
            shards,
            streams,
        },
    )
}

/// [`run`] with the structure's type given: how tests wrap a queue of their own.
pub fn run_with<Q: TimerQueue<u64>>(
    variant: &Variant,
    scheme: SchemeKind,
    shards: usize,
    streams: &Streams,
) -> Outcome {
    let threads = streams.ops.len();
    let keys = streams.keys;
    let build = || variant.build::<Q>(0);
    match scheme {
        SchemeKind::GlobalLock => drive(
            Locked::<Sendable<Q>>::new(1, keys, || Sendable(build())),
            streams,
        ),
        SchemeKind::LockedShards => drive(
            Locked::<Sendable<Q>>::new(shards, keys, || Sendable(build())),
            streams,
        ),
        SchemeKind::PerThread => drive(
            PerThread::<Sendable<Q>>::new(threads, keys, || Sendable(build())),
            streams,
        ),
        SchemeKind::Owner => {
            let variant = variant.clone();
            drive(
                Owner::new(keys, move || Sendable(variant.build::<Q>(0))),
                streams,
            )
        }
    }
}
