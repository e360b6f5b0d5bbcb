//! `quad-heap`: a 4-ary min-heap whose four siblings share one cache line.
//!
//! # The idea
//!
//! A d-ary heap trades a few more comparisons per level for fewer levels: with d = 4 a
//! heap of n timers is log4 n deep, half the binary heap's depth, and a sift-down reads
//! four children per level instead of two. That pays only if the four children cost one
//! memory access, so they are laid out side by side in one aligned 64-byte line. This is
//! the layout of libev's 4-heap (`EV_USE_4HEAP`, with its `HEAP0 = 3` offset) and of the
//! Go runtime's timer heap (`siftupTimer`/`siftdownTimer` in `runtime/time.go`).
//!
//! Positions start at `ROOT` = 3, and the children of position `k` are `4(k - 2)` to
//! `4(k - 2) + 3`: the root's children are 4..=7, position 4's are 8..=11, and in general
//! the children of `k` are exactly group `k - 2` of four slots. Storing the heap as a `Vec`
//! of 64-byte-aligned groups therefore puts every sibling set in one cache line; positions
//! 0..=2 are never used (48 bytes, once). The parent of `c` is `c / 4 + 2`.
//!
//! As in [`binary_heap`](crate::binary_heap), each slot caches its deadline (libev's
//! `ANHE` caches the "at" the same way) and each arena entry keeps its heap position, so
//! `stop` removes eagerly in O(log n). Both heaps are [`heap_core`](crate::heap_core)'s
//! `start`, `stop`, in-place `restart` and `advance`; this file is the array's shape.
//!
//! The sift loops move a hole, never swap: the moving slot is held aside and written once,
//! at its final position (Go's `siftupTimer`/`siftdownTimer`, libev's `upheap`/`downheap`).
//! A removal (`stop`, and every firing) fills its hole with the last slot by a plain
//! sift-down that stops where the last slot belongs. Floyd's bottom-up variant (the hole
//! sent to a leaf first, the last slot rising from there) saves a comparison per level but
//! walks every level to a leaf: where the last slot belongs high up, as on start-stop,
//! whose last slot is the ancestor a start just displaced, that walk reaches cold lines at
//! 1M timers (docs/evidence/2026-11-26-fair-fight.md has the measurement).
//!
//! A sift-down picks the earliest of four siblings by a branch-free tournament on the
//! deadlines held in registers (see `earliest_lane`), so the next level's address depends
//! on this level's data: a level costs at least one load and two comparisons before the
//! next can start, and, past the cache, every level's miss would wait for the one before (a
//! binary heap's branchy sift lets the processor guess ahead, and where the guesses come
//! true, as on start-stop, whose every pair leaves the heap as it found it, its levels
//! overlap). So once the groups outgrow the level-1 cache, each level also reads the four
//! groups the next level can be in, all at once (see `read_ahead`).
//!
//! The other form, Go's and libev's, is a build feature: `--features
//! timerbench-impls/quad-heap-branchy` picks the earliest sibling by a running minimum with
//! a branch per sibling (see `earliest_lane_branchy`), which lets the processor run ahead
//! down the heap where its guesses come true and costs a pipeline flush where they do not.
//!
//! It is not the default because its counts do not win where the model said it would. The
//! model (docs/evidence/2026-11-26-fair-fight.md) gave it half the branch-free form's
//! cycles a level on start-stop, whose branches repeat; counted (`timerbench run
//! --counts`, docs/evidence/2026-11-29-quad-branchy-counts.md) it executes more
//! instructions and more estimated cycles than the branch-free form in every cell, on
//! start-stop as on hold-exponential, at 1k and 100k (a running minimum's branch and move
//! per sibling against two rounds of conditional moves), with the same cache misses, and
//! more mispredictions on hold. Counts have no dependency chain, so what the model claims
//! (levels overlapping behind predicted branches) only a timing can show, and a duet of
//! the two builds shows it: the branchy form wins on start-stop at 100k and loses more on
//! hold-exponential at 1k and 100k, where a running minimum mispredicts about once a
//! level (docs/evidence/2026-11-29-memory-bound-targets.md, section 3). Hold is the
//! common case of a timer queue, so the branch-free form stays the default. It is a feature,
//! not a run-time parameter, because the parameter's one test per sift-down cost the
//! default form 1.4% of its instructions over the default suite
//! (docs/evidence/2026-11-29-no-loss-counts.md); compiled out, it costs nothing.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | heap slot: deadline (8), entry index (4), padding (4); four to a 64-byte line | 16 |
//! | arena slot: value (8), heap position (4, the arena link), generation (4) | 16 |
//! | total | 32 |
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(log4 n) sift-up, one comparison per level; plus a copy of the groups and the arena when they double (see *Storage*) |
//! | `stop` | O(log4 n): the last slot fills the hole and sifts down (per level, three comparisons among the siblings and one with the moving slot) or, when it is earlier than the hole's parent, up |
//! | `restart` | O(log4 n): change the deadline in place, sift the entry up or down |
//! | `advance`, per fired timer | O(log4 n): the root's removal, a sift-down of the last slot, one cache line a level, as for `stop` |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `next_deadline` | O(1): the root's cached deadline; exact |
//!
//! # Storage
//!
//! The groups and the arena are [`segmented::Storage`](crate::segmented::Storage): one
//! `Vec` each by default, segments that never copy with the feature `segmented-storage` (a
//! segment of groups is 256 KiB, 64-byte aligned, so a group never straddles two; its
//! throughput cost measured in METHODOLOGY.md, *Storage growth and segmented storage*).
//!
//! # Empty time
//!
//! As for any heap: `advance` compares the root with `to` and stops. That test is all an
//! empty `advance` runs, inlined into its caller: the firing loop is a call of its own,
//! made only when the root is due (`FIRE_OUT_OF_LINE`).
//!
//! # Invariant
//!
//! For every position `c` past the root, `slot(c).deadline >= slot(c / 4 + 2).deadline`, and
//! for every pending timer, `arena.link(slot(p).entry) == p`.

use crate::contract::Tick;
use crate::heap_core::{HeapSlot, HeapTimers, Shape};
use std::hint::{cold_path, select_unpredictable};

/// Where the groups live: a `Vec`, or segments with `segmented-storage`.
type GroupStore = crate::segmented::Storage<Group>;

/// See the module documentation.
pub type QuadHeapTimers<V> = HeapTimers<V, QuadShape>;

/// Position of the root: the first three positions pad the root's group so that every
/// sibling set starts a group.
const ROOT: usize = 3;

/// Groups past which the array outgrows a 32 KiB level-1 data cache: below it every group
/// is a cache hit and reading ahead would only add loads.
const READ_AHEAD_FROM_GROUPS: usize = 32 * 1024 / std::mem::size_of::<Group>();

/// The filler of lanes past the end: never earlier than an occupied lane.
const UNUSED: HeapSlot = HeapSlot {
    deadline: Tick::MAX,
    entry: u32::MAX,
};

/// Four sibling slots in one cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Group([HeapSlot; 4]);

/// The earliest deadline of four siblings and its lane.
///
/// A tournament, two pairs and then their winners, carried in registers: each round is a
/// comparison whose flag picks, by conditional moves, among deadlines already loaded; never
/// a branch (on random deadlines every comparison is a coin toss for the branch predictor)
/// and never a reload of the winner by its lane, so one level of a sift-down costs one load
/// of the group and two rounds before the next level's address is known (libev's
/// `downheap` keeps its running minimum's "at" the same way). Lanes past the end of the
/// heap hold [`UNUSED`] (deadline `u64::MAX`) and ties go to the lower lane, so an unused
/// lane never beats an occupied one.
#[inline(always)]
fn earliest_lane(siblings: &[HeapSlot; 4]) -> (Tick, usize) {
    let [d0, d1, d2, d3] = siblings.map(|slot| slot.deadline);
    let low_is_1 = d1 < d0;
    let low = select_unpredictable(low_is_1, d1, d0);
    let low_lane = low_is_1 as usize;
    let high_is_3 = d3 < d2;
    let high = select_unpredictable(high_is_3, d3, d2);
    let high_lane = 2 + high_is_3 as usize;
    let take_high = high < low;
    (
        select_unpredictable(take_high, high, low),
        select_unpredictable(take_high, high_lane, low_lane),
    )
}

/// The earliest deadline of four siblings and its lane, as a running minimum with a branch
/// per sibling: the branchy form (feature `quad-heap-branchy`), Go's `siftdownTimer` and
/// libev's `downheap`.
///
/// A taken branch (a later sibling is earlier) is marked cold: without the mark LLVM turns
/// the `if` into conditional moves, which is [`earliest_lane`] again. Where the branches
/// repeat from one sift to the next (start-stop, whose every pair takes one path), the
/// processor predicts them and runs the next level's load ahead of this level's
/// comparisons; on random siblings (hold) a running minimum mispredicts about
/// 1/2 + 1/3 + 1/4 times a level. Ties keep the lower lane, as in [`earliest_lane`].
#[inline(always)]
fn earliest_lane_branchy(siblings: &[HeapSlot; 4]) -> (Tick, usize) {
    let mut earliest = siblings[0].deadline;
    let mut lane = 0;
    for (at, slot) in siblings.iter().enumerate().skip(1) {
        if slot.deadline < earliest {
            cold_path();
            earliest = slot.deadline;
            lane = at;
        }
    }
    (earliest, lane)
}

/// The first of the four children of `position`; they are group `position - 2`.
#[inline]
fn first_child(position: usize) -> usize {
    4 * (position - 2)
}

/// A 4-ary heap rooted at [`ROOT`], four siblings to a 64-byte group.
pub struct QuadShape {
    groups: GroupStore,
}

impl QuadShape {
    #[inline(always)]
    fn write(&mut self, position: usize, slot: HeapSlot) {
        self.groups[position / 4].0[position % 4] = slot;
    }

    /// One level down from the hole at `position`: the earliest child's deadline and its
    /// position, or `None` when the hole is a leaf.
    ///
    /// The feature `quad-heap-branchy` picks [`earliest_lane_branchy`] for the
    /// tournament, else it is [`earliest_lane`].
    #[inline(always)]
    fn earliest_child(&self, position: usize, end: usize) -> Option<(Tick, usize)> {
        let first = first_child(position);
        if first >= end {
            return None;
        }
        self.read_ahead(first);
        let siblings = &self.groups[position - 2].0;
        let (deadline, lane) = if cfg!(feature = "quad-heap-branchy") {
            earliest_lane_branchy(siblings)
        } else {
            earliest_lane(siblings)
        };
        Some((deadline, first + lane))
    }

    /// Reads one deadline from each of the four groups a sift-down can move to after the
    /// sibling group at `first`, so that their cache misses overlap with this level's
    /// tournament instead of following it.
    ///
    /// The tournament's branch-free select makes the next address depend on this level's
    /// data, so the processor cannot run ahead down the heap as it does through a binary
    /// heap's branchy sift (where both candidate children's children share a cache line and
    /// a guessed branch fetches the right line either way): without this, every level's
    /// miss waits for the previous one. A plain load of safe code, not a prefetch
    /// instruction (those need `unsafe`); skipped while the groups fit in the level-1
    /// cache, where it would be four loads per level for nothing.
    #[inline(always)]
    fn read_ahead(&self, first: usize) {
        let groups = &self.groups;
        let next = first - 2;
        if groups.len() >= READ_AHEAD_FROM_GROUPS
            && let Some(four) = next_four(groups, next)
        {
            std::hint::black_box(four);
        }
    }
}

/// The first deadline of each of groups `next..next + 4`, if they exist: one bounds check
/// on a contiguous `Vec`.
#[cfg(not(feature = "segmented-storage"))]
#[inline(always)]
fn next_four(groups: &GroupStore, next: usize) -> Option<Tick> {
    let four = groups.get(next..next + 4)?;
    Some(
        four[0].0[0].deadline
            ^ four[1].0[0].deadline
            ^ four[2].0[0].deadline
            ^ four[3].0[0].deadline,
    )
}

/// The first deadline of each of groups `next..next + 4`, if they exist, indexed one by
/// one: they may span two segments.
#[cfg(feature = "segmented-storage")]
#[inline(always)]
fn next_four(groups: &GroupStore, next: usize) -> Option<Tick> {
    (next + 4 <= groups.len()).then(|| {
        groups[next].0[0].deadline
            ^ groups[next + 1].0[0].deadline
            ^ groups[next + 2].0[0].deadline
            ^ groups[next + 3].0[0].deadline
    })
}

impl Shape for QuadShape {
    const ROOT: usize = ROOT;
    const SLOT_BYTES: usize = std::mem::size_of::<Group>() / 4;
    /// An empty tick is the root's test inlined into the caller; the firing loop's entry
    /// (saved registers, the heap's state loaded) is paid only when a timer fires.
    const FIRE_OUT_OF_LINE: bool = true;

    fn with_capacity(capacity: usize) -> Self {
        QuadShape {
            groups: GroupStore::with_capacity((ROOT + capacity).div_ceil(4)),
        }
    }

    #[inline(always)]
    fn slot(&self, position: usize) -> HeapSlot {
        self.groups[position / 4].0[position % 4]
    }

    #[inline]
    fn parent(position: usize) -> usize {
        position / 4 + 2
    }

    #[inline]
    fn grow_to(&mut self, end: usize) {
        if (end - 1) / 4 == self.groups.len() {
            self.groups.push(Group([UNUSED; 4]));
        }
    }

    #[inline]
    fn take_last(&mut self, last: usize) -> HeapSlot {
        std::mem::replace(&mut self.groups[last / 4].0[last % 4], UNUSED)
    }

    #[inline]
    fn sift_up(
        &mut self,
        mut position: usize,
        moving: HeapSlot,
        mut placed: impl FnMut(u32, usize),
    ) -> u64 {
        let mut levels = 0;
        while position > ROOT {
            let up = Self::parent(position);
            let above = self.slot(up);
            if above.deadline <= moving.deadline {
                break;
            }
            self.write(position, above);
            placed(above.entry, position);
            position = up;
            levels += 1;
        }
        self.write(position, moving);
        placed(moving.entry, position);
        levels
    }

    #[inline]
    fn sift_down(
        &mut self,
        mut position: usize,
        moving: HeapSlot,
        end: usize,
        mut placed: impl FnMut(u32, usize),
    ) -> u64 {
        let mut levels = 0;
        while let Some((deadline, at)) = self.earliest_child(position, end) {
            if deadline >= moving.deadline {
                break;
            }
            let child = self.slot(at);
            self.write(position, child);
            placed(child.entry, position);
            position = at;
            levels += 1;
        }
        self.write(position, moving);
        placed(moving.entry, position);
        levels
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::TimerQueue;

    #[test]
    fn a_pending_timer_costs_32_bytes_and_siblings_share_a_line() {
        assert_eq!(std::mem::size_of::<Group>(), 64);
        assert_eq!(std::mem::align_of::<Group>(), 64);
        assert_eq!(QuadHeapTimers::<u64>::BYTES_PER_TIMER, 32);
    }

    #[test]
    fn the_tournament_finds_the_first_earliest_lane() {
        let choices = [0, 1, 2, Tick::MAX];
        for code in 0..choices.len().pow(4) {
            let deadlines: [Tick; 4] =
                std::array::from_fn(|lane| choices[(code >> (2 * lane)) & 3]);
            let siblings = deadlines.map(|deadline| HeapSlot { deadline, entry: 0 });
            let earliest = *deadlines.iter().min().expect("four lanes");
            let first = deadlines.iter().position(|&d| d == earliest);
            assert_eq!(
                earliest_lane(&siblings),
                (earliest, first.expect("the minimum is a lane")),
                "{deadlines:?}"
            );
        }
    }

    #[test]
    fn the_branchy_tournament_agrees_with_the_branch_free_one() {
        let choices = [0, 1, 2, Tick::MAX];
        for code in 0..choices.len().pow(4) {
            let siblings: [HeapSlot; 4] = std::array::from_fn(|lane| HeapSlot {
                deadline: choices[(code >> (2 * lane)) & 3],
                entry: 0,
            });
            assert_eq!(
                earliest_lane_branchy(&siblings),
                earliest_lane(&siblings),
                "{siblings:?}"
            );
        }
    }

    #[test]
    fn children_of_a_position_are_one_group() {
        assert_eq!(first_child(ROOT), 4);
        for position in ROOT..10_000 {
            let first = first_child(position);
            assert_eq!(first % 4, 0, "siblings start a group");
            assert_eq!(first / 4, position - 2);
            for child in first..first + 4 {
                assert_eq!(QuadShape::parent(child), position);
            }
        }
    }

    #[test]
    fn back_indices_follow_every_move() {
        let mut queue = QuadHeapTimers::new();
        let ids: Vec<_> = (0..500u64)
            .map(|i| queue.start((i * 7919) % 211, i))
            .collect();
        for id in ids.iter().step_by(3) {
            queue.stop(*id);
        }
        for (i, id) in ids.iter().enumerate().skip(1).step_by(5) {
            queue.restart(*id, (i as u64 * 31) % 97, 0);
        }
        queue.check_back_indices();
        queue.advance(50, |_, _, deadline| assert!(deadline <= 50));
        queue.check_back_indices();
    }
}
