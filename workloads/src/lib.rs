//! Timer workloads: the v1 trace format (`docs/workload-format.md`), the reference
//! model that defines a workload's outcome, the standard families that generate workloads,
//! and a replay that drives any [`TimerQueue`](timerbench_impls::TimerQueue) through a
//! workload and verifies its firings against the model.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bounded;
pub mod families;
pub mod import;
pub mod metadata;
pub mod op;
pub mod program;
pub mod reach;
pub mod reader;
pub mod reference;
pub mod replay;
pub mod suite;
pub mod writer;

pub use metadata::Metadata;
pub use op::{Op, TimerKey};
pub use program::{Program, compile, load, load_unchecked};
pub use reader::WorkloadError;

/// A workload in memory: its metadata and its operations, as the file has them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workload {
    /// The `@KEY VALUE` lines.
    pub metadata: Metadata,
    /// The operation lines, in order.
    pub ops: Vec<Op>,
}
