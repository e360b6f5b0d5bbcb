//! Outside peers: timer queues from other crates, behind the same contract through
//! adapters, so that the project's structures can be compared with what a Rust program
//! would otherwise pick. Compiled with the `peers` feature (on by default).
//!
//! | name | module | precision | limits |
//! | --- | --- | --- | --- |
//! | `tokio-delay-queue` | [`delay_queue`] | exact (1 tick = 1 ms) | deadlines < 2^36 − 1 ms past the wheel's clock; clock ≤ 2^52 |
//! | `tokio-sleep` | [`tokio_sleep`] | exact (1 tick = 1 ms) | delays ≤ 2^44 ms (the runtime holds more, revisiting a timer once per 2^36 ms turn); ticks ≤ 2^63 |
//! | `hhwt` | [`hhwt`] | exact (1 tick = 1 ms) | deadlines ≤ 2^40 ticks after `now`; not a delay of exactly 2^32 − 1 at a cycle start |
//! | `std-heap-lazy` | [`lazy_heap`] | exact | none beyond u32 slots |
//! | `dary-heap-lazy` | [`lazy_heap`] | exact | none beyond u32 slots |
//!
//! Each adapter's header says how the peer works, what the adapter adds, the bytes of one
//! entry, and the cost of each operation. The list is
//! [`for_each_peer!`](crate::for_each_peer); [`registry`](crate::registry) serves peers and
//! implementations alike and tells them apart with
//! [`is_peer`](crate::registry::is_peer).

pub mod delay_queue;
pub mod hhwt;
pub mod lazy_heap;
pub mod tokio_sleep;
