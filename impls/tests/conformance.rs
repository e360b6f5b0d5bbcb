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
#[path = "conformance/far.rs"]
mod far;
#[path = "conformance/firing.rs"]
mod firing;
#[path = "conformance/handles.rs"]
mod handles;
#[path = "support/horizon.rs"]
mod horizon;
#[path = "conformance/memory.rs"]
mod memory;
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
        // A 32-byte entry, a 4-byte item in its slot's chunked array, a link word per 15
        // items (36.3), the chunks' blocks and the slots' partly filled chunks: the 40
        // bytes its header states as its bound.
        "dense-wheel" => Some(40),
        _ => Some(32),
    }
}

macro_rules! conformance_suite {
    ($($module:ident :: $ty:ident, $name:literal, $summary:literal;)*) => {
        $(
            conformance_suite!(@module $module, timerbench_impls::$module::$ty<u64>, $name);
        )*
    };
    (@module $module:ident, $queue:ty, $name:expr) => {
        #[allow(non_snake_case)]
        mod $module {
                type Queue = $queue;
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
    };
    (@checks $queue:ty, $name:expr; $($check:ident,)*) => {
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

    pub use crate::far::*;
    pub use crate::firing::*;
    pub use crate::handles::*;
    use crate::horizon::{Reach, WALK_MOVE_VISITS, WALK_TEST_VISITS};
    pub use crate::memory::*;
    pub use crate::restart::*;

    use std::cell::Cell;
    use timerbench_impls::{Tick, TimerId, TimerQueue};

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

    pub fn advance_backwards_panics<Q: TimerQueue<u64>>() {
        let mut queue = Q::new();
        queue.advance(10, |_, _, _| {});
        queue.advance(9, |_, _, _| {});
    }
}
