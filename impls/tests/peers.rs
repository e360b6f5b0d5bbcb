//! The outside peers against the contract, within each one's documented limits: random
//! operations against the reference model, stale handles, past-due deadlines, the
//! `next_deadline` bound, and each limit's panic. Tests are named
//! `<peer type>::<check>`, e.g. `TokioDelayQueue::matches_the_reference_on_random_operations`.
#![cfg(feature = "peers")]

#[path = "support/boundaries.rs"]
mod boundaries;
#[path = "peers/limits.rs"]
mod limits;

use timerbench_impls::for_each_peer;

macro_rules! peer_suite {
    ($($module:ident :: $ty:ident, $name:literal, $summary:literal;)*) => {
        $(
            #[allow(non_snake_case)]
            mod $ty {
                type Queue = timerbench_impls::peers::$module::$ty<u64>;
                peer_suite!(@checks Queue, $name;
                    matches_the_reference_on_random_operations,
                    stale_handles_leave_the_new_occupant_alone,
                    past_due_deadlines_fire_in_deadline_order_on_the_next_advance,
                    hundred_thousand_timers_all_fire_in_one_advance,
                    timers_fire_exactly_when_driven_tick_by_tick,
                    next_deadline_is_a_bound_reached_within_the_declared_rounds,
                );
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

for_each_peer!(peer_suite);

/// The farthest delay each peer is tested with: within every peer's limits. DelayQueue's
/// is the tightest: 2^36 − 1 ms past its wheel's clock, which lags `now` by up to the
/// distance to the earliest pending deadline, so 2^34 delays and 2^32 jumps stay within it.
const MAX_TESTED_DELAY: u64 = (1 << 34) - 2;

mod suite {
    use super::MAX_TESTED_DELAY;
    use crate::boundaries::BOUNDARY_DELAYS;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use timerbench_impls::reference::ReferenceQueue;
    use timerbench_impls::{Tick, TimerId, TimerQueue};

    /// What one `advance` fired, as `(deadline, value)`, after checking the order.
    fn advance<Q: TimerQueue<u64>>(queue: &mut Q, to: Tick, name: &str) -> Vec<(Tick, u64)> {
        let mut fired = Vec::new();
        queue.advance(to, |_, value, deadline| fired.push((deadline, value)));
        assert!(
            fired.is_sorted_by_key(|&(deadline, _)| deadline),
            "{name}: advance({to}) fired out of deadline order: {fired:?}"
        );
        assert!(
            fired.iter().all(|&(deadline, _)| deadline <= to),
            "{name}: advance({to}) fired early"
        );
        fired.sort_unstable();
        fired
    }

    fn delay(random: &mut SmallRng) -> u64 {
        match random.next_u64() % 6 {
            0 => random.next_u64() % 64,
            1 => random.next_u64() % 5_000,
            2 => random.next_u64() % 300_000,
            3 => BOUNDARY_DELAYS[(random.next_u64() % BOUNDARY_DELAYS.len() as u64) as usize]
                .min(MAX_TESTED_DELAY),
            4 => random.next_u64() % (1 << 30),
            _ => random.next_u64() % MAX_TESTED_DELAY,
        }
    }

    /// Thousands of random starts (some past due), stops (some stale), advances (short,
    /// long, zero) and sleeps to the next deadline, each checked against the reference.
    pub fn matches_the_reference_on_random_operations<Q: TimerQueue<u64>>(name: &str) {
        for seed in 0..std::env::var("PEERS_SEEDS").map_or(4, |s| s.parse().unwrap()) {
            let mut random = SmallRng::seed_from_u64(0x5eed + seed);
            let mut queue = Q::with_capacity(16);
            let mut model = ReferenceQueue::<u64>::new();
            // (peer handle, model handle, value), including stopped and fired ones.
            let mut handles: Vec<(TimerId, TimerId, u64)> = Vec::new();
            for step in 0..3_000u64 {
                match random.next_u64() % 10 {
                    0..=3 => {
                        let deadline = if random.next_u64() % 8 == 0 {
                            queue.now().saturating_sub(random.next_u64() % 1_000)
                        } else {
                            queue.now() + delay(&mut random)
                        };
                        if std::env::var("PEERS_TRACE").is_ok() {
                            eprintln!("s {deadline} (now {})", queue.now());
                        }
                        let id = queue.start(deadline, step);
                        handles.push((id, model.start(deadline, step), step));
                    }
                    4 if !handles.is_empty() => {
                        let pick = (random.next_u64() % handles.len() as u64) as usize;
                        let (id, model_id, _) = handles[pick];
                        assert_eq!(
                            queue.stop(id),
                            model.stop(model_id),
                            "{name}: seed {seed} step {step}: stop"
                        );
                    }
                    5 if !handles.is_empty() => {
                        // Restart, against the model's stop then start: earlier or later,
                        // of pending, fired and stopped timers alike.
                        let pick = (random.next_u64() % handles.len() as u64) as usize;
                        let (id, model_id, _) = handles[pick];
                        let deadline = queue.now() + delay(&mut random);
                        let expected = model.stop(model_id);
                        let model_id = model.start(deadline, step);
                        let (id, got) = queue.restart(id, deadline, step);
                        assert_eq!(got, expected, "{name}: seed {seed} step {step}: restart");
                        handles.push((id, model_id, step));
                    }
                    6 | 7 => {
                        let to = queue.now()
                            + match random.next_u64() % 4 {
                                0 => 0,
                                1 => random.next_u64() % 100,
                                2 => random.next_u64() % 100_000,
                                _ => random.next_u64() % (1 << 32),
                            };
                        if std::env::var("PEERS_TRACE").is_ok() {
                            eprintln!("a {to}");
                        }
                        assert_eq!(
                            advance(&mut queue, to, name),
                            advance(&mut model, to, "reference"),
                            "{name}: seed {seed} step {step}: advance({to})"
                        );
                    }
                    _ => {
                        // Sleep: advance(max(next_deadline, now)) until something fires.
                        let rounds = queue.next_deadline_steps();
                        for round in 0.. {
                            let bound = queue.next_deadline();
                            let exact = model.next_deadline();
                            assert_eq!(bound.is_some(), exact.is_some(), "{name}");
                            let (Some(bound), Some(exact)) = (bound, exact) else {
                                break;
                            };
                            assert!(bound <= exact, "{name}: next_deadline {bound} > {exact}");
                            let to = bound.max(queue.now());
                            let fired = advance(&mut queue, to, name);
                            assert_eq!(fired, advance(&mut model, to, "reference"), "{name}");
                            if !fired.is_empty() {
                                break;
                            }
                            assert!(
                                round + 1 < rounds,
                                "{name}: nothing fired after {rounds} rounds"
                            );
                        }
                    }
                }
                assert_eq!(queue.len(), model.len(), "{name}: seed {seed} step {step}");
                assert_eq!(queue.now(), model.now(), "{name}");
            }
            let end = queue.now() + MAX_TESTED_DELAY;
            assert_eq!(
                advance(&mut queue, end, name),
                advance(&mut model, end, "reference")
            );
            assert!(queue.is_empty(), "{name}");
        }
    }

    pub fn stale_handles_leave_the_new_occupant_alone<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::new();
        for round in 0..100u64 {
            let old = queue.start(queue.now() + 10, round);
            assert_eq!(queue.stop(old), Some(round), "{name}");
            let new = queue.start(queue.now() + 20, round + 1000);
            assert_eq!(
                queue.stop(old),
                None,
                "{name}: a stale handle stopped a timer"
            );
            assert_eq!(queue.len(), 1, "{name}");
            let to = queue.now() + 20;
            let fired = advance(&mut queue, to, name);
            assert_eq!(fired, [(queue.now(), round + 1000)], "{name}");
            assert_eq!(queue.stop(new), None, "{name}: stop of a fired timer");
            assert_eq!(queue.stop(old), None, "{name}");
        }
        assert_eq!(
            queue.stop(TimerId::from_parts(12345, 7)),
            None,
            "{name}: a forged handle"
        );
    }

    pub fn past_due_deadlines_fire_in_deadline_order_on_the_next_advance<Q: TimerQueue<u64>>(
        name: &str,
    ) {
        let mut queue = Q::new();
        advance(&mut queue, 100_000, name);
        let mut expected = Vec::new();
        // Past deadlines in scrambled start order, the present, and near future ones.
        for (value, deadline) in [
            90_000u64, 0, 100_000, 50_000, 99_999, 1, 70_000, 100_001, 100_064, 99_000,
        ]
        .into_iter()
        .enumerate()
        {
            queue.start(deadline, value as u64);
            if deadline <= 100_000 {
                expected.push((deadline, value as u64));
            }
        }
        let stopped = queue.start(5, 99);
        assert_eq!(queue.stop(stopped), Some(99), "{name}");
        expected.sort_unstable();
        assert_eq!(queue.next_deadline(), Some(0), "{name}: overdue bound");
        let mut fired = Vec::new();
        queue.advance(100_000, |_, value, deadline| fired.push((deadline, value)));
        let deadlines: Vec<_> = fired.iter().map(|&(d, _)| d).collect();
        assert!(
            deadlines.is_sorted(),
            "{name}: past-due timers fired out of deadline order: {deadlines:?}"
        );
        fired.sort_unstable();
        assert_eq!(fired, expected, "{name}");
        assert_eq!(
            advance(&mut queue, 100_064, name),
            [(100_001, 7), (100_064, 8)]
        );
    }

    /// The DelayQueue gotcha: a drain that stops at the first `Pending` delivers a few
    /// hundred of these, not all of them.
    pub fn hundred_thousand_timers_all_fire_in_one_advance<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::with_capacity(100_000);
        let mut random = SmallRng::seed_from_u64(7);
        for value in 0..100_000u64 {
            queue.start(1 + random.next_u64() % 60_000, value);
        }
        queue.start(60_001, 100_000);
        let fired = advance(&mut queue, 60_000, name);
        assert_eq!(fired.len(), 100_000, "{name}: under-delivery");
        assert_eq!(queue.len(), 1, "{name}");
        // The same on one deadline.
        for value in 0..100_000u64 {
            queue.start(70_000, value);
        }
        let fired = advance(&mut queue, 70_000, name);
        assert_eq!(
            fired.len(),
            100_001,
            "{name}: under-delivery on one deadline"
        );
    }

    /// Many timers per tick, the clock moved one tick at a time: each fires in the advance
    /// that reaches its deadline, none late.
    pub fn timers_fire_exactly_when_driven_tick_by_tick<Q: TimerQueue<u64>>(name: &str) {
        let mut queue = Q::with_capacity(50_000);
        let mut random = SmallRng::seed_from_u64(8);
        for value in 0..50_000u64 {
            let delay = match value % 3 {
                0 => 1 + random.next_u64() % 100,
                1 => 1 + random.next_u64() % 5_000,
                _ => 4_000 + random.next_u64() % 200,
            };
            queue.start(delay, value);
        }
        let mut total = 0;
        for tick in 1..=5_000 {
            for (deadline, _) in advance(&mut queue, tick, name) {
                assert_eq!(deadline, tick, "{name}: fired late");
                total += 1;
            }
        }
        assert_eq!(total, 50_000, "{name}");
    }

    /// Few timers far apart (wheel levels to cascade), stopped earliest-first sometimes:
    /// `next_deadline` stays a lower bound and a sleep needs at most the declared rounds.
    pub fn next_deadline_is_a_bound_reached_within_the_declared_rounds<Q: TimerQueue<u64>>(
        name: &str,
    ) {
        let mut queue = Q::new();
        let steps = queue.next_deadline_steps();
        let mut random = SmallRng::seed_from_u64(9);
        let mut pending: Vec<(TimerId, u64)> = Vec::new();
        let mut most_rounds = 0;
        for round in 0..300 {
            for _ in 0..2 {
                let deadline = queue.now() + 1 + delay(&mut random);
                pending.push((queue.start(deadline, deadline), deadline));
            }
            if round % 3 == 0 {
                pending.sort_by_key(|&(_, deadline)| deadline);
                let (id, deadline) = pending.remove(0);
                assert_eq!(queue.stop(id), Some(deadline), "{name}");
            }
            let earliest = pending.iter().map(|&(_, d)| d).min().expect("pending");
            let mut rounds = 0;
            loop {
                let bound = queue.next_deadline().expect("pending");
                assert!(bound <= earliest, "{name}: bound {bound} > {earliest}");
                let to = bound.max(queue.now());
                let fired = advance(&mut queue, to, name);
                rounds += 1;
                if let Some(&(first, _)) = fired.first() {
                    assert_eq!(first, earliest, "{name}");
                    pending.retain(|&(_, d)| d > queue.now());
                    break;
                }
                assert!(rounds < steps, "{name}: more than {steps} rounds");
            }
            most_rounds = most_rounds.max(rounds);
        }
        eprintln!("{name}: at most {most_rounds} rounds of {steps} declared");
    }
}

mod registry {
    use timerbench_impls::registry::{self, IMPLEMENTATIONS, PEERS, is_peer};
    use timerbench_impls::{QueueVisitor, TimerQueue, Variant};

    #[test]
    fn peers_are_registered_apart_from_the_implementations() {
        assert!(IMPLEMENTATIONS.iter().all(|i| !i.peer));
        let exact: Vec<bool> = IMPLEMENTATIONS
            .iter()
            .map(|i| Variant::of(i).declarations().precision.is_exact())
            .collect();
        let first_approximate = exact.iter().position(|e| !e).expect("linux-wheel");
        assert!(
            exact[first_approximate..].iter().all(|e| !e),
            "approximate ones last: {exact:?}"
        );
        assert!(
            IMPLEMENTATIONS[first_approximate..]
                .iter()
                .any(|i| i.name == "linux-wheel")
        );
        assert!(!IMPLEMENTATIONS.iter().any(|i| i.name == "floor"), "never");
        let names: Vec<_> = PEERS.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "tokio-delay-queue",
                "tokio-sleep",
                "hhwt",
                "std-heap-lazy",
                "dary-heap-lazy"
            ]
        );
        assert!(PEERS.iter().all(|p| p.peer));
        assert!(is_peer("hhwt"));
        assert!(!is_peer("binary-heap"));
        assert!(!is_peer("hashed-wheel:slots=64"));
        assert!(!is_peer("nonesuch"));
        let all: Vec<_> = registry::all().map(|i| i.name).collect();
        let own = IMPLEMENTATIONS.len();
        assert_eq!(all.len(), own + PEERS.len());
        assert_eq!(
            all[..own],
            IMPLEMENTATIONS.iter().map(|i| i.name).collect::<Vec<_>>()[..]
        );
        assert_eq!(registry::find("std-heap-lazy").map(|i| i.peer), Some(true));
    }

    /// Starts one timer, moves the clock well past it, and reports the variant's label,
    /// the firings and the queue's parameter-dependent shape where it has one.
    struct FireOne;

    impl QueueVisitor for FireOne {
        type Output = (String, usize);
        fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output {
            let mut queue: Q = variant.build(4);
            queue.start(5, 1);
            let mut fired = 0;
            // Past any approximate wheel's rounding of a 5-tick delay.
            queue.advance(1_000, |_, _, _| fired += 1);
            (variant.label().to_string(), fired)
        }
    }

    #[test]
    fn visit_runs_implementations_and_peers() {
        for implementation in registry::all() {
            let variant = Variant::of(implementation);
            assert_eq!(
                registry::visit(&variant, FireOne),
                (implementation.name.to_string(), 1)
            );
        }
    }

    #[test]
    fn a_variant_is_built_with_its_parameters() {
        use timerbench_impls::hashed_wheel::HashedWheel;
        use timerbench_impls::kafka_wheel::KafkaWheel;
        let variant = Variant::parse("hashed-wheel:slots=65536").unwrap();
        assert_eq!(variant.label(), "hashed-wheel:slots=65536");
        assert_eq!(variant.build::<HashedWheel<u64>>(0).slot_count(), 65_536);
        assert_eq!(registry::visit(&variant, FireOne).1, 1);
        let kafka = Variant::parse("kafka-wheel:slots=64").unwrap();
        assert_eq!(kafka.build::<KafkaWheel<u64>>(0).wheel_size(), 64);
        let defaults = Variant::parse("hashed-wheel").unwrap();
        assert_eq!(defaults.build::<HashedWheel<u64>>(0).slot_count(), 4096);
        let eight = Variant::parse("linux-wheel:levels=8").unwrap();
        assert_eq!(eight.parameters.get("levels"), 8);
    }

    #[test]
    fn a_bad_variant_says_which_part_is_wrong() {
        let error = |text: &str| Variant::parse(text).unwrap_err();
        assert!(error("hashed-wheels").starts_with("unknown implementation `hashed-wheels`"));
        assert_eq!(
            error("hashed-wheel:slot=4096"),
            "`hashed-wheel:slot=4096`: unknown parameter `slot` (parameters: slots)"
        );
        assert_eq!(
            error("hashed-wheel:slots=1000"),
            "`hashed-wheel:slots=1000`: slots=1000: slots must be a power of two from 2 to 2^24"
        );
        assert!(error("hashed-wheel:slots=4k").contains("must be a whole number"));
        assert!(error("hashed-wheel:slots").contains("key=value"));
        assert!(error("hashed-wheel:slots=64,slots=128").contains("twice"));
        assert!(error("btree:slots=64").contains("takes none"));
        assert!(error("linux-wheel:levels=10").contains("8 or 9"));
    }
}
