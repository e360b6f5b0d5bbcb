//! `btree`: the ordered-tree baseline, a `BTreeMap` keyed by `(deadline, slot)`.
//!
//! # The idea
//!
//! Keep every pending timer in a balanced search tree ordered by deadline; the leftmost key
//! is the next to fire. nginx keeps its timers in a red-black tree (`ngx_event_timer_rbtree`)
//! and Linux keeps hrtimers in a red-black tree with a cached leftmost node
//! (`timerqueue`). Rust's `BTreeMap` plays that role here: same ordered-map contract, better
//! cache behaviour than a pointer-per-node tree. The second half of the key makes keys
//! unique when deadlines tie; the timer's arena slot does that job, because no two pending
//! timers share a slot, so no separate sequence counter is needed.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | arena slot: deadline (8), generation (4), unused link (4) | 16 |
//! | B-tree element: key `(u64, u32)` padded to 16, value 8 | 24, in nodes of up to 11 elements (std's `B = 6`), so about 24 / occupancy, plus edges and node headers |
//!
//! The tree is what it is: about 40-50 bytes per timer in all, depending on node occupancy.
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(log n): tree insert |
//! | `stop` | O(log n): arena lookup gives the key, then tree remove |
//! | `advance`, per fired timer | O(log n) worst case for `pop_first`, amortised near O(1) |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `next_deadline` | O(log n) descent to the leftmost key; exact |
//!
//! # Empty time
//!
//! There is none to skip: `advance` pops while the leftmost deadline is `<= to` and then
//! sets the clock, whatever the distance.

use crate::arena::{Arena, NIL};
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use std::collections::BTreeMap;

/// See the module documentation.
pub struct BTreeTimers<V> {
    /// Pending timers by `(deadline, arena slot)`.
    tree: BTreeMap<(Tick, u32), V>,
    /// Each pending timer's deadline, to find its key from its handle.
    deadlines: Arena<Tick>,
    now: Tick,
    work: u64,
}

impl<V> TimerQueue<V> for BTreeTimers<V> {
    fn with_capacity(capacity: usize) -> Self {
        BTreeTimers {
            tree: BTreeMap::new(),
            deadlines: Arena::with_capacity(capacity),
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.deadlines.insert(NIL, deadline);
        self.tree.insert((deadline, id.index()), value);
        self.work += 1;
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.deadlines.resolve(id)?;
        let (_, deadline) = self.deadlines.remove(index);
        self.work += 1;
        let value = self.tree.remove(&(deadline, index));
        debug_assert!(value.is_some(), "every live arena entry has a tree key");
        value
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        while let Some(entry) = self.tree.first_entry() {
            let (deadline, index) = *entry.key();
            if deadline > to {
                break;
            }
            let value = entry.remove();
            let id = self.deadlines.id(index);
            self.deadlines.remove(index);
            self.work += 1;
            on_fire(id, value, deadline);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        self.tree
            .first_key_value()
            .map(|(&(deadline, _), _)| deadline)
    }

    crate::contract::len_now_work!(deadlines.len());
}
