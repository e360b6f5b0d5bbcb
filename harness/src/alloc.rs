//! A counting global allocator: the system allocator, plus three counters for the memory
//! pass of `timerbench cell`.
//!
//! - live bytes: requested and not yet freed;
//! - peak live bytes: the most live bytes at once since the last [`reset_peak`];
//! - allocations: calls that obtained memory (`alloc`, `alloc_zeroed`, and `realloc`, which
//!   may move the block).
//!
//! The counters are relaxed atomics: two or three uncontended atomic operations per
//! allocation and one per free, a cost that structures allocating per timer (the B-tree,
//! the DelayQueue, tokio-sleep and hierarchical_hash_wheel_timer peers) would pay in a
//! timed loop on top of the allocator's own. So counting is switched off
//! ([`stop_counting`]) once the memory pass is done, for the rest of the cell's thread: the
//! timed passes then pay a thread-local load and a branch per allocation, as close to the
//! system allocator as a global allocator can be (it cannot be swapped at run time). The
//! switch goes one way only, so that a block allocated uncounted is never subtracted from
//! the live bytes when freed.
//!
//! Sizes are the `Layout` sizes asked for, not what the system allocator rounds them up to:
//! the bytes a structure asks for, comparable across implementations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The system allocator with counters. The `timerbench` binary installs it as its global
/// allocator (`src/main.rs`); code linked without it (the benches) sees the counters stay 0.
pub struct Counting;

static LIVE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Whether this thread's allocations are counted. Per thread, so that a test binary
    /// whose cells run beside other tests stops counting only the cell's own thread. A
    /// `const` initialiser without a destructor: readable from the allocator at any time,
    /// thread teardown included, without allocating.
    static COUNTING: Cell<bool> = const { Cell::new(true) };
}

/// Stops counting this thread's allocations for the rest of its life: the counters keep
/// their values, and every later allocation and free of this thread goes straight to the
/// system allocator.
pub fn stop_counting() {
    COUNTING.with(|counting| counting.set(false));
}

/// Whether this thread's allocations are still counted.
#[inline]
pub fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(true)
}

/// Bytes allocated and not yet freed.
pub fn live_bytes() -> u64 {
    LIVE.load(Relaxed)
}

/// The most live bytes at once since the last [`reset_peak`] (or since the start).
pub fn peak_bytes() -> u64 {
    PEAK.load(Relaxed)
}

/// Calls that obtained memory so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Relaxed)
}

/// Starts a new peak from the present live bytes.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

#[inline]
fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes as u64, Relaxed) + bytes as u64;
    // A plain load first: the read-modify-write only when a new peak is set.
    if live > PEAK.load(Relaxed) {
        PEAK.fetch_max(live, Relaxed);
    }
}

#[inline]
fn shrank(bytes: usize) {
    LIVE.fetch_sub(bytes as u64, Relaxed);
}

// SAFETY: every method forwards to `System` with the arguments it was given, so the
// blocks returned, their sizes and alignments are exactly `System`'s, which upholds the
// `GlobalAlloc` contract; the counters only observe, and never allocate.
unsafe impl GlobalAlloc for Counting {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller guarantees `layout` has a non-zero size, as `System` requires.
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() && counting() {
            ALLOCATIONS.fetch_add(1, Relaxed);
            grew(layout.size());
        }
        block
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let block = unsafe { System.alloc_zeroed(layout) };
        if !block.is_null() && counting() {
            ALLOCATIONS.fetch_add(1, Relaxed);
            grew(layout.size());
        }
        block
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller guarantees `ptr` came from this allocator (hence from `System`)
        // with this `layout`, and is not used again.
        unsafe { System.dealloc(ptr, layout) };
        if counting() {
            shrank(layout.size());
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `ptr` came from this allocator (hence from `System`)
        // with `layout`, and that `new_size` is non-zero and does not overflow when rounded
        // up to the alignment.
        let block = unsafe { System.realloc(ptr, layout, new_size) };
        if !block.is_null() && counting() {
            ALLOCATIONS.fetch_add(1, Relaxed);
            let old_size = layout.size();
            if new_size >= old_size {
                grew(new_size - old_size);
            } else {
                shrank(old_size - new_size);
            }
        }
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's own test binary installs the counter, as the `timerbench` binary does.
    #[global_allocator]
    static TEST_GLOBAL: Counting = Counting;

    /// Other tests of this binary run on other threads and allocate too, so the checks
    /// allow them a megabyte of slack around a block much larger than that.
    #[test]
    fn live_peak_and_count_follow_a_vec() {
        const SIZE: u64 = 64 << 20;
        const SLACK: u64 = 1 << 20;
        assert!(counting(), "a thread counts until it says otherwise");
        let live_before = live_bytes();
        let count_before = allocations();
        reset_peak();
        let block: Vec<u8> = Vec::with_capacity(SIZE as usize);
        let live_with = live_bytes();
        assert!(
            live_with.abs_diff(live_before + SIZE) < SLACK,
            "{live_with}"
        );
        assert!(allocations() > count_before);
        assert!(peak_bytes() >= live_before + SIZE - SLACK);
        drop(std::hint::black_box(block));
        let live_after = live_bytes();
        assert!(live_after.abs_diff(live_before) < SLACK, "{live_after}");
        // The peak remembers the block until it is reset.
        assert!(peak_bytes() >= live_after + SIZE - SLACK);
        reset_peak();
        assert!(peak_bytes() < live_after + SLACK);

        // Growing in place or by moving: both count, and live bytes follow the new size.
        let mut grown: Vec<u8> = Vec::with_capacity(1 << 20);
        let before_grow = (live_bytes(), allocations());
        grown.reserve_exact(SIZE as usize);
        assert!(allocations() > before_grow.1);
        let live_grown = live_bytes();
        assert!(live_grown.abs_diff(before_grow.0 + SIZE - (1 << 20)) < SLACK);
        grown.shrink_to(0);
        assert!(live_bytes().abs_diff(before_grow.0 - (1 << 20)) < SLACK);
    }

    /// Once a thread stops counting, its allocations change no counter (other threads'
    /// may: the other test here moves the live bytes by up to 128 MiB, so this block is a
    /// gibibyte, reserved and never touched), and it never counts again.
    #[test]
    fn a_thread_that_stopped_counting_is_not_counted() {
        const SIZE: u64 = 1 << 30;
        std::thread::spawn(|| {
            stop_counting();
            assert!(!counting());
            let live_before = live_bytes();
            let block: Vec<u8> = Vec::with_capacity(SIZE as usize);
            assert!(live_bytes() < live_before + SIZE / 2, "not counted");
            drop(std::hint::black_box(block));
            assert!(!counting());
        })
        .join()
        .unwrap();
        assert!(counting(), "only that thread stopped");
    }
}
