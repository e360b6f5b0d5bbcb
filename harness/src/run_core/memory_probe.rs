//! The memory probe: how fast the machine's shared cache and memory answered just before
//! and just after a cell's process ran, recorded in that process's conditions.
//!
//! **Why.** On a virtual machine the last-level cache is shared with whatever else the
//! host runs, and how fast a random pointer chase over 32 MiB (the size of a
//! million-timer queue's working set) answers swings within seconds, while one over a few
//! MiB does not. The 1M cells live in that range. The probe does not correct any figure;
//! it records the state beside each process (METHODOLOGY.md, *The memory probe*).
//!
//! **What it does and does not see.** Read this way (cold: a line is met again only after
//! seconds, the cell's own traffic in between), it measures the latency of a load that
//! misses the cache, about DRAM's, higher when the guest itself is busy. It does *not*
//! explain the 1M cells that differ between two runs: what moves them is what a warm
//! chase sees (how much of the shared cache the guest keeps), and a warm reading costs a
//! pass over the whole buffer first (METHODOLOGY.md, *The memory probe*).
//!
//! **What.** One chase of [`STEPS`] dependent loads through a random cycle over
//! [`BYTES`], one load per 64-byte line, so that every load misses the private caches and
//! no prefetcher can guess the next. The parent runs it, not the cell: the cell's own
//! memory figures (its peak RSS) and its allocator's layout stay untouched. The buffer is
//! built once per run and kept, and each reading goes on where the last one stopped: a
//! reading that started at the same line every time would chase the same 4 MiB that the
//! reading before had just brought into the cache (measured: the reading before each
//! process then came out well below the one after it, which followed the cell's own
//! traffic). Eight readings go once round the cycle, so a line is met again only after
//! seconds, and whether it is still cached is what the host's contention decides.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// The probe's working set: 32 MiB, about a million-timer queue's.
pub const BYTES: usize = 32 << 20;
/// Dependent loads per reading: at 50 to 130 ns each, 3 to 9 ms.
pub const STEPS: u32 = 1 << 16;
/// One cache line: the probe's stride.
const LINE: usize = 64;

/// One cache line of the chase: the index of the next line, and padding to fill the line.
#[repr(C, align(64))]
struct Line {
    next: u32,
    _padding: [u32; LINE / 4 - 1],
}

/// The lines, linked into one random cycle (so a chase of any length never repeats a
/// short loop the caches could hold).
struct Chase {
    lines: Vec<Line>,
}

impl Chase {
    /// Sattolo's shuffle of the line indices gives a single cycle through all of them; a
    /// fixed seed makes every run's cycle the same.
    fn new() -> Chase {
        let count = BYTES / LINE;
        let mut order: Vec<u32> = (0..count as u32).collect();
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for i in (1..count).rev() {
            // splitmix64: enough randomness for a shuffle, no dependency.
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let j = (z % i as u64) as usize; // j < i: Sattolo, not Fisher-Yates
            order.swap(i, j);
        }
        let mut lines: Vec<Line> = (0..count)
            .map(|_| Line {
                next: 0,
                _padding: [0; LINE / 4 - 1],
            })
            .collect();
        for window in 0..count {
            let from = order[window] as usize;
            lines[from].next = order[(window + 1) % count];
        }
        Chase { lines }
    }

    /// Nanoseconds per load of one chase of [`STEPS`] loads, from line `from`; and the
    /// line it stopped at.
    fn read(&self, from: u32) -> (f64, u32) {
        let mut at = from;
        let started = Instant::now();
        for _ in 0..STEPS {
            at = self.lines[at as usize].next;
        }
        let elapsed = started.elapsed();
        (
            elapsed.as_nanos() as f64 / f64::from(STEPS),
            std::hint::black_box(at),
        )
    }
}

/// One reading of the probe, nanoseconds per dependent load over [`BYTES`]. The first call
/// builds the chase (about 30 ms); later calls only chase.
///
/// With `TIMERBENCH_WARM_MEMORY_PROBE=1` (a switch for studying the 1M variance, off by
/// default) the reading is *warm*: one untimed pass round the whole cycle first (about
/// 80 ms), then the timed chase over lines just touched, so that it measures how much of
/// the 32 MiB the shared cache kept rather than a miss's latency. It sees part of what
/// moves the 1M cells, not all, so it stays a study switch (METHODOLOGY.md, *The memory
/// probe*).
pub fn read() -> f64 {
    reading(warm())
}

/// One reading, warm or cold.
fn reading(warm: bool) -> f64 {
    static CHASE: OnceLock<Chase> = OnceLock::new();
    // Where the last reading stopped (a cell runs one child at a time, so one reader).
    static AT: AtomicU32 = AtomicU32::new(0);
    let chase = CHASE.get_or_init(Chase::new);
    let mut at = AT.load(Ordering::Relaxed);
    if warm {
        // BYTES / LINE / STEPS chases go once round the cycle and end where they began.
        for _ in 0..BYTES / LINE / STEPS as usize {
            at = chase.read(at).1;
        }
    }
    let (ns, stopped) = chase.read(at);
    AT.store(stopped, Ordering::Relaxed);
    ns
}

/// Whether `TIMERBENCH_WARM_MEMORY_PROBE=1`.
fn warm() -> bool {
    static WARM: OnceLock<bool> = OnceLock::new();
    *WARM.get_or_init(|| {
        std::env::var("TIMERBENCH_WARM_MEMORY_PROBE").is_ok_and(|value| value == "1")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chase_is_one_cycle_through_every_line() {
        let chase = Chase::new();
        let count = chase.lines.len();
        let mut seen = vec![false; count];
        let mut at = 0usize;
        for _ in 0..count {
            assert!(!seen[at], "line {at} visited twice before the cycle closed");
            seen[at] = true;
            at = chase.lines[at].next as usize;
        }
        assert_eq!(at, 0, "the cycle returns to its start after every line");
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn a_reading_is_a_positive_time_per_load() {
        assert_eq!(std::mem::size_of::<Line>(), LINE);
        for warm in [false, true] {
            let ns = reading(warm);
            assert!(ns.is_finite() && ns > 0.0, "warm {warm}: {ns}");
        }
    }

    #[test]
    fn the_warm_pass_goes_once_round_the_cycle() {
        // So that the timed chase after it starts where the pass began, on lines just
        // touched.
        assert_eq!(BYTES / LINE % STEPS as usize, 0);
        let chase = Chase::new();
        let mut at = 0;
        for _ in 0..BYTES / LINE / STEPS as usize {
            at = chase.read(at).1;
        }
        assert_eq!(at, 0);
    }
}
