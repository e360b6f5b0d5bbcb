//! `hashed-wheel`: one power-of-two wheel hashed by deadline (Varghese & Lauck scheme 6), with
//! a min-heap of the occupied slots to jump over empty ticks.
//!
//! # The idea
//!
//! Varghese and Lauck's "Hashed and Hierarchical Timing Wheels" (SOSP 1987, section 5,
//! scheme 6) hashes every timer into one of `S` slots of a single wheel and keeps each slot
//! an unsorted list, so `start` and `stop` are O(1) whatever the deadline. The classic
//! deployment is Netty's `HashedWheelTimer`: a worker wakes every tick, walks the current
//! bucket, fires the entries whose remaining-rounds count is zero and decrements the others.
//!
//! Two changes make it fit an exact, jumpable virtual clock:
//!
//! - **Hash by absolute deadline.** `S = 2^bits` and a timer lives in slot
//!   `deadline & (S - 1)` (a power of two makes the modulo a mask). The slot never changes
//!   during the timer's life, across any number of rotations: scheme 6's remaining-rounds
//!   count is implicit in the stored deadline, so nothing is ever decremented, and a
//!   deadline at or before `now` needs no special slot.
//! - **Skip empty ticks with a heap of slots.** An indexed min-heap holds every occupied
//!   slot keyed by a lower bound of the deadlines in its list (its *key*). The heap has at
//!   most `S` entries whatever the number of timers, so it is a fixed structure cost.
//!   `advance` only visits slots whose key is due, so neither an empty tick nor a far
//!   rotation costs anything.
//!
//! A key is usually exact: `start` lowers it to a new minimum, a visit sets it to the exact
//! minimum of what it leaves behind. Only `stop` of a slot's earliest timer leaves it low:
//! finding the new minimum means walking the slot, and the usual reason to stop a timer (a
//! request answered before its timeout) is exactly this short timer in a slot of long-lived
//! ones. So `stop` only marks the key inexact, and the walk is deferred until the key comes
//! due in `advance` or reaches the heap top in `next_deadline`, which re-keys inexact tops
//! until the top is exact. The next deadline is therefore always exact, and a stop costs
//! at most one later walk of its slot, often none: a later `start` at or below the key makes
//! it exact again, and the stops between two walks share the one walk.
//!
//! A visit of slot `s` at time `t` (its key) walks the slot's list once, fires the entries
//! whose deadline is exactly `t` (none, if the key was inexact) and sets the key to the
//! exact minimum of the others (all after `t`; at least `t + S` when the key was exact,
//! since they share the slot). Entries of that slot due in `(t, to]` are *not* fired during
//! this visit: other slots may hold deadlines between `t` and theirs, and the heap yields the
//! slot again at the right moment. Why the order is right: every key is at most its slot's
//! minimum, so when the heap top has key `t`, no pending timer is due before `t`; the visit
//! fires only timers due at `t` and leaves every key at `t` or later. Each visit either
//! fires something or raises an inexact key to its exact minimum, so `advance` ends, and it
//! ends only when no key (hence no deadline) is `<= to`.
//!
//! The walk is the price scheme 6 pays per visit: a slot that holds many future rotations
//! is walked once per distinct deadline it fires (Netty walks every bucket once per
//! rotation instead), plus once per inexact key. With `n` timers spread evenly that is
//! `n / S` entries per visit.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | arena: generation (4) + `next` link in the slot's list (4) | 8 |
//! | payload: deadline (8), value (8), `prev` link (4), padding (4) | 24 |
//! | **total per pending timer** | **32** |
//!
//! The slot is not stored: it is recomputed from the deadline. Fixed structure, not per
//! timer, all allocated by the constructor: `S` list heads (4 bytes each), `S` heap positions
//! (4 bytes each), and room for a heap of `S` `(key, slot, exact)` triples (16 bytes each):
//! 96 KiB at the default `S = 4096`.
//!
//! # Costs (`k` = timers in the slot concerned, `S` = slots)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1) push on the slot's list; plus O(log S) heap insert when the slot was empty or decrease-key when the deadline is the slot's new minimum |
//! | `stop` | O(1): unlink, and mark the slot's key inexact if the timer was its minimum; O(log S) heap removal when the slot empties |
//! | `restart` | as `stop` then `start`, on the same arena entry (no free and allocation between) |
//! | `advance`, per tick | O(1): one look at the heap top, and only for the ticks `advance` is called with; skipped ticks cost nothing |
//! | `advance`, per slot visit | O(k) walk + O(log S) heap update; every fired timer is part of some visit, and a visit that fires nothing pays off an earlier `stop` that made the key inexact |
//! | `next_deadline` | O(1) when the heap top's key is exact, which it is unless stops left it low; each inexact top costs one O(k) walk and O(log S) re-key, again paid for by those stops. Always exact |
//!
//! # Empty time
//!
//! `advance(to)` loops while the heap top's key is `<= to`; when it is not (or the heap is
//! empty) it sets the clock and returns. A jump of 2^40 ticks costs one visit per (slot,
//! distinct deadline) that fires, plus one per inexact key passed, and a per-tick driver
//! pays one heap peek per empty tick. No arithmetic depends on `now` or on a distance, so
//! deadlines up to `u64::MAX` need no care.

use crate::arena::{Arena, NIL};
use crate::arena_list;
use crate::binary_sift;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{Parameter, Parameters, power_of_two_in};

/// Slot bits of [`HashedWheel::new`]: 4096 slots.
pub const DEFAULT_SLOT_BITS: u32 = 12;

/// The largest accepted slot bits: 2^24 slots, so slot numbers fit a `u32` comfortably and
/// the fixed tables stay below half a gigabyte.
pub const MAX_SLOT_BITS: u32 = 24;

/// The payload of one timer in the arena. The arena's own link is the `next` pointer of the
/// slot's doubly linked list; `prev` is the other direction (`NIL` at the head).
struct Entry<V> {
    deadline: Tick,
    value: V,
    prev: u32,
}

crate::impl_linked!(Entry);

/// See the module documentation.
///
/// Invariants, kept by every operation:
/// - every pending timer is in exactly one list, the one of slot `deadline & mask`;
/// - a slot is in the heap iff its list is non-empty;
/// - a slot's key is at most the minimum deadline of its list, and equal to it when the
///   slot is marked exact.
pub struct HashedWheel<V> {
    arena: Arena<Entry<V>>,
    /// The head of each slot's list of entries, `NIL` when the slot is empty.
    heads: Vec<u32>,
    occupied: SlotHeap,
    /// `S - 1`: a deadline's slot is its low `bits` bits.
    mask: u64,
    now: Tick,
    work: u64,
}

impl<V> HashedWheel<V> {
    /// An empty wheel of `2^bits` slots.
    ///
    /// # Panics
    ///
    /// If `bits` is not in `1..=MAX_SLOT_BITS`.
    pub fn with_slot_bits(bits: u32) -> Self {
        Self::with_slot_bits_and_capacity(bits, 0)
    }

    /// An empty wheel of `2^bits` slots with room for `capacity` pending timers.
    ///
    /// # Panics
    ///
    /// If `bits` is not in `1..=MAX_SLOT_BITS`.
    pub fn with_slot_bits_and_capacity(bits: u32, capacity: usize) -> Self {
        assert!(
            (1..=MAX_SLOT_BITS).contains(&bits),
            "hashed wheel slot bits must be in 1..={MAX_SLOT_BITS}, got {bits}"
        );
        let slots = 1usize << bits;
        HashedWheel {
            arena: Arena::with_capacity(capacity),
            heads: vec![NIL; slots],
            occupied: SlotHeap::new(slots),
            mask: (1u64 << bits) - 1,
            now: 0,
            work: 0,
        }
    }

    /// Number of slots of the wheel.
    pub fn slot_count(&self) -> usize {
        self.heads.len()
    }

    #[inline]
    fn slot_of(&self, deadline: Tick) -> u32 {
        // The mask keeps at most MAX_SLOT_BITS bits, so the cast is lossless.
        (deadline & self.mask) as u32
    }

    /// Takes the entry at `index` out of its slot's list and frees its arena slot.
    #[inline]
    fn unlink_and_free(&mut self, index: u32) -> Entry<V> {
        // Remove first: it hands back both links in one access of the entry.
        let (next, entry) = self.arena.remove(index);
        let slot = self.slot_of(entry.deadline);
        arena_list::close_gap(
            &mut self.arena,
            &mut self.heads[slot as usize],
            entry.prev,
            next,
        );
        entry
    }

    /// Links the live entry `index`, whose deadline is `deadline`, into its slot, and keys
    /// the slot.
    #[inline]
    fn attach(&mut self, index: u32, deadline: Tick) {
        let slot = self.slot_of(deadline);
        let head = &mut self.heads[slot as usize];
        let was_empty = *head == NIL;
        arena_list::push_front(&mut self.arena, head, index);
        self.key_after_attach(slot, deadline, was_empty);
    }

    /// Keys `slot` after a timer with `deadline` joined it.
    #[inline]
    fn key_after_attach(&mut self, slot: u32, deadline: Tick, was_empty: bool) {
        if was_empty {
            self.occupied.insert(slot, deadline);
        } else {
            self.occupied.offer(slot, deadline);
        }
    }

    /// Takes the live entry `index` out of its slot, leaving it in the arena, and keeps the
    /// slot's key a lower bound.
    #[inline]
    fn detach(&mut self, index: u32) {
        let deadline = self.arena.get(index).deadline;
        let slot = self.slot_of(deadline);
        let emptied = arena_list::unlink(&mut self.arena, &mut self.heads[slot as usize], index);
        self.key_after_detach(slot, deadline, emptied);
    }

    /// Keeps `slot`'s key a lower bound after a timer with `deadline` left it.
    #[inline]
    fn key_after_detach(&mut self, slot: u32, deadline: Tick, emptied: bool) {
        if emptied {
            self.occupied.remove(slot);
        } else if deadline == self.occupied.key(slot) {
            // The minimum may have left; the key stays as a lower bound until a visit or
            // `next_deadline` walks the slot.
            self.occupied.mark_inexact(slot);
        }
    }

    /// The minimum deadline in the non-empty list of `slot`.
    fn earliest_in(&mut self, slot: u32) -> Tick {
        let mut earliest = Tick::MAX;
        let mut cursor = self.heads[slot as usize];
        while cursor != NIL {
            self.work += 1;
            earliest = earliest.min(self.arena.get(cursor).deadline);
            cursor = self.arena.link(cursor);
        }
        earliest
    }

    /// Fires every entry of `slot` whose deadline is `due` (the slot's key) and re-keys the
    /// slot by the exact minimum of the entries left.
    fn visit<F: FnMut(TimerId, V, Tick)>(&mut self, slot: u32, due: Tick, on_fire: &mut F) {
        self.work += 1;
        let mut earliest_of_rest = Tick::MAX;
        let mut cursor = self.heads[slot as usize];
        while cursor != NIL {
            self.work += 1;
            // Read before a possible unlink: freeing `cursor` does not touch its successor's
            // index, so the walk continues safely.
            let next = self.arena.link(cursor);
            let deadline = self.arena.get(cursor).deadline;
            if deadline == due {
                let id = self.arena.id(cursor);
                let entry = self.unlink_and_free(cursor);
                on_fire(id, entry.value, deadline);
            } else {
                earliest_of_rest = earliest_of_rest.min(deadline);
            }
            cursor = next;
        }
        if self.heads[slot as usize] == NIL {
            self.occupied.remove(slot);
        } else {
            self.occupied.raise_key(slot, earliest_of_rest);
        }
    }
}

impl<V> HashedWheel<V> {
    /// Panics with a message if any invariant documented on this type is broken: every
    /// entry in the slot its deadline hashes to, with true `prev` links; every occupied slot
    /// in the heap once, keyed at most at its minimum (exactly, when marked exact); the heap
    /// ordered. It walks the whole wheel (O(n + S)): for tests, which drive the wheel
    /// through its public API and call this between operations.
    pub fn check_invariants(&self) {
        let mut counted = 0;
        let mut in_heap = 0;
        for slot in 0..self.heads.len() as u32 {
            let mut cursor = self.heads[slot as usize];
            let mut prev = NIL;
            let mut earliest = None::<Tick>;
            while cursor != NIL {
                let entry = self.arena.get(cursor);
                assert_eq!(entry.prev, prev, "prev link of {cursor}");
                assert_eq!(
                    self.slot_of(entry.deadline),
                    slot,
                    "entry in the wrong slot"
                );
                earliest = Some(earliest.map_or(entry.deadline, |e| e.min(entry.deadline)));
                counted += 1;
                prev = cursor;
                cursor = self.arena.link(cursor);
            }
            if let Some(earliest) = earliest {
                in_heap += 1;
                let at = self.occupied.position[slot as usize] as usize;
                let keyed = self.occupied.elements[at];
                assert_eq!(keyed.slot, slot);
                assert!(keyed.key <= earliest, "slot {slot} key above its minimum");
                if keyed.exact {
                    assert_eq!(keyed.key, earliest, "slot {slot} key marked exact");
                }
            }
        }
        assert_eq!(counted, self.arena.len());
        assert_eq!(
            in_heap,
            self.occupied.elements.len(),
            "only occupied slots in the heap"
        );
        let elements = &self.occupied.elements;
        for child in 1..elements.len() {
            assert!(elements[(child - 1) / 2].key <= elements[child].key);
        }
    }
}

impl<V> TimerQueue<V> for HashedWheel<V> {
    /// `slots`: the wheel's size `S`, a power of two.
    const PARAMETERS: &'static [Parameter] = &[Parameter {
        name: "slots",
        default: 1 << DEFAULT_SLOT_BITS,
        about: "slots of the wheel; a slot holds about n / slots timers, walked per visit",
        accepts: "a power of two from 2 to 2^24",
        valid: |slots| power_of_two_in(slots, 2, 1 << MAX_SLOT_BITS),
    }];

    fn with_capacity(capacity: usize) -> Self {
        Self::with_slot_bits_and_capacity(DEFAULT_SLOT_BITS, capacity)
    }

    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self {
        let bits = parameters.get("slots").trailing_zeros();
        Self::with_slot_bits_and_capacity(bits, capacity)
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.work += 1;
        let entry = Entry {
            deadline,
            value,
            prev: NIL,
        };
        let slot = self.slot_of(deadline);
        let head = &mut self.heads[slot as usize];
        let was_empty = *head == NIL;
        let id = arena_list::insert_front(&mut self.arena, head, entry);
        self.key_after_attach(slot, deadline, was_empty);
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.arena.resolve(id)?;
        self.work += 1;
        let entry = self.unlink_and_free(index);
        let slot = self.slot_of(entry.deadline);
        let emptied = self.heads[slot as usize] == NIL;
        self.key_after_detach(slot, entry.deadline, emptied);
        Some(entry.value)
    }

    /// The entry moves from its old slot to its new one without leaving the arena.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.arena.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        self.work += 1;
        self.detach(index);
        let entry = Entry {
            deadline,
            value,
            prev: NIL,
        };
        let (id, old) = self.arena.reissue(index, entry);
        self.attach(index, deadline);
        (id, Some(old.value))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        while let Some((due, slot)) = self.occupied.top() {
            if due > to {
                break;
            }
            self.visit(slot, due, &mut on_fire);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        loop {
            let top = self.occupied.top_keyed()?;
            if top.exact {
                return Some(top.key);
            }
            let earliest = self.earliest_in(top.slot);
            self.occupied.raise_key(top.slot, earliest);
        }
    }

    fn len(&self) -> usize {
        self.arena.len()
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn work(&self) -> u64 {
        self.work + self.occupied.steps
    }
}

/// One heap element: an occupied slot and its key. The key sits beside the slot so that
/// sifting compares without looking elsewhere; the flag uses what would be padding.
#[derive(Clone, Copy)]
struct Keyed {
    /// At most the minimum deadline in the slot.
    key: Tick,
    slot: u32,
    /// Whether `key` is exactly the minimum deadline in the slot.
    exact: bool,
}

/// An indexed binary min-heap of slots by key.
///
/// Invariant: `position[slot]` is the index of `slot` in `elements` while the slot is in the
/// heap (its value is meaningless otherwise), and every element's key is `<=` its children's.
/// Every method that sets a key is given an exact one.
struct SlotHeap {
    elements: Vec<Keyed>,
    position: Vec<u32>,
    /// Sift steps taken, reported through `work()`.
    steps: u64,
}

impl SlotHeap {
    /// Reserves room for every slot at once: the heap is part of the fixed structure, and
    /// growing it later would allocate in the middle of `start`.
    fn new(slots: usize) -> Self {
        SlotHeap {
            elements: Vec::with_capacity(slots),
            position: vec![NIL; slots],
            steps: 0,
        }
    }

    #[inline]
    fn top(&self) -> Option<(Tick, u32)> {
        self.elements.first().map(|top| (top.key, top.slot))
    }

    #[inline]
    fn top_keyed(&self) -> Option<Keyed> {
        self.elements.first().copied()
    }

    /// The key of `slot`, which must be in the heap.
    #[inline]
    fn key(&self, slot: u32) -> Tick {
        self.elements[self.position[slot as usize] as usize].key
    }

    fn insert(&mut self, slot: u32, key: Tick) {
        // At most 2^MAX_SLOT_BITS elements, so positions fit a u32.
        let at = self.elements.len() as u32;
        self.elements.push(Keyed {
            key,
            slot,
            exact: true,
        });
        self.position[slot as usize] = at;
        self.sift_up(at);
    }

    fn remove(&mut self, slot: u32) {
        let at = self.position[slot as usize];
        let last = self.elements.pop().expect("the slot is in the heap");
        if last.slot == slot {
            return;
        }
        // The former last element fills the hole and may have to move either way.
        self.place(at, last);
        self.sift_up(at);
        self.sift_down(self.position[last.slot as usize]);
    }

    /// Accounts for a new timer at `deadline` in the occupied `slot`. The key is at most the
    /// old minimum, so a deadline at or below it is the new minimum: the key becomes exact
    /// again even if a stop had left it low. Equal deadlines are common (many timers on one
    /// tick), so that case only sets the flag and does not touch the heap order.
    #[inline]
    fn offer(&mut self, slot: u32, deadline: Tick) {
        let at = self.position[slot as usize];
        let keyed = &mut self.elements[at as usize];
        if deadline < keyed.key {
            keyed.key = deadline;
            keyed.exact = true;
            self.sift_up(at);
        } else if deadline == keyed.key {
            keyed.exact = true;
        }
    }

    /// Gives `slot` an exact key no smaller than its current one.
    fn raise_key(&mut self, slot: u32, key: Tick) {
        let at = self.position[slot as usize];
        self.elements[at as usize] = Keyed {
            key,
            slot,
            exact: true,
        };
        self.sift_down(at);
    }

    /// Records that `slot`'s key may now be below its minimum. The key does not move, so
    /// the heap order holds.
    fn mark_inexact(&mut self, slot: u32) {
        let at = self.position[slot as usize];
        self.elements[at as usize].exact = false;
    }

    #[inline]
    fn place(&mut self, at: u32, element: Keyed) {
        self.elements[at as usize] = element;
        self.position[element.slot as usize] = at;
    }

    // Heap positions are below 2^MAX_SLOT_BITS, so they fit the u32s of `position`.
    fn sift_up(&mut self, at: u32) {
        self.steps += binary_sift::sift_up(
            &mut self.elements,
            at as usize,
            |keyed| keyed.key,
            |placed_at, keyed| self.position[keyed.slot as usize] = placed_at as u32,
        );
    }

    fn sift_down(&mut self, at: u32) {
        self.steps += binary_sift::sift_down(
            &mut self.elements,
            at as usize,
            |keyed| keyed.key,
            |placed_at, keyed| self.position[keyed.slot as usize] = placed_at as u32,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fire_all(wheel: &mut HashedWheel<u64>, to: Tick) -> Vec<(Tick, u64)> {
        let mut fired = Vec::new();
        wheel.advance(to, |_, value, deadline| fired.push((deadline, value)));
        wheel.check_invariants();
        fired
    }

    #[test]
    fn entry_layout_is_32_bytes() {
        assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 32);
        assert_eq!(Arena::<Entry<u32>>::SLOT_BYTES, 24);
    }

    #[test]
    fn a_start_below_an_inexact_key_makes_it_exact() {
        let mut wheel = HashedWheel::with_slot_bits(2);
        let low = wheel.start(10, 0);
        wheel.start(30, 1);
        assert_eq!(wheel.stop(low), Some(0)); // key 10, minimum 30
        wheel.start(6, 2); // below the key: the new minimum
        wheel.check_invariants();
        let top = wheel.occupied.top_keyed().expect("occupied");
        assert!(top.exact && top.key == 6);
        wheel.start(14, 3); // between key and minimum: the key stays 6, exact
        assert_eq!(wheel.next_deadline(), Some(6));
        assert_eq!(fire_all(&mut wheel, 100), [(6, 2), (14, 3), (30, 1)]);
    }
}
