//! The sift loops of a binary min-heap, for the structures that keep one. The heap is any
//! [`Store`]: a [`SegmentedVec`](crate::segmented::SegmentedVec) (which grows without
//! copying) or a plain `Vec`; the loops are generic and monomorphised for each.
//!
//! `binary-heap` orders its timers this way, `timeout-lists` its lists, `delay-queue-purge`
//! its requests and `hashed-wheel` its occupied slots. Each keeps something different
//! beside the heap (a back-index in the arena, in a list record, in a slot table, or
//! nothing), so the loops here only move elements and report every write through
//! `placed`, and each structure keeps its own back-indices in that callback. One copy of
//! the loops means one place where their comparisons can go wrong.
//!
//! # Invariant
//!
//! Min-heap on `key`: `key(heap[i]) >= key(heap[(i - 1) / 2])` for every `i > 0`. An
//! element never passes one with an equal key: a parent whose key equals the moving
//! element's stops [`sift_up`], and a child whose key equals it stops [`sift_down`]; of two
//! children with equal keys, the left one is the one compared.
//!
//! # Counting
//!
//! Both return the number of elements moved out of the moving element's way, one per
//! level crossed, which each structure adds to its `work()` count. The final write of the
//! moving element is not counted.

use crate::segmented::Store;

/// Moves the element at `position` towards the root until its parent's key is not greater,
/// writing each element it moves, and finally the moving one, into `heap` and reporting it
/// to `placed` with its new position. Returns the number of levels it rose.
#[inline]
pub(crate) fn sift_up<T: Copy, K: Ord, H: Store<T> + ?Sized>(
    heap: &mut H,
    position: usize,
    key: impl Fn(&T) -> K,
    placed: impl FnMut(usize, T),
) -> u64 {
    let moving = heap[position];
    sift_up_into(heap, position, moving, key, placed)
}

/// [`sift_up`] of `moving` from the hole at `position`, whose content is never read.
#[inline]
pub(crate) fn sift_up_into<T: Copy, K: Ord, H: Store<T> + ?Sized>(
    heap: &mut H,
    position: usize,
    moving: T,
    key: impl Fn(&T) -> K,
    placed: impl FnMut(usize, T),
) -> u64 {
    let moving_key = key(&moving);
    let later_parent = |heap: &H, at: usize| {
        let parent = at.checked_sub(1)? / 2;
        (key(&heap[parent]) > moving_key).then_some(parent)
    };
    sift(heap, position, moving, later_parent, placed)
}

/// Moves the element at `position` towards the leaves until no child's key is smaller,
/// writing each element it moves, and finally the moving one, into `heap` and reporting it
/// to `placed` with its new position. Returns the number of levels it sank.
#[inline]
pub(crate) fn sift_down<T: Copy, K: Ord, H: Store<T> + ?Sized>(
    heap: &mut H,
    position: usize,
    key: impl Fn(&T) -> K,
    placed: impl FnMut(usize, T),
) -> u64 {
    let moving = heap[position];
    sift_down_into(heap, position, moving, key, placed)
}

/// [`sift_down`] of `moving` from the hole at `position`, whose content is never read.
#[inline]
pub(crate) fn sift_down_into<T: Copy, K: Ord, H: Store<T> + ?Sized>(
    heap: &mut H,
    position: usize,
    moving: T,
    key: impl Fn(&T) -> K,
    placed: impl FnMut(usize, T),
) -> u64 {
    let moving_key = key(&moving);
    let earlier_child = |heap: &H, at: usize| {
        let mut child = 2 * at + 1;
        if child >= heap.len() {
            return None;
        }
        if child + 1 < heap.len() && key(&heap[child + 1]) < key(&heap[child]) {
            child += 1;
        }
        (key(&heap[child]) < moving_key).then_some(child)
    };
    sift(heap, position, moving, earlier_child, placed)
}

/// The loop both directions share: while `next` names a position to swap with, the element
/// there moves into the hole; then the moving element fills the last hole. `next` sees
/// the heap with the hole still holding a stale copy, so it must compare against the moving
/// element's key, never read the hole.
#[inline]
fn sift<T: Copy, H: Store<T> + ?Sized>(
    heap: &mut H,
    mut position: usize,
    moving: T,
    mut next: impl FnMut(&H, usize) -> Option<usize>,
    mut placed: impl FnMut(usize, T),
) -> u64 {
    let mut steps = 0;
    while let Some(to) = next(heap, position) {
        let moved = heap[to];
        heap[position] = moved;
        placed(position, moved);
        position = to;
        steps += 1;
    }
    heap[position] = moving;
    placed(position, moving);
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An element with a key and a tag that tells equal keys apart.
    type Tagged = (u8, u32);

    #[test]
    fn sift_up_stops_at_an_equal_parent_and_reports_every_write() {
        let mut heap: Vec<Tagged> = vec![(1, 0), (5, 1), (3, 2), (5, 3), (9, 4), (3, 5)];
        let mut moves = Vec::new();
        let steps = sift_up(&mut heap, 5, |e| e.0, |at, e| moves.push((at, e)));
        assert_eq!(steps, 0, "the parent (3, 2) equals the moving key");
        assert_eq!(moves, vec![(5, (3, 5))]);

        heap[5] = (0, 5);
        moves.clear();
        let steps = sift_up(&mut heap, 5, |e| e.0, |at, e| moves.push((at, e)));
        assert_eq!(steps, 2);
        assert_eq!(heap, vec![(0, 5), (5, 1), (1, 0), (5, 3), (9, 4), (3, 2)]);
        assert_eq!(
            moves,
            vec![(5, (3, 2)), (2, (1, 0)), (0, (0, 5))],
            "each element moved out of the way, then the moving one"
        );
    }

    #[test]
    fn sift_down_stops_at_an_equal_child_and_prefers_the_left_of_equal_children() {
        let mut heap: Vec<Tagged> = vec![(4, 0), (4, 1), (6, 2)];
        let mut moves = Vec::new();
        let steps = sift_down(&mut heap, 0, |e| e.0, |at, e| moves.push((at, e)));
        assert_eq!(steps, 0, "the left child equals the moving key");
        assert_eq!(moves, vec![(0, (4, 0))]);

        let mut heap: Vec<Tagged> = vec![(9, 0), (2, 1), (2, 2), (7, 3), (8, 4)];
        moves.clear();
        let steps = sift_down(&mut heap, 0, |e| e.0, |at, e| moves.push((at, e)));
        assert_eq!(steps, 2);
        assert_eq!(heap, vec![(2, 1), (7, 3), (2, 2), (9, 0), (8, 4)]);
        assert_eq!(moves, vec![(0, (2, 1)), (1, (7, 3)), (3, (9, 0))]);
    }
}
