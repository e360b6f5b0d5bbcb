//! `polling-scan`: an unordered table of pending timers, every one of them looked at on
//! every clock move.
//!
//! # The idea
//!
//! Varghese and Lauck's scheme 1 ("Hashed and Hierarchical Timing Wheels", SOSP 1987,
//! section 3): keep the outstanding timers in no order at all, so that starting and
//! stopping one is O(1), and on every clock tick decrement (here: compare) every one of
//! them, an O(n) cost per tick. It is also the first method of the chat server this
//! project starts from (100,000 connections, each closed after 30 s without a packet),
//! before its ring of buckets (`ring-buckets`): keep each connection's deadline in its
//! record and sweep the whole table when the clock moves, closing whoever is due. It is the
//! baseline every other structure here exists to beat, and it is honest about what it
//! costs: nothing to start, stop or restart, everything to move the clock.
//!
//! # As in the source, and what the contract changes
//!
//! - **As in scheme 1:** the table is unordered; `start`, `stop` and `restart` are O(1);
//!   every clock move visits every pending timer once, whatever span it covers.
//! - **A dense table, not a list.** Scheme 1 is drawn as a list; here the pending timers
//!   are the prefix of one array of `(deadline, entry)` pairs, so a sweep reads memory
//!   sequentially. A stop fills its hole with the last pair (swap-remove), which needs each
//!   arena entry to know its pair's position: the arena link is that back-index.
//! - **Order within one move.** Scheme 1 fires timers in table order; the contract wants
//!   non-decreasing deadlines across one `advance`. The sweep moves every due pair to the
//!   end of the table (a partition, no scratch memory), then sorts that tail by deadline
//!   and fires it: O(k log k) for `k` fired timers, on top of the sweep.
//! - **The next deadline.** A sweep visits every survivor anyway, so it also records the
//!   earliest surviving deadline; `start` and `restart` lower that cache. Only a `stop` (or a
//!   `restart` to later) of the timer holding the earliest deadline leaves it stale, and then
//!   `next_deadline` sweeps (O(n)) once to find the new one. An event loop that sleeps with
//!   `next_deadline` therefore pays one sweep per clock move, not two.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | table pair: deadline (8), arena index (4), padding (4) | 16 |
//! | arena slot: value (8), table position (4, the arena link), generation (4) | 16 |
//! | **total per pending timer** | **32** |
//!
//! # Costs (n pending timers, k fired by one move)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): push a pair, insert into the arena |
//! | `stop` | O(1): swap-remove the pair, fix the moved pair's back-index |
//! | `restart` | O(1), in place: rewrite the pair's deadline and reissue the arena entry |
//! | `advance`, per move | O(n): one sweep of the whole table, due or not |
//! | `advance`, per fired timer | O(log k) of the sort of the fired tail, plus O(1) to free it |
//! | `advance`, per tick skipped | nothing beyond the sweep: a jump of 2^40 ticks costs one sweep |
//! | `next_deadline` | O(1) from the cache; O(n), one sweep, after the earliest timer was stopped or moved later |
//!
//! # Empty time
//!
//! Scanned ([`EmptyTime::Scanned`]): a clock move costs one sweep of every pending timer
//! whether or not anything is due, and nothing per tick it covers. A driver that moves the
//! clock tick by tick pays `n` per tick.
//!
//! # Suite limit
//!
//! Entry visits of the standard suite = the sum over clock moves of the timers pending
//! then, counted (not timed) on the generated workloads (`t N` = N moves, `a` and `n` one
//! each): at 60,000 timers the worst family, cron, makes 32,338 moves over 60,000 pending
//! timers (1.9 x 10^9 visits) and keepalive 60,000 one-tick moves over 27,900 pending on
//! average (1.7 x 10^9); at 100,000 they need 3.9 x 10^9 and 2.8 x 10^9, and at 1M
//! keepalive alone needs about 2.8 x 10^10. The suite therefore stops at 60,000
//! ([`SUITE_LIMIT`](TimerQueue::SUITE_LIMIT)), where the worst family stays under about
//! 2 x 10^9 visits.
//!
//! # Precision
//!
//! Exact: a sweep compares every deadline with the move's end, so a timer fires in the
//! first `advance` whose `to` reaches its deadline.
//!
//! # Invariants
//!
//! - `table` holds exactly one pair per pending timer, and for every position `p`,
//!   `arena.link(table[p].entry) == p` and `table[p].deadline` is that timer's deadline;
//! - `earliest` is `None` when the table is empty; otherwise, when `earliest_exact` it is
//!   the minimum deadline in the table, and when not it is at most that minimum.

use crate::arena::Arena;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{EmptyTime, SuiteLimit};

/// One pending timer in the table: its deadline, next to the arena index of its value, so
/// that a sweep compares deadlines without leaving the table.
#[derive(Clone, Copy, Debug)]
struct Pending {
    deadline: Tick,
    entry: u32,
}

/// See the module documentation.
pub struct PollingScan<V> {
    /// The pending timers, in no order.
    table: Vec<Pending>,
    /// Values, with each timer's table position as the arena link.
    values: Arena<V>,
    /// A lower bound of the earliest pending deadline (`None`: nothing pending).
    earliest: Option<Tick>,
    /// Whether `earliest` is the earliest pending deadline itself.
    earliest_exact: bool,
    now: Tick,
    work: u64,
}

impl<V> PollingScan<V> {
    /// Bytes one pending timer costs: its table pair and its arena slot.
    pub const BYTES_PER_TIMER: usize = std::mem::size_of::<Pending>() + Arena::<V>::SLOT_BYTES;

    /// Accounts for a pending timer at `deadline` in the cached minimum. A deadline at or
    /// below a lower bound is the new minimum, so the cache becomes exact again.
    #[inline]
    fn offer_earliest(&mut self, deadline: Tick) {
        match self.earliest {
            Some(earliest) if earliest < deadline => {}
            _ => {
                self.earliest = Some(deadline);
                self.earliest_exact = true;
            }
        }
    }

    /// Accounts for a timer at `deadline` leaving the table.
    #[inline]
    fn forget_earliest(&mut self, deadline: Tick) {
        if self.table.is_empty() {
            self.earliest = None;
            self.earliest_exact = true;
        } else if self.earliest == Some(deadline) {
            // It may have been the only one at the minimum: the next look sweeps.
            self.earliest_exact = false;
        }
    }

    /// Takes the pair at `position` out of the table, filling the hole with the last pair.
    #[inline]
    fn swap_remove(&mut self, position: usize) -> Pending {
        let removed = self.table.swap_remove(position);
        if let Some(&moved) = self.table.get(position) {
            // Positions are below the arena's u32 index space.
            self.values.set_link(moved.entry, position as u32);
        }
        removed
    }

    /// Panics with a message if an invariant written in the module documentation is
    /// broken. O(n): for tests.
    pub fn check_invariants(&self) {
        assert_eq!(self.table.len(), self.values.len(), "one pair per timer");
        for (position, pending) in self.table.iter().enumerate() {
            assert_eq!(
                self.values.link(pending.entry) as usize,
                position,
                "back-index of entry {}",
                pending.entry
            );
        }
        let minimum = self.table.iter().map(|p| p.deadline).min();
        match (self.earliest, minimum) {
            (None, None) => {}
            (Some(earliest), Some(minimum)) => {
                assert!(earliest <= minimum, "cached earliest above the minimum");
                if self.earliest_exact {
                    assert_eq!(earliest, minimum, "cached earliest marked exact");
                }
            }
            (cached, actual) => panic!("cached earliest {cached:?}, table minimum {actual:?}"),
        }
    }
}

impl<V> TimerQueue<V> for PollingScan<V> {
    /// See the module documentation, "Suite limit".
    const SUITE_LIMIT: Option<SuiteLimit> = Some(SuiteLimit {
        max_timers: 60_000,
        why: "every clock move scans every pending timer: at 60k timers cron makes 32,338 moves \
              over 60k pending (1.9e9 entry visits), keepalive 60,000 moves over 27.9k on \
              average (1.7e9); 100k needs 3.9e9, 1M keepalive 2.8e10",
    });

    fn with_capacity(capacity: usize) -> Self {
        PollingScan {
            table: Vec::with_capacity(capacity),
            values: Arena::with_capacity(capacity),
            earliest: None,
            earliest_exact: true,
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.work += 1;
        let position = self.table.len() as u32;
        let id = self.values.insert(position, value);
        self.table.push(Pending {
            deadline,
            entry: id.index(),
        });
        self.offer_earliest(deadline);
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.values.resolve(id)?;
        self.work += 1;
        let position = self.values.link(index) as usize;
        let removed = self.swap_remove(position);
        self.forget_earliest(removed.deadline);
        Some(self.values.remove(index).1)
    }

    /// In place: the pair keeps its position and takes the new deadline; the arena entry
    /// takes the new value under a new handle. What a connection table does on activity:
    /// overwrite the connection's deadline.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.values.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        self.work += 1;
        let position = self.values.link(index) as usize;
        let old_deadline = std::mem::replace(&mut self.table[position].deadline, deadline);
        if deadline > old_deadline {
            self.forget_earliest(old_deadline);
        } else {
            self.offer_earliest(deadline);
        }
        let (id, old) = self.values.reissue(index, value);
        (id, Some(old))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        // The sweep: every pair is looked at once. A due pair is swapped to the end of the
        // live prefix; the pair swapped in is looked at next, at the same position, and its
        // back-index is fixed only if it stays (so a sweep that fires nothing writes
        // nothing to the arena).
        let mut live = self.table.len();
        let mut position = 0;
        let mut swapped_in = false;
        let mut earliest_of_rest = None::<Tick>;
        while position < live {
            self.work += 1;
            let pending = self.table[position];
            if pending.deadline <= to {
                live -= 1;
                self.table.swap(position, live);
                swapped_in = true;
            } else {
                if swapped_in {
                    self.values.set_link(pending.entry, position as u32);
                    swapped_in = false;
                }
                earliest_of_rest = Some(match earliest_of_rest {
                    Some(earliest) => earliest.min(pending.deadline),
                    None => pending.deadline,
                });
                position += 1;
            }
        }
        self.earliest = earliest_of_rest;
        self.earliest_exact = true;
        // The fired tail, in deadline order (the contract's order within one move).
        let fired = &mut self.table[live..];
        fired.sort_unstable_by_key(|pending| pending.deadline);
        self.work += fired.len() as u64;
        for pending in self.table.drain(live..) {
            let id = self.values.id(pending.entry);
            let (_, value) = self.values.remove(pending.entry);
            on_fire(id, value, pending.deadline);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        if !self.earliest_exact {
            // The earliest timer left since the last sweep: sweep for the new minimum.
            self.work += self.table.len() as u64;
            self.earliest = self.table.iter().map(|pending| pending.deadline).min();
            self.earliest_exact = true;
        }
        self.earliest
    }

    fn empty_time(&self) -> EmptyTime {
        EmptyTime::Scanned
    }

    crate::contract::len_now_work!(table.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fire_all(queue: &mut PollingScan<u64>, to: Tick) -> Vec<(Tick, u64)> {
        let mut fired = Vec::new();
        queue.advance(to, |_, value, deadline| fired.push((deadline, value)));
        queue.check_invariants();
        fired
    }

    #[test]
    fn a_pending_timer_costs_32_bytes() {
        assert_eq!(std::mem::size_of::<Pending>(), 16);
        assert_eq!(PollingScan::<u64>::BYTES_PER_TIMER, 32);
    }

    #[test]
    fn a_sweep_visits_every_pending_timer_once() {
        let mut queue = PollingScan::new();
        for value in 0..1_000u64 {
            queue.start(10_000 + value, value);
        }
        let before = queue.work();
        assert_eq!(fire_all(&mut queue, 1 << 40).len(), 1_000);
        queue.start(5, 0);
        let before_empty = queue.work();
        fire_all(&mut queue, 1 << 41);
        assert!(queue.work() - before >= 1_000, "the sweep is counted");
        assert_eq!(
            queue.work() - before_empty,
            1 + 1 + 1,
            "one timer: one visit"
        );
    }

    #[test]
    fn back_indices_survive_a_sweep_that_fires_from_the_middle() {
        let mut queue = PollingScan::new();
        let ids: Vec<_> = (0..200u64)
            .map(|i| queue.start((i * 7919) % 211, i))
            .collect();
        for id in ids.iter().step_by(5) {
            queue.stop(*id);
        }
        queue.check_invariants();
        let fired = fire_all(&mut queue, 100);
        assert!(fired.windows(2).all(|pair| pair[0].0 <= pair[1].0));
        assert!(fired.iter().all(|&(deadline, _)| deadline <= 100));
        for id in ids.iter().skip(1).step_by(7) {
            queue.stop(*id);
            queue.check_invariants();
        }
    }

    #[test]
    fn the_cached_earliest_goes_stale_only_when_the_earliest_leaves() {
        let mut queue = PollingScan::new();
        let early = queue.start(10, 1);
        let later = queue.start(20, 2);
        let (moved, _) = queue.restart(later, 5, 3);
        assert_eq!(queue.next_deadline(), Some(5));
        queue.restart(moved, 30, 4);
        queue.check_invariants();
        assert!(!queue.earliest_exact, "the earliest moved later");
        assert_eq!(queue.next_deadline(), Some(10));
        assert_eq!(queue.stop(early), Some(1));
        assert_eq!(queue.next_deadline(), Some(30));
        queue.check_invariants();
    }
}
