//! The passes of a cell, one module each, in the order the cell runs them: [`verify`] (the
//! warm-up), `memory`, `throughput`, `fixed_costs` (apart from the workload), `latency`. Each replays the whole workload through a
//! queue of its own, dropped before the next pass, and a fresh handle table, so that no
//! pass inherits another's state: the verification's queue built with `new` (finding the
//! peak is part of its job), the others' with `with_capacity` of the verified peak. Each
//! checks its replay against the reference, so that a figure is only ever reported for a
//! replay that verified.
//!
//! [`verify`] and [`timed`] are public: they are the definitions of "verify before timing"
//! and of "the timed replay" that `cargo bench` shares with the cell.

pub(super) mod fixed_costs;
pub(super) mod latency;
pub(super) mod memory;
pub(super) mod throughput;
pub use crate::cell_core::timed;
pub use crate::cell_core::verify;
