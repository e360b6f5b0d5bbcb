//! Timer queues behind one contract.
//!
//! Every structure here implements [`TimerQueue`], the contract of
//! `docs/timer-contract.md`: a virtual clock, `start`/`stop`/`advance`/
//! `next_deadline`/`len`, generational [`TimerId`] handles, eager removal, and exact firing
//! at tick granularity, or (for the approximate ones, [`for_each_approximate!`]) firing
//! within a declared bound. Each keeps its entries in an [`arena::Arena`] linked by `u32`
//! indices; none allocates per timer once grown, none reads the wall clock, and none
//! depends on another.
//!
//! | name | module | bytes per pending timer (`u64` value) |
//! | --- | --- | --- |
//! | `btree` | [`btree`] | 16 in the arena + the B-tree's share |
//! | `binary-heap` | [`binary_heap`] | 32 |
//! | `quad-heap` | [`quad_heap`] | 32 |
//! | `skiplist` | [`skiplist`] | 32 + 4 per link above the first (1.33 B expected) |
//! | `hashed-wheel` | [`hashed_wheel`] | 32 |
//! | `hierarchical-wheel` | [`hierarchical_wheel`] | 32 |
//! | `incremental-wheel` | [`incremental_wheel`] | 32 |
//! | `dense-wheel` | [`dense_wheel`] | 36.3 (a 32-byte entry, a 4-byte item in its slot's array, a link word per 15 items), + at most 56 per non-empty slot |
//! | `kafka-wheel` | [`kafka_wheel`] | 32 |
//! | `timeout-lists` | [`timeout_lists`] | 32 + per distinct delay a list record, a heap element and a map entry |
//! | `polling-scan` | [`polling_scan`] | 32 |
//! | `delay-queue-purge` | [`delay_queue_purge`] | 32, + 16 per stopped timer until purged (fewer than `purge_interval`) |
//! | `skynet-wheel` | [`skynet_wheel`] | 32, + 32 per stopped timer until a walk of its slot drops it |
//! | `linux-wheel` (approximate) | [`linux_wheel`] | 32 |
//! | `netty-wheel` (approximate) | [`netty_wheel`] | 40 (the value is an `Option`), + 40 per stopped timer until the worker's next tick |
//! | `ring-buckets` (approximate) | [`ring_buckets`] | 32 |
//!
//! [`reference::ReferenceQueue`] is the obviously correct model the others are tested
//! against; it is not registered.

// `deny`, not `forbid`: `prefetch.rs` allows itself the one call that must be marked
// `unsafe` (the prefetch intrinsic), and nothing else may.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod arena;
pub mod arena_list;
pub mod contract;
pub mod declaration;
pub mod due_list;
pub mod reference;
pub mod registry;
pub mod segmented;

mod binary_sift;
mod prefetch;

pub mod binary_heap;
pub mod btree;
pub mod delay_queue_purge;
pub mod dense_wheel;
pub mod floor;
pub mod hashed_wheel;
pub mod heap_core;
pub mod hierarchical_wheel;
pub mod incremental_wheel;
pub mod kafka_wheel;
pub mod linux_wheel;
pub mod netty_wheel;
pub mod polling_scan;
pub mod quad_heap;
pub mod ring_buckets;
pub mod skiplist;
pub mod skynet_wheel;
pub mod timeout_lists;
mod wheel_core;

#[cfg(feature = "peers")]
pub mod peers;

pub use contract::{Tick, TimerId, TimerQueue};
pub use declaration::{
    EmptyTime, NaturalPeriod, Parameter, Parameters, Precision, Range, Release, SuiteLimit, Window,
};
pub use registry::{IMPLEMENTATIONS, Implementation, PEERS, QueueVisitor, Variant};

/// The registry of the exact implementations: one line per implementation
/// (`module::Type, "name", "summary";`).
///
/// Calls `$callback!` with the whole list, so that every "for all implementations"
/// (the runtime list in [`registry`], the conformance suite, the differential test) is
/// generated from this one place.
#[macro_export]
macro_rules! for_each_implementation {
    ($callback:ident) => {
        $callback! {
            btree::BTreeTimers, "btree", "BTreeMap keyed by (deadline, slot): the ordered-tree baseline (nginx's red-black tree, Linux hrtimers)";
            binary_heap::BinaryHeapTimers, "binary-heap", "binary min-heap, deadlines cached in the array, back-indices for eager O(log n) stop";
            quad_heap::QuadHeapTimers, "quad-heap", "4-ary min-heap (libev, Go runtime) with each node's four children in one 64-byte line";
            skiplist::SkipListTimers, "skiplist", "arena-based skip list ordered by (deadline, slot): O(log n) expected start/stop, O(1) minimum";
            hashed_wheel::HashedWheel, "hashed-wheel", "one power-of-two wheel hashed by deadline (Varghese & Lauck scheme 6); a min-heap of occupied slots jumps over empty ticks";
            hierarchical_wheel::HierarchicalWheel, "hierarchical-wheel", "a 4,096-slot ring for deadlines less than 4,096 ticks ahead (Linux tv1) under levels of 64 slots with 64-bit occupancy bitmaps (tokio); cascades down a level as slots come due; 9 levels cover the rest of u64";
            dense_wheel::DenseWheel, "dense-wheel", "hierarchical-wheel's ring and levels with each slot a dense array of entry indices in 64-byte chunks, not a linked list: firing and cascading read a slot as a stream with the entries a chunk ahead prefetched, a stop swap-removes by the entry's back-index; the first level's slots drain into the ring in bounded batches during the 512 ticks before their start, so no move re-files a whole slot; grows by blocks, never copying";
            incremental_wheel::IncrementalWheel, "incremental-wheel", "hierarchical-wheel with incremental cascading: each clock move re-files a share of every level's next slot into a stage that becomes the lower levels when the slot comes due (no whole-slot cascade while the clock moves in steps); exact";
            kafka_wheel::KafkaWheel, "kafka-wheel", "Kafka's purgatory timer: 20-slot wheels, lazily created overflow wheels, a priority queue of buckets that moves the clock only to bucket expirations";
            timeout_lists::TimeoutLists, "timeout-lists", "one FIFO list per distinct delay (Node.js timers, libevent common timeouts) and a min-heap of the lists by head deadline: O(1) start/stop for a fixed timeout";
            polling_scan::PollingScan, "polling-scan", "unordered dense table swept whole on every clock move (Varghese & Lauck scheme 1): O(1) start/stop, O(n) per move";
            delay_queue_purge::DelayQueuePurge, "delay-queue-purge", "Kafka 0.8's request purgatory: a binary heap that keeps stopped entries until they reach the root or until purge_interval of them gather and a purge pass rebuilds the heap";
            skynet_wheel::SkynetWheel, "skynet-wheel", "skynet's timer: near[256] + 4 levels of 64 on a 32-bit counter walked tick by tick, cascading one slot as the low bits wrap; no cancel (a stop leaves a dead entry until its slot comes due); later epochs in an overflow list";
        }
    };
}

/// The approximate implementations, in the format of [`for_each_implementation!`]: those
/// that declare a lateness bound ([`Precision::Approximate`]) instead of firing exactly.
/// The runtime registry lists them after the exact ones; the conformance and differential
/// suites, which demand exact firing, do not take them, and `tests/approximate.rs` checks
/// each against the reference model within its declared bound instead.
#[macro_export]
macro_rules! for_each_approximate {
    ($callback:ident) => {
        $callback! {
            linux_wheel::LinuxWheel, "linux-wheel", "Linux 4.8+'s non-cascading wheel: 8 or 9 levels of 64 buckets, each 8 times coarser; a timer is filed once with its expiry rounded up and never moved (approximate: at most 8/63 of its delay late above the first level)";
            netty_wheel::NettyWheel, "netty-wheel", "Netty 4's HashedWheelTimer: 512 buckets walked by a worker once per tick, rounds decremented on every pass; starts and stops queued for the next worker tick, at most 100,000 transfers per tick (approximate: less than one worker tick late)";
            ring_buckets::RingBuckets, "ring-buckets", "the idle-connection ring of a 100k-connection chat server: 32 buckets of 1000 ticks, a hand that fires a whole bucket per step, cycle counts past one turn, O(1) refresh in place (approximate: less than one bucket late)";
        }
    };
}

/// The outside peers (`src/peers/`), in the format of
/// [`for_each_implementation!`]: one line per peer (`module::Type, "name", "summary";`),
/// the module relative to `peers`. Empty when the `peers` feature is off, so that callers
/// need no `cfg` of their own.
#[cfg(feature = "peers")]
#[macro_export]
macro_rules! for_each_peer {
    ($callback:ident) => {
        $callback! {
            delay_queue::TokioDelayQueue, "tokio-delay-queue", "peer: tokio-util's DelayQueue (6 x 64-slot wheel at 1 ms over a slab) on tokio's paused clock, drained with poll_expired; exact at 1 ms";
            tokio_sleep::TokioSleep, "tokio-sleep", "peer: tokio's runtime timer (6 x 64-slot wheel at 1 ms), a tokio::time::Sleep per timer on a paused current-thread runtime, reset to restart, the clock moved by tokio::time::advance; exact at 1 ms";
            hhwt::Hhwt, "hhwt", "peer: the hierarchical_hash_wheel_timer crate (4 x 256-slot byte wheels, overflow list, Rc/Weak cancellation), driven by tick/can_skip/skip; exact at 1 ms";
            lazy_heap::StdHeapLazy, "std-heap-lazy", "peer: std::collections::BinaryHeap with lazy deletion (zombies skipped at the root, rebuilt past len/4, Go runtime style); exact";
            lazy_heap::DaryHeapLazy, "dary-heap-lazy", "peer: the dary_heap crate's 4-ary QuaternaryHeap with lazy deletion, likewise; exact";
        }
    };
}

/// The outside peers: none without the `peers` feature.
#[cfg(not(feature = "peers"))]
#[macro_export]
macro_rules! for_each_peer {
    ($callback:ident) => {
        $callback! {}
    };
}
