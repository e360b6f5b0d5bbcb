//! Timer queues behind one contract.
//!
//! Every structure here implements [`TimerQueue`], the contract of
//! `shared/spec/timer-contract.md`: a virtual clock, `start`/`stop`/`advance`/
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
//! | `kafka-wheel` | [`kafka_wheel`] | 32 |
//! | `linux-wheel` (approximate) | [`linux_wheel`] | 32 |
//!
//! [`reference::ReferenceQueue`] is the obviously correct model the others are tested
//! against; it is not registered.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod arena;
pub mod arena_list;
pub mod contract;
pub mod declaration;
pub mod reference;
pub mod registry;

pub mod binary_heap;
pub mod btree;
pub mod floor;
pub mod hashed_wheel;
pub mod hierarchical_wheel;
pub mod kafka_wheel;
pub mod linux_wheel;
pub mod quad_heap;
pub mod skiplist;

#[cfg(feature = "peers")]
pub mod peers;

pub use contract::{Tick, TimerId, TimerQueue};
pub use declaration::{
    EmptyTime, Parameter, Parameters, Precision, Range, Release, SuiteLimit, Window,
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
            hierarchical_wheel::HierarchicalWheel, "hierarchical-wheel", "levels of 64 slots with 64-bit occupancy bitmaps (tokio, Linux); cascades down a level as slots come due; 11 levels cover all of u64";
            kafka_wheel::KafkaWheel, "kafka-wheel", "Kafka's purgatory timer: 20-slot wheels, lazily created overflow wheels, a priority queue of buckets that moves the clock only to bucket expirations";
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
