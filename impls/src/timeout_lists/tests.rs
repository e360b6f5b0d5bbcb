//! Unit tests of the timeout-lists: entry size, one list per delay, stale heap keys and
//! list reuse.

use super::*;

fn fire_all(queue: &mut TimeoutLists<u64>, to: Tick) -> Vec<(Tick, u64)> {
    let mut fired = Vec::new();
    queue.advance(to, |_, value, deadline| fired.push((deadline, value)));
    queue.check_invariants();
    fired
}

#[test]
fn entry_layout_is_32_bytes() {
    assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 32);
    assert_eq!(std::mem::size_of::<DelayList>(), 24);
    assert_eq!(std::mem::size_of::<Keyed>(), 16);
}

#[test]
fn one_delay_keeps_one_list_through_refreshes() {
    let mut queue = TimeoutLists::new();
    let mut ids: Vec<_> = (0..100u64).map(|i| queue.start(30, i)).collect();
    assert_eq!(queue.list_count(), 1);
    for step in 1..=20u64 {
        fire_all(&mut queue, step);
        let refreshed = (step as usize * 7) % ids.len();
        let (id, old) = queue.restart(ids[refreshed], step + 30, 1_000 + step);
        assert!(old.is_some());
        ids[refreshed] = id;
        assert_eq!(queue.list_count(), 1, "a refresh stays on its list");
    }
    queue.check_invariants();
    let fired = fire_all(&mut queue, 1_000);
    assert_eq!(fired.len(), 100);
    assert_eq!(queue.list_count(), 0, "an emptied list is deleted");
}

#[test]
fn a_stopped_head_leaves_a_stale_key_that_is_raised_later() {
    let mut queue = TimeoutLists::new();
    let head = queue.start(10, 1);
    queue.advance(5, |_, _, _| {});
    queue.start(15, 2); // the same delay 10: the same list, behind the head
    queue.start(12, 3); // delay 7: its own list
    assert_eq!(queue.list_count(), 2);
    assert_eq!(queue.stop(head), Some(1));
    assert_eq!(queue.heap[0].key, 10, "the key stays at the stopped head");
    assert_eq!(queue.next_deadline(), Some(12));
    queue.check_invariants();
    assert_eq!(fire_all(&mut queue, 100), [(12, 3), (15, 2)]);
}

#[test]
fn past_deadlines_fire_first_and_sorted() {
    let mut queue = TimeoutLists::new();
    queue.advance(100, |_, _, _| {});
    queue.start(101, 0);
    for (value, deadline) in [(1, 50), (2, 30), (3, 100), (4, 0), (5, 99)] {
        queue.start(deadline, value);
    }
    assert_eq!(queue.next_deadline(), Some(0));
    queue.check_invariants();
    let fired = fire_all(&mut queue, 101);
    assert_eq!(
        fired,
        [(0, 4), (30, 2), (50, 1), (99, 5), (100, 3), (101, 0)]
    );
}

#[test]
fn list_records_are_reused() {
    let mut queue = TimeoutLists::new();
    for round in 0..100u64 {
        let ids: Vec<_> = (1..=10u64)
            .map(|d| queue.start(round + d * 1000, d))
            .collect();
        for id in ids {
            queue.stop(id);
        }
    }
    assert_eq!(queue.lists.len(), 11, "the due list and ten reused records");
    queue.check_invariants();
}
