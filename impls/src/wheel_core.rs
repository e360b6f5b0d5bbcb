//! The timer-queue operations `hierarchical-wheel` and `incremental-wheel` share: both keep
//! the same [`Entry`] in an arena, the same [`DueList`] for deadlines at or before the
//! clock, and find their earliest slot by occupancy bitmaps, so `start`, `stop`, `restart`
//! and `next_deadline` are written once here over the [`BitmapWheel`] trait, and each wheel
//! supplies only how it files, unlinks and finds a slot.

use crate::arena::{Arena, NIL};
use crate::contract::{Tick, TimerId};
use crate::due_list::DueList;
use crate::hierarchical_wheel::{Entry, slot_start};

/// What a bitmap wheel supplies to the shared operations.
pub(crate) trait BitmapWheel<V> {
    /// The `home` of an entry on the due list.
    const DUE: u32;

    /// The arena and the due list, both mutably.
    fn parts(&mut self) -> (&mut Arena<Entry<V>>, &mut DueList, &mut u64);

    /// The internal clock.
    fn clock(&self) -> Tick;

    /// Takes the live entry `index` off its list (slot or due list), keeping the wheel's
    /// bookkeeping true; the entry stays in the arena.
    fn unlink_entry(&mut self, index: u32);

    /// Files the live entry `index`, whose deadline is `> clock()`, into the wheel.
    fn file_entry(&mut self, index: u32);

    /// The earliest occupied slot as `(level, slot)`, counting one unit of work.
    fn earliest(&mut self) -> Option<(usize, usize)>;

    /// Inserts `entry`, whose deadline is `> clock()`, and files it into the wheel. By
    /// default an insertion then [`file_entry`](BitmapWheel::file_entry); a wheel that can
    /// write the entry's list links as it inserts it overrides this.
    fn insert_filed(&mut self, entry: Entry<V>) -> TimerId {
        let id = self.parts().0.insert(NIL, entry);
        self.file_entry(id.index());
        id
    }
}

/// Puts the live entry `index`, whose deadline is `<= clock()`, on the due list.
fn file_due<V, W: BitmapWheel<V>>(wheel: &mut W, index: u32) {
    let (entries, due, _) = wheel.parts();
    entries.get_mut(index).home = W::DUE;
    due.push(entries, index);
}

/// `start`: the due list for a deadline `<= now`, else the wheel.
#[inline]
pub(crate) fn start<V, W: BitmapWheel<V>>(wheel: &mut W, deadline: Tick, value: V) -> TimerId {
    *wheel.parts().2 += 1;
    let entry = Entry::new(deadline, value);
    if deadline <= wheel.clock() {
        let id = wheel.parts().0.insert(NIL, entry);
        file_due(wheel, id.index());
        id
    } else {
        wheel.insert_filed(entry)
    }
}

/// `stop`: unlink, then free the entry.
#[inline]
pub(crate) fn stop<V, W: BitmapWheel<V>>(wheel: &mut W, id: TimerId) -> Option<V> {
    let index = wheel.parts().0.resolve(id)?;
    wheel.unlink_entry(index);
    let (entries, _, work) = wheel.parts();
    *work += 1;
    Some(entries.remove(index).1.value)
}

/// `restart`, in place: off its list, new deadline and value, filed again as `start`
/// files, with no arena free and allocation between.
#[inline]
pub(crate) fn restart<V, W: BitmapWheel<V>>(
    wheel: &mut W,
    id: TimerId,
    deadline: Tick,
    value: V,
) -> (TimerId, Option<V>) {
    let Some(index) = wheel.parts().0.resolve(id) else {
        return (start(wheel, deadline, value), None);
    };
    wheel.unlink_entry(index);
    let (entries, _, work) = wheel.parts();
    *work += 1;
    let (id, old) = entries.reissue(index, Entry::new(deadline, value));
    if deadline <= wheel.clock() {
        file_due(wheel, index);
    } else {
        wheel.file_entry(index);
    }
    (id, Some(old.value))
}

/// `next_deadline`: the due minimum (exact), else the earliest slot's start (exact at level
/// 0, a lower bound above).
#[inline]
pub(crate) fn next_deadline<V, W: BitmapWheel<V>>(wheel: &mut W) -> Option<Tick> {
    let (entries, due, work) = wheel.parts();
    if let Some(min) = due.min(entries, work) {
        return Some(min);
    }
    let (level, slot) = wheel.earliest()?;
    Some(slot_start(wheel.clock(), level, slot))
}
