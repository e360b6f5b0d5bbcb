//! Importers: turn recorded timer activity (Linux ftrace output, a simple CSV) into v1
//! workloads, so that real traces can be replayed through every implementation.
//!
//! Every importer has the same shape: a format-specific parser reduces its input to a
//! time-ordered stream of [`Event`]s (a timer's lifetime begins, it is started with an
//! absolute deadline, stopped, or seen to fire), with times in nanoseconds on one clock,
//! and [`Builder`] turns that stream into operations. The builder is where the replay's
//! semantics live, so that every importer agrees on them:
//!
//! - The clock in ticks is `floor((time - origin) / tick)`, the first event at tick 0; the
//!   time between events becomes `a N` lines, so the file replays the real timing, or
//!   `t N` lines with [`Moves::Tick`] (recorded as `@moves`): the same firings, but every
//!   tick its own clock move, so that an approximate structure's lateness is its own
//!   rather than the gap to the recording's next event (see [`Moves`]).
//! - A start becomes `s ID DELAY` with the deadline rounded *up* to a tick (no deadline
//!   moves earlier), `DELAY = deadline - clock`; a deadline already past gets delay 0 and is
//!   counted. A start of a timer the reference model still holds pending is `r ID DELAY`.
//! - A stop becomes `x ID`. If the model has already fired the timer (its rounded deadline
//!   was reached before the recorded stop) the line is a miss in the replay; counted.
//! - A recorded firing emits no line of its own: the model fires timers when the clock
//!   reaches their deadlines. If the model would still hold the timer pending at the
//!   recorded firing (rounding up put its deadline in a later tick), the clock is moved to
//!   the deadline there and then, so the model fires it no later than the recording did;
//!   later clock moves catch up with the recording's time. Both cases are counted.
//! - Each lifetime of a recorded timer (its identity, reused after a new lifetime begins)
//!   gets a fresh decimal ID, allocated at its first start.
//!
//! The builder mirrors the reference model's pending set exactly, which is what keeps the
//! output valid: it never emits `s` for a timer the model holds pending.

pub mod csv;
pub mod ftrace;

use crate::Workload;
use crate::metadata::Metadata;
use crate::op::Op;
use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Why an import failed: one message, naming the file and, where there is one, the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    message: String,
}

impl ImportError {
    /// An error about `path` as a whole.
    pub fn file(path: &Path, what: impl fmt::Display) -> Self {
        ImportError {
            message: format!("{}: {what}", path.display()),
        }
    }

    /// An error about line `line` (1-based) of `path`.
    pub fn line(path: &Path, line: u64, what: impl fmt::Display) -> Self {
        ImportError {
            message: format!("{}:{line}: {what}", path.display()),
        }
    }

    /// An error about the options, not a file.
    pub fn usage(what: impl fmt::Display) -> Self {
        ImportError {
            message: what.to_string(),
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ImportError {}

/// Opens `path` for reading lines, decompressing it when its name ends in `.gz`.
pub fn open_lines(path: &Path) -> Result<Box<dyn BufRead>, ImportError> {
    let file = std::fs::File::open(path).map_err(|e| ImportError::file(path, e))?;
    let raw: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    Ok(Box::new(BufReader::new(raw)))
}

/// Parses a tick length such as `1ms`, `100us`, `250ns`, `1s` into nanoseconds.
pub fn parse_tick(text: &str) -> Result<u64, ImportError> {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == 'µ');
    let unit = &text[digits.len()..];
    let scale = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => {
            return Err(ImportError::usage(format!(
                "tick `{text}`: expected a whole number and a unit ns, us, ms or s (e.g. 1ms)"
            )));
        }
    };
    match digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
    {
        Some(ns) if ns > 0 => Ok(ns),
        _ => Err(ImportError::usage(format!(
            "tick `{text}`: expected a whole number >= 1 and a unit ns, us, ms or s"
        ))),
    }
}

/// A timer's identity in a recording: a class (e.g. wheel timer or hrtimer, so that two
/// kinds never share identities) and the recording's name for it (an address, an ID).
pub type Identity = (usize, String);

/// One recorded happening, on the importer's clock (nanoseconds, any origin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A new lifetime of the timer begins (its identity may have been used before).
    Begin(Identity),
    /// The timer is started (or re-armed) with this absolute deadline.
    Start(Identity, i128),
    /// The timer is stopped.
    Stop(Identity),
    /// The recording saw the timer fire.
    Fire(Identity),
}

/// What the builder did, per timer class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// `s` lines.
    pub starts: u64,
    /// `r` lines.
    pub restarts: u64,
    /// `x` lines.
    pub stops: u64,
    /// Of the `x` lines, those the model had already fired (misses in the replay).
    pub stops_after_model_fired: u64,
    /// `x` lines emitted because a pending timer's identity began a new lifetime.
    pub stops_at_new_lifetime: u64,
    /// Recorded firings of timers the import started.
    pub firings: u64,
    /// Of those, firings the model makes at or before the recorded time.
    pub firings_reproduced: u64,
    /// Of those, firings for which the clock was moved ahead to the rounded deadline.
    pub firings_clock_moved: u64,
    /// Starts whose deadline was already past: delay 0.
    pub past_deadlines: u64,
    /// Starts whose delay was cut to keep the clock below 2^62.
    pub clamped: u64,
    /// Stops of timers never started in the recording (not emitted).
    pub stops_unstarted: u64,
    /// Firings of timers never started in the recording (not emitted).
    pub firings_unstarted: u64,
}

/// How the time between two events becomes clock moves.
///
/// Both give the same firings. They differ in where a firing's clock is: under `a N` a
/// timer fires at the end of the move that reaches its deadline, so a structure that
/// fires one tick after the model (Linux's wheel rounds every expiry up) is measured late
/// by the whole next gap between the recording's events, which is the recording's
/// rhythm, not the structure's slack; under `t N` each tick is its own move (the workload
/// format's "Outcome"), so it is measured late by its own tick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Moves {
    /// `a N`: one move per gap, one call however long the gap (the default).
    #[default]
    Advance,
    /// `t N`: one move per tick, so replays call `advance` once per tick.
    Tick,
}

impl Moves {
    /// Both, in the order `--moves` lists them.
    pub const ALL: [Moves; 2] = [Moves::Advance, Moves::Tick];

    /// The one [`Moves::name`] spells `name`.
    pub fn named(name: &str) -> Option<Moves> {
        Moves::ALL.into_iter().find(|moves| moves.name() == name)
    }

    /// As `--moves` and `@moves` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Moves::Advance => "advance",
            Moves::Tick => "tick",
        }
    }
}

/// The most the clock may reach: the format's bound is `2^63`, kept well clear of.
const CLOCK_LIMIT: u64 = 1 << 62;

struct Pending {
    deadline: u64,
    /// The number of clock moves when it was started: a deadline equal to that clock fires
    /// on the next move, not before.
    moves: u64,
}

/// Turns a time-ordered [`Event`] stream into operations; see the module documentation.
pub struct Builder {
    tick_ns: u64,
    clock_moves: Moves,
    origin: Option<i128>,
    clock: u64,
    moves: u64,
    next_id: u64,
    /// The current lifetime's ID of each identity, once started.
    lifetimes: HashMap<Identity, Option<u64>>,
    pending: HashMap<u64, Pending>,
    ops: Vec<Op>,
    /// What happened, per class (index = the identity's class).
    pub tallies: Vec<Tally>,
    /// The largest distance, in ticks, the clock was moved ahead of the recording.
    pub max_moved_ahead: u64,
}

impl Builder {
    /// A builder with `classes` timer classes and ticks of `tick_ns` nanoseconds, moving
    /// the clock as `moves` says.
    pub fn new(classes: usize, tick_ns: u64, moves: Moves) -> Self {
        Builder {
            tick_ns,
            clock_moves: moves,
            origin: None,
            clock: 0,
            moves: 0,
            next_id: 0,
            lifetimes: HashMap::new(),
            pending: HashMap::new(),
            ops: Vec::new(),
            tallies: vec![Tally::default(); classes],
            max_moved_ahead: 0,
        }
    }

    /// Sets the time of tick 0 (otherwise the first event's time).
    pub fn set_origin(&mut self, time_ns: i128) {
        self.origin = Some(time_ns);
    }

    /// Whether the reference model holds `id` pending now.
    fn model_pending(&self, id: u64) -> bool {
        self.pending
            .get(&id)
            .is_some_and(|p| p.deadline > self.clock || p.moves == self.moves)
    }

    /// The tick of `time_ns`, clamped to the clock limit (the origin is the first event).
    fn tick_of(&mut self, time_ns: i128) -> u64 {
        let origin = *self.origin.get_or_insert(time_ns);
        let ticks = (time_ns - origin).max(0) / i128::from(self.tick_ns);
        u64::try_from(ticks).unwrap_or(u64::MAX).min(CLOCK_LIMIT)
    }

    /// The tick at or after `time_ns`: a deadline rounded up.
    fn tick_at_or_after(&mut self, time_ns: i128) -> i128 {
        let origin = *self.origin.get_or_insert(time_ns);
        let tick = i128::from(self.tick_ns);
        (time_ns - origin).div_euclid(tick) + i128::from((time_ns - origin).rem_euclid(tick) != 0)
    }

    fn move_to(&mut self, target: u64) {
        if target > self.clock {
            let ticks = target - self.clock;
            let (op, moves) = match self.clock_moves {
                Moves::Advance => (Op::Advance { ticks }, 1),
                Moves::Tick => (Op::Tick { ticks }, ticks),
            };
            self.ops.push(op);
            self.clock = target;
            self.moves += moves;
            let clock = self.clock;
            self.pending.retain(|_, p| p.deadline > clock);
        }
    }

    /// Applies one event that happened at `time_ns`. Events must come in time order; an
    /// earlier time than the last is treated as the last.
    pub fn event(&mut self, time_ns: i128, event: &Event) {
        let now = self.tick_of(time_ns);
        self.move_to(now);
        match event {
            Event::Begin(who) => {
                if let Some(Some(id)) = self.lifetimes.insert(who.clone(), None)
                    && self.model_pending(id)
                {
                    self.ops.push(Op::Stop { id });
                    self.pending.remove(&id);
                    self.tallies[who.0].stops += 1;
                    self.tallies[who.0].stops_at_new_lifetime += 1;
                }
            }
            Event::Start(who, deadline_ns) => {
                let id = match self.lifetimes.get(who) {
                    Some(Some(id)) => *id,
                    _ => {
                        let id = self.next_id;
                        self.next_id += 1;
                        self.lifetimes.insert(who.clone(), Some(id));
                        id
                    }
                };
                let tally = &mut self.tallies[who.0];
                if *deadline_ns < time_ns {
                    tally.past_deadlines += 1;
                }
                let rounded = self.tick_at_or_after(*deadline_ns);
                let mut delay =
                    u64::try_from((rounded - i128::from(self.clock)).max(0)).unwrap_or(u64::MAX);
                if delay > CLOCK_LIMIT - self.clock {
                    delay = CLOCK_LIMIT - self.clock;
                    self.tallies[who.0].clamped += 1;
                }
                if self.model_pending(id) {
                    self.ops.push(Op::Restart { id, delay });
                    self.tallies[who.0].restarts += 1;
                } else {
                    self.ops.push(Op::Start { id, delay });
                    self.tallies[who.0].starts += 1;
                }
                self.pending.insert(
                    id,
                    Pending {
                        deadline: self.clock + delay,
                        moves: self.moves,
                    },
                );
            }
            Event::Stop(who) => match self.lifetimes.get(who) {
                Some(Some(id)) => {
                    let id = *id;
                    if !self.model_pending(id) {
                        self.tallies[who.0].stops_after_model_fired += 1;
                    }
                    self.ops.push(Op::Stop { id });
                    self.pending.remove(&id);
                    self.tallies[who.0].stops += 1;
                }
                _ => self.tallies[who.0].stops_unstarted += 1,
            },
            Event::Fire(who) => match self.lifetimes.get(who) {
                Some(Some(id)) => {
                    let id = *id;
                    self.tallies[who.0].firings += 1;
                    match self.pending.get(&id) {
                        Some(p) if p.deadline > self.clock => {
                            // Rounded up into a later tick than the recording fired it:
                            // move the clock there so the model fires it now.
                            let ahead = p.deadline - now;
                            self.max_moved_ahead = self.max_moved_ahead.max(ahead);
                            self.move_to(p.deadline);
                            self.tallies[who.0].firings_clock_moved += 1;
                        }
                        _ => self.tallies[who.0].firings_reproduced += 1,
                    }
                    // Fired (or due on the next move, for a delay of 0 with no move since):
                    // either way a later start is a start of a timer the model no longer
                    // holds, or a restart the builder detects by itself.
                }
                _ => self.tallies[who.0].firings_unstarted += 1,
            },
        }
    }

    /// The operations so far, and the number of timer lifetimes that got an ID.
    pub fn finish(self) -> (Vec<Op>, u64) {
        (self.ops, self.next_id)
    }
}

/// Adds `@KEY` lines `starts`, `restarts`, `stops`, `firings` and the others of [`Tally`],
/// each as `TOTAL (CLASS N, ...)` with `names` naming the classes.
pub fn tally_metadata(metadata: &mut Metadata, names: &[&str], tallies: &[Tally]) {
    type Field = fn(&Tally) -> u64;
    let fields: [(&str, Field); 12] = [
        ("starts", |t| t.starts),
        ("restarts", |t| t.restarts),
        ("stops", |t| t.stops),
        ("stops-after-model-fired", |t| t.stops_after_model_fired),
        ("stops-at-new-lifetime", |t| t.stops_at_new_lifetime),
        ("firings", |t| t.firings),
        ("firings-reproduced", |t| t.firings_reproduced),
        ("firings-clock-moved", |t| t.firings_clock_moved),
        ("past-deadlines", |t| t.past_deadlines),
        ("clamped-delays", |t| t.clamped),
        ("skipped-stops-unstarted", |t| t.stops_unstarted),
        ("skipped-firings-unstarted", |t| t.firings_unstarted),
    ];
    for (key, field) in fields {
        let total: u64 = tallies.iter().map(field).sum();
        let parts: Vec<String> = names
            .iter()
            .zip(tallies)
            .map(|(name, t)| format!("{name} {}", field(t)))
            .collect();
        metadata.push(key, format!("{total} ({})", parts.join(", ")));
    }
}

/// An import's result: the workload, and one line saying what was used and skipped.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The workload, metadata included.
    pub workload: Workload,
    /// A short human summary for the terminal.
    pub summary: String,
}

/// The file names of `paths`, for `@source`.
pub fn source_names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| {
            p.file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
        })
        .collect::<Vec<_>>()
        .join(" ")
}
