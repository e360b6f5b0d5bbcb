//! The reference model: the contract written as plainly as possible, to test the real
//! structures against.
//!
//! Pending timers sit in a `Vec` in start order. `advance` takes out every due timer, sorts
//! them by deadline (stable, so equal deadlines keep start order) and fires them. Handles are
//! never reused (each start takes the next index, generation 1), so a stale handle is simply
//! one that is no longer in the list. Every operation is O(n): this model is for tests and
//! small replays, not for measurement.

use crate::contract::{Tick, TimerId, TimerQueue, check_advance};

/// See the module documentation.
pub struct ReferenceQueue<V> {
    pending: Vec<(TimerId, Tick, V)>,
    issued: u32,
    now: Tick,
    work: u64,
}

impl<V> TimerQueue<V> for ReferenceQueue<V> {
    fn with_capacity(capacity: usize) -> Self {
        ReferenceQueue {
            pending: Vec::with_capacity(capacity),
            issued: 0,
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = TimerId::from_parts(self.issued, 1);
        self.issued = self
            .issued
            .checked_add(1)
            .expect("reference model ran out of ids");
        self.pending.push((id, deadline, value));
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let position = self.pending.iter().position(|&(p, _, _)| p == id)?;
        Some(self.pending.remove(position).2)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        let (mut due, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|&(_, deadline, _)| deadline <= to);
        self.pending = kept;
        self.work += due.len() as u64;
        due.sort_by_key(|&(_, deadline, _)| deadline);
        for (id, deadline, value) in due {
            on_fire(id, value, deadline);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        self.pending.iter().map(|&(_, deadline, _)| deadline).min()
    }

    crate::contract::len_now_work!(pending.len());
}
