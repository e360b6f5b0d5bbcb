//! `floor`: not a timer queue, but the least any timer queue does, as a yardstick.
//!
//! # The idea
//!
//! Every structure here pays, per start, for an arena slot and a handle, and per stop for
//! resolving the handle and freeing the slot; everything else (ordering, firing) is what
//! distinguishes one structure from another. `Floor` does only that bookkeeping: a start
//! takes a slot in the same [`Arena`] the structures use, a stop frees it, and a clock
//! move only moves the clock. It never fires anything, so its replay of a workload is not
//! the reference's and it is **never verified**: it is not registered with the
//! implementations, runs only when asked (`timerbench run --floor`, the benches), and is
//! marked as the floor wherever it appears. A structure's figure divided by the floor's on
//! the same workload reads as "times the cheapest possible start/stop on this machine".
//!
//! # One timer entry
//!
//! | field | bytes (`u64` value) |
//! | --- | --- |
//! | arena slot: generation, link | 8 |
//! | deadline | 8 |
//! | value | 8 |
//! | total | 24 |
//!
//! The deadline is kept although nothing reads it, so that a start writes what a real
//! entry holds.
//!
//! # Costs
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): take a slot |
//! | `stop` | O(1): resolve the handle, free the slot |
//! | `restart` | O(1): rewrite the slot in place under a new generation |
//! | `advance` | O(1): set the clock |
//! | `next_deadline` | O(1): always `None`, so a sleep (`n`) moves nothing |
//!
//! # Empty time and precision
//!
//! Empty time costs nothing, and nothing fires: a timer stays in its slot until stopped.
//! There is no precision to speak of.

use crate::arena::{Arena, NIL};
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};

/// What one slot holds.
struct Entry<V> {
    // Written by every start, as a real entry's would be; never read.
    #[allow(dead_code)]
    deadline: Tick,
    value: V,
}

/// The bookkeeping of a timer queue without the queue. See the module documentation.
pub struct Floor<V> {
    entries: Arena<Entry<V>>,
    now: Tick,
    work: u64,
}

impl<V> TimerQueue<V> for Floor<V> {
    fn with_capacity(capacity: usize) -> Self {
        Floor {
            entries: Arena::with_capacity(capacity),
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.work += 1;
        self.entries.insert(NIL, Entry { deadline, value })
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        self.work += 1;
        Some(self.entries.remove(index).1.value)
    }

    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        match self.entries.resolve(id) {
            Some(index) => {
                self.work += 1;
                let (id, old) = self.entries.reissue(index, Entry { deadline, value });
                (id, Some(old.value))
            }
            None => (self.start(deadline, value), None),
        }
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, _on_fire: F) {
        check_advance(self.now, to);
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        None
    }

    crate::contract::len_now_work!(entries.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_the_books_and_fires_nothing() {
        let mut floor: Floor<u64> = Floor::with_capacity(4);
        let a = floor.start(10, 1);
        let b = floor.start(5, 2);
        assert_eq!(floor.len(), 2);
        let mut fired = 0;
        floor.advance(100, |_, _, _| fired += 1);
        assert_eq!((fired, floor.now(), floor.len()), (0, 100, 2));
        assert_eq!(floor.next_deadline(), None);
        assert_eq!(floor.stop(a), Some(1));
        assert_eq!(floor.stop(a), None, "a freed slot's handle is stale");
        let (c, old) = floor.restart(b, 7, 3);
        assert_eq!(old, Some(2));
        assert_eq!(floor.stop(b), None, "restart retires the old handle");
        assert_eq!(floor.stop(c), Some(3));
        assert!(floor.is_empty());
    }
}
