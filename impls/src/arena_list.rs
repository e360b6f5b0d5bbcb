//! Doubly linked lists threaded through an [`Arena`]: the slots, buckets and due lists of
//! the timing wheels.
//!
//! A wheel keeps each slot as an unsorted list so that `start` and `stop` are O(1). The
//! lists cost no memory of their own: an entry's arena link is its `next` pointer, and the
//! entry keeps a `prev` pointer ([`Linked`]); the owner keeps one `u32` head per list.
//!
//! # Invariants
//!
//! Written once here, relied on by every wheel:
//!
//! - a list is named by its head, an arena index or [`NIL`] when the list is empty;
//! - for an entry on a list, its arena link is the next entry (`NIL` at the tail) and its
//!   `prev` is the previous one (`NIL` exactly when it is the head);
//! - an entry is on at most one list, and its owner can tell which (a `home` field, a
//!   bucket id, or its deadline hashed), because [`unlink`] needs that list's head;
//! - a list taken whole with [`take`] is detached: its entries still chain through their
//!   arena links, but their `prev` links are stale until each is pushed again. Whoever walks
//!   it reads an entry's `next` before freeing or re-filing that entry.
//!
//! # Costs
//!
//! | operation | cost |
//! | --- | --- |
//! | [`push_front`], [`insert_front`] | O(1): two link writes, one `prev` write of the old head |
//! | [`unlink`], [`close_gap`] | O(1): relink the neighbours |
//! | [`take`] | O(1): the head is reset; walking the detached list is the caller's |
//! | [`sort_by_deadline`] | O(k log k) comparisons for `k` entries, no memory |

use crate::arena::{Arena, NIL};
use crate::contract::{Tick, TimerId};

/// An arena payload that can sit on a list: it keeps its `prev` pointer, the arena link
/// being its `next`.
pub trait Linked {
    /// The previous entry of its list, `NIL` at the head.
    fn prev(&self) -> u32;
    /// Sets the previous entry.
    fn set_prev(&mut self, prev: u32);
    /// The deadline the due lists are sorted by.
    fn deadline(&self) -> Tick;
}

/// Implements [`Linked`] for a wheel's entry type from its `prev: u32` and
/// `deadline: Tick` fields, the layout every wheel's entry shares.
#[macro_export]
macro_rules! impl_linked {
    ($entry:ident) => {
        impl<V> $crate::arena_list::Linked for $entry<V> {
            #[inline]
            fn prev(&self) -> u32 {
                self.prev
            }
            #[inline]
            fn set_prev(&mut self, prev: u32) {
                self.prev = prev;
            }
            #[inline]
            fn deadline(&self) -> $crate::contract::Tick {
                self.deadline
            }
        }
    };
}

/// Puts the live entry `index` at the front of the list whose head is `head`.
#[inline]
pub fn push_front<T: Linked>(arena: &mut Arena<T>, head: &mut u32, index: u32) {
    let old_head = std::mem::replace(head, index);
    let (next, entry) = arena.entry_mut(index);
    *next = old_head;
    entry.set_prev(NIL);
    if old_head != NIL {
        arena.get_mut(old_head).set_prev(index);
    }
}

/// Inserts `payload` into the arena at the front of the list whose head is `head`, and
/// returns its handle. The payload's `prev` must be `NIL`. The new entry's link is written
/// as it is inserted, so a `start` touches its entry once. Inline always, as a link in the
/// wheels' forced-inline `start` (see `wheel_core::start`).
#[inline(always)]
pub fn insert_front<T: Linked>(arena: &mut Arena<T>, head: &mut u32, payload: T) -> TimerId {
    debug_assert_eq!(payload.prev(), NIL, "a new head has no predecessor");
    let old_head = *head;
    let id = arena.insert(old_head, payload);
    *head = id.index();
    if old_head != NIL {
        arena.get_mut(old_head).set_prev(id.index());
    }
    id
}

/// Takes the live entry `index` off the list whose head is `head` (the list it is on); the
/// entry stays in the arena. Returns whether the list is empty now, so that the owner can
/// clear an occupancy bit.
#[inline]
pub fn unlink<T: Linked>(arena: &mut Arena<T>, head: &mut u32, index: u32) -> bool {
    let next = arena.link(index);
    let prev = arena.get(index).prev();
    close_gap(arena, head, prev, next)
}

/// Joins `prev` and `next`, the former neighbours of an entry already taken out of the
/// arena (whose `remove` returned both links in one access), in the list whose head is
/// `head`. Returns whether the list is empty now.
#[inline]
pub fn close_gap<T: Linked>(arena: &mut Arena<T>, head: &mut u32, prev: u32, next: u32) -> bool {
    if prev == NIL {
        *head = next;
    } else {
        arena.set_link(prev, next);
    }
    if next != NIL {
        arena.get_mut(next).set_prev(prev);
    }
    prev == NIL && next == NIL
}

/// Empties the list whose head is `head` and returns its former head: the detached list.
#[inline]
pub fn take(head: &mut u32) -> u32 {
    std::mem::replace(head, NIL)
}

/// Largest number of sorted runs [`sort_by_deadline`] keeps: run `i` holds `2^i` entries,
/// and an arena holds fewer than `2^32`.
const SORT_RUNS: usize = 33;

/// Sorts the detached list starting at `list` by deadline, through the arena links, and
/// returns its new head; `work` counts the comparisons. The `prev` links stay stale (the
/// due lists are fired right after).
///
/// Why a merge sort of the links rather than a sort of the indices in a scratch `Vec`: it
/// needs no memory, so a wheel's memory stays exactly its entries and its heads (a scratch
/// buffer would keep the size of the largest due list ever seen), and a due list is rare
/// and short (timers started already due), so the cache misses of following links cost
/// little. Bottom-up: `runs[i]` is empty or a sorted run of exactly `2^i` entries; each new
/// entry is carried up like a binary counter increment, and the runs left at the end are
/// merged from small to large. Stable: equal deadlines keep their list order.
pub fn sort_by_deadline<T: Linked>(arena: &mut Arena<T>, mut list: u32, work: &mut u64) -> u32 {
    let mut runs = [NIL; SORT_RUNS];
    while list != NIL {
        let next = arena.link(list);
        arena.set_link(list, NIL);
        let mut run = list;
        let mut rank = 0;
        while runs[rank] != NIL {
            run = merge(arena, runs[rank], run, work);
            runs[rank] = NIL;
            rank += 1;
        }
        runs[rank] = run;
        list = next;
    }
    runs.iter()
        .filter(|&&run| run != NIL)
        .fold(NIL, |sorted, &run| merge(arena, run, sorted, work))
}

/// Merges two sorted detached lists into one; on equal deadlines `left` goes first.
fn merge<T: Linked>(arena: &mut Arena<T>, mut left: u32, mut right: u32, work: &mut u64) -> u32 {
    let mut head = NIL;
    let mut tail = NIL;
    while left != NIL && right != NIL {
        *work += 1;
        let taken = if arena.get(left).deadline() <= arena.get(right).deadline() {
            let next = arena.link(left);
            std::mem::replace(&mut left, next)
        } else {
            let next = arena.link(right);
            std::mem::replace(&mut right, next)
        };
        if tail == NIL {
            head = taken;
        } else {
            arena.set_link(tail, taken);
        }
        tail = taken;
    }
    let rest = if left != NIL { left } else { right };
    if tail == NIL {
        rest
    } else {
        arena.set_link(tail, rest);
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Item {
        prev: u32,
        deadline: Tick,
    }

    impl Linked for Item {
        fn prev(&self) -> u32 {
            self.prev
        }
        fn set_prev(&mut self, prev: u32) {
            self.prev = prev;
        }
        fn deadline(&self) -> Tick {
            self.deadline
        }
    }

    /// The list from `head` as indices, checking both directions agree.
    fn walk(arena: &Arena<Item>, head: u32) -> Vec<u32> {
        let mut seen = Vec::new();
        let mut prev = NIL;
        let mut index = head;
        while index != NIL {
            assert_eq!(arena.get(index).prev(), prev, "prev of {index}");
            seen.push(index);
            prev = index;
            index = arena.link(index);
        }
        seen
    }

    fn item(arena: &mut Arena<Item>, deadline: Tick) -> u32 {
        arena
            .insert(
                NIL,
                Item {
                    prev: NIL,
                    deadline,
                },
            )
            .index()
    }

    #[test]
    fn push_and_unlink_keep_both_directions_true() {
        let mut arena = Arena::with_capacity(0);
        let mut head = NIL;
        let items: Vec<u32> = (0..5).map(|d| item(&mut arena, d)).collect();
        for &index in &items {
            push_front(&mut arena, &mut head, index);
        }
        assert_eq!(walk(&arena, head), [4, 3, 2, 1, 0]);
        assert!(!unlink(&mut arena, &mut head, 2), "middle");
        assert!(!unlink(&mut arena, &mut head, 4), "head");
        assert!(!unlink(&mut arena, &mut head, 0), "tail");
        assert_eq!(walk(&arena, head), [3, 1]);
        assert!(!unlink(&mut arena, &mut head, 3));
        assert!(
            unlink(&mut arena, &mut head, 1),
            "the last one empties the list"
        );
        assert_eq!(head, NIL);
    }

    #[test]
    fn take_detaches_the_whole_list() {
        let mut arena = Arena::with_capacity(0);
        let mut head = NIL;
        for d in 0..3 {
            let index = item(&mut arena, d);
            push_front(&mut arena, &mut head, index);
        }
        let list = take(&mut head);
        assert_eq!(head, NIL);
        assert_eq!(walk(&arena, list), [2, 1, 0]);
    }

    #[test]
    fn sort_orders_by_deadline_stably_for_any_length() {
        for len in [0usize, 1, 2, 3, 7, 8, 9, 100, 1000] {
            let mut arena = Arena::with_capacity(0);
            let mut head = NIL;
            for i in 0..len {
                let index = item(&mut arena, ((i * 7919) % 13) as Tick);
                push_front(&mut arena, &mut head, index);
            }
            let before = walk(&arena, head);
            let mut work = 0;
            let sorted = sort_by_deadline(&mut arena, take(&mut head), &mut work);
            let mut order = Vec::new();
            let mut index = sorted;
            while index != NIL {
                order.push(index);
                index = arena.link(index);
            }
            let mut expected = before.clone();
            expected.sort_by_key(|&i| arena.get(i).deadline);
            assert_eq!(order, expected, "length {len}");
        }
    }
}
