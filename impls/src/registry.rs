//! The implementations by name, for the command line, the results and the report.
//!
//! The list itself is [`for_each_implementation!`](crate::for_each_implementation): one
//! line per implementation. Everything that needs "all implementations" (this runtime
//! list, the conformance suite, the differential test) expands from it, so adding an
//! implementation means writing its file and adding its line there.
//!
//! The outside peers (`src/peers/`, feature `peers`) are listed the same way by
//! [`for_each_peer!`](crate::for_each_peer) and kept apart: [`IMPLEMENTATIONS`] is the
//! project's own, [`PEERS`] the peers, [`all`] both in that order. [`find`] knows both;
//! [`is_peer`] tells them apart.
//!
//! A [`Variant`] is an implementation with values for its parameters, named
//! `NAME[:key=value,...]` (`hashed-wheel:slots=65536`); [`visit`] runs code on it with its
//! concrete type, and [`Variant::build`] makes its queues.

use crate::contract::TimerQueue;
use crate::declaration::{
    EmptyTime, NaturalPeriod, Parameter, Parameters, Precision, Range, Release, SuiteLimit,
};
use std::fmt;

/// One registered implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Implementation {
    /// The name used on the command line and in results, e.g. `hierarchical-wheel`.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Whether it is an outside peer (another crate behind an adapter) rather than one of
    /// the project's implementations.
    pub peer: bool,
    /// The parameters it takes, with their defaults.
    pub parameters: &'static [Parameter],
    /// The largest size a suite runs it at, if any ([`SuiteLimit`]).
    pub suite_limit: Option<SuiteLimit>,
}

/// Something to do with one implementation variant, generic over its concrete type so that
/// the queue's operations are monomorphised (no dynamic dispatch in a measured loop).
pub trait QueueVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the implementation's type; `variant.build::<Q>(capacity)` builds one
    /// with the variant's parameters.
    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output;
}

macro_rules! registry_group {
    ($list:ident, $try_visit:ident, $peer:literal, $path:path;
     $($module:ident :: $ty:ident, $name:literal, $summary:literal;)*) => {
        const $list: &[Implementation] = &[
            $(Implementation {
                name: $name,
                summary: $summary,
                peer: $peer,
                parameters: {
                    use $path as group;
                    <group::$module::$ty<u64> as crate::contract::TimerQueue<u64>>::PARAMETERS
                },
                suite_limit: {
                    use $path as group;
                    <group::$module::$ty<u64> as crate::contract::TimerQueue<u64>>::SUITE_LIMIT
                },
            },)*
        ];

        /// Runs `visitor` with the concrete type of `variant` if it is in this group,
        /// else hands the visitor back.
        #[allow(unused_variables)]
        fn $try_visit<R: QueueVisitor>(variant: &Variant, visitor: R) -> Result<R::Output, R> {
            $(
                if variant.implementation.name == $name {
                    use $path as group;
                    return Ok(visitor.visit::<group::$module::$ty<u64>>(variant));
                }
            )*
            Err(visitor)
        }
    };
}

macro_rules! exact_group {
    ($($line:tt)*) => { registry_group!(EXACT, visit_exact, false, crate; $($line)*); };
}
macro_rules! approximate_group {
    ($($line:tt)*) => { registry_group!(APPROXIMATE, visit_approximate, false, crate; $($line)*); };
}
crate::for_each_implementation!(exact_group);
crate::for_each_approximate!(approximate_group);

/// Every implementation of the project, in registry order: the exact ones, then the
/// approximate ones.
pub const IMPLEMENTATIONS: &[Implementation] =
    &concatenate::<{ EXACT.len() + APPROXIMATE.len() }>();

/// `EXACT` then `APPROXIMATE` in one array (a `const fn` loop: slices cannot be joined in
/// a constant otherwise).
const fn concatenate<const N: usize>() -> [Implementation; N] {
    let mut all = [EXACT[0]; N];
    let mut index = 0;
    while index < N {
        all[index] = if index < EXACT.len() {
            EXACT[index]
        } else {
            APPROXIMATE[index - EXACT.len()]
        };
        index += 1;
    }
    all
}

/// The floor ([`crate::floor::Floor`]): the bookkeeping of a queue without the queue, a
/// yardstick, never verified. Not among the implementations ([`all`] leaves it out);
/// [`Variant::parse`] knows it, so that a run asked for it (`--floor`) can name it.
pub static FLOOR: Implementation = Implementation {
    name: "floor",
    summary: "not a queue: an arena slot per start, freed on stop and on firing (what fires \
              read from a list recorded before); the yardstick every figure can be \
              divided by, never verified",
    peer: false,
    parameters: &[],
    suite_limit: None,
};

/// Whether `name` (a label) is the floor.
pub fn is_floor(name: &str) -> bool {
    name == FLOOR.name
}

/// Runs `visitor` with the concrete type of `variant`'s implementation.
pub fn visit<R: QueueVisitor>(variant: &Variant, visitor: R) -> R::Output {
    if is_floor(variant.implementation.name) {
        return visitor.visit::<crate::floor::Floor<u64>>(variant);
    }
    let visitor = match visit_exact(variant, visitor) {
        Ok(output) => return output,
        Err(visitor) => visitor,
    };
    let visitor = match visit_approximate(variant, visitor) {
        Ok(output) => return output,
        Err(visitor) => visitor,
    };
    match visit_peers(variant, visitor) {
        Ok(output) => output,
        Err(_) => unreachable!("a Variant names a registered implementation"),
    }
}

#[cfg(feature = "peers")]
macro_rules! peer_group {
    ($($line:tt)*) => { registry_group!(PEER_LIST, visit_peers, true, crate::peers; $($line)*); };
}
#[cfg(not(feature = "peers"))]
macro_rules! peer_group {
    () => {
        registry_group!(PEER_LIST, visit_peers, true, crate;);
    };
}
crate::for_each_peer!(peer_group);

/// Every outside peer, in registry order (empty without the `peers` feature).
pub const PEERS: &[Implementation] = PEER_LIST;

/// The implementations, then the peers: everything `visit` can run, in the order a
/// command line or a report lists them.
pub fn all() -> impl Iterator<Item = &'static Implementation> + Clone {
    IMPLEMENTATIONS.iter().chain(PEERS)
}

/// The implementation or peer called `name` (a plain name, without parameters).
pub fn find(name: &str) -> Option<&'static Implementation> {
    all().find(|i| i.name == name)
}

/// Whether `name` (or the implementation of a variant label) is an outside peer.
pub fn is_peer(name: &str) -> bool {
    let base = name.split(':').next().unwrap_or(name);
    PEERS.iter().any(|p| p.name == base)
}

/// An implementation with a value for each of its parameters: what `--impl` names.
///
/// Its label is the implementation's name, then the parameters that were given, in
/// declaration order: `hashed-wheel`, `hashed-wheel:slots=65536`,
/// `linux-wheel:levels=8`. A parameter given at its default value stays in the label, so
/// that every point of a sweep is named the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The implementation.
    pub implementation: &'static Implementation,
    /// Every parameter's value, defaults included.
    pub parameters: Parameters,
    label: String,
}

impl Variant {
    /// The implementation with its defaults.
    pub fn of(implementation: &'static Implementation) -> Self {
        Variant {
            implementation,
            parameters: Parameters::defaults(implementation.parameters),
            label: implementation.name.to_string(),
        }
    }

    /// Parses `NAME` or `NAME:key=value,key=value`, checking the name, each key and each
    /// value; the error says which part is wrong and what would be accepted.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, settings) = match text.split_once(':') {
            Some((name, settings)) => (name, Some(settings)),
            None => (text, None),
        };
        let floor = is_floor(name).then_some(&FLOOR);
        let implementation = find(name).or(floor).ok_or_else(|| {
            let known: Vec<&str> = all().map(|i| i.name).collect();
            format!(
                "unknown implementation `{name}` (known: {})",
                known.join(", ")
            )
        })?;
        let mut variant = Variant::of(implementation);
        let Some(settings) = settings else {
            return Ok(variant);
        };
        let mut given: Vec<&str> = Vec::new();
        for setting in settings.split(',') {
            let (key, value) = setting.split_once('=').ok_or_else(|| {
                format!("`{setting}` in `{text}`: parameters are written key=value")
            })?;
            let (key, value) = (key.trim(), value.trim());
            if given.contains(&key) {
                return Err(format!("`{text}` gives `{key}` twice"));
            }
            let number: u64 = value.parse().map_err(|_| {
                format!("{key}={value} in `{text}`: the value must be a whole number")
            })?;
            variant
                .parameters
                .set(key, number)
                .map_err(|why| format!("`{text}`: {why}"))?;
            given.push(key);
        }
        let shown: Vec<String> = variant
            .parameters
            .iter()
            .filter(|(name, _)| given.contains(name))
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        variant.label = format!("{name}:{}", shown.join(","));
        Ok(variant)
    }

    /// What an empty queue of this variant declares of itself.
    pub fn declarations(&self) -> Declarations {
        struct Probe;
        impl QueueVisitor for Probe {
            type Output = Declarations;
            fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output {
                let probe: Q = variant.build(0);
                Declarations {
                    precision: probe.precision(),
                    range: probe.range(),
                    empty_time: probe.empty_time(),
                    release: probe.release(),
                    natural_period: probe.natural_period(),
                }
            }
        }
        visit(self, Probe)
    }

    /// The name it goes by in results and reports.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// A queue of this variant with room for `capacity` timers. `Q` must be the type
    /// [`visit`] gave for this variant.
    pub fn build<Q: TimerQueue<u64>>(&self, capacity: usize) -> Q {
        Q::with_parameters(capacity, &self.parameters)
    }
}

/// What one variant declares of itself ([`Variant::declarations`]), read from an empty
/// queue of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declarations {
    /// Exact, or approximate within a bound.
    pub precision: Precision,
    /// The delays and ticks it holds.
    pub range: Range,
    /// What a clock move over empty time costs it.
    pub empty_time: EmptyTime,
    /// When a stop frees the timer's entry.
    pub release: Release,
    /// The period its clock runs at when driven by a fixed tick.
    pub natural_period: NaturalPeriod,
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

impl std::str::FromStr for Variant {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Variant::parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The periods `timerbench-live`'s `natural_period_ns` gave before the structures
    /// declared theirs (its table of names, copied by running it on each variant below at
    /// 1 ns, 1 µs and 1 ms per tick): the declarations must give the same.
    const PERIODS_BEFORE: &[(&str, [u64; 3])] = &[
        ("btree", [1, 1_000, 1_000_000]),
        ("binary-heap", [1, 1_000, 1_000_000]),
        ("quad-heap", [1, 1_000, 1_000_000]),
        ("skiplist", [1, 1_000, 1_000_000]),
        ("hashed-wheel", [1, 1_000, 1_000_000]),
        ("hierarchical-wheel", [1, 1_000, 1_000_000]),
        ("incremental-wheel", [1, 1_000, 1_000_000]),
        ("dense-wheel", [1, 1_000, 1_000_000]),
        ("kafka-wheel", [1, 1_000, 1_000_000]),
        ("timeout-lists", [1, 1_000, 1_000_000]),
        ("polling-scan", [1, 1_000, 1_000_000]),
        ("delay-queue-purge", [1, 1_000, 1_000_000]),
        ("skynet-wheel", [10_000_000, 10_000_000, 10_000_000]),
        ("linux-wheel", [4_000_000, 4_000_000, 4_000_000]),
        ("netty-wheel", [1, 1_000, 1_000_000]),
        ("ring-buckets", [1_000, 1_000_000, 1_000_000_000]),
        ("tokio-delay-queue", [1, 1_000, 1_000_000]),
        ("tokio-sleep", [1, 1_000, 1_000_000]),
        ("hhwt", [1, 1_000, 1_000_000]),
        ("std-heap-lazy", [1, 1_000, 1_000_000]),
        ("dary-heap-lazy", [1, 1_000, 1_000_000]),
        ("netty-wheel:tick=8", [8, 8_000, 8_000_000]),
        ("netty-wheel:tick=1000", [1_000, 1_000_000, 1_000_000_000]),
        ("ring-buckets:width=1", [1, 1_000, 1_000_000]),
        ("ring-buckets:width=250", [250, 250_000, 250_000_000]),
        ("linux-wheel:levels=8", [4_000_000, 4_000_000, 4_000_000]),
    ];

    #[test]
    fn natural_periods_are_those_live_used_to_name() {
        for &(label, periods) in PERIODS_BEFORE {
            let variant = Variant::parse(label).unwrap();
            let declared = variant.declarations().natural_period;
            for (tick_ns, before) in [1, 1_000, 1_000_000].into_iter().zip(periods) {
                assert_eq!(
                    declared.ns(tick_ns),
                    before,
                    "{label} at {tick_ns} ns per tick"
                );
            }
        }
    }

    #[test]
    fn the_table_covers_every_implementation() {
        for implementation in all() {
            assert!(
                PERIODS_BEFORE
                    .iter()
                    .any(|(label, _)| *label == implementation.name),
                "{} has no row",
                implementation.name
            );
        }
    }
}
