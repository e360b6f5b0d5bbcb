//! What a structure declares about itself besides its operations: its parameters, its
//! precision and its range. The harness reads these to build a variant
//! (`--impl hashed-wheel:slots=65536`), to choose how a replay is verified (exactly, or
//! within a declared bound), and to refuse a workload the structure cannot hold before it
//! runs rather than let it panic.
//!
//! | declaration | where | default (an exact structure with no parameters) |
//! | --- | --- | --- |
//! | parameters | [`TimerQueue::PARAMETERS`](crate::TimerQueue::PARAMETERS), built by [`TimerQueue::with_parameters`](crate::TimerQueue::with_parameters) | none |
//! | precision | [`TimerQueue::precision`](crate::TimerQueue::precision) | [`Precision::Exact`] |
//! | the window of one timer | [`TimerQueue::window`](crate::TimerQueue::window) | [`Window::EXACT`] |
//! | range | [`TimerQueue::range`](crate::TimerQueue::range) | [`Range::ALL`] |
//! | what empty time costs | [`TimerQueue::empty_time`](crate::TimerQueue::empty_time) | [`EmptyTime::Skipped`] |
//! | when a stop frees its entry | [`TimerQueue::release`](crate::TimerQueue::release) | [`Release::AtOnce`] |
//! | the largest suite size | [`TimerQueue::SUITE_LIMIT`](crate::TimerQueue::SUITE_LIMIT) | none |
//!
//! Parameter values are unsigned integers: every parameter studied here is a count or a
//! width (slots, levels, ticks).

use crate::contract::Tick;
use std::fmt;

/// One parameter a structure takes.
#[derive(Clone, Copy)]
pub struct Parameter {
    /// The key on the command line, e.g. `slots`.
    pub name: &'static str,
    /// The value when none is given.
    pub default: u64,
    /// What it sets, in one line.
    pub about: &'static str,
    /// The values it accepts, in words, e.g. `a power of two from 2 to 2^24`.
    pub accepts: &'static str,
    /// Whether `value` is accepted.
    pub valid: fn(u64) -> bool,
}

impl fmt::Debug for Parameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={} ({})", self.name, self.default, self.accepts)
    }
}

impl PartialEq for Parameter {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.default == other.default
    }
}

impl Eq for Parameter {}

/// Whether `value` is a power of two in `min..=max` (both powers of two).
pub const fn power_of_two_in(value: u64, min: u64, max: u64) -> bool {
    value.is_power_of_two() && value >= min && value <= max
}

/// Every parameter of one structure with its value: the defaults, and what a variant
/// overrides. Built by [`Parameters::defaults`] and [`Parameters::set`], which checks the
/// key and the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameters {
    declared: &'static [Parameter],
    values: Vec<u64>,
}

impl Parameters {
    /// The defaults of `declared`.
    pub fn defaults(declared: &'static [Parameter]) -> Self {
        Parameters {
            declared,
            values: declared.iter().map(|p| p.default).collect(),
        }
    }

    /// Sets `name` to `value`, or says why not (an unknown key, a refused value).
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), String> {
        let Some(index) = self.declared.iter().position(|p| p.name == name) else {
            return Err(if self.declared.is_empty() {
                format!("unknown parameter `{name}`: this implementation takes none")
            } else {
                format!(
                    "unknown parameter `{name}` (parameters: {})",
                    self.names().join(", ")
                )
            });
        };
        let parameter = &self.declared[index];
        if !(parameter.valid)(value) {
            return Err(format!(
                "{name}={value}: {name} must be {}",
                parameter.accepts
            ));
        }
        self.values[index] = value;
        Ok(())
    }

    /// The value of `name`.
    ///
    /// # Panics
    ///
    /// If the structure does not declare `name`: a bug in that structure's file.
    pub fn get(&self, name: &str) -> u64 {
        let index = self
            .declared
            .iter()
            .position(|p| p.name == name)
            .unwrap_or_else(|| panic!("parameter `{name}` is not declared"));
        self.values[index]
    }

    /// `(name, value)` in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.declared
            .iter()
            .zip(&self.values)
            .map(|(p, &v)| (p.name, v))
    }

    fn names(&self) -> Vec<&'static str> {
        self.declared.iter().map(|p| p.name).collect()
    }
}

/// Whether a structure fires every timer on the first clock move that reaches its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// Exactly: on the first `advance` whose `to >= deadline`, and within one `advance` in
    /// non-decreasing deadline order. Verified by comparing the whole expiry log with the
    /// reference model's.
    Exact,
    /// Within a declared window per timer ([`Window`]), with the bound in words. Verified
    /// in lockstep with the reference model: the same timers fire, none before the
    /// reference unless its window allows it, none after its bound. Order within one
    /// `advance` is not promised.
    Approximate(&'static str),
}

impl Precision {
    /// Whether it is [`Precision::Exact`].
    pub fn is_exact(self) -> bool {
        self == Precision::Exact
    }

    /// `exact`, or `approximate: ` and the bound.
    pub fn describe(self) -> String {
        match self {
            Precision::Exact => "exact".to_string(),
            Precision::Approximate(bound) => format!("approximate: {bound}"),
        }
    }
}

/// When one timer may fire, fixed when it is started (from its deadline and the clock
/// then).
///
/// Its due move is the first clock move whose end reaches `max(deadline, now at start)`:
/// where an exact structure fires it. It may fire on any later move up to the first one
/// whose end reaches `max(deadline, now at start) + late`, and never before its due move
/// unless `early` says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Ticks it may fire after its deadline (0: exact).
    pub late: Tick,
    /// Whether it may fire before its deadline: the structure clamps it to its range, as
    /// Linux's wheel does past its cut-off, and documents so. Such firings are counted
    /// apart, never hidden.
    pub early: bool,
}

impl Window {
    /// An exact timer's window.
    pub const EXACT: Window = Window {
        late: 0,
        early: false,
    };
}

/// The deadlines a structure can hold. A workload that asks for more is refused before it
/// runs (one message naming the limit and the first line past it), instead of reaching a
/// panic or a wrong firing inside the structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The largest delay (`deadline - now` at a start) accepted.
    pub max_delay: Tick,
    /// The largest deadline, and the largest clock, accepted.
    pub max_tick: Tick,
    /// The largest clock accepted, when less than `max_tick`: a structure that walks every
    /// bucket ([`EmptyTime::Walked`]) holds any deadline, but moving its clock to tick
    /// 10^12 would take hours ([`Range::walked`]).
    pub max_clock: Tick,
    /// Why, in a few words (e.g. `DelayQueue's six 64-slot levels at 1 ms`).
    pub why: &'static str,
}

/// The bucket visits a workload may ask of a walking structure: 2^28 (about 2.7 × 10^8),
/// a second or so per replay here. The standard suite's longest walk, `sparse` at 10k
/// timers, is about 1.5 × 10^8 ticks; `workloads/examples/advance.tw`'s jump of 10^12
/// ticks is refused.
pub const WALK_BUDGET: Tick = 1 << 28;

impl Range {
    /// All of `u64`: what the contract asks of every structure.
    pub const ALL: Range = Range {
        max_delay: Tick::MAX,
        max_tick: Tick::MAX,
        max_clock: Tick::MAX,
        why: "",
    };

    /// The range of a structure that visits a bucket per `step` ticks of every clock move:
    /// every deadline, but clocks only up to [`WALK_BUDGET`] visits.
    pub const fn walked(step: Tick, why: &'static str) -> Range {
        Range {
            max_delay: Tick::MAX,
            max_tick: Tick::MAX,
            max_clock: WALK_BUDGET.saturating_mul(step),
            why,
        }
    }

    /// The largest clock accepted: the smaller of `max_tick` and `max_clock`.
    pub fn clock_limit(&self) -> Tick {
        self.max_tick.min(self.max_clock)
    }

    /// Whether this is all of `u64`.
    pub fn is_all(&self) -> bool {
        self.max_delay == Tick::MAX && self.max_tick == Tick::MAX && self.max_clock == Tick::MAX
    }
}

/// What a clock move costs when little or nothing is due: the property the `sparse`
/// workloads were made to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyTime {
    /// Work follows the timers handled, not the ticks passed: a move over empty time
    /// costs a few structural steps (heaps, trees, wheels with an occupancy bitmap or a
    /// queue of buckets).
    Skipped,
    /// A move visits one bucket per `step` ticks it covers, due or not (Netty's worker,
    /// skynet's `timer_update`, a ring's clock hand): advancing by N costs about N / `step`
    /// steps. Tests move such a structure's clock by at most a few million ticks at once.
    Walked {
        /// Ticks per bucket visit.
        step: Tick,
    },
    /// A move visits every pending timer once, whatever span it covers (a polling scan).
    Scanned,
}

impl EmptyTime {
    /// `skipped`, `walked, 1 bucket per N ticks` or `scanned`.
    pub fn describe(self) -> String {
        match self {
            EmptyTime::Skipped => "skipped".to_string(),
            EmptyTime::Walked { step: 1 } => "walked, a bucket per tick".to_string(),
            EmptyTime::Walked { step } => format!("walked, a bucket per {step} ticks"),
            EmptyTime::Scanned => "scanned: every pending timer per clock move".to_string(),
        }
    }
}

/// When a stopped timer's entry is freed. The contract asks that `stop` return the value
/// at once and that the timer never fire; some deployed structures keep the dead entry
/// until later (skynet has no cancel; Netty queues cancellations for its worker; Kafka's
/// old purgatory purges in batches), and its memory is counted until then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// The entry is free for reuse when `stop` returns.
    AtOnce,
    /// Later, as the words say (e.g. `when its slot comes due`); the memory stays bounded
    /// once the clock has moved past every stopped timer's deadline.
    Later(&'static str),
}

/// The largest size (`--timers`) at which a structure runs when a suite chooses the sizes:
/// for structures whose cost grows with ticks or timers so that the suite's largest cells
/// would take minutes. The run records the cells it leaves out and why; an explicit
/// `--timers` still runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuiteLimit {
    /// The largest `--timers` run by default.
    pub max_timers: u64,
    /// Why, in a few words (e.g. `scans every pending timer per clock move`).
    pub why: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARED: &[Parameter] = &[
        Parameter {
            name: "slots",
            default: 4096,
            about: "slots",
            accepts: "a power of two from 2 to 2^24",
            valid: |v| power_of_two_in(v, 2, 1 << 24),
        },
        Parameter {
            name: "levels",
            default: 9,
            about: "levels",
            accepts: "8 or 9",
            valid: |v| v == 8 || v == 9,
        },
    ];

    #[test]
    fn defaults_then_overrides_in_declaration_order() {
        let mut parameters = Parameters::defaults(DECLARED);
        assert_eq!(parameters.get("slots"), 4096);
        parameters.set("levels", 8).unwrap();
        let all: Vec<_> = parameters.iter().collect();
        assert_eq!(all, [("slots", 4096), ("levels", 8)]);
    }

    #[test]
    fn unknown_keys_and_refused_values_say_why() {
        let mut parameters = Parameters::defaults(DECLARED);
        let error = parameters.set("slot", 8).unwrap_err();
        assert_eq!(
            error,
            "unknown parameter `slot` (parameters: slots, levels)"
        );
        let error = parameters.set("slots", 1000).unwrap_err();
        assert_eq!(
            error,
            "slots=1000: slots must be a power of two from 2 to 2^24"
        );
        assert_eq!(
            parameters.get("slots"),
            4096,
            "a refused value changes nothing"
        );
        let mut none = Parameters::defaults(&[]);
        assert!(none.set("x", 1).unwrap_err().contains("takes none"));
    }
}

/// The period at which a structure's own clock runs when its owner drives it by a fixed
/// tick: the wait `--wait tick` uses unless `--period` says another. A walking structure's
/// period is its step (Netty's worker tick, a ring's bucket width, both parameters in
/// ticks) or the wall-clock tick of the system it comes from (skynet's 10 ms, Linux's 4 ms
/// jiffy at HZ=250); every other structure's is one tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NaturalPeriod {
    /// So many workload ticks.
    Ticks(Tick),
    /// So many nanoseconds of wall time, whatever a tick is.
    Nanos(u64),
}

impl NaturalPeriod {
    /// The period in nanoseconds at `tick_ns` nanoseconds per tick.
    pub fn ns(self, tick_ns: u64) -> u64 {
        match self {
            NaturalPeriod::Ticks(ticks) => ticks * tick_ns,
            NaturalPeriod::Nanos(ns) => ns,
        }
    }
}
