//! Unit tests of the skynet-wheel: entry size, list choice, dead entries, past deadlines
//! and the counter's wrap.

use super::*;

fn fire(wheel: &mut SkynetWheel<u64>, to: Tick) -> Vec<(Tick, u64)> {
    let mut fired = Vec::new();
    wheel.advance(to, |_, value, deadline| fired.push((deadline, value)));
    wheel.check_invariants();
    fired
}

#[test]
fn entry_layout_is_32_bytes() {
    assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 32);
}

#[test]
fn add_node_picks_skynets_lists() {
    let wheel = SkynetWheel::<u64>::starting_at(0x1234_5678_0000_0100, 0);
    let now = wheel.now;
    assert_eq!(wheel.list_for(now + 5), 5, "same block of 256: near");
    assert_eq!(wheel.list_for(now + 0x100), level_list(0, 2));
    assert_eq!(wheel.list_for(now + 0x4000), level_list(1, 1));
    assert_eq!(wheel.list_for(now + (1 << 20)), level_list(2, 1));
    assert_eq!(wheel.list_for(now + (1 << 26)), level_list(3, 1));
    assert_eq!(wheel.list_for(now + (1 << 32)), OVERFLOW, "a later epoch");
    assert_eq!(wheel.list_for(u64::MAX), OVERFLOW);
}

#[test]
fn a_stopped_entry_is_held_until_its_slot_comes_due() {
    let mut wheel = SkynetWheel::new();
    let id = wheel.start(1000, 1);
    wheel.start(2000, 2);
    assert_eq!(wheel.stop(id), Some(1));
    assert_eq!(wheel.stop(id), None, "the value is gone");
    assert_eq!((wheel.len(), wheel.dead(), wheel.entries.len()), (1, 1, 2));
    wheel.check_invariants();
    assert!(fire(&mut wheel, 767).is_empty());
    assert_eq!(wheel.dead(), 1, "on its level-0 slot, still held");
    assert!(fire(&mut wheel, 768).is_empty());
    assert_eq!(
        (wheel.dead(), wheel.entries.len()),
        (0, 1),
        "dropped when its slot cascaded, at 1000 & !255"
    );
    let id = wheel.start(1000, 3);
    assert_eq!(wheel.stop(id), Some(3));
    assert!(fire(&mut wheel, 999).is_empty());
    assert_eq!(wheel.dead(), 1, "in its near slot, still held");
    assert!(
        fire(&mut wheel, 1000).is_empty(),
        "a dead entry never fires"
    );
    assert_eq!((wheel.dead(), wheel.entries.len()), (0, 1));
    assert_eq!(fire(&mut wheel, 2000), [(2000, 2)]);
}

#[test]
fn next_deadline_drops_the_dead_entries_it_walks() {
    let mut wheel = SkynetWheel::new();
    let ids: Vec<_> = (0..10).map(|v| wheel.start(5000 + v, v)).collect();
    wheel.start(6000, 99);
    for &id in &ids[..9] {
        wheel.stop(id);
    }
    assert_eq!(wheel.next_deadline(), Some(5009));
    assert_eq!(
        wheel.dead(),
        0,
        "the walk of 5000's level slot dropped them"
    );
    wheel.check_invariants();
    wheel.stop(ids[9]);
    assert_eq!(wheel.dead(), 1);
    assert_eq!(wheel.next_deadline(), Some(6000));
    assert_eq!(wheel.dead(), 0);
    wheel.check_invariants();
}

#[test]
fn past_deadlines_fire_first_and_in_order() {
    let mut wheel = SkynetWheel::new();
    fire(&mut wheel, 300);
    for deadline in [300, 7, 299, 0, 301, 256, 300] {
        wheel.start(deadline, deadline);
    }
    wheel.check_invariants();
    assert_eq!(wheel.next_deadline(), Some(0));
    let fired = fire(&mut wheel, 301);
    let deadlines: Vec<Tick> = fired.iter().map(|&(d, _)| d).collect();
    assert_eq!(deadlines, [0, 7, 256, 299, 300, 300, 301]);
}

#[test]
fn the_overflow_list_is_filed_when_the_counter_wraps() {
    let wrap = 7u64 << 32;
    let mut wheel = SkynetWheel::starting_at(wrap - 300, 0);
    let deadlines = [
        wrap - 1,
        wrap,
        wrap + 1,
        wrap + 300,
        wrap + (1 << 26),
        wrap << 1,
    ];
    for &deadline in &deadlines {
        wheel.start(deadline, deadline);
    }
    assert_eq!(wheel.next_deadline(), Some(wrap - 1));
    wheel.check_invariants();
    assert_eq!(fire(&mut wheel, wrap - 1), [(wrap - 1, wrap - 1)]);
    assert_eq!(wheel.next_deadline(), Some(wrap), "from the overflow list");
    assert_eq!(fire(&mut wheel, wrap), [(wrap, wrap)]);
    assert_eq!(wheel.next_deadline(), Some(wrap + 1));
    assert_eq!(
        fire(&mut wheel, wrap + 300),
        [(wrap + 1, wrap + 1), (wrap + 300, wrap + 300)]
    );
    assert_eq!(wheel.next_deadline(), Some(wrap + (1 << 26)));
    assert_eq!(wheel.len(), 2);
}

#[test]
fn the_end_of_time_is_walked_without_overflow() {
    let mut wheel = SkynetWheel::starting_at(u64::MAX - 1000, 0);
    wheel.start(u64::MAX, 1);
    wheel.start(u64::MAX - 256, 2);
    wheel.start(3, 3);
    wheel.check_invariants();
    assert_eq!(fire(&mut wheel, u64::MAX - 500), [(3, 3)]);
    assert_eq!(
        fire(&mut wheel, u64::MAX),
        [(u64::MAX - 256, 2), (u64::MAX, 1)]
    );
    assert!(fire(&mut wheel, u64::MAX).is_empty());
}
