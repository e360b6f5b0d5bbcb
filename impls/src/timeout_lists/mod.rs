//! `timeout-lists`: one FIFO list per distinct delay, and a min-heap of the lists by the
//! deadline at their head.
//!
//! # The idea
//!
//! Node.js's timers (`lib/internal/timers.js`) keep a `TimersList` per duration in
//! milliseconds (`timerListMap`, keyed by the duration) and a binary heap of those lists
//! (`timerListQueue`) ordered by each list's `expiry`. A `setTimeout` appends to the list
//! of its duration, creating the list (and inserting it into the heap) if there is none:
//! every timer of one list has the same duration and was started no earlier than the
//! ones before it, so appending keeps the list sorted by deadline, and only its head can be
//! due. libevent's common timeouts (`event_base_init_common_timeout`, up to 256 of them)
//! are the same shape: a queue per duration, with one event in the min-heap standing for
//! the queue's head. This is the natural structure for a fixed idle timeout: a server whose
//! connections all share one timeout keeps one list, every `start`, `stop` and keepalive
//! `restart` is an O(1) link operation, and the heap has one element.
//!
//! # As in the source, and what the contract changes
//!
//! - **As in Node:** a list per distinct delay (`deadline - now` at the start), found
//!   through a map from delay to list; a min-heap of the non-empty lists; a list is created
//!   on the first start of its delay and deleted (map entry and heap element) when it
//!   empties, whether by a stop (Node's `unenroll`) or by firing (`listOnTimeout`); a
//!   restart with the same delay moves the timer to its list's tail, as `refresh()` does.
//! - **Lazy keys, as in Node and libevent.** A list's heap key is a lower bound of its
//!   head's deadline, not always the deadline itself: a stop or restart that takes a list's
//!   head does not touch the heap (Node's `unenroll` only unlinks, libevent leaves the
//!   queue's timeout event where it was). When a stale key reaches the top of the heap (in
//!   `advance` or `next_deadline`), it is raised to the head's deadline and sifted down,
//!   as Node's `listOnTimeout` does when it finds the list's head not yet due.
//! - **Exact order across lists.** Node runs a whole list's due timers before looking at
//!   the next list. The contract wants non-decreasing deadlines across one `advance`, so
//!   this merges the lists through the heap: fire the head of the top list, re-key that list
//!   by its new head, sift, repeat.
//! - **Deadlines at or before now.** Node clamps a delay below 1 ms to 1 ms. Here a start
//!   with `deadline <= now` has delay 0 and goes to a separate *due list*, which is not in
//!   the heap: its timers keep their own deadlines, appended in no particular order, so it
//!   is sorted (a merge sort of its links, no memory) when it fires. It always fires first:
//!   each of its deadlines is at most `now`, and every timer in a delay list has a deadline
//!   after `now` (it was started with a positive delay, and a clock move past its deadline
//!   would have fired it).
//! - **Integer ticks, any delay.** Node keys by JavaScript numbers and caps durations at
//!   2^31 - 1 ms; here any `u64` delay has its list.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | arena: generation (4) + `next` link towards the tail (4) | 8 |
//! | payload: deadline (8), value (8), `prev` link (4), its list (4) | 24 |
//! | **total per pending timer** | **32** |
//! | per distinct delay: list record (delay, head, tail, heap position: 24), heap element (key, list: 16), map entry (17 with hashbrown's control byte, 17-34 by its load factor and doubling) | 57-74, more just past a `Vec` doubling |
//!
//! Storage per distinct delay (a list record, a heap element, a map entry), never per
//! timer: with one delay per timer (the conformance memory test's 65,536 random deadlines)
//! that measured 130 bytes per pending timer, with one shared timeout 32. List records are
//! reused through a free list, and the map and the heap keep their capacity.
//!
//! # Costs (L = non-empty lists, k = already-due timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1) map lookup and append when the delay's list exists; O(log L) heap insert when it creates the list |
//! | `stop` | O(1) unlink; O(log L) heap removal when it empties its list |
//! | `restart` | O(1) move to the tail when the delay is unchanged; else a stop and a start on the same arena entry |
//! | `advance`, per fired timer | O(log L): unlink the head, re-key its list, sift down |
//! | `advance`, per stale key met | O(log L): raise it to its head's deadline, sift down; paid for by the stop or restart that made it stale |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `advance`, due list | O(k log k) sort, once |
//! | `next_deadline` | O(1) when the top key is exact; O(log L) per stale top; O(k) walk of the due list when it is not empty. Always exact |
//!
//! # Empty time
//!
//! Skipped: `advance(to)` stops at the first list whose exact key is after `to`; a jump of
//! 2^40 ticks costs one step per timer fired and per stale key raised.
//!
//! # Precision
//!
//! Exact: a list's head is its earliest timer, every key is at most its list's head, and a
//! timer fires only from the top of the heap with an exact key.
//!
//! # Invariants
//!
//! - every pending timer is on exactly one list, the one its `list` field names: the due
//!   list when its deadline was at or before the clock when it was (re)started, else the
//!   list of its delay then;
//! - every delay list is sorted by deadline from head to tail, is non-empty, is in the map
//!   under its delay and in the heap once, at the position its record holds;
//! - every heap key is at most the deadline of its list's head;
//! - every due-list deadline is at most `now`, and every delay-list deadline after `now`.

use crate::arena::{Arena, NIL};
use crate::arena_list;
use crate::binary_sift;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The list record of the due list: always present, never in the map or the heap.
const DUE: u32 = 0;

/// The payload of one timer in the arena; the arena link is `next`, towards the tail.
struct Entry<V> {
    deadline: Tick,
    value: V,
    /// Towards the head; `NIL` at the head.
    prev: u32,
    /// The list record it is on.
    list: u32,
}

crate::impl_linked!(Entry);

/// One FIFO list. For a vacant record, `head` threads the free list of records.
#[derive(Clone, Copy, Debug)]
struct DelayList {
    delay: Tick,
    head: u32,
    tail: u32,
    heap_position: u32,
}

/// A heap element: a list and a lower bound of its head's deadline.
#[derive(Clone, Copy, Debug)]
struct Keyed {
    key: Tick,
    list: u32,
}

/// A hasher for `u64` delays: MurmurHash3's 64-bit finaliser, so that the low bits
/// hashbrown indexes with depend on every bit of the delay (delays are often round
/// numbers).
#[derive(Default)]
struct DelayHasher(u64);

impl Hasher for DelayHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(self.0.rotate_left(8) ^ u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        let mut x = value;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^= x >> 33;
        self.0 = x;
    }
}

/// See the module documentation.
pub struct TimeoutLists<V> {
    arena: Arena<Entry<V>>,
    /// List records: `DUE` first, then delay lists and vacant records.
    lists: Vec<DelayList>,
    /// The first vacant list record, `NIL` when none.
    free_lists: u32,
    by_delay: HashMap<Tick, u32, BuildHasherDefault<DelayHasher>>,
    /// The non-empty delay lists, a binary min-heap by key.
    heap: Vec<Keyed>,
    now: Tick,
    work: u64,
}

impl<V> TimeoutLists<V> {
    /// Number of distinct delays that have a list now.
    pub fn list_count(&self) -> usize {
        self.heap.len()
    }

    /// Appends the live entry `index` at the tail of `list` and records the list in it.
    fn append(&mut self, list: u32, index: u32) {
        let tail = self.lists[list as usize].tail;
        let (next, entry) = self.arena.entry_mut(index);
        *next = NIL;
        entry.prev = tail;
        entry.list = list;
        if tail == NIL {
            self.lists[list as usize].head = index;
        } else {
            self.arena.set_link(tail, index);
        }
        self.lists[list as usize].tail = index;
    }

    /// Joins `prev` and `next`, the former neighbours of an entry of `list`. Returns whether
    /// the list is empty now.
    fn close_gap(&mut self, list: u32, prev: u32, next: u32) -> bool {
        let record = &mut self.lists[list as usize];
        if prev == NIL {
            record.head = next;
        } else {
            self.arena.set_link(prev, next);
        }
        if next == NIL {
            record.tail = prev;
        } else {
            self.arena.get_mut(next).prev = prev;
        }
        prev == NIL && next == NIL
    }

    /// Takes the live entry `index` off its list, leaving it in the arena. Returns its list
    /// and whether that list is empty now.
    fn unlink(&mut self, index: u32) -> (u32, bool) {
        let next = self.arena.link(index);
        let entry = self.arena.get(index);
        let (list, prev) = (entry.list, entry.prev);
        (list, self.close_gap(list, prev, next))
    }

    /// The list of `delay` (at least 1), created empty and keyed at `deadline` if there is
    /// none, and returns it.
    fn list_for(&mut self, delay: Tick, deadline: Tick) -> u32 {
        if let Some(&list) = self.by_delay.get(&delay) {
            return list;
        }
        let record = DelayList {
            delay,
            head: NIL,
            tail: NIL,
            heap_position: self.heap.len() as u32,
        };
        let list = if self.free_lists == NIL {
            self.lists.push(record);
            (self.lists.len() - 1) as u32
        } else {
            let list = self.free_lists;
            self.free_lists = self.lists[list as usize].head;
            self.lists[list as usize] = record;
            list
        };
        self.by_delay.insert(delay, list);
        self.heap.push(Keyed {
            key: deadline,
            list,
        });
        self.sift_up(self.heap.len() - 1);
        list
    }

    /// Deletes the empty delay list `list`: its heap element, its map entry, its record.
    fn release(&mut self, list: u32) {
        debug_assert_ne!(list, DUE, "the due list is permanent");
        let record = self.lists[list as usize];
        self.remove_from_heap(record.heap_position as usize);
        self.by_delay.remove(&record.delay);
        self.lists[list as usize].head = self.free_lists;
        self.free_lists = list;
    }

    /// Files the live entry `index`, whose deadline is `deadline`, on its list.
    fn attach(&mut self, index: u32, deadline: Tick) {
        let list = match deadline.checked_sub(self.now) {
            Some(delay) if delay > 0 => self.list_for(delay, deadline),
            _ => DUE,
        };
        self.append(list, index);
    }

    /// Takes the live entry `index` off its list, deleting the list if it empties.
    fn detach(&mut self, index: u32) {
        let (list, emptied) = self.unlink(index);
        if emptied && list != DUE {
            self.release(list);
        }
    }

    /// Fires the due list, sorted by deadline.
    fn fire_due<F: FnMut(TimerId, V, Tick)>(&mut self, on_fire: &mut F) {
        let due = &mut self.lists[DUE as usize];
        let detached = arena_list::take(&mut due.head);
        due.tail = NIL;
        let mut cursor = arena_list::sort_by_deadline(&mut self.arena, detached, &mut self.work);
        while cursor != NIL {
            self.work += 1;
            let id = self.arena.id(cursor);
            let (next, entry) = self.arena.remove(cursor);
            on_fire(id, entry.value, entry.deadline);
            cursor = next;
        }
    }

    /// Fires the head of the list at the top of the heap, whose key is exact, and re-keys
    /// the list by its new head (or deletes it).
    fn fire_top_head<F: FnMut(TimerId, V, Tick)>(&mut self, list: u32, on_fire: &mut F) {
        let head = self.lists[list as usize].head;
        let id = self.arena.id(head);
        let (next, entry) = self.arena.remove(head);
        if self.close_gap(list, NIL, next) {
            self.release(list);
        } else {
            self.heap[0].key = self.arena.get(next).deadline;
            self.sift_down(0);
        }
        on_fire(id, entry.value, entry.deadline);
    }

    /// If the top list's key is stale, raises it to its head's deadline and sifts it down;
    /// returns whether the top key was already exact.
    fn top_is_exact(&mut self, top: Keyed) -> bool {
        let head = self.lists[top.list as usize].head;
        let deadline = self.arena.get(head).deadline;
        if deadline == top.key {
            return true;
        }
        self.work += 1;
        self.heap[0].key = deadline;
        self.sift_down(0);
        false
    }

    #[inline]
    fn place(&mut self, position: usize, element: Keyed) {
        self.heap[position] = element;
        self.lists[element.list as usize].heap_position = position as u32;
    }

    fn sift_up(&mut self, position: usize) {
        self.work += binary_sift::sift_up(
            &mut self.heap,
            position,
            |element| element.key,
            |at, element| self.lists[element.list as usize].heap_position = at as u32,
        );
    }

    fn sift_down(&mut self, position: usize) {
        self.work += binary_sift::sift_down(
            &mut self.heap,
            position,
            |element| element.key,
            |at, element| self.lists[element.list as usize].heap_position = at as u32,
        );
    }

    fn remove_from_heap(&mut self, position: usize) {
        let last = self.heap.pop().expect("the list is in the heap");
        if position < self.heap.len() {
            self.place(position, last);
            if position > 0 && self.heap[(position - 1) / 2].key > last.key {
                self.sift_up(position);
            } else {
                self.sift_down(position);
            }
        }
    }

    /// Panics with a message if an invariant written in the module documentation is
    /// broken. O(n + L): for tests.
    pub fn check_invariants(&self) {
        let mut counted = 0;
        let mut walk = |list: u32, sorted: bool| -> Option<Tick> {
            let record = self.lists[list as usize];
            let (mut prev, mut cursor, mut last) = (NIL, record.head, None::<Tick>);
            while cursor != NIL {
                let entry = self.arena.get(cursor);
                assert_eq!((entry.prev, entry.list), (prev, list), "links of {cursor}");
                if let (true, Some(last)) = (sorted, last) {
                    assert!(last <= entry.deadline, "list {list} out of order");
                }
                if list == DUE {
                    assert!(entry.deadline <= self.now, "due entry after now");
                } else {
                    assert!(entry.deadline > self.now, "delay entry at or before now");
                }
                last = last.or(Some(entry.deadline));
                counted += 1;
                prev = cursor;
                cursor = self.arena.link(cursor);
            }
            assert_eq!(record.tail, prev, "tail of list {list}");
            (record.head != NIL).then(|| self.arena.get(record.head).deadline)
        };
        walk(DUE, false);
        for (position, keyed) in self.heap.iter().enumerate() {
            let record = self.lists[keyed.list as usize];
            assert_eq!(record.heap_position as usize, position, "heap position");
            assert_eq!(self.by_delay.get(&record.delay), Some(&keyed.list), "map");
            let head = walk(keyed.list, true).expect("lists in the heap are non-empty");
            assert!(keyed.key <= head, "key above its head");
            if position > 0 {
                assert!(self.heap[(position - 1) / 2].key <= keyed.key, "heap order");
            }
        }
        assert_eq!(
            self.by_delay.len(),
            self.heap.len(),
            "one map entry per list"
        );
        assert_eq!(counted, self.arena.len(), "every timer on a list");
    }
}

impl<V> TimerQueue<V> for TimeoutLists<V> {
    fn with_capacity(capacity: usize) -> Self {
        TimeoutLists {
            arena: Arena::with_capacity(capacity),
            lists: vec![DelayList {
                delay: 0,
                head: NIL,
                tail: NIL,
                heap_position: NIL,
            }],
            free_lists: NIL,
            by_delay: HashMap::default(),
            heap: Vec::new(),
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.work += 1;
        let entry = Entry {
            deadline,
            value,
            prev: NIL,
            list: DUE,
        };
        let id = self.arena.insert(NIL, entry);
        self.attach(id.index(), deadline);
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.arena.resolve(id)?;
        self.work += 1;
        self.detach(index);
        Some(self.arena.remove(index).1.value)
    }

    /// In place: the entry keeps its arena slot. With its delay unchanged it moves to its
    /// list's tail, as Node's `refresh()` does, and the list stays (its key stays a lower
    /// bound: the new head is no earlier than the old one); otherwise it leaves its list
    /// (deleting it if it empties) and joins the list of its new delay.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.arena.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        self.work += 1;
        let current = self.arena.get(index).list;
        let same_list = current != DUE
            && deadline > self.now
            && self.lists[current as usize].delay == deadline - self.now;
        if same_list {
            self.unlink(index);
        } else {
            self.detach(index);
        }
        let entry = Entry {
            deadline,
            value,
            prev: NIL,
            list: current,
        };
        let (id, old) = self.arena.reissue(index, entry);
        if same_list {
            self.append(current, index);
        } else {
            self.attach(index, deadline);
        }
        (id, Some(old.value))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        if self.lists[DUE as usize].head != NIL {
            self.fire_due(&mut on_fire);
        }
        while let Some(&top) = self.heap.first() {
            if top.key > to {
                break;
            }
            if self.top_is_exact(top) {
                self.work += 1;
                self.fire_top_head(top.list, &mut on_fire);
            }
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        let mut cursor = self.lists[DUE as usize].head;
        if cursor != NIL {
            // Every due deadline precedes every delay-list deadline.
            let mut earliest = Tick::MAX;
            while cursor != NIL {
                self.work += 1;
                earliest = earliest.min(self.arena.get(cursor).deadline);
                cursor = self.arena.link(cursor);
            }
            return Some(earliest);
        }
        loop {
            let top = *self.heap.first()?;
            if self.top_is_exact(top) {
                return Some(top.key);
            }
        }
    }

    crate::contract::len_now_work!(arena.len());
}

#[cfg(test)]
mod tests;
