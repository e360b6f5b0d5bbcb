//! How far a workload reaches (its largest delay, deadline and clock), and whether that is
//! within a structure's declared [`Range`]: a workload beyond it is refused before it runs,
//! naming the limit and the first line past it, instead of reaching a panic inside the
//! structure.

use crate::program::{Program, Step};
use serde::{Deserialize, Serialize};
use timerbench_impls::{Range, Tick};

/// The extremes of a workload, as the reference model replays it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reach {
    /// The largest `DELAY` of an `s` or `r`.
    pub max_delay: Tick,
    /// The largest deadline (`now + DELAY`) of an `s` or `r`.
    pub max_deadline: Tick,
    /// The final clock, the largest the workload moves to.
    pub max_clock: Tick,
}

impl Reach {
    /// Notes a start (or restart) at clock `now` with `delay`.
    pub(crate) fn start(&mut self, now: Tick, delay: Tick) {
        self.max_delay = self.max_delay.max(delay);
        self.max_deadline = self.max_deadline.max(now.saturating_add(delay));
    }

    /// Whether every delay, deadline and clock is within `range`.
    pub fn within(&self, range: &Range) -> bool {
        self.max_delay <= range.max_delay
            && self.max_deadline <= range.max_tick
            && self.max_clock <= range.clock_limit()
    }
}

/// Why a workload does not fit a range: the first line past it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beyond {
    /// The file line.
    pub line: u64,
    /// What it asks for and the limit, e.g. `a delay of 562949953421312 ticks, beyond the
    /// limit of 34359738368 (why)`.
    pub what: String,
}

/// The first line of `program` (loaded with the model, so that its expected log gives the
/// clock of every `n`) that reaches beyond `range`, if any.
pub fn first_beyond(program: &Program, range: &Range) -> Option<Beyond> {
    let why = if range.why.is_empty() {
        String::new()
    } else {
        format!(": {}", range.why)
    };
    let mut firings = program.expected.iter().peekable();
    let mut now: Tick = 0;
    for (index, step) in program.steps.iter().enumerate() {
        let line = program.lines[index];
        let what = match *step {
            Step::Start { delay, .. } | Step::Restart { delay, .. } => {
                let deadline = now.saturating_add(delay);
                if delay > range.max_delay {
                    Some(format!(
                        "a delay of {delay} ticks, beyond the limit of {} ticks{why}",
                        range.max_delay
                    ))
                } else if deadline > range.max_tick {
                    Some(format!(
                        "a deadline at tick {deadline}, beyond the limit of tick {}{why}",
                        range.max_tick
                    ))
                } else {
                    None
                }
            }
            Step::Advance { ticks } | Step::Tick { ticks } => {
                now = now.saturating_add(ticks);
                None
            }
            Step::Stop { .. } | Step::Next => None,
        };
        // An `n` moves to the clock of its firings (it fires whenever anything is pending).
        while let Some(firing) = firings.next_if(|f| f.step as usize == index) {
            if matches!(step, Step::Next) {
                now = now.max(firing.now);
            }
        }
        if what.is_none() && now > range.clock_limit() {
            return Some(Beyond {
                line,
                what: format!(
                    "the clock at tick {now}, beyond the limit of tick {}{why}",
                    range.clock_limit()
                ),
            });
        }
        if let Some(what) = what {
            return Some(Beyond { line, what });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::load_from;

    fn program(text: &str) -> Program {
        load_from(text.as_bytes(), std::path::Path::new("w.tw")).unwrap()
    }

    const RANGE: Range = Range {
        max_delay: 100,
        max_tick: 1_000,
        max_clock: Tick::MAX,
        why: "a test",
    };

    #[test]
    fn the_reach_is_the_largest_delay_deadline_and_clock() {
        let p = program("timer-workload v1\ns 1 50\nn\ns 2 90\na 5\nr 2 7\n");
        assert_eq!(
            p.reach,
            Reach {
                max_delay: 90,
                max_deadline: 140,
                max_clock: 55
            }
        );
        assert!(p.reach.within(&RANGE));
        assert_eq!(first_beyond(&p, &RANGE), None);
    }

    #[test]
    fn the_first_line_beyond_a_range_is_named() {
        let delay = program("timer-workload v1\ns 1 5\ns 2 101\ns 3 500\n");
        assert!(!delay.reach.within(&RANGE));
        let beyond = first_beyond(&delay, &RANGE).unwrap();
        assert_eq!(beyond.line, 3);
        assert_eq!(
            beyond.what,
            "a delay of 101 ticks, beyond the limit of 100 ticks: a test"
        );
        // The clock of an `n` comes from the model's firings: 950, then a deadline at 1,050.
        let deadline = program(
            "timer-workload v1\ns 1 95\nn\ns 2 95\nn\ns 3 95\nn\ns 4 95\nn\ns 5 95\nn\ns 6 95\nn\ns 7 95\nn\ns 8 95\nn\ns 9 95\nn\ns 10 95\nn\ns 11 100\n",
        );
        let beyond = first_beyond(&deadline, &RANGE).unwrap();
        assert_eq!(beyond.line, 22);
        assert!(
            beyond.what.starts_with("a deadline at tick 1050"),
            "{}",
            beyond.what
        );
        let clock = program("timer-workload v1\na 600\nt 401\n");
        let beyond = first_beyond(&clock, &RANGE).unwrap();
        assert_eq!(
            (beyond.line, beyond.what.as_str()),
            (
                3,
                "the clock at tick 1001, beyond the limit of tick 1000: a test"
            )
        );
    }
}
