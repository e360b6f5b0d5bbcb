//! The fixed-costs pass: what one implementation costs with nothing to do, apart from the
//! workload. Two figures, each the median over rounds:
//!
//! - an idle advance: a one-tick `advance` with nothing due, on a queue holding one timer
//!   far away (so that no structure takes an empty-queue shortcut). For a peer this is the
//!   price of driving it through the contract per clock move (tokio-util's DelayQueue: a
//!   paused runtime's clock moved and the queue polled);
//! - a start/stop pair: `start` one timer 1,000 ticks out and `stop` it at once, beside the
//!   far one. For a peer it includes the adapter's handle map.
//!
//! A workload's ns/op beside these tells how much of it is the structure's real work. The
//! pass runs after the throughput pass, with allocation counting already off.

use crate::schema::FixedCosts;
use crate::stats::median;
use std::time::Instant;
use timerbench_impls::{EmptyTime, TimerQueue, Variant};

/// Calls per round.
const CALLS: u64 = 20_000;
/// Rounds; each figure is their median.
const ROUNDS: u32 = 7;
/// Where the far timer lies: within every declared range (the smallest is
/// tokio-util's, about 2^35 ticks).
const FAR: u64 = 1 << 30;

/// Measures `Q`'s fixed costs (see the module documentation).
pub(in crate::cmd::cell) fn fixed_costs<Q: TimerQueue<u64>>(variant: &Variant) -> FixedCosts {
    let mut queue: Q = variant.build(16);
    let far = match queue.empty_time() {
        // A structure that walks every tick must not be asked to walk to 2^30; one past
        // the rounds' ticks is as far for this pass.
        EmptyTime::Walked { .. } => CALLS * u64::from(ROUNDS) * 4,
        _ => FAR,
    };
    queue.start(far, u64::MAX);
    let mut advances = Vec::with_capacity(ROUNDS as usize);
    let mut pairs = Vec::with_capacity(ROUNDS as usize);
    let mut fired = 0u64;
    for _ in 0..ROUNDS {
        let clock = Instant::now();
        for _ in 0..CALLS {
            let to = queue.now() + 1;
            queue.advance(to, |_, _, _| fired += 1);
        }
        advances.push(clock.elapsed().as_nanos() as f64 / CALLS as f64);
        let clock = Instant::now();
        for value in 0..CALLS {
            let id = queue.start(queue.now() + 1_000, value);
            std::hint::black_box(queue.stop(id));
        }
        pairs.push(clock.elapsed().as_nanos() as f64 / CALLS as f64);
    }
    // Nothing was due: the far timer lies past every round's clock.
    assert_eq!(fired, 0, "an idle advance fired a timer");
    FixedCosts {
        idle_advance_ns: median(&advances),
        start_stop_ns: median(&pairs),
        calls: CALLS,
        rounds: ROUNDS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerbench_impls::binary_heap::BinaryHeapTimers;

    #[test]
    fn both_figures_are_measured_and_positive() {
        let variant = Variant::parse("binary-heap").unwrap();
        let costs = fixed_costs::<BinaryHeapTimers<u64>>(&variant);
        assert!(costs.idle_advance_ns > 0.0 && costs.start_stop_ns > 0.0);
        assert_eq!((costs.calls, costs.rounds), (CALLS, ROUNDS));
    }
}
