//! The reference model: what replaying a workload must produce.
//!
//! It is the format's semantics written plainly: a map from timer key to deadline for the
//! pending timers, and an ordered set of `(deadline, key)` that gives the next to fire.
//! Every exact implementation must reproduce its expiry log; the loader also runs it to
//! reject what the format calls malformed but can only see by running the file (`s` of a
//! pending timer, a deadline at or past 2^63).
//!
//! The expiry log has one line per fired timer, `NOW ID DEADLINE`, where `NOW` is the clock
//! at the end of the operation that fired it; sorted by `(NOW, DEADLINE, ID)`. The model
//! fires in exactly that order, so it digests the log as it goes: the digest is the SHA-256
//! of the log's text, so `sha256sum` of a written expiry log prints the same value.

use crate::op::{Op, TimerKey};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// Deadlines and clocks stay below this bound (the format's rule).
pub const CLOCK_LIMIT: u64 = 1 << 63;

/// One line of the expiry log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Expiry {
    /// The clock at the end of the clock move that fired the timer: the end of an `a` or
    /// `n`, the tick of a `t N` that fired it.
    pub now: u64,
    /// The timer's deadline.
    pub deadline: u64,
    /// The timer.
    pub id: TimerKey,
}

impl std::fmt::Display for Expiry {
    /// The log line, `NOW ID DEADLINE`, without the newline.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.now, self.id, self.deadline)
    }
}

/// What a replay produced. Every start (including a restart's) is counted in `started`, and
/// every stop that found a pending timer (including a restart's) in `stopped`, so
/// `started == fired + stopped + pending`. `misses` counts `x` of a timer that was not
/// pending; a restart of such a timer is not a miss.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// Operation lines replayed.
    pub operations: u64,
    /// Timers started.
    pub started: u64,
    /// Timers fired.
    pub fired: u64,
    /// Pending timers stopped.
    pub stopped: u64,
    /// `x` of a timer that was not pending.
    pub misses: u64,
    /// Timers still pending at the end.
    pub pending: u64,
    /// The clock at the end.
    pub final_clock: u64,
    /// SHA-256 of the sorted expiry log, in lowercase hex.
    pub digest: String,
}

/// Why an operation cannot run: the semantic half of "malformed".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SemanticError {
    /// `s` of a timer that is pending.
    #[error(
        "timer {id} is already pending (started at deadline {deadline}); use `r` to restart it"
    )]
    StartOfPending {
        /// The timer.
        id: TimerKey,
        /// Its pending deadline.
        deadline: u64,
    },
    /// A deadline or clock that would reach 2^63.
    #[error("now ({now}) + {amount} reaches 2^63; deadlines and the clock must stay below 2^63")]
    PastLimit {
        /// The clock.
        now: u64,
        /// The delay or tick count.
        amount: u64,
    },
}

/// Counts and the running digest of a replay's expiry log; shared by the model and by
/// replays of real implementations, so that both summarise the same way.
///
/// The digest is over the log sorted by `(NOW, DEADLINE, ID)` as the format says. Callers
/// give firings in clock order, each operation's sorted, which leaves one case: an `n`
/// that stays put fires at the clock of the operation before it, so firings of equal
/// `NOW` can come from several operations. The firings of the current `NOW` wait in
/// `same_now` and are hashed, sorted, when the clock moves on (or at [`Tally::finish`]).
#[derive(Clone, Default)]
pub struct Tally {
    /// The counts so far; `digest` is filled by [`Tally::finish`].
    pub summary: Summary,
    hasher: Sha256,
    line: String,
    same_now: Vec<Expiry>,
}

impl Tally {
    /// Adds one fired timer. `NOW` must not decrease from one call to the next.
    pub fn fired(&mut self, expiry: Expiry) {
        self.summary.fired += 1;
        if self.same_now.first().is_some_and(|f| f.now != expiry.now) {
            debug_assert!(self.same_now[0].now < expiry.now, "firings in clock order");
            Self::hash_sorted(&mut self.hasher, &mut self.line, &mut self.same_now);
        }
        self.same_now.push(expiry);
    }

    /// Hashes `firings` (all of one `NOW`) in `(DEADLINE, ID)` order and empties it.
    fn hash_sorted(hasher: &mut Sha256, line: &mut String, firings: &mut Vec<Expiry>) {
        firings.sort_unstable_by_key(|f| (f.deadline, f.id));
        for expiry in firings.drain(..) {
            line.clear();
            let _ = writeln!(line, "{expiry}");
            hasher.update(line.as_bytes());
        }
    }

    /// The summary with the digest, given the pending count and clock at the end.
    pub fn finish(&self, pending: u64, final_clock: u64) -> Summary {
        let mut summary = self.summary.clone();
        summary.pending = pending;
        summary.final_clock = final_clock;
        let mut hasher = self.hasher.clone();
        Self::hash_sorted(&mut hasher, &mut String::new(), &mut self.same_now.clone());
        let digest = hasher.finalize();
        summary.digest = digest.iter().fold(String::with_capacity(64), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        });
        summary
    }
}

/// The model. See the module documentation.
#[derive(Default)]
pub struct ReferenceModel {
    now: u64,
    deadlines: HashMap<TimerKey, u64>,
    queue: BTreeSet<(u64, TimerKey)>,
    tally: Tally,
}

impl ReferenceModel {
    /// An empty model at clock 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The clock.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// The deadline of `id` if it is pending.
    pub fn deadline(&self, id: TimerKey) -> Option<u64> {
        self.deadlines.get(&id).copied()
    }

    /// Number of pending timers.
    pub fn pending(&self) -> usize {
        self.deadlines.len()
    }

    /// The earliest pending deadline.
    pub fn next_deadline(&self) -> Option<u64> {
        self.queue.first().map(|&(deadline, _)| deadline)
    }

    /// The summary so far (pending and clock as they are now).
    pub fn summary(&self) -> Summary {
        self.tally.finish(self.deadlines.len() as u64, self.now)
    }

    /// Runs one operation, calling `on_expiry` for each timer it fires, in log order. On
    /// error nothing changed.
    pub fn apply(
        &mut self,
        op: Op,
        mut on_expiry: impl FnMut(Expiry),
    ) -> Result<(), SemanticError> {
        match op {
            Op::Start { id, delay } => {
                let deadline = self.later(delay)?;
                if let Some(&deadline) = self.deadlines.get(&id) {
                    return Err(SemanticError::StartOfPending { id, deadline });
                }
                self.start(id, deadline);
            }
            Op::Stop { id } => {
                if self.stop(id) {
                    self.tally.summary.stopped += 1;
                } else {
                    self.tally.summary.misses += 1;
                }
            }
            Op::Restart { id, delay } => {
                let deadline = self.later(delay)?;
                if self.stop(id) {
                    self.tally.summary.stopped += 1;
                }
                self.start(id, deadline);
            }
            Op::Advance { ticks } => {
                let to = self.later(ticks)?;
                self.fire_until(to, &mut on_expiry);
            }
            Op::Tick { ticks } => {
                let to = self.later(ticks)?;
                self.fire_tick_by_tick(to, &mut on_expiry);
            }
            Op::Next => {
                if let Some(deadline) = self.next_deadline() {
                    self.fire_until(deadline.max(self.now), &mut on_expiry);
                }
            }
        }
        self.tally.summary.operations += 1;
        Ok(())
    }

    /// `now + amount`, if it stays below the limit.
    fn later(&self, amount: u64) -> Result<u64, SemanticError> {
        self.now
            .checked_add(amount)
            .filter(|&t| t < CLOCK_LIMIT)
            .ok_or(SemanticError::PastLimit {
                now: self.now,
                amount,
            })
    }

    /// Starts `id` at `deadline` (it must not be pending): the model's half of a start in
    /// a lockstep replay ([`crate::bounded`]), which moves the clock itself.
    pub fn start_at(&mut self, id: TimerKey, deadline: u64) {
        debug_assert!(!self.deadlines.contains_key(&id), "{id} is pending");
        self.start(id, deadline);
    }

    /// Stops `id`; whether it was pending.
    pub fn stop_now(&mut self, id: TimerKey) -> bool {
        self.stop(id)
    }

    /// One clock move to `to` (`to >= now`), firing what is due as `a` and `n` do.
    pub fn move_to(&mut self, to: u64, mut on_expiry: impl FnMut(Expiry)) {
        self.fire_until(to, &mut on_expiry);
    }

    fn start(&mut self, id: TimerKey, deadline: u64) {
        self.deadlines.insert(id, deadline);
        self.queue.insert((deadline, id));
        self.tally.summary.started += 1;
    }

    /// Removes `id` if pending; whether it was.
    fn stop(&mut self, id: TimerKey) -> bool {
        match self.deadlines.remove(&id) {
            Some(deadline) => {
                self.queue.remove(&(deadline, id));
                true
            }
            None => false,
        }
    }

    /// One clock move to `to` (`a`, `n`): fires everything due at `to`, in `(deadline, id)`
    /// order, each logged with the clock `to`, and sets the clock.
    fn fire_until(&mut self, to: u64, on_expiry: &mut impl FnMut(Expiry)) {
        self.fire_due(to, |_| to, on_expiry);
    }

    /// `to - now` clock moves of one tick each (`t N`): a timer fires on the first tick at
    /// or after its deadline, so it is logged with the clock `max(deadline, now + 1)` (a
    /// deadline already passed fires on the line's first tick). The firing order is the
    /// same `(deadline, id)` order as one move's, since the tick a timer fires on grows
    /// with its deadline.
    fn fire_tick_by_tick(&mut self, to: u64, on_expiry: &mut impl FnMut(Expiry)) {
        let first_tick = self.now + 1;
        self.fire_due(to, |deadline| deadline.max(first_tick), on_expiry);
    }

    /// Fires everything due at `to`, in `(deadline, id)` order, logging each with the clock
    /// `clock_of(deadline)`, and sets the clock to `to`.
    fn fire_due(
        &mut self,
        to: u64,
        clock_of: impl Fn(u64) -> u64,
        on_expiry: &mut impl FnMut(Expiry),
    ) {
        while let Some(&(deadline, id)) = self.queue.first() {
            if deadline > to {
                break;
            }
            self.queue.pop_first();
            self.deadlines.remove(&id);
            let expiry = Expiry {
                now: clock_of(deadline),
                deadline,
                id,
            };
            self.tally.fired(expiry);
            on_expiry(expiry);
        }
        self.now = to;
    }
}
