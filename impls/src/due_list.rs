//! The "due list" of the bitmap wheels: timers started with a deadline at or before the
//! clock, which have no slot ahead of it.
//!
//! Such a timer fires at the next `advance`, before anything in the wheel (every due
//! deadline is `<= now`, every wheel deadline is `> now`). Different past deadlines must
//! still fire in deadline order, so the list is kept unsorted (O(1) `start` and `stop`) and
//! sorted once when it fires, by [`arena_list::sort_by_deadline`] over its own links: no
//! scratch vector, so a whole population going past due costs no memory beyond its entries.
//!
//! # Invariant
//!
//! While the list is non-empty, `min` is a lower bound of its deadlines, and exactly its
//! smallest deadline unless `min_stale` (set when the entry holding it was stopped).
//!
//! # Costs (k entries on the list)
//!
//! | operation | cost |
//! | --- | --- |
//! | [`DueList::push`], [`DueList::unlink`], [`DueList::close_gap`] | O(1) |
//! | [`DueList::min`] | O(1), or O(k) once after the minimum's holder was stopped |
//! | [`DueList::take_sorted`] | O(k log k) comparisons, no memory |

use crate::arena::{Arena, NIL};
use crate::arena_list::{self, Linked};
use crate::contract::Tick;

/// An unsorted list of past-due entries with their minimum deadline. See the module
/// documentation.
pub struct DueList {
    head: u32,
    min: Tick,
    min_stale: bool,
}

impl DueList {
    /// An empty list.
    pub const fn new() -> Self {
        DueList {
            head: NIL,
            min: 0,
            min_stale: false,
        }
    }

    /// Whether the list holds nothing.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// Puts the live entry `index` on the list.
    pub fn push<T: Linked>(&mut self, arena: &mut Arena<T>, index: u32) {
        let deadline = arena.get(index).deadline();
        // A stale minimum is still a lower bound, so a deadline at or below it is the exact
        // minimum again.
        if self.head == NIL || deadline <= self.min {
            self.min = deadline;
            self.min_stale = false;
        }
        arena_list::push_front(arena, &mut self.head, index);
    }

    /// Takes the live entry `index`, which is on this list, off it.
    pub fn unlink<T: Linked>(&mut self, arena: &mut Arena<T>, index: u32) {
        if arena.get(index).deadline() == self.min {
            self.min_stale = true;
        }
        arena_list::unlink(arena, &mut self.head, index);
    }

    /// Joins `prev` and `next`, the former neighbours on this list of an entry of deadline
    /// `deadline` that the arena has already freed (its `remove` returned both links).
    #[inline]
    pub fn close_gap<T: Linked>(
        &mut self,
        arena: &mut Arena<T>,
        deadline: Tick,
        prev: u32,
        next: u32,
    ) {
        if deadline == self.min {
            self.min_stale = true;
        }
        arena_list::close_gap(arena, &mut self.head, prev, next);
    }

    /// The smallest deadline on the list, if any; `work` counts the entries a rescan reads.
    pub fn min<T: Linked>(&mut self, arena: &Arena<T>, work: &mut u64) -> Option<Tick> {
        if self.head == NIL {
            return None;
        }
        if self.min_stale {
            let mut index = self.head;
            let mut min = Tick::MAX;
            while index != NIL {
                *work += 1;
                min = min.min(arena.get(index).deadline());
                index = arena.link(index);
            }
            self.min = min;
            self.min_stale = false;
        }
        Some(self.min)
    }

    /// Empties the list and returns it detached and sorted by deadline (stable), `NIL` if it
    /// was empty; `work` counts the comparisons.
    pub fn take_sorted<T: Linked>(&mut self, arena: &mut Arena<T>, work: &mut u64) -> u32 {
        if self.head == NIL {
            return NIL;
        }
        let list = arena_list::take(&mut self.head);
        arena_list::sort_by_deadline(arena, list, work)
    }
}

impl Default for DueList {
    fn default() -> Self {
        Self::new()
    }
}
