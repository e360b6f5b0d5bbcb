//! `timerbench cell`: the measuring child of `timerbench run`.
//!
//! The parent writes a [`CellSpec`](crate::schema::CellSpec) as JSON to standard input; the
//! child measures one implementation on one workload and writes exactly one
//! [`CellRecord`](crate::schema::CellRecord) as one JSON line to standard output, then
//! exits 0, also when the implementation did not verify (that is a result). A spec that
//! cannot be used (bad JSON, an unknown implementation, no repeats) is one message on
//! standard error and exit status 2. A crash, panic or time-out is the parent's to record,
//! from the exit status.
//!
//! The process first re-executes itself once with glibc's allocator told never to map or
//! unmap memory of its own accord, so that a pass reuses the pages an earlier pass faulted
//! in rather than paying fresh page faults inside a timed replay.
//!
//! A `full` process (the spec's `mode`) does everything, in this order, each pass with a
//! queue of its own (built with `with_capacity` of the workload's peak, and dropped before
//! the next pass) and a fresh handle table, so that no pass inherits another's state; a
//! `samples` process ([`samples`]) does steps 1, 2 and 4 only, and `timerbench run` starts
//! several per cell, interleaved with the other implementations':
//!
//! 1. load the workload without the model: the parent checked it and hands over the
//!    model's summary;
//! 2. warm-up and verification: one replay logging every firing; its summary must equal
//!    the reference in every field (an approximate implementation: one replay in lockstep
//!    with the model, within its declared bound). If it does not, the workload is loaded
//!    again with the model and a full replay names the first differing firing, and the
//!    record is `unverified`, without figures: a wrong structure's speed is never reported;
//! 3. memory: one replay under the counting allocator ([`crate::alloc`]), untimed; the
//!    last pass that counts allocations, and the throughput pass's warm-up (the workload
//!    is split before step 2, so that the first sample's queue lands on the memory pass's
//!    pages and pays no page faults; a `samples` process's verification replay is its
//!    warm-up in the same way);
//! 4. throughput: `repeat` samples (2 for a replay of
//!    half a second or more) of at least the minimum sample time, each replays with the
//!    `Quiet` observer, `Instant` around `drive` only, the fill timed apart, each checked
//!    against the reference's counts;
//! 5. latency: one replay with a clock read before and after every unit (an operation
//!    line, or one tick of a `t`), every unit recorded in a histogram per kind (never
//!    sampled), and the slowest advance per window of the run.
//!
//! One module per concern:
//!
//! - [`protocol`]: the subcommand's arguments, the spec in, the record out, the exit
//!   statuses;
//! - `measure`: the passes in order for one implementation, their figures into the record;
//!   `samples`, the samples process; `warm_up`, the verification and the samples both share;
//!   [`conditions`], the CPU pin and the load read before and after;
//! - [`passes`]: one module per pass, and the verification and timed replay that
//!   `cargo bench` shares;
//! - [`clock`]: the latency pass's clock, its cost, and the comparison of the two clocks;
//! - `crate::cell_core::os` (beside `cmd/`, shared with `ab` and `cargo bench`): the
//!   allocator tuning and its re-execution, the `/proc` readers;
//! - [`diagnostics`]: what `--diagnostics` writes on standard error;
//! - `counted`: a `counted` process (`run --counts`, `ab --metric`), which verifies and
//!   then replays the lines after the fill once inside the function Callgrind counts.

pub mod clock;
pub mod conditions;
mod counted;
pub mod diagnostics;
mod measure;
pub mod passes;
pub mod protocol;
mod samples;
mod warm_up;

pub use crate::cell_core::tune_allocator;
pub use clock::{ProbeClock, ProbeCost, StdInstant, Tsc};
pub use diagnostics::Diagnostics;
pub use measure::measure;
pub use protocol::{Args, parse_spec, run};
