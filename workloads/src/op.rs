//! The operations of a v1 workload, as the file spells them.

/// A timer's name in a workload: any `u64`, chosen by whoever wrote the file.
pub type TimerKey = u64;

/// One operation line. Delays and tick counts are relative to the clock when the
/// operation runs; see `docs/workload-format.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// `s ID DELAY`: start timer `id` with deadline `now + delay`. `id` must not be pending.
    Start {
        /// The timer.
        id: TimerKey,
        /// Ticks from now; 0 fires on the next clock move.
        delay: u64,
    },
    /// `x ID`: stop timer `id`; a miss (legal, counted) when it is not pending.
    Stop {
        /// The timer.
        id: TimerKey,
    },
    /// `r ID DELAY`: stop `id` if it is pending, then start it with deadline `now + delay`.
    Restart {
        /// The timer.
        id: TimerKey,
        /// Ticks from now.
        delay: u64,
    },
    /// `a N`: advance the clock by `ticks >= 1` in one call.
    Advance {
        /// How far.
        ticks: u64,
    },
    /// `t N`: `ticks >= 1` calls that each advance the clock by one tick.
    Tick {
        /// How many calls.
        ticks: u64,
    },
    /// `n`: move the clock to the earliest pending deadline (or stay, if it is not after
    /// now) and fire what is due; nothing when no timer is pending.
    Next,
}

impl Op {
    /// The operation's letter in the file.
    pub fn letter(self) -> char {
        match self {
            Op::Start { .. } => 's',
            Op::Stop { .. } => 'x',
            Op::Restart { .. } => 'r',
            Op::Advance { .. } => 'a',
            Op::Tick { .. } => 't',
            Op::Next => 'n',
        }
    }
}

impl std::fmt::Display for Op {
    /// The operation as a line of the file, without the newline.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Op::Start { id, delay } => write!(f, "s {id} {delay}"),
            Op::Stop { id } => write!(f, "x {id}"),
            Op::Restart { id, delay } => write!(f, "r {id} {delay}"),
            Op::Advance { ticks } => write!(f, "a {ticks}"),
            Op::Tick { ticks } => write!(f, "t {ticks}"),
            Op::Next => write!(f, "n"),
        }
    }
}
