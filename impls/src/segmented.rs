//! Storage that grows without copying: a sequence of fixed-size segments instead of one
//! `Vec` that doubles.
//!
//! A `Vec` that doubles copies every element it holds when it grows: at a million 32-byte
//! arena slots that is one `start` copying 32 MB, milliseconds of stall. [`SegmentedVec`]
//! keeps its elements in segments of [`SEGMENT`] elements each, every one allocated at its
//! full capacity once and never reallocated, so growing allocates one new segment and moves
//! nothing.
//!
//! # Layout
//!
//! The full segments are boxed arrays, `full: Vec<Box<[T; SEGMENT]>>`; the segment being
//! filled is a `Vec<T>` allocated with capacity `SEGMENT`, the `tail`, which becomes a boxed
//! array in place (`into_boxed_slice`, no copy: its length is its capacity) when it holds
//! `SEGMENT` elements. Element `i` below `tail_start = full.len() * SEGMENT` is element
//! `i & MASK` of full segment `i >> SHIFT` (`SHIFT` = 12, `MASK` = 4095): one compare, one
//! shift, one bounds check, one pointer load (from a table that stays in the L1 cache) and
//! a mask, and no bounds check within the array; element `i` at or past `tail_start` is
//! `tail[i - tail_start]`. A pop that empties the tail turns the last full segment back
//! into the tail (`into_vec`, no copy) and keeps the emptied one as a spare for the next
//! push, so that pushes and pops across a boundary neither allocate nor free (as a `Vec`
//! never shrinks either); `with_capacity` allocates its segments ahead as spares.
//!
//! The `Vec`s of segment pointers and spares do double, but they are tiny: at a million
//! elements `full` holds 244 pointers (2 KB), and its last doubling copies 128 of them,
//! well under a microsecond.
//!
//! Two segments may be allocated short of [`SEGMENT`] elements, so that a store holds no
//! more than a `Vec` would: the first, which starts at 16 elements (a structure holding a
//! thousand timers then costs what it did on a `Vec`, not a whole segment), and the last
//! of those `with_capacity(n)` allocates, sized to `n` exactly. A short segment that fills
//! doubles, up to [`SEGMENT`] elements, as a `Vec` does. Those doublings are the only
//! copies ever made: fewer than [`SEGMENT`] elements per short segment in all (the first's
//! happen in its first 4096 pushes, 8 copies of 16 to 2048 elements, at most 64 KiB at 32
//! bytes per element: microseconds), never anything once the segment is full size.
//!
//! # Why 4096 elements
//!
//! A segment is 64 KiB of 16-byte heap slots, 128 KiB of 32-byte arena slots, 256 KiB of
//! 64-byte quad-heap groups: big enough that a million elements take 245 segments, so
//! allocating them is a fraction of a percent of the pushes and the header table stays in
//! the L1 cache; small enough that one allocation is a single `mmap` or heap extension of
//! microseconds (its memory is not touched until written, so its page faults spread over
//! the pushes that fill it), and that at most one partly used segment (under 256 KiB) is
//! slack. 2^14 would quarter the allocations but make the first segment's doublings copy
//! up to 8192 elements and leave up to a megabyte of slack per store.
//!
//! # Where it is used, and the switch
//!
//! Each per-timer array is a [`Storage`]: a `Vec` by default (one contiguous array, no
//! segment lookup per access, a copy of everything held per doubling), [`SegmentedVec`]
//! with this crate's feature `segmented-storage` (`cargo bench --features
//! timerbench-impls/segmented-storage`). Both offer the methods used, so nothing else
//! changes:
//!
//! | file | alias | elements |
//! | --- | --- | --- |
//! | `arena.rs` | `SlotStore<T>` | the arena slots of every structure |
//! | `binary_heap.rs` | `HeapStore` | the heap array, 16 bytes a timer |
//! | `quad_heap.rs` | `GroupStore` | the 64-byte sibling groups |
//! | `skiplist.rs` | `PoolStore` | each height's pool of tower links |
//! | `delay_queue_purge.rs` | `HeapStore` | the heap of requests |
//!
//! The others keep no per-timer storage of their own beside the arena, or only storage
//! reserved whole at construction (the wheels' slot tables, `hashed-wheel`'s heap of at
//! most one element per slot, `kafka-wheel`'s buckets and bucket queue); `btree`'s nodes
//! are `BTreeMap`'s, allocated by std one node at a time.
//!
//! # Costs
//!
//! | operation | cost |
//! | --- | --- |
//! | `push` | O(1) worst case once no segment is short: a write, or, every 4096 pushes, turning the full tail into a segment (no copy) and taking a spare or allocating an uninitialised one |
//! | `pop` | O(1): every 4096 pops, the last full segment becomes the tail again (no copy) |
//! | index, `get` | O(1): `full[i >> SHIFT][i & MASK]` below `tail_start`, else `tail[i - tail_start]`; one bounds check |
//! | `swap` | O(1) |
//!
//! # Throughput, and why the default is a `Vec`
//!
//! Every access pays one more dependent load (the segment's pointer) and a bounds check,
//! and a heap's sift makes two accesses per level. Against that, segments remove the
//! growth spikes (`cargo bench --bench growth`: a `Vec`'s doubling copies the whole array
//! in one `start`), down to what a queue built presized shows. The throughput cost is far
//! beyond noise for the heaps and `skiplist`, so the default stays a `Vec`, and the suite's
//! cells build every queue presized, so they never grow (METHODOLOGY.md, *Storage growth
//! and segmented storage*, has the measurements and the command).

use std::ops::{Index, IndexMut};

/// The store of every per-timer array in the table above: one contiguous `Vec` by default,
/// [`SegmentedVec`] with the crate feature `segmented-storage`. The default is the one with
/// the better throughput (see "Throughput" above); the feature removes the stall of growth.
#[cfg(not(feature = "segmented-storage"))]
pub type Storage<T> = Vec<T>;

/// The store of every per-timer array in the table above: [`SegmentedVec`], because the
/// crate feature `segmented-storage` is on (see "Throughput" above).
#[cfg(feature = "segmented-storage")]
pub type Storage<T> = SegmentedVec<T>;

/// `log2` of [`SEGMENT`]: the segment of element `i` is `i >> SHIFT`.
pub const SHIFT: u32 = 12;

/// Elements per segment: 4096. See the module documentation for why.
pub const SEGMENT: usize = 1 << SHIFT;

/// The offset of element `i` within its segment is `i & MASK`.
pub const MASK: usize = SEGMENT - 1;

/// The first segment's capacity when the first push finds none.
const FIRST_CAPACITY: usize = 16;

/// One full segment: a fixed-size array, so that indexing it with `i & MASK` needs no
/// bounds check and reaching it costs one pointer load.
type Full<T> = Box<[T; SEGMENT]>;

/// A growable array in fixed-size segments: pushes never copy what is stored (see the
/// module documentation). It offers the part of `Vec`'s API the structures use, under the
/// same names, so that a structure can switch between the two by changing one type alias.
pub struct SegmentedVec<T> {
    /// The full segments: segment `s` holds elements `s * SEGMENT .. (s + 1) * SEGMENT`.
    full: Vec<Full<T>>,
    /// The segment being filled, elements `full.len() * SEGMENT ..`: a `Vec` allocated with
    /// capacity `SEGMENT` (or short, see the module documentation) that becomes a `Full`
    /// when it holds `SEGMENT` elements, without a copy.
    tail: Vec<T>,
    /// Empty segments allocated ahead (by `with_capacity`, or left by pops), the next one
    /// last.
    spare: Vec<Vec<T>>,
    /// `full.len() * SEGMENT`: the index of the tail's first element.
    tail_start: usize,
}

impl<T> Default for SegmentedVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> SegmentedVec<T> {
    /// An empty store; allocates nothing.
    pub const fn new() -> Self {
        SegmentedVec {
            full: Vec::new(),
            tail: Vec::new(),
            spare: Vec::new(),
            tail_start: 0,
        }
    }

    /// An empty store with the segments for exactly `capacity` elements allocated (not
    /// touched): full segments, and a last one holding the rest.
    pub fn with_capacity(capacity: usize) -> Self {
        let count = capacity.div_ceil(SEGMENT);
        let spare: Vec<Vec<T>> = (1..count)
            .rev()
            .map(|s| Vec::with_capacity((capacity - s * SEGMENT).min(SEGMENT)))
            .collect();
        SegmentedVec {
            full: Vec::with_capacity(count),
            tail: Vec::with_capacity(capacity.min(SEGMENT)),
            spare,
            tail_start: 0,
        }
    }

    /// Number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.tail_start + self.tail.len()
    }

    /// Whether there are no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements the allocated segments hold without allocating again.
    pub fn capacity(&self) -> usize {
        self.tail_start + self.tail.capacity() + self.spare.iter().map(Vec::capacity).sum::<usize>()
    }

    /// Bytes of element storage allocated, plus the segment headers.
    pub fn allocated_bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
            + self.full.capacity() * std::mem::size_of::<Full<T>>()
            + self.spare.capacity() * std::mem::size_of::<Vec<T>>()
    }

    /// Appends `value`. Once no segment is short, this never copies anything: when the tail
    /// is full it becomes a full segment as it is, and the next tail is a spare one or a
    /// new allocation.
    #[inline]
    pub fn push(&mut self, value: T) {
        // `min`: a `Vec` may hold more than it was asked for; a tail never does.
        if self.tail.len() == self.tail.capacity().min(SEGMENT) {
            self.make_room();
        }
        self.tail.push(value);
    }

    /// The tail is at its capacity: double it if it is short, else retire it as a full
    /// segment and start the next.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) {
        let capacity = self.tail.capacity();
        if self.tail.len() < SEGMENT {
            // A short segment (see the module documentation): double it, up to `SEGMENT`.
            let wanted = (2 * capacity).clamp(FIRST_CAPACITY, SEGMENT);
            self.tail.reserve_exact(wanted - self.tail.len());
            return;
        }
        let next = match self.spare.pop() {
            Some(next) => next,
            None => Vec::with_capacity(SEGMENT),
        };
        let tail = std::mem::replace(&mut self.tail, next);
        // Length and capacity are both `SEGMENT` (as asked), so this reuses the allocation.
        let Ok(segment) = Full::try_from(tail.into_boxed_slice()) else {
            unreachable!("the tail holds exactly SEGMENT elements")
        };
        self.full.push(segment);
        self.tail_start += SEGMENT;
    }

    /// Removes and returns the last element. Its segment stays allocated.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        if self.tail.is_empty() {
            let segment = self.full.pop()?;
            self.tail_start -= SEGMENT;
            // No copy: a boxed array becomes a `Vec` of the same allocation.
            let emptied = std::mem::replace(&mut self.tail, (segment as Box<[T]>).into_vec());
            self.spare.push(emptied);
        }
        self.tail.pop()
    }

    /// The element at `index`, if there is one.
    #[inline]
    pub fn get(&self, index: usize) -> Option<&T> {
        if index < self.tail_start {
            Some(&self.full[index >> SHIFT][index & MASK])
        } else {
            self.tail.get(index - self.tail_start)
        }
    }

    /// The element at `index`, mutably, if there is one.
    #[inline]
    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        if index < self.tail_start {
            Some(&mut self.full[index >> SHIFT][index & MASK])
        } else {
            self.tail.get_mut(index - self.tail_start)
        }
    }

    /// The first element, if any.
    #[inline]
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    /// The first element, mutably, if any.
    #[inline]
    pub fn first_mut(&mut self) -> Option<&mut T> {
        self.get_mut(0)
    }

    /// The last element, if any.
    #[inline]
    pub fn last(&self) -> Option<&T> {
        self.get(self.len().checked_sub(1)?)
    }

    /// Exchanges the elements at `a` and `b`.
    ///
    /// # Panics
    ///
    /// If either is out of bounds.
    pub fn swap(&mut self, a: usize, b: usize) {
        let (low, high) = (a.min(b), a.max(b));
        assert!(high < self.len(), "swap index {high} out of bounds");
        if low == high {
            return;
        }
        let start = self.tail_start;
        if low >= start {
            self.tail.swap(low - start, high - start);
        } else if high >= start {
            let x = &mut self.full[low >> SHIFT][low & MASK];
            std::mem::swap(x, &mut self.tail[high - start]);
        } else if low >> SHIFT == high >> SHIFT {
            self.full[low >> SHIFT].swap(low & MASK, high & MASK);
        } else {
            let (head, rest) = self.full.split_at_mut(high >> SHIFT);
            std::mem::swap(
                &mut head[low >> SHIFT][low & MASK],
                &mut rest[0][high & MASK],
            );
        }
    }

    /// Drops the elements from `len` on; the segments stay allocated.
    pub fn truncate(&mut self, len: usize) {
        while self.len() > len {
            self.pop();
        }
    }

    /// Removes every element; the segments stay allocated.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Keeps the elements for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let mut kept = 0;
        for index in 0..self.len() {
            if keep(&self[index]) {
                if kept != index {
                    self.swap(kept, index);
                }
                kept += 1;
            }
        }
        self.truncate(kept);
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.full.iter().flat_map(|s| s.iter()).chain(&self.tail)
    }
}

impl<T: Clone> SegmentedVec<T> {
    /// Grows or shrinks to `len` elements, new ones clones of `value`.
    pub fn resize(&mut self, len: usize, value: T) {
        self.truncate(len);
        while self.len() < len {
            self.push(value.clone());
        }
    }
}

impl<T> Index<usize> for SegmentedVec<T> {
    type Output = T;

    /// Element `index & MASK` of full segment `index >> SHIFT`, or of the tail.
    #[inline]
    fn index(&self, index: usize) -> &T {
        if index < self.tail_start {
            &self.full[index >> SHIFT][index & MASK]
        } else {
            &self.tail[index - self.tail_start]
        }
    }
}

impl<T> IndexMut<usize> for SegmentedVec<T> {
    /// Element `index & MASK` of full segment `index >> SHIFT`, or of the tail.
    #[inline]
    fn index_mut(&mut self, index: usize) -> &mut T {
        if index < self.tail_start {
            &mut self.full[index >> SHIFT][index & MASK]
        } else {
            &mut self.tail[index - self.tail_start]
        }
    }
}

/// An indexable sequence a heap can live in: [`SegmentedVec`] or a plain `Vec`, so that the
/// shared sift loops (`binary_sift`) are written once and monomorphised for either.
pub trait Store<T>: IndexMut<usize, Output = T> {
    /// Number of elements.
    fn len(&self) -> usize;

    /// Whether there are no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Store<T> for SegmentedVec<T> {
    #[inline]
    fn len(&self) -> usize {
        SegmentedVec::len(self)
    }
}

impl<T> Store<T> for Vec<T> {
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_across_segments_keep_every_element_in_place() {
        let mut store = SegmentedVec::new();
        let count = 3 * SEGMENT + 17;
        for i in 0..count {
            store.push(i as u64);
        }
        assert_eq!(store.len(), count);
        assert_eq!(store.full.len(), 3);
        for i in 0..count {
            assert_eq!(store[i], i as u64);
            assert_eq!(store.get(i), Some(&(i as u64)));
        }
        assert_eq!(store.get(count), None);
        assert!(store.iter().copied().eq(0..count as u64));
        assert_eq!(store.last(), Some(&(count as u64 - 1)));
    }

    #[test]
    fn full_segments_are_never_reallocated() {
        let mut store = SegmentedVec::new();
        for i in 0..2 * SEGMENT + 1 {
            store.push(i);
        }
        let address = |s: &SegmentedVec<usize>, i: usize| &s[i] as *const usize as usize;
        let second = address(&store, SEGMENT);
        let tail = address(&store, 2 * SEGMENT);
        for i in 0..5 * SEGMENT {
            store.push(i);
        }
        assert_eq!(address(&store, SEGMENT), second, "the element did not move");
        assert_eq!(
            address(&store, 2 * SEGMENT),
            tail,
            "the tail became a segment in place"
        );
    }

    #[test]
    fn the_first_segment_starts_small_and_stops_at_a_segment() {
        let mut store = SegmentedVec::new();
        store.push(1u32);
        assert_eq!(store.capacity(), FIRST_CAPACITY);
        for i in 0..SEGMENT as u32 {
            store.push(i);
        }
        assert_eq!(store.full.len(), 1);
        assert_eq!(store.capacity(), 2 * SEGMENT);
    }

    #[test]
    fn with_capacity_allocates_the_segments_up_front() {
        let mut store = SegmentedVec::<u64>::with_capacity(2 * SEGMENT + 1);
        assert_eq!(store.spare.len(), 2);
        assert_eq!(store.capacity(), 2 * SEGMENT + 1, "exactly what was asked");
        for i in 0..3 * SEGMENT as u64 + 1 {
            store.push(i);
        }
        assert!(store.iter().copied().eq(0..3 * SEGMENT as u64 + 1));
        assert_eq!(
            store.capacity(),
            4 * SEGMENT,
            "the short last segment grew to full size"
        );
        let small = SegmentedVec::<u64>::with_capacity(100);
        assert_eq!(small.capacity(), 100);
        assert_eq!(SegmentedVec::<u64>::with_capacity(0).capacity(), 0);
    }

    #[test]
    fn pops_keep_segments_for_the_next_pushes() {
        let mut store = SegmentedVec::new();
        for i in 0..SEGMENT + 2 {
            store.push(i);
        }
        let capacity = store.capacity();
        for i in (SEGMENT - 3..SEGMENT + 2).rev() {
            assert_eq!(store.pop(), Some(i));
        }
        assert_eq!(store.len(), SEGMENT - 3);
        for i in 0..5 {
            store.push(i);
        }
        assert_eq!(store.capacity(), capacity, "no segment freed or allocated");
        assert_eq!(store[SEGMENT + 1], 4);
        store.clear();
        assert!(store.is_empty());
        assert_eq!(store.pop(), None);
        assert_eq!(store.first(), None);
        assert_eq!(store.capacity(), capacity);
    }

    #[test]
    fn swap_within_and_across_segments() {
        let mut store = SegmentedVec::new();
        for i in 0..2 * SEGMENT + 10 {
            store.push(i);
        }
        let tail = 2 * SEGMENT;
        store.swap(1, 2);
        store.swap(3, SEGMENT + 5);
        store.swap(SEGMENT + 6, 4);
        store.swap(7, 7);
        store.swap(8, tail + 1);
        store.swap(tail + 3, tail + 2);
        assert_eq!((store[1], store[2]), (2, 1));
        assert_eq!((store[3], store[SEGMENT + 5]), (SEGMENT + 5, 3));
        assert_eq!((store[4], store[SEGMENT + 6]), (SEGMENT + 6, 4));
        assert_eq!(store[7], 7);
        assert_eq!((store[8], store[tail + 1]), (tail + 1, 8));
        assert_eq!((store[tail + 2], store[tail + 3]), (tail + 3, tail + 2));
    }

    #[test]
    fn retain_keeps_order_and_resize_fills() {
        let mut store = SegmentedVec::new();
        store.resize(3 * SEGMENT, 0u32);
        for i in 0..store.len() {
            store[i] = i as u32;
        }
        store.retain(|&x| x % 3 == 0);
        assert!(store.iter().copied().eq((0..3 * SEGMENT as u32).step_by(3)));
        store.resize(SEGMENT + 2, 9);
        assert_eq!(store.len(), SEGMENT + 2);
        assert_eq!(store[SEGMENT + 1], 9);
        assert_eq!(*store.first_mut().unwrap(), 0);
        *store.get_mut(5).unwrap() = 77;
        *store.get_mut(SEGMENT + 1).unwrap() = 78;
        assert_eq!((store[5], store[SEGMENT + 1]), (77, 78));
    }

    #[test]
    fn dropped_elements_are_dropped_once() {
        let counter = std::rc::Rc::new(());
        let mut store = SegmentedVec::new();
        for _ in 0..2 * SEGMENT + 10 {
            store.push(counter.clone());
        }
        store.truncate(5);
        assert_eq!(std::rc::Rc::strong_count(&counter), 6);
        for _ in 0..SEGMENT {
            store.push(counter.clone());
        }
        drop(store);
        assert_eq!(std::rc::Rc::strong_count(&counter), 1);
    }
}
