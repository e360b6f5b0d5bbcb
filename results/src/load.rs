//! What else the machine did while a command measured (schema 5, later): the other
//! processes' share of the CPUs over a window of the command (`run`'s group of cells, an
//! `ab` cell's duet, a `live` run), read from `/proc` by the harness (`machine_load.rs`).
//!
//! A time measured while another process competed for the cores is the other process's as
//! much as the structure's, and a duet does not cancel it when the two sides' cores are
//! hit unequally; so the record says how much competition there was, and whether it was
//! beyond [`COMPETED_CORES`].

use serde::{Deserialize, Serialize};

/// The other processes' CPU time, in cores' worth over the window, above which a window is
/// marked as competed: a tenth of one core. An idle Linux machine's daemons and kernel
/// threads use a few hundredths of a core; a tenth is already one core taken a tenth of the
/// time, which a measurement pinned to that core pays in full.
pub const COMPETED_CORES: f64 = 0.1;

/// The other processes' CPU over one window of a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OthersLoad {
    /// The window's wall time, seconds.
    pub seconds: f64,
    /// The machine's CPUs (`/proc/stat`'s `cpuN` lines).
    pub cpus: u32,
    /// The CPU time of every process but this command's own (this process and the children
    /// it waited for), over the window's wall time: the cores' worth the others used.
    pub others_cores: f64,
    /// [`OthersLoad::others_cores`] over the CPUs: the others' share of the machine.
    pub others_share: f64,
    /// The one-minute load average (`/proc/loadavg`) at the window's start and end.
    pub load_before: Option<f64>,
    pub load_after: Option<f64>,
    /// Whether the others used more than [`COMPETED_CORES`].
    pub competed: bool,
}
