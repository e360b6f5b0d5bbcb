//! The conformance suite: every row of the timer-queue contract, checked for every
//! registered implementation.
//!
//! The suite is written once, generic over `TimerQueue<u64>`, in [`suite`]. The registry
//! macro instantiates it per implementation, so the tests are named
//! `<implementation>::<check>`, e.g. `hierarchical_wheel::huge_advance_does_not_step_tick_by_tick`;
//! `cargo test -p timerbench-impls --test conformance kafka_wheel` runs one implementation.
//!
//! The checks read what the structure declares of itself. A walker
//! ([`EmptyTime::Walked`](timerbench_impls::EmptyTime)) cannot be moved by 2^40 ticks, so
//! every clock move is held within the walker horizon of `support/horizon.rs` (an `advance`
//! beyond it fails the check as a bug of the check), and the checks that need huge moves run
//! a counterpart of the same shape within it instead, named `..._within_the_walk_horizon`
//! or after what it checks, and announced on stderr; `huge_advance_does_not_step_tick_by_tick`
//! becomes its honest opposite, that a walk costs the visits declared. A structure that frees
//! a stopped timer's entry later ([`Release::Later`](timerbench_impls::Release)) has its
//! memory measured once the clock has passed the stopped timers' deadlines.

#[path = "support/boundaries.rs"]
mod boundaries;
#[path = "support/counting_allocator.rs"]
mod counting_allocator;
#[path = "support/horizon.rs"]
mod horizon;
#[path = "conformance/restart.rs"]
mod restart;

use timerbench_impls::for_each_implementation;

/// Bytes per pending timer each implementation must stay within, everything counted
/// (`None`: the structure is what it is and is only reported).
fn memory_budget(name: &str) -> Option<usize> {
    match name {
        "btree" => None,
        "skiplist" => Some(48),
        // A list per distinct delay, and this test's 65,536 random deadlines are 65,536
        // delays: each timer brings its own list record (24), heap element (16) and map
        // entry (about 34 with hashbrown's doubling) beside its 32-byte entry, and the
        // records' Vec sits just past a doubling. 130 measured; one shared delay costs 32.
        "timeout-lists" => Some(136),
        _ => Some(32),
    }
}

macro_rules! conformance_suite {
    ($($module:ident :: $ty:ident, $name:literal, $summary:literal;)*) => {
        $(
            #[allow(non_snake_case)]
            mod $module {
                type Queue = timerbench_impls::$module::$ty<u64>;
                conformance_suite!(@checks Queue, $name;
                    new_queue_is_empty,
                    past_and_present_deadlines_fire_on_the_next_advance,
                    fires_in_deadline_order_within_one_advance,
                    fires_exactly_at_the_deadline_around_boundaries,
                    fires_exactly_when_driven_tick_by_tick,
                    deadlines_at_and_near_u64_max,
                    huge_advance_does_not_step_tick_by_tick,
                    hundred_thousand_timers_on_one_deadline,
                    stop_returns_the_value_once,
                    stop_of_a_fired_timer_is_none,
                    stop_of_never_issued_handles_is_none,
                    stale_handles_leave_the_new_occupant_alone,
                    next_deadline_is_a_bound_that_reaches_the_earliest_timer,
                    len_counts_pending_timers,
                    memory_stops_growing_under_start_stop_pairs,
                    memory_per_pending_timer_is_within_budget,
                    restart_moves_a_pending_timer,
                    restart_of_a_timer_not_pending_is_a_start,
                    restart_to_and_from_the_past,
                    memory_stops_growing_under_restarts,
                );

                #[test]
                #[should_panic(expected = "never runs backwards")]
                fn advance_backwards_panics() {
                    crate::suite::advance_backwards_panics::<Queue>();
                }
            }
        )*
    };
    (@checks $queue:ty, $name:literal; $($check:ident,)*) => {
        $(
            #[test]
            fn $check() {
                crate::suite::$check::<$queue>($name);
            }
        )*
    };
}

for_each_implementation!(conformance_suite);

/// The checks, each generic over the implementation. Each takes the implementation's
/// registry name for its messages.
mod suite {
    use crate::boundaries::BOUNDARY_DELAYS;
    use crate::counting_allocator::live_bytes;
    use crate::horizon::{Reach, WALK_MOVE_VISITS, WALK_TEST_VISITS};
    pub use crate::restart::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::cell::Cell;
    use timerbench_impls::{Release, Tick, TimerId, TimerQueue};

    /// One firing as the callback saw it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    pub struct Fired {
        pub deadline: Tick,
        pub value: u64,
        pub id: TimerId,
    }

    thread_local! {
        /// Bucket visits the walker under test has been asked for by this check (each test
        /// runs on its own thread).
        static WALKED: Cell<u64> = const { Cell::new(0) };
    }

    /// The reach of `Q` (`support/horizon.rs`).
    pub fn reach<Q: TimerQueue<u64>>() -> Reach {
        Reach::of(Q::new().empty_time())
    }

    /// `Some(reach)` when `Q` walks empty time, after saying on stderr that the check runs
    /// `adapted`, its counterpart within the walker horizon, in place of the full one.
    pub fn walker<Q: TimerQueue<u64>>(name: &str, adapted: &str) -> Option<Reach> {
        let reach = reach::<Q>();
        reach.is_walker().then(|| {
            eprintln!("{name} walks empty time ({reach:?}): checked {adapted}");
            reach
        })
    }

    /// Clocks to start a walker from: aligned and unaligned, around skynet's block (256)
    /// and first level (2^14), and past 2^16, all within the walker horizon.
    pub const WALKER_BASE_CLOCKS: &[u64] = &[0, 1, 255, 4093, (1 << 14) - 3, (1 << 16) + 12345];

    /// Advances `queue` to `to` and returns what fired, in firing order, after checking
    /// that the deadlines never decrease and that nothing fires after its deadline is due
    /// by more than this one call allows (`deadline <= to`). A walker's move must stay
    /// within the walker horizon: a check that asks for more is a bug of the check, and
    /// fails here instead of walking for hours.
    pub fn advance<Q: TimerQueue<u64>>(queue: &mut Q, to: Tick, name: &str) -> Vec<Fired> {
        let reach = Reach::of(queue.empty_time());
        if reach.is_walker() {
            let now = queue.now();
            let visits = reach.visits(to.saturating_sub(now));
            assert!(
                visits <= WALK_MOVE_VISITS,
                "{name}: check bug: advance({to}) from {now} would walk {visits} buckets, \
                 beyond the walker horizon of {WALK_MOVE_VISITS} per move"
            );
            let walked = WALKED.with(|walked| {
                walked.set(walked.get() + visits);
                walked.get()
            });
            assert!(
                walked <= WALK_TEST_VISITS,
                "{name}: check bug: {walked} buckets walked in one check, beyond the walker \
                 horizon of {WALK_TEST_VISITS}"
            );
        }
        let mut fired = Vec::new();
        queue.advance(to, |id, value, deadline| {
            fired.push(Fired {
                deadline,
                value,
                id,
            })
        });
        for pair in fired.windows(2) {
            assert!(
                pair[0].deadline <= pair[1].deadline,
                "{name}: advance({to}) fired deadline {} before {}",
                pair[0].deadline,
                pair[1].deadline
            );
        }
        for f in &fired {
            assert!(f.deadline <= to, "{name}: advance({to}) fired {f:?} early");
        }
        assert_eq!(
            queue.now(),
            to,
            "{name}: advance({to}) must leave now = {to}"
        );
        fired
    }

    pub fn values(fired: &[Fired]) -> Vec<u64> {
        fired.iter().map(|f| f.value).collect()
    }

    /// The shared boundary delays, and a few far ones that only a conformance check, which
    /// never moves the clock by them, can afford.
    pub fn boundary_delays() -> impl Iterator<Item = u64> {
        BOUNDARY_DELAYS
            .iter()
            .copied()
            .chain([(1 << 48) + 5, 1 << 60, 1 << 62])
    }

    /// Clocks to start from: aligned, unaligned, just below level boundaries.
    pub const BASE_CLOCKS: &[u64] = &[0, 1, 63, 4093, (1 << 36) - 3, (1 << 50) + 12345];

    pub fn new_queue_is_empty<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::new();
        assert_eq!(queue.len(), 0, "{name}");
        assert!(queue.is_empty(), "{name}");
        assert_eq!(queue.now(), 0, "{name}");
        assert_eq!(queue.next_deadline(), None, "{name}");
        assert!(advance(&mut queue, 0, name).is_empty());
        assert!(advance(&mut queue, 10, name).is_empty());
        assert_eq!(queue.next_deadline(), None, "{name}");
        let mut sized = Q::with_capacity(1000);
        assert!(sized.is_empty(), "{name}");
        assert_eq!(sized.next_deadline(), None, "{name}");
    }

    pub fn past_and_present_deadlines_fire_on_the_next_advance<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::new();
        advance(&mut queue, 100, name);
        queue.start(50, 50);
        queue.start(100, 100);
        queue.start(0, 0);
        queue.start(99, 99);
        queue.start(101, 101);
        assert_eq!(queue.len(), 5, "{name}: start never fires anything");
        assert!(
            queue.next_deadline().is_some_and(|t| t == 0),
            "{name}: the earliest deadline is 0, and 0 is the only lower bound"
        );
        let fired = advance(&mut queue, 100, name);
        assert_eq!(
            values(&fired),
            [0, 50, 99, 100],
            "{name}: an advance to the same clock fires what is due, in deadline order"
        );
        assert_eq!(queue.len(), 1, "{name}");
        assert_eq!(values(&advance(&mut queue, 101, name)), [101], "{name}");
    }

    pub fn fires_in_deadline_order_within_one_advance<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::new();
        let mut random = SmallRng::seed_from_u64(0x9e37_79b9_7f4a_7c15);
        let mut expected = Vec::new();
        for value in 0..20_000u64 {
            // Spread over several wheel levels, with many ties.
            let deadline = match value % 4 {
                0 => random.next_u64() % 64,
                1 => random.next_u64() % 5_000,
                2 => random.next_u64() % 300_000,
                _ => (random.next_u64() % 1_000) * 1_000,
            };
            queue.start(deadline, value);
            expected.push((deadline, value));
        }
        let fired = advance(&mut queue, 1_000_000, name);
        let mut got: Vec<_> = fired.iter().map(|f| (f.deadline, f.value)).collect();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(
            got, expected,
            "{name}: every timer fires once with its deadline"
        );
        assert!(queue.is_empty(), "{name}");
    }

    pub fn fires_exactly_at_the_deadline_around_boundaries<Q: TimerQueue<u64>>(name: &str) {
        let adapted = "fires_exactly_at_boundaries_within_the_walk_horizon";
        if let Some(reach) = walker::<Q>(name, adapted) {
            return fires_exactly_at_boundaries_within_the_walk_horizon::<Q>(name, reach);
        }
        let delays: Vec<u64> = boundary_delays().collect();
        fires_exactly_at_the_deadlines::<Q>(name, BASE_CLOCKS, &delays);
    }

    /// The same check for a walker: from the walker's base clocks, every boundary delay it
    /// can reach in one move (up to 2^20 + 1 with a step of 1: skynet's near block and
    /// first two levels).
    pub fn fires_exactly_at_boundaries_within_the_walk_horizon<Q: TimerQueue<u64>>(
        name: &str,
        reach: Reach,
    ) {
        let delays: Vec<u64> = boundary_delays()
            .filter(|&delay| delay <= reach.ticks(1 << 20) + 1)
            .collect();
        assert!(
            delays.len() > 30,
            "{name}: most boundaries stay within reach"
        );
        fires_exactly_at_the_deadlines::<Q>(name, WALKER_BASE_CLOCKS, &delays);
    }

    /// From each of `bases`, timers at each of `delays`, one at a time and then all at once,
    /// each silent until the tick before its deadline and fired on it.
    fn fires_exactly_at_the_deadlines<Q: TimerQueue<u64>>(
        name: &str,
        bases: &[u64],
        delays: &[u64],
    ) {
        for &base in bases {
            // One timer at a time: silent until the tick before, fires on its tick.
            for &delay in delays {
                let mut queue = Q::new();
                advance(&mut queue, base, name);
                let deadline = base + delay;
                let id = queue.start(deadline, delay);
                assert!(
                    advance(&mut queue, deadline - 1, name).is_empty(),
                    "{name}: timer at {deadline} (now was {base}) fired early"
                );
                let fired = advance(&mut queue, deadline, name);
                assert_eq!(
                    fired,
                    [Fired {
                        deadline,
                        value: delay,
                        id
                    }],
                    "{name}: timer at {deadline} (started at {base}) must fire on its tick"
                );
            }
            // All at once, the clock walking from deadline to deadline in mixed steps.
            let mut queue = Q::new();
            advance(&mut queue, base, name);
            for &delay in delays {
                queue.start(base + delay, delay);
            }
            for &delay in delays {
                let deadline = base + delay;
                if deadline - 1 > queue.now() {
                    assert!(
                        advance(&mut queue, deadline - 1, name).is_empty(),
                        "{name}: something fired before {deadline} (base {base})"
                    );
                }
                assert_eq!(
                    values(&advance(&mut queue, deadline, name)),
                    [delay],
                    "{name}: base {base}, deadline {deadline}"
                );
            }
            assert!(queue.is_empty(), "{name}");
        }
    }

    pub fn fires_exactly_when_driven_tick_by_tick<Q: TimerQueue<u64>>(name: &str) {
        let adapted = "fires_exactly_when_driven_tick_by_tick_from_reachable_clocks";
        if walker::<Q>(name, adapted).is_some() {
            return fires_exactly_when_driven_tick_by_tick_from_reachable_clocks::<Q>(name);
        }
        fires_exactly_when_driven_tick_by_tick_from::<Q>(name, &[0, 4000, (1 << 24) - 70]);
    }

    /// The same check for a walker, from clocks it reaches in one move: the last base is
    /// just below 2^20 (where skynet's level 1 ends) instead of 2^24.
    pub fn fires_exactly_when_driven_tick_by_tick_from_reachable_clocks<Q: TimerQueue<u64>>(
        name: &str,
    ) {
        fires_exactly_when_driven_tick_by_tick_from::<Q>(name, &[0, 4000, (1 << 20) - 70]);
    }

    fn fires_exactly_when_driven_tick_by_tick_from<Q: TimerQueue<u64>>(name: &str, bases: &[u64]) {
        for &base in bases {
            let mut queue = Q::new();
            advance(&mut queue, base, name);
            let mut deadlines: Vec<u64> = (0..300).map(|d| base + d).collect();
            deadlines.extend([4095, 4096, 4097, 4160, 4200].map(|d| base + d));
            for &deadline in &deadlines {
                queue.start(deadline, deadline);
            }
            let fired = advance(&mut queue, base, name);
            assert_eq!(values(&fired), [base], "{name}: the deadline equal to now");
            for now in base + 1..=base + 4200 {
                let fired = advance(&mut queue, now, name);
                let expected: Vec<u64> = deadlines.iter().copied().filter(|&d| d == now).collect();
                assert_eq!(values(&fired), expected, "{name}: tick {now}");
            }
            assert!(queue.is_empty(), "{name}");
        }
    }

    pub fn deadlines_at_and_near_u64_max<Q: TimerQueue<u64>>(name: &str) {
        let adapted = "deadlines_near_u64_max_held_without_walking_there";
        if let Some(reach) = walker::<Q>(name, adapted) {
            return deadlines_near_u64_max_held_without_walking_there::<Q>(name, reach);
        }
        let mut queue = Q::new();
        let max = u64::MAX;
        for deadline in [max, max - 1, max - 63, max - 64, max - 4096, 1 << 63, max] {
            queue.start(deadline, deadline);
        }
        assert!(
            advance(&mut queue, (1 << 63) - 1, name).is_empty(),
            "{name}"
        );
        assert_eq!(
            values(&advance(&mut queue, 1 << 63, name)),
            [1 << 63],
            "{name}"
        );
        assert!(advance(&mut queue, max - 4097, name).is_empty(), "{name}");
        assert_eq!(
            values(&advance(&mut queue, max - 1, name)),
            [max - 4096, max - 64, max - 63, max - 1],
            "{name}"
        );
        assert_eq!(
            values(&advance(&mut queue, max, name)),
            [max, max],
            "{name}"
        );
        assert!(queue.is_empty(), "{name}");
        // The clock at the very end: deadlines in the past and at now still fire, in order.
        queue.start(max, 3);
        queue.start(5, 1);
        queue.start(max - 1, 2);
        assert_eq!(queue.next_deadline(), Some(5), "{name}");
        assert_eq!(values(&advance(&mut queue, max, name)), [1, 2, 3], "{name}");
        assert!(advance(&mut queue, max, name).is_empty(), "{name}");
    }

    /// The counterpart of `deadlines_at_and_near_u64_max` for a walker, which cannot reach
    /// the end of time: the same far deadlines are started beside near ones, some stopped;
    /// `len` and `next_deadline` account for them while the clock moves as far as a walker
    /// goes, the near timers fire alone, and every far one is still there to stop.
    pub fn deadlines_near_u64_max_held_without_walking_there<Q: TimerQueue<u64>>(
        name: &str,
        reach: Reach,
    ) {
        let mut queue = Q::new();
        let max = u64::MAX;
        let far = [max, max - 1, max - 63, max - 64, max - 4096, 1 << 63, max];
        let ids: Vec<TimerId> = far.iter().map(|&d| queue.start(d, d)).collect();
        queue.start(300, 300);
        queue.start(5, 5);
        assert_eq!(queue.len(), 9, "{name}");
        let steps = queue.next_deadline_steps();
        let check_next = |queue: &mut Q, earliest: Tick| {
            let bound = queue.next_deadline().expect("pending");
            assert!(
                bound <= earliest,
                "{name}: next_deadline {bound} > {earliest}"
            );
            if steps == 1 {
                assert_eq!(bound, earliest, "{name}: an exact structure returns it");
            }
        };
        check_next(&mut queue, 5);
        assert_eq!(queue.stop(ids[1]), Some(max - 1), "{name}");
        assert_eq!(queue.stop(ids[5]), Some(1 << 63), "{name}");
        assert_eq!(queue.stop(ids[5]), None, "{name}: stopped once");
        assert_eq!(queue.len(), 7, "{name}");
        assert_eq!(values(&advance(&mut queue, 300, name)), [5, 300], "{name}");
        check_next(&mut queue, max - 4096);
        let horizon = queue.now() + reach.max_move();
        assert!(advance(&mut queue, horizon, name).is_empty(), "{name}");
        assert_eq!(queue.len(), 5, "{name}: the far timers are all pending");
        check_next(&mut queue, max - 4096);
        let mut stopped: Vec<u64> = [0, 2, 3, 4, 6]
            .into_iter()
            .filter_map(|i| queue.stop(ids[i]))
            .collect();
        stopped.sort_unstable();
        assert_eq!(
            stopped,
            [max - 4096, max - 64, max - 63, max, max],
            "{name}"
        );
        assert!(queue.is_empty(), "{name}");
        assert_eq!(queue.next_deadline(), None, "{name}");
        // A deadline in the past still fires on the next move, before a later one.
        queue.start(queue.now() + 2, 2);
        queue.start(7, 1);
        let to = queue.now() + 2;
        assert_eq!(values(&advance(&mut queue, to, name)), [1, 2], "{name}");
    }

    pub fn huge_advance_does_not_step_tick_by_tick<Q: TimerQueue<u64>>(name: &str) {
        let adapted = "walked_advance_costs_a_visit_per_step (a walker's declared nature)";
        if let Some(reach) = walker::<Q>(name, adapted) {
            return walked_advance_costs_a_visit_per_step::<Q>(name, reach);
        }
        // Generous against a few dozen structural steps, hopeless for 2^40 ticks.
        const WORK_LIMIT: u64 = 10_000;
        for base in [0u64, 12_345_678_901] {
            let mut queue = Q::new();
            advance(&mut queue, base, name);
            let jump = 1u64 << 40;
            for (value, delay) in [3, 1 << 20, (1 << 39) + 7, jump - 1, jump]
                .into_iter()
                .enumerate()
            {
                queue.start(base + delay, value as u64);
            }
            let before = queue.work();
            let fired = advance(&mut queue, base + jump, name);
            let work = queue.work() - before;
            assert_eq!(values(&fired), [0, 1, 2, 3, 4], "{name}");
            assert!(
                work <= WORK_LIMIT,
                "{name}: advance by 2^40 ticks with 5 timers cost {work} steps"
            );
            let before = queue.work();
            advance(&mut queue, base + 2 * jump, name);
            let work = queue.work() - before;
            assert!(
                work <= WORK_LIMIT,
                "{name}: advance by 2^40 empty ticks cost {work} steps"
            );
            // And to the end of time with one timer there.
            queue.start(u64::MAX, 9);
            let before = queue.work();
            assert_eq!(values(&advance(&mut queue, u64::MAX, name)), [9], "{name}");
            let work = queue.work() - before;
            assert!(
                work <= WORK_LIMIT,
                "{name}: advance to u64::MAX cost {work} steps"
            );
        }
    }

    /// The honest opposite of `huge_advance_does_not_step_tick_by_tick` for a structure that
    /// declares `EmptyTime::Walked { step }`: a move of N ticks costs it about N / step
    /// structural steps (`work()`), at least one per bucket, and no more than a few per
    /// bucket with a thousand far timers pending and a few due on the way. A structure that
    /// did not walk would not need the declaration; one whose walk grew with its pending
    /// timers, or a `work()` that counted nothing, fails.
    pub fn walked_advance_costs_a_visit_per_step<Q: TimerQueue<u64>>(name: &str, reach: Reach) {
        let mut queue = Q::new();
        for value in 0..1_000u64 {
            queue.start((1 << 40) + value, value);
        }
        for ticks in [
            reach.ticks(1 << 12),
            reach.ticks(1 << 16),
            reach.ticks(1 << 20),
        ] {
            let visits = reach.visits(ticks);
            for (phase, due) in [("with timers due", true), ("over empty time", false)] {
                let base = queue.now();
                if due {
                    for delay in [3, ticks / 2, ticks - 1, ticks] {
                        queue.start(base + delay, delay);
                    }
                }
                let before = queue.work();
                let fired = advance(&mut queue, base + ticks, name);
                let work = queue.work() - before;
                let expected: &[u64] = if due {
                    &[3, ticks / 2, ticks - 1, ticks]
                } else {
                    &[]
                };
                assert_eq!(values(&fired), expected, "{name}: {phase}");
                assert!(
                    work >= visits,
                    "{name}: a move of {ticks} ticks {phase} cost {work} steps, fewer than the \
                     {visits} bucket visits it declares"
                );
                assert!(
                    work <= 4 * visits + 1_000,
                    "{name}: a move of {ticks} ticks {phase} cost {work} steps, more than a few \
                     per bucket visit ({visits})"
                );
            }
        }
        assert_eq!(queue.len(), 1_000, "{name}");
    }

    pub fn hundred_thousand_timers_on_one_deadline<Q: TimerQueue<u64>>(name: &str) {
        const COUNT: u64 = 100_000;
        let mut queue = Q::new();
        advance(&mut queue, 7, name);
        for value in 0..COUNT {
            queue.start(1_000, value);
        }
        assert_eq!(queue.len(), COUNT as usize, "{name}");
        assert!(advance(&mut queue, 999, name).is_empty(), "{name}");
        let fired = advance(&mut queue, 1_000, name);
        assert_eq!(fired.len(), COUNT as usize, "{name}");
        let mut seen = values(&fired);
        seen.sort_unstable();
        assert!(seen.iter().copied().eq(0..COUNT), "{name}: each fires once");
        assert!(queue.is_empty(), "{name}");
    }

    pub fn stop_returns_the_value_once<Q: TimerQueue<u64>>(name: &str) {
        let adapted = "stop_returns_the_value_once_within_the_walk_horizon";
        if let Some(reach) = walker::<Q>(name, adapted) {
            return stop_returns_the_value_once_within_the_walk_horizon::<Q>(name, reach);
        }
        stop_returns_the_value_once_with_far::<Q>(name, 1 << 40);
    }

    /// The same check for a walker: the far timer, stopped, lies at the end of the longest
    /// move (2^21 ticks with a step of 1) instead of 2^40, and the clock moves onto it.
    pub fn stop_returns_the_value_once_within_the_walk_horizon<Q: TimerQueue<u64>>(
        name: &str,
        reach: Reach,
    ) {
        stop_returns_the_value_once_with_far::<Q>(name, reach.max_move() / 2);
    }

    fn stop_returns_the_value_once_with_far<Q: TimerQueue<u64>>(name: &str, far: Tick) {
        let mut queue = Q::new();
        let a = queue.start(10, 1);
        let b = queue.start(10, 2);
        let c = queue.start(far, 3);
        assert_eq!(queue.stop(a), Some(1), "{name}");
        assert_eq!(queue.stop(a), None, "{name}: a stopped timer stops once");
        assert_eq!(queue.stop(c), Some(3), "{name}: a far timer stops too");
        assert_eq!(queue.len(), 1, "{name}");
        assert_eq!(values(&advance(&mut queue, 2 * far, name)), [2], "{name}");
        assert_eq!(queue.stop(b), None, "{name}");
        assert_eq!(queue.stop(c), None, "{name}: nor after its deadline");
    }

    pub fn stop_of_a_fired_timer_is_none<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::new();
        let early = queue.start(5, 1);
        let late = queue.start(500, 2);
        assert_eq!(values(&advance(&mut queue, 5, name)), [1], "{name}");
        assert_eq!(queue.stop(early), None, "{name}");
        assert_eq!(queue.len(), 1, "{name}: the fired stop changed nothing");
        assert_eq!(queue.stop(late), Some(2), "{name}");
    }

    pub fn stop_of_never_issued_handles_is_none<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::new();
        let real = queue.start(10, 1);
        for forged in [
            TimerId::from_parts(12_345, 1),
            TimerId::from_parts(real.index(), real.generation().wrapping_add(2)),
            TimerId::from_parts(real.index(), 0),
            TimerId::from_parts(u32::MAX, u32::MAX),
            TimerId::from_parts(u32::MAX - 1, 1),
        ] {
            assert_eq!(queue.stop(forged), None, "{name}: {forged:?}");
        }
        assert_eq!(queue.len(), 1, "{name}");
        let fired = advance(&mut queue, 10, name);
        assert_eq!(fired.len(), 1, "{name}");
        assert_eq!(
            fired[0].id, real,
            "{name}: on_fire reports the handle start gave"
        );
    }

    pub fn stale_handles_leave_the_new_occupant_alone<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::new();
        // Stopped, then its storage reused.
        let stopped = queue.start(100, 1);
        assert_eq!(queue.stop(stopped), Some(1), "{name}");
        let reuser = queue.start(100, 2);
        assert_ne!(reuser, stopped, "{name}: a new timer gets a new handle");
        assert_eq!(queue.stop(stopped), None, "{name}: stale handle after stop");
        assert_eq!(queue.len(), 1, "{name}: the new timer is untouched");
        // Fired, then its storage reused.
        let fired_id = queue.start(50, 3);
        assert_eq!(values(&advance(&mut queue, 50, name)), [3], "{name}");
        let second_reuser = queue.start(200, 4);
        assert_eq!(
            queue.stop(fired_id),
            None,
            "{name}: stale handle after firing"
        );
        assert_eq!(queue.len(), 2, "{name}");
        let fired = advance(&mut queue, 200, name);
        assert_eq!(
            fired.iter().map(|f| (f.id, f.value)).collect::<Vec<_>>(),
            [(reuser, 2), (second_reuser, 4)],
            "{name}"
        );
        // Many generations of one slot.
        let mut stale = Vec::new();
        for value in 0..1_000 {
            let id = queue.start(1_000, value);
            stale.push(id);
            assert_eq!(queue.stop(id), Some(value), "{name}");
        }
        let survivor = queue.start(1_000, 7);
        for id in stale {
            assert_eq!(queue.stop(id), None, "{name}");
        }
        assert_eq!(queue.stop(survivor), Some(7), "{name}");
    }

    pub fn next_deadline_is_a_bound_that_reaches_the_earliest_timer<Q: TimerQueue<u64>>(
        name: &str,
    ) {
        let adapted = "next_deadline_reaches_the_earliest_timer_within_the_walk_horizon";
        if let Some(reach) = walker::<Q>(name, adapted) {
            return next_deadline_reaches_the_earliest_timer_within_the_walk_horizon::<Q>(
                name, reach,
            );
        }
        next_deadline_reaches_the_earliest_timer_with_delays_below::<Q>(name, 1 << 30, 1 << 40);
    }

    /// The same check for a walker, whose clock follows the earliest timer over 400 rounds:
    /// random delays below 2^16 ticks instead of 2^30 (with a step of 1), and the boundary
    /// delays up to that.
    pub fn next_deadline_reaches_the_earliest_timer_within_the_walk_horizon<Q: TimerQueue<u64>>(
        name: &str,
        reach: Reach,
    ) {
        let below = reach.ticks(1 << 16);
        next_deadline_reaches_the_earliest_timer_with_delays_below::<Q>(name, below, below);
    }

    /// Rounds of starts (random delays below `random_below`, boundary delays up to
    /// `boundary_up_to`) and stops of the earliest, each followed by a sleep to
    /// `next_deadline` as an event loop would.
    fn next_deadline_reaches_the_earliest_timer_with_delays_below<Q: TimerQueue<u64>>(
        name: &str,
        random_below: Tick,
        boundary_up_to: Tick,
    ) {
        let boundaries: Vec<u64> = BOUNDARY_DELAYS
            .iter()
            .copied()
            .filter(|&delay| delay <= boundary_up_to)
            .collect();
        let mut queue = Q::new();
        assert_eq!(queue.next_deadline(), None, "{name}");
        let steps = queue.next_deadline_steps();
        assert!(steps >= 1, "{name}");
        let mut random = SmallRng::seed_from_u64(12345);
        let mut pending: Vec<(TimerId, u64)> = Vec::new();
        for round in 0..400 {
            // Keep a mix of near, boundary and far timers pending; stop some, often the
            // earliest, so that a structure's bookkeeping goes stale.
            for _ in 0..3 {
                let delay = match random.next_u64() % 3 {
                    0 => random.next_u64() % 100,
                    1 => boundaries[(random.next_u64() % boundaries.len() as u64) as usize],
                    _ => random.next_u64() % random_below,
                };
                let deadline = queue.now() + delay;
                pending.push((queue.start(deadline, deadline), deadline));
            }
            if round % 2 == 0 {
                pending.sort_by_key(|&(_, deadline)| deadline);
                let (id, deadline) = pending.remove(0);
                assert_eq!(queue.stop(id), Some(deadline), "{name}");
            }
            let earliest = pending.iter().map(|&(_, d)| d).min();
            let bound = queue.next_deadline();
            assert_eq!(bound.is_some(), earliest.is_some(), "{name}");
            let (Some(bound), Some(earliest)) = (bound, earliest) else {
                continue;
            };
            assert!(
                bound <= earliest,
                "{name}: next_deadline {bound} > earliest {earliest}"
            );
            if steps == 1 {
                assert_eq!(
                    bound, earliest,
                    "{name}: an exact structure returns the deadline"
                );
            }
            // Sleep until the next timer, as an event loop would.
            let mut rounds = 0;
            loop {
                rounds += 1;
                let bound = queue.next_deadline().expect("still pending");
                assert!(
                    bound <= earliest,
                    "{name}: next_deadline passed the earliest timer"
                );
                let to = bound.max(queue.now());
                let fired = advance(&mut queue, to, name);
                if let Some(first) = fired.first() {
                    assert_eq!(first.deadline, earliest, "{name}: the earliest fires first");
                    pending.retain(|&(_, d)| d > queue.now());
                    break;
                }
                assert!(
                    rounds < steps,
                    "{name}: the earliest timer did not fire within {steps} rounds"
                );
            }
        }
    }

    pub fn len_counts_pending_timers<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::new();
        let ids: Vec<TimerId> = (0..100).map(|i| queue.start(i * 10, i)).collect();
        assert_eq!(queue.len(), 100, "{name}");
        for id in ids.iter().step_by(3) {
            queue.stop(*id);
        }
        assert_eq!(queue.len(), 66, "{name}");
        let fired = advance(&mut queue, 495, name);
        assert_eq!(queue.len(), 66 - fired.len(), "{name}");
        assert_eq!(fired.len(), 33, "{name}");
        advance(&mut queue, 10_000, name);
        assert_eq!(queue.len(), 0, "{name}");
        assert!(queue.is_empty(), "{name}");
    }

    pub fn memory_stops_growing_under_start_stop_pairs<Q: TimerQueue<u64>>(name: &str) {
        if let Release::Later(when) = Q::new().release() {
            eprintln!(
                "{name} frees a stopped timer's entry later ({when}): checked \
                 memory_stops_growing_under_start_stop_pairs_once_the_clock_passes_them"
            );
            return memory_stops_growing_under_start_stop_pairs_once_the_clock_passes_them::<Q>(
                name,
            );
        }
        let mut queue = Q::new();
        let mut random = SmallRng::seed_from_u64(77);
        for value in 0..1_000 {
            queue.start(1_000_000 + random.next_u64() % 1_000_000, value);
        }
        let churn = |queue: &mut Q, random: &mut SmallRng, pairs: u64| {
            for value in 0..pairs {
                let deadline = queue.now() + 1 + random.next_u64() % 5_000;
                let id = queue.start(deadline, value);
                assert_eq!(queue.stop(id), Some(value));
            }
        };
        churn(&mut queue, &mut random, 10_000);
        let before = live_bytes();
        churn(&mut queue, &mut random, 1_000_000);
        let after = live_bytes();
        // A structure may still meet a rare shape for the first time (a tall skip-list
        // tower); anything that grows with the number of pairs blows far past this.
        const SLACK: isize = 4096;
        assert!(
            after <= before + SLACK,
            "{name}: live bytes grew from {before} to {after} over 1M start/stop pairs"
        );
        assert_eq!(queue.len(), 1_000, "{name}");
    }

    /// The same churn for a structure that keeps a stopped timer's entry until later
    /// ([`Release::Later`]): in rounds of 10,000 start/stop pairs, the clock moved past each
    /// round's deadlines (nothing fires) before the next round, while the 1,000 resident
    /// timers stay pending. Live bytes must not grow between the first round and the 101st:
    /// the dead entries of a round are gone once the clock has passed them, as the
    /// declaration promises, and a structure that kept them would hold 1M entries.
    pub fn memory_stops_growing_under_start_stop_pairs_once_the_clock_passes_them<
        Q: TimerQueue<u64>,
    >(
        name: &str,
    ) {
        const PAIRS_PER_ROUND: u64 = 10_000;
        const SPREAD: u64 = 5_000;
        let mut queue = Q::new();
        let mut random = SmallRng::seed_from_u64(77);
        for value in 0..1_000 {
            queue.start(1_000_000 + random.next_u64() % 1_000_000, value);
        }
        let churn = |queue: &mut Q, random: &mut SmallRng, rounds: u64| {
            for _ in 0..rounds {
                for value in 0..PAIRS_PER_ROUND {
                    let deadline = queue.now() + 1 + random.next_u64() % SPREAD;
                    let id = queue.start(deadline, value);
                    assert_eq!(queue.stop(id), Some(value));
                }
                let past_them = queue.now() + SPREAD;
                let fired = advance(queue, past_them, name);
                assert!(fired.is_empty(), "{name}: a stopped timer fired: {fired:?}");
            }
        };
        churn(&mut queue, &mut random, 1);
        let before = live_bytes();
        churn(&mut queue, &mut random, 100);
        let after = live_bytes();
        const SLACK: isize = 4096;
        assert!(
            after <= before + SLACK,
            "{name}: live bytes grew from {before} to {after} over 1M start/stop pairs, the \
             clock moved past each 10,000"
        );
        assert_eq!(queue.len(), 1_000, "{name}");
    }

    pub fn memory_per_pending_timer_is_within_budget<Q: TimerQueue<u64>>(name: &str) {
        const COUNT: usize = 1 << 16;
        let empty_start = live_bytes();
        let empty = Q::new();
        let empty_bytes = live_bytes() - empty_start;
        drop(empty);

        let start = live_bytes();
        let mut queue = Q::with_capacity(COUNT);
        let mut random = SmallRng::seed_from_u64(99);
        for value in 0..COUNT as u64 {
            queue.start(random.next_u64() % (1 << 32), value);
        }
        let per_timer = (live_bytes() - start - empty_bytes) as f64 / COUNT as f64;
        eprintln!("{name}: {per_timer:.2} bytes per pending timer (measured, {COUNT} timers)");
        // Beyond the whole bytes of a budget, storage in segments (`impls/src/segmented.rs`)
        // keeps at most 32 bytes of headers per 4096 elements (a pointer per full segment, a
        // `Vec` header per spare one): under 0.01 bytes per timer per store.
        const SEGMENT_HEADERS: f64 = 0.05;
        if let Some(budget) = crate::memory_budget(name) {
            assert!(
                per_timer <= budget as f64 + SEGMENT_HEADERS,
                "{name}: {per_timer:.2} bytes per pending timer, budget {budget}"
            );
        }
        drop(queue);
    }

    pub fn advance_backwards_panics<Q: TimerQueue<u64>>() {
        let mut queue = Q::new();
        queue.advance(10, |_, _, _| {});
        queue.advance(9, |_, _, _| {});
    }
}
