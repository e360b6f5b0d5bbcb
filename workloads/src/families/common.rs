//! What the families share: the seeded generator, parameter checks with clear errors, a
//! guard that keeps every deadline far below the format's 2^63 limit, and (for the tests)
//! a replay through the reference model.

use super::{Emitter, GenError, GenSpec, Params};
use crate::Workload;
use crate::metadata::Metadata;
use crate::op::Op;
use rand::SeedableRng;
use rand::rngs::SmallRng;

/// No generated deadline or clock reaches this (2^62): half the format's limit, so a replay
/// that adds a little to a deadline can never overflow.
pub(crate) const CLOCK_GUARD: u64 = 1 << 62;

/// The largest `--timers` a family accepts: timer indices are kept as `u32`, and 2^32
/// timers would not fit in memory anyway.
pub(crate) const MAX_TIMERS: u64 = u32::MAX as u64;

/// The most operations a workload may have: 2^32 operations take about 100 GB in memory.
pub(crate) const MAX_OPS: u64 = 1 << 32;

/// The most operations a family reserves room for up front; beyond it the vector grows.
const MAX_RESERVED_OPS: u64 = 1 << 27;

/// The generator of one workload: the same seed gives the same numbers on a given platform.
pub(crate) fn seeded(spec: &GenSpec) -> SmallRng {
    SmallRng::seed_from_u64(spec.seed)
}

/// `--timers`, checked against [`MAX_TIMERS`] (`generate` already rejected 0).
pub(crate) fn timers(spec: &GenSpec, params: &Params<'_>) -> Result<u64, GenError> {
    if spec.timers > MAX_TIMERS {
        return Err(params.invalid(format!(
            "--timers {} is more than this family supports ({MAX_TIMERS})",
            spec.timers
        )));
    }
    Ok(spec.timers)
}

/// `--ops`, or `default` when it was not given; 0 is rejected, since every family's count
/// of steps, cycles or ticks needs at least one to make a workload of its shape.
pub(crate) fn ops_or(spec: &GenSpec, params: &Params<'_>, default: u64) -> Result<u64, GenError> {
    match spec.ops {
        Some(0) => Err(params.invalid("--ops must be at least 1")),
        Some(ops) => Ok(ops),
        None => Ok(default),
    }
}

/// An emitter with room for about `estimate` operations, or the error that says the
/// workload would be too large to hold in memory (more than [`MAX_OPS`]). The reservation
/// is capped, so that an overestimate does not take gigabytes that are never used.
pub(crate) fn emitter(params: &Params<'_>, estimate: u64) -> Result<Emitter, GenError> {
    if estimate > MAX_OPS {
        return Err(params.invalid(format!(
            "about {estimate} operations: more than {MAX_OPS} (about 100 GB in memory); \
             use fewer timers or operations"
        )));
    }
    Ok(Emitter::with_capacity(
        usize::try_from(estimate.min(MAX_RESERVED_OPS)).unwrap_or(usize::MAX),
    ))
}

/// A finite number in `[0, 1]`.
pub(crate) fn probability(params: &Params<'_>, name: &str) -> Result<f64, GenError> {
    let value: f64 = params.parse(name)?;
    if !(0.0..=1.0).contains(&value) {
        return Err(params.bad(name, "must be a probability in [0, 1]"));
    }
    Ok(value)
}

/// A finite number in `[min, max]`.
pub(crate) fn real_in(
    params: &Params<'_>,
    name: &str,
    min: f64,
    max: f64,
) -> Result<f64, GenError> {
    let value: f64 = params.parse(name)?;
    if !value.is_finite() || value < min || value > max {
        return Err(params.bad(name, format!("must be a number in [{min}, {max}]")));
    }
    Ok(value)
}

/// A finite number greater than 0 and at most `max`.
pub(crate) fn positive(params: &Params<'_>, name: &str, max: f64) -> Result<f64, GenError> {
    let value: f64 = params.parse(name)?;
    if !value.is_finite() || value <= 0.0 || value > max {
        return Err(params.bad(
            name,
            format!("must be a number greater than 0, at most {max}"),
        ));
    }
    Ok(value)
}

/// A whole number in `[min, max]`.
pub(crate) fn whole_in(
    params: &Params<'_>,
    name: &str,
    min: u64,
    max: u64,
) -> Result<u64, GenError> {
    let value: u64 = params.parse(name)?;
    if value < min || value > max {
        return Err(params.bad(name, format!("must be a whole number in [{min}, {max}]")));
    }
    Ok(value)
}

/// One of `choices`, by name.
pub(crate) fn choice(
    params: &Params<'_>,
    name: &str,
    choices: &[&'static str],
) -> Result<&'static str, GenError> {
    let text = params.text(name);
    choices
        .iter()
        .copied()
        .find(|&c| c == text)
        .ok_or_else(|| params.bad(name, format!("must be one of: {}", choices.join(", "))))
}

/// `deadline`, if it stays below [`CLOCK_GUARD`]; otherwise the error that says the
/// combination runs the clock too far.
pub(crate) fn guard(params: &Params<'_>, deadline: u64) -> Result<u64, GenError> {
    if deadline >= CLOCK_GUARD {
        return Err(params
            .invalid("a deadline would reach 2^62 ticks; use fewer operations or shorter delays"));
    }
    Ok(deadline)
}

/// A float tick count as a whole tick count, saturating at [`CLOCK_GUARD`] so that a
/// sample from a heavy tail fails the [`guard`] instead of wrapping.
pub(crate) fn ticks(value: f64) -> u64 {
    if value >= CLOCK_GUARD as f64 {
        CLOCK_GUARD
    } else if value > 0.0 {
        value as u64
    } else {
        0
    }
}

/// The workload a family returns: `@description` first, then its own metadata.
pub(crate) fn workload(description: String, extra: Vec<(&str, String)>, ops: Vec<Op>) -> Workload {
    let mut metadata = Metadata::new();
    metadata.push("description", description);
    for (key, value) in extra {
        metadata.push(key, value);
    }
    Workload { metadata, ops }
}

/// A min-priority queue for simulations whose clock never goes back: every key pushed is
/// at least the last key popped. It is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan
/// 1990): bucket `b` holds the keys whose highest bit differing from the last popped key is
/// bit `b - 1`, so an item only ever moves to lower buckets, a few times in all. At 10M
/// pending items it is several times faster than a binary heap, whose every pop misses the
/// cache about log2(n) times. Items with equal keys come out in a fixed (but not sorted)
/// order, which keeps generation deterministic.
pub(crate) struct MonotoneQueue<V> {
    last: u64,
    len: usize,
    buckets: Vec<Vec<(u64, V)>>,
    spare: Vec<(u64, V)>,
}

impl<V: Copy> MonotoneQueue<V> {
    /// An empty queue whose keys start at 0.
    pub(crate) fn new() -> Self {
        MonotoneQueue {
            last: 0,
            len: 0,
            buckets: (0..=64).map(|_| Vec::new()).collect(),
            spare: Vec::new(),
        }
    }

    /// Number of items.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn bucket(&self, key: u64) -> usize {
        64 - (key ^ self.last).leading_zeros() as usize
    }

    /// Adds `value` with `key`; `key` must not be less than the last key popped.
    pub(crate) fn push(&mut self, key: u64, value: V) {
        debug_assert!(
            key >= self.last,
            "{key} pushed after {} was popped",
            self.last
        );
        let bucket = self.bucket(key);
        self.buckets[bucket].push((key, value));
        self.len += 1;
    }

    /// Makes bucket 0 hold the items with the least key (and `last` that key), if any.
    fn settle(&mut self) -> bool {
        if !self.buckets[0].is_empty() {
            return true;
        }
        let Some(index) = (1..=64).find(|&b| !self.buckets[b].is_empty()) else {
            return false;
        };
        let mut items =
            std::mem::replace(&mut self.buckets[index], std::mem::take(&mut self.spare));
        self.last = items.iter().map(|&(key, _)| key).min().unwrap_or(self.last);
        for &(key, value) in &items {
            let bucket = self.bucket(key);
            self.buckets[bucket].push((key, value));
        }
        items.clear();
        self.spare = items;
        true
    }

    /// Removes an item with the least key.
    pub(crate) fn pop(&mut self) -> Option<(u64, V)> {
        if !self.settle() {
            return None;
        }
        self.len -= 1;
        self.buckets[0].pop()
    }

    /// Removes every item with the least key into `into`, returning that key.
    pub(crate) fn pop_all_least(&mut self, into: &mut Vec<V>) -> Option<u64> {
        if !self.settle() {
            return None;
        }
        self.len -= self.buckets[0].len();
        into.extend(self.buckets[0].drain(..).map(|(_, value)| value));
        Some(self.last)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Replays generated workloads through the reference model.

    use crate::Workload;
    use crate::families::{GenError, GenSpec, generate};
    use crate::op::Op;
    use crate::reference::{Expiry, ReferenceModel, Summary};

    /// A spec with `KEY=VALUE` parameters.
    pub(crate) fn spec(
        timers: u64,
        ops: Option<u64>,
        seed: u64,
        params: &[(&str, &str)],
    ) -> GenSpec {
        GenSpec {
            timers,
            ops,
            seed,
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// Generates, panicking with the error if the family refuses.
    pub(crate) fn make(family: &str, spec: &GenSpec) -> Workload {
        generate(family, spec).unwrap_or_else(|e| panic!("{family}: {e}"))
    }

    /// Generates, expecting an error (not a panic).
    pub(crate) fn refuse(family: &str, spec: &GenSpec) -> GenError {
        match generate(family, spec) {
            Ok(_) => panic!("{family} accepted {spec:?}"),
            Err(e) => e,
        }
    }

    /// Replays every operation through the model, calling `visit` after each with the
    /// operation, the model and the timers it fired; panics on the first invalid operation.
    pub(crate) fn replay_with(
        workload: &Workload,
        mut visit: impl FnMut(usize, Op, &ReferenceModel, &[Expiry]),
    ) -> Summary {
        let mut model = ReferenceModel::new();
        let mut fired = Vec::new();
        for (index, &op) in workload.ops.iter().enumerate() {
            fired.clear();
            model
                .apply(op, |expiry| fired.push(expiry))
                .unwrap_or_else(|e| panic!("operation {index} (`{op}`): {e}"));
            visit(index, op, &model, &fired);
        }
        model.summary()
    }

    /// Replays every operation through the model; panics on the first invalid operation.
    pub(crate) fn replay(workload: &Workload) -> Summary {
        replay_with(workload, |_, _, _, _| {})
    }

    /// A metadata value as a number.
    pub(crate) fn number(workload: &Workload, key: &str) -> u64 {
        workload
            .metadata
            .get(key)
            .unwrap_or_else(|| panic!("no @{key}"))
            .parse()
            .unwrap_or_else(|e| panic!("@{key}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::MonotoneQueue;
    use rand::rngs::SmallRng;
    use rand::{RngExt, SeedableRng};
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn the_monotone_queue_pops_in_key_order() {
        let mut rng = SmallRng::seed_from_u64(1);
        let mut queue = MonotoneQueue::new();
        let mut heap = BinaryHeap::new();
        let mut now = 0u64;
        for step in 0..50_000u32 {
            if rng.random_bool(0.55) || heap.is_empty() {
                let key = now + [0, 1, 7, 1000, 1 << 40][rng.random_range(0..5)];
                queue.push(key, step);
                heap.push(Reverse(key));
            } else if rng.random_bool(0.8) {
                let (key, _) = queue.pop().unwrap();
                assert_eq!(Some(Reverse(key)), heap.pop());
                now = key;
            } else {
                let mut batch = Vec::new();
                let key = queue.pop_all_least(&mut batch).unwrap();
                for _ in &batch {
                    assert_eq!(Some(Reverse(key)), heap.pop());
                }
                assert!(heap.peek().is_none_or(|&Reverse(next)| next > key));
                now = key;
            }
            assert_eq!(queue.len(), heap.len());
        }
    }
}
