//! `floor`: not a timer queue, but the least any timer queue does, as a yardstick.
//!
//! # The idea
//!
//! Every structure here pays, per start, for an arena slot and a handle, per stop for
//! resolving the handle and freeing the slot, and per firing for freeing the fired
//! timer's slot; everything else (ordering, finding what is due) is what distinguishes one
//! structure from another. `Floor` does only that bookkeeping: a start takes a slot in the
//! same [`Arena`] the structures use, a stop frees it, and a clock move frees the timers
//! that fire there without searching for them: it reads them, in order, from [`Firings`],
//! a list made before the timed part by replaying the workload once through a
//! [`FiringsRecorder`] (the floor's own handles, the firing order of an exact model). So
//! its arena stays at the pending count, as a real queue's does, and a structure's figure
//! divided by the floor's reads as "times the least bookkeeping a queue that fires must
//! do". Built without firings ([`TimerQueue::with_capacity`]) it fires nothing, and a timer
//! stays in its slot until stopped.
//!
//! It knows the answer instead of finding it, so it is **never verified**: it is not
//! registered with the implementations, runs only when asked (`timerbench run --floor`, the
//! benches), and is marked as the floor wherever it appears. Its firings are handed to the
//! caller as a queue's are (an event loop's sleep, `n`, moves the clock until something
//! fires), so with its list it replays a workload as the model does.
//!
//! # One timer entry
//!
//! | field | bytes (`u64` value) |
//! | --- | --- |
//! | arena slot: generation, link | 8 |
//! | deadline | 8 |
//! | value | 8 |
//! | total | 24 |
//! | the list, per firing of the workload (not per pending timer): deadline, handle | 16 |
//!
//! The deadline is kept in the entry although nothing reads it, so that a start writes
//! what a real entry holds. The list is read once, front to back.
//!
//! # Costs
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): take a slot |
//! | `stop` | O(1): resolve the handle, free the slot |
//! | `restart` | O(1): rewrite the slot in place under a new generation |
//! | `advance` | O(1) plus, per timer fired, one entry of the list read and its slot resolved and freed; one more entry read to see that the next firing is not due |
//! | `next_deadline` | O(1): the next firing's deadline, if that timer is pending; `None` otherwise (always, without a list), so a sleep (`n`) moves nothing then |
//!
//! # Empty time and precision
//!
//! Empty time costs nothing: a clock move reads the list's next entry and stops. There is
//! no precision to speak of: it fires what the list says, when the list says.

use crate::arena::{Arena, NIL};
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::Parameters;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Arc;

thread_local! {
    /// The firings [`building_with`] hands to the floors built on this thread meanwhile.
    static BUILDING_WITH: RefCell<Option<Arc<Firings>>> = const { RefCell::new(None) };
}

/// Runs `build` with `firings` handed to every floor it builds through
/// [`TimerQueue::with_parameters`], and returns what it built.
///
/// The measuring passes build each queue through the contract's constructor, generic over
/// the queue's type, so the list cannot be an argument there; it rides beside the one call
/// instead, on this thread only and for that call only, so that no other floor built in
/// the process (a fixed-costs probe, a test's) fires a list that is not its workload's.
pub fn building_with<T>(firings: &Arc<Firings>, build: impl FnOnce() -> T) -> T {
    /// Puts the previous list back, also when `build` panics.
    struct Restore(Option<Arc<Firings>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUILDING_WITH.set(self.0.take());
        }
    }
    let _restore = Restore(BUILDING_WITH.replace(Some(Arc::clone(firings))));
    build()
}

/// What the floor fires, in the order it fires it: each firing's deadline and the floor's
/// handle of the timer. Made by a [`FiringsRecorder`]'s replay of the same workload, so the
/// handles are the ones a floor replaying it issues (its arena hands out slots the same way
/// given the same starts, stops and frees).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Firings {
    list: Vec<(Tick, TimerId)>,
}

impl Firings {
    /// Firings in the list.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether nothing fires.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

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
    /// What fires, and where the next firing is in it.
    firings: Arc<Firings>,
    next: usize,
}

impl<V> Floor<V> {
    /// An empty floor that fires `firings` (from a [`FiringsRecorder`] of the workload it
    /// is about to replay), with room for `capacity` pending timers.
    pub fn with_firings(capacity: usize, firings: Arc<Firings>) -> Self {
        Floor {
            firings,
            ..Self::with_capacity(capacity)
        }
    }

    /// The arena index of the next firing, when it is due by `to` and its timer pending.
    #[inline]
    fn due(&self, to: Tick) -> Option<(Tick, TimerId, u32)> {
        let &(deadline, id) = self.firings.list.get(self.next)?;
        if deadline > to {
            return None;
        }
        self.entries.resolve(id).map(|index| (deadline, id, index))
    }
}

impl<V> TimerQueue<V> for Floor<V> {
    fn with_capacity(capacity: usize) -> Self {
        Floor {
            entries: Arena::with_capacity(capacity),
            now: 0,
            work: 0,
            firings: Arc::default(),
            next: 0,
        }
    }

    /// With the firings of [`building_with`] when called inside it, else without any.
    fn with_parameters(capacity: usize, _parameters: &Parameters) -> Self {
        match BUILDING_WITH.with_borrow(Clone::clone) {
            Some(firings) => Self::with_firings(capacity, firings),
            None => Self::with_capacity(capacity),
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

    /// Frees, in the list's order, each firing due by `to` whose timer is pending: one
    /// that is not yet started (a deadline in the past, started later) ends the move.
    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        while let Some((deadline, id, index)) = self.due(to) {
            self.next += 1;
            self.work += 1;
            on_fire(id, self.entries.remove(index).1.value, deadline);
        }
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        self.due(Tick::MAX).map(|(deadline, _, _)| deadline)
    }

    crate::contract::len_now_work!(entries.len());
}

/// A floor that an exact model drives: a replay of a workload through it fires what the
/// model fires and records it, with the floor's own handles, as the [`Firings`] a
/// [`Floor::with_firings`] replays the same workload with.
///
/// The floor inside takes and frees its slots exactly as the floor of the timed replay
/// will (the same arena calls in the same order: a start, a stop, an in-place restart, a
/// firing's free), so its handles are that floor's. The model is a map ordered by deadline,
/// then by start, so equal deadlines fire in start order, as the reference model's do.
pub struct FiringsRecorder<V> {
    floor: Floor<V>,
    /// Pending timers by (deadline, start number).
    pending: BTreeMap<(Tick, u64), TimerId>,
    /// Each arena slot's key in `pending`, while its timer is pending.
    keys: Vec<(Tick, u64)>,
    started: u64,
    firings: Firings,
}

impl<V> FiringsRecorder<V> {
    /// What fired, in order: the floor's list for the workload just replayed.
    pub fn into_firings(self) -> Firings {
        self.firings
    }

    fn file(&mut self, id: TimerId, deadline: Tick) {
        let key = (deadline, self.started);
        self.started += 1;
        self.pending.insert(key, id);
        let index = id.index() as usize;
        if index >= self.keys.len() {
            self.keys.resize(index + 1, (0, 0));
        }
        self.keys[index] = key;
    }

    fn unfile(&mut self, id: TimerId) {
        self.pending.remove(&self.keys[id.index() as usize]);
    }
}

impl<V> TimerQueue<V> for FiringsRecorder<V> {
    fn with_capacity(capacity: usize) -> Self {
        FiringsRecorder {
            floor: Floor::with_capacity(capacity),
            pending: BTreeMap::new(),
            keys: Vec::with_capacity(capacity),
            started: 0,
            firings: Firings::default(),
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.floor.start(deadline, value);
        self.file(id, deadline);
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let value = self.floor.stop(id)?;
        self.unfile(id);
        Some(value)
    }

    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let (new, old) = self.floor.restart(id, deadline, value);
        if old.is_some() {
            self.unfile(id);
        }
        self.file(new, deadline);
        (new, old)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.floor.now, to);
        while let Some(entry) = self.pending.first_entry() {
            let deadline = entry.key().0;
            if deadline > to {
                break;
            }
            let id = entry.remove();
            let index = self
                .floor
                .entries
                .resolve(id)
                .expect("a pending timer's slot is occupied");
            let value = self.floor.entries.remove(index).1.value;
            self.firings.list.push((deadline, id));
            on_fire(id, value, deadline);
        }
        self.floor.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        self.pending
            .first_key_value()
            .map(|(&(deadline, _), _)| deadline)
    }

    fn len(&self) -> usize {
        self.floor.len()
    }

    fn now(&self) -> Tick {
        self.floor.now
    }

    fn work(&self) -> u64 {
        self.floor.work
    }
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

    /// One line of a workload, on timer `slot` of a handle table, as a replay drives it.
    #[derive(Debug, Clone, Copy)]
    enum Line {
        Start {
            slot: usize,
            delay: Tick,
        },
        Stop {
            slot: usize,
        },
        Restart {
            slot: usize,
            delay: Tick,
        },
        Advance {
            ticks: Tick,
        },
        /// A sleep to the earliest deadline (`n`).
        Next,
    }

    /// A workload that fires: a fill of 200 timers, then starts, stops, restarts, clock
    /// moves and sleeps drawn from a fixed seed, delays from 0 (fires on the next move) up.
    fn workload() -> Vec<Line> {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut draw = |below: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % below
        };
        let slots = 300;
        let mut lines: Vec<Line> = (0..200)
            .map(|slot| Line::Start {
                slot,
                delay: 1 + slot as Tick % 50,
            })
            .collect();
        for _ in 0..5_000 {
            let slot = draw(slots as u64) as usize;
            lines.push(match draw(10) {
                0..=2 => Line::Next,
                3 | 4 => Line::Start {
                    slot,
                    delay: draw(80),
                },
                5 => Line::Stop { slot },
                6 => Line::Restart {
                    slot,
                    delay: draw(80),
                },
                _ => Line::Advance { ticks: 1 + draw(6) },
            });
        }
        lines
    }

    /// Replays `lines` through `queue` as the harness's replay does (a start of a pending
    /// timer's slot is left out, as a workload never has one), calling `after` with the
    /// queue and the firings of each clock move.
    fn replay<Q: TimerQueue<u64>>(
        queue: &mut Q,
        lines: &[Line],
        mut after: impl FnMut(&Q, Vec<(u64, Tick)>),
    ) {
        let mut handles = vec![TimerId::from_parts(u32::MAX, 0); 300];
        let mut pending = vec![false; 300];
        for &line in lines {
            let mut fired = Vec::new();
            let mut on_fire = |_: TimerId, value: u64, deadline: Tick| {
                fired.push((value, deadline));
            };
            match line {
                Line::Start { slot, delay } if !pending[slot] => {
                    handles[slot] = queue.start(queue.now() + delay, slot as u64);
                }
                Line::Start { .. } => {}
                Line::Stop { slot } => {
                    queue.stop(handles[slot]);
                }
                Line::Restart { slot, delay } => {
                    let deadline = queue.now() + delay;
                    handles[slot] = queue.restart(handles[slot], deadline, slot as u64).0;
                }
                Line::Advance { ticks } => queue.advance(queue.now() + ticks, &mut on_fire),
                Line::Next => {
                    if let Some(deadline) = queue.next_deadline() {
                        queue.advance(deadline.max(queue.now()), &mut on_fire);
                    }
                }
            }
            for &(value, _) in &fired {
                pending[value as usize] = false;
            }
            if let Line::Start { slot, .. } | Line::Restart { slot, .. } = line {
                pending[slot] = true;
            }
            if let Line::Stop { slot } = line {
                pending[slot] = false;
            }
            if matches!(line, Line::Advance { .. } | Line::Next) {
                after(queue, fired);
            }
        }
    }

    #[test]
    fn only_a_floor_built_inside_building_with_takes_its_firings() {
        let mut recorder: FiringsRecorder<u64> = FiringsRecorder::with_capacity(1);
        recorder.start(3, 7);
        recorder.advance(5, |_, _, _| {});
        let firings = Arc::new(recorder.into_firings());
        assert_eq!(firings.len(), 1);
        let parameters = Parameters::defaults(&[]);
        let mut built: Floor<u64> =
            building_with(&firings, || Floor::with_parameters(1, &parameters));
        built.start(3, 7);
        assert_eq!(built.next_deadline(), Some(3));
        let mut fired = Vec::new();
        built.advance(5, |_, value, deadline| fired.push((value, deadline)));
        assert_eq!((fired, built.len()), (vec![(7, 3)], 0));
        let mut after: Floor<u64> = Floor::with_parameters(1, &parameters);
        after.start(3, 7);
        after.advance(5, |_, _, _| panic!("a floor built outside fires nothing"));
        assert_eq!(after.len(), 1);
    }

    #[test]
    fn with_its_firings_the_arena_holds_what_the_model_holds_after_every_move() {
        use crate::reference::ReferenceQueue;
        let lines = workload();
        let mut model: ReferenceQueue<u64> = ReferenceQueue::new();
        let mut expected = Vec::new();
        replay(&mut model, &lines, |model, fired| {
            expected.push((model.len(), model.now(), fired));
        });
        let fired: usize = expected.iter().map(|(_, _, fired)| fired.len()).sum();
        assert!(fired > 1_000, "the workload fires: {fired} firings");

        let mut recorder: FiringsRecorder<u64> = FiringsRecorder::with_capacity(200);
        replay(&mut recorder, &lines, |_, _| {});
        let firings = Arc::new(recorder.into_firings());
        assert_eq!(firings.len(), fired);

        let mut floor = Floor::with_firings(200, firings);
        let mut moves = expected.into_iter();
        replay(&mut floor, &lines, |floor, fired| {
            let (pending, now, expected) = moves.next().expect("as many moves as the model");
            assert_eq!(floor.entries.len(), pending, "live slots at tick {now}");
            assert_eq!(floor.now(), now);
            assert_eq!(fired, expected, "fired at tick {now}");
        });
        assert!(moves.next().is_none());
    }
}
