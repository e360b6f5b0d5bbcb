//! `timerbench import ftrace`: Linux timer tracepoints (the text of tracefs's `trace` file,
//! or `trace-cmd report`) to a v1 workload, through the [`Builder`] every importer shares.
//!
//! Lines are `TASK-PID [CPU] [FLAGS] SECONDS.FRACTION: EVENT: key=value ...`. The fields are
//! read by name, so the formats of every kernel since 4.x parse alike: `function=` printed
//! with `%pf` or `%ps`, `timeout`, `bucket_expiry`, `baseclk`, `was_armed`, `cpu`, `idx`,
//! `flags` present or not. Used events:
//!
//! - wheel timers, deadlines in jiffies: `timer_init`, `timer_start` (`expires`, and
//!   `[timeout=]` = expires - jiffies when the kernel prints it), `timer_cancel`,
//!   `timer_expire_entry` (`now` = jiffies), `timer_expire_exit` (not needed);
//! - hrtimers, deadlines in nanoseconds of the timer's clock: `hrtimer_init` or its newer
//!   name `hrtimer_setup` (`clockid`, `mode`), `hrtimer_start` (`expires`, `softexpires`),
//!   `hrtimer_cancel`, `hrtimer_expire_entry` (`now`), `hrtimer_expire_exit` (not needed).
//!
//! Kernel quirks, and what the import does with them:
//!
//! 1. A wheel timer's expiry is preceded by a `timer_cancel` (the detach in
//!    `expire_timers`); older kernels do the same for hrtimers. A cancel whose timer's next
//!    event is its expiry is part of the firing, not a stop.
//! 2. Re-arming a pending timer emits cancel then start, back to back on one CPU under the
//!    base lock: a cancel whose CPU's next event is a start of the same timer is a re-arm,
//!    and the start becomes `r` (the builder sees the timer pending).
//! 3. A timer's identity is its (hashed) address, reused after the memory is freed: an
//!    init or setup begins a new lifetime, with a new ID.
//! 4. CPUs' events interleave: all records, of every file, are sorted by timestamp
//!    (stably, so one CPU's order within a timestamp is kept).
//! 5. Jiffies start near 2^32 minus five minutes: they are `u64` on 64-bit kernels and
//!    wrap on 32-bit ones. Jiffy differences are taken modulo 2^32 when every value seen
//!    fits in 32 bits, modulo 2^64 otherwise, so both read right.
//!
//! Clocks. Tick 0 is the first timer event's timestamp. A wheel deadline is the start's
//! timestamp plus its `timeout` jiffies (or `expires` minus jiffies estimated from the
//! nearest earlier observation, on kernels without `timeout`), at `1e9 / HZ` ns a jiffy;
//! this is never earlier than the kernel's. HZ is `--hz`, else inferred from how fast
//! jiffies advance over the trace (snapped to 100, 250, 300 or 1000), else 250. An hrtimer
//! deadline is `softexpires` (the earliest time the kernel may run it; `expires` when
//! absent) on the timer's clock, moved onto the trace clock by that clock's offset: the
//! largest `now - timestamp` of its firings, a lower bound of the true offset, so again no
//! deadline moves earlier. The clock is the setup's `clockid` (a relative `CLOCK_REALTIME`
//! timer runs on `CLOCK_MONOTONIC`) or, for timers set up before the trace, guessed from
//! the value's size (wall clocks count from 1970). A monotonic clock with no firing to
//! measure is taken as the trace clock; a wall clock with none cannot be placed, and its
//! starts are skipped and counted.

mod line;

use super::{
    Builder, Event, ImportError, Imported, Moves, Tally, open_lines, source_names, tally_metadata,
};
use crate::Workload;
use crate::metadata::Metadata;
use line::{Clock, Kind, Record, Skip, parse_line};
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::PathBuf;

/// Which timers to import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timers {
    /// Wheel (`timer_*`) events only.
    Wheel,
    /// hrtimer (`hrtimer_*`) events only.
    Hrtimer,
    /// Both.
    All,
}

/// How to import.
#[derive(Debug, Clone)]
pub struct Options {
    /// Which timers.
    pub timers: Timers,
    /// One tick, in nanoseconds.
    pub tick_ns: u64,
    /// The text of the tick for `@tick`, e.g. `1ms`.
    pub tick_text: String,
    /// How the clock moves between events (`@moves`).
    pub moves: Moves,
    /// The kernel's HZ, if known; otherwise inferred.
    pub hz: Option<u64>,
    /// The command line, for `@generator`.
    pub generator: Option<String>,
}

/// The class index of wheel timers in [`Report::tallies`].
pub const WHEEL: usize = 0;
/// The class index of hrtimers.
pub const HRTIMER: usize = 1;
const CLASS_NAMES: [&str; 2] = ["wheel", "hrtimer"];

/// What an import used and skipped.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Timer event lines seen, by event name (selected or not).
    pub events: BTreeMap<String, u64>,
    /// Lines not used, by reason (`comment`, `other-event`, `not-an-event`,
    /// `malformed-EVENT`, `filtered-EVENT`, `unknown-clock`).
    pub skipped: BTreeMap<String, u64>,
    /// Other events, by name.
    pub other_events: BTreeMap<String, u64>,
    /// Per class ([`WHEEL`], [`HRTIMER`]): cancels that were part of a firing (quirk 1).
    pub detaches: [u64; 2],
    /// Per class: cancels that were half of a re-arm (quirk 2).
    pub rearms: [u64; 2],
    /// Per class: what the builder did.
    pub tallies: Vec<Tally>,
    /// The HZ used, and where it came from.
    pub hz: (u64, &'static str),
    /// The largest distance, in ticks, the clock was moved ahead of the trace.
    pub max_ahead: u64,
}

/// The wall clocks count from 1970: beyond this, a value on an unknown clock is a wall
/// clock's (about three years after 1970; uptimes stay below it).
const WALL_CLOCK_FROM: u64 = 100_000_000_000_000_000;

/// Imports the traces at `paths` (concatenated, then sorted by time).
pub fn import(paths: &[PathBuf], options: &Options) -> Result<(Imported, Report), ImportError> {
    let mut report = Report::default();
    let mut records = Vec::new();
    for path in paths {
        let mut input = open_lines(path)?;
        let mut buffer = Vec::new();
        let mut number = 0u64;
        loop {
            buffer.clear();
            let read = input
                .read_until(b'\n', &mut buffer)
                .map_err(|e| ImportError::line(path, number + 1, e))?;
            if read == 0 {
                break;
            }
            number += 1;
            let text = String::from_utf8_lossy(&buffer);
            let line = text.trim();
            let skipped = |reason: &str, report: &mut Report| {
                *report.skipped.entry(reason.to_string()).or_default() += 1;
            };
            if line.is_empty() {
                skipped("blank", &mut report);
                continue;
            }
            if line.starts_with('#') {
                skipped("comment", &mut report);
                continue;
            }
            match parse_line(line) {
                Ok((record, name)) => {
                    *report.events.entry(name.to_string()).or_default() += 1;
                    let wanted = match options.timers {
                        Timers::All => true,
                        Timers::Wheel => record.class == WHEEL,
                        Timers::Hrtimer => record.class == HRTIMER,
                    };
                    if wanted {
                        records.push(record);
                    } else {
                        skipped(&format!("filtered-{name}"), &mut report);
                    }
                }
                Err(Skip::NotAnEvent) => skipped("not-an-event", &mut report),
                Err(Skip::Other(name)) => {
                    skipped("other-event", &mut report);
                    *report.other_events.entry(name).or_default() += 1;
                }
                Err(Skip::Malformed(name)) => {
                    *report.events.entry(name.clone()).or_default() += 1;
                    skipped(&format!("malformed-{name}"), &mut report);
                }
            }
        }
    }
    let names = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if report.events.is_empty() {
        return Err(ImportError::usage(format!(
            "{names}: no timer events (timer_* or hrtimer_* tracepoints) in the trace"
        )));
    }
    if records.is_empty() {
        return Err(ImportError::usage(format!(
            "{names}: no usable timer events of the kind --timers selects (skipped: {})",
            join_counts(&report.skipped)
        )));
    }
    // Quirk 4: one time order for every CPU and file; stable, so ties keep file order.
    records.sort_by_key(|r| r.ts);
    let hz = jiffies_rate(&records, options.hz);
    report.hz = hz;
    let mut builder = convert(&records, options, hz.0, &mut report);
    report.tallies = std::mem::take(&mut builder.tallies);
    report.max_ahead = builder.max_moved_ahead;
    let (ops, lifetimes) = builder.finish();

    let mut metadata = Metadata::new();
    let stem = paths[0].file_name().map_or_else(String::new, |n| {
        let n = n.to_string_lossy();
        n.trim_end_matches(".gz")
            .trim_end_matches(".txt")
            .to_string()
    });
    metadata.push("name", stem);
    metadata.push(
        "description",
        "Linux timer tracepoints imported by timerbench import ftrace",
    );
    if let Some(generator) = &options.generator {
        metadata.push("generator", generator.clone());
    }
    metadata.push("source", source_names(paths));
    metadata.push("tick", options.tick_text.clone());
    metadata.push("moves", options.moves.name());
    metadata.push("hz", format!("{} ({})", hz.0, hz.1));
    let selected = match options.timers {
        Timers::All => "all",
        Timers::Wheel => "wheel",
        Timers::Hrtimer => "hrtimer",
    };
    metadata.push("timers", selected);
    metadata.push("lifetimes", lifetimes.to_string());
    tally_metadata(&mut metadata, &CLASS_NAMES, &report.tallies);
    let pairs = |a: [u64; 2]| format!("{} (wheel {}, hrtimer {})", a[0] + a[1], a[0], a[1]);
    metadata.push("cancels-in-firings", pairs(report.detaches));
    metadata.push("cancels-in-rearms", pairs(report.rearms));
    metadata.push("events", join_counts(&report.events));
    metadata.push("skipped-lines", join_counts(&report.skipped));
    if !report.other_events.is_empty() {
        metadata.push("skipped-events", join_counts(&report.other_events));
    }
    let t = |f: fn(&Tally) -> u64| report.tallies.iter().map(f).sum::<u64>();
    let summary = format!(
        "{} operations: {} starts, {} restarts, {} stops, {} traced firings \
         ({} reproduced on time, {} with the clock moved up to {} ticks ahead); \
         {} lines skipped ({})",
        ops.len(),
        t(|t| t.starts),
        t(|t| t.restarts),
        t(|t| t.stops),
        t(|t| t.firings),
        t(|t| t.firings_reproduced),
        t(|t| t.firings_clock_moved),
        report.max_ahead,
        report.skipped.values().sum::<u64>(),
        join_counts(&report.skipped),
    );
    Ok((
        Imported {
            workload: Workload { metadata, ops },
            summary,
        },
        report,
    ))
}

fn join_counts(counts: &BTreeMap<String, u64>) -> String {
    counts
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Jiffy differences, modulo 2^32 when every value seen fits in 32 bits (quirk 5).
#[derive(Clone, Copy)]
struct Jiffies {
    narrow: bool,
}

impl Jiffies {
    fn diff(self, a: u64, b: u64) -> i128 {
        if self.narrow {
            i128::from(a.wrapping_sub(b) as u32 as i32)
        } else {
            i128::from(a.wrapping_sub(b) as i64)
        }
    }
}

/// Observations `(timestamp, jiffies)`: starts that print `timeout`, and wheel firings.
fn observations(records: &[Record]) -> Vec<(i128, u64)> {
    records
        .iter()
        .filter(|r| r.class == WHEEL)
        .filter_map(|r| match (r.kind, r.expires, r.timeout, r.now) {
            (Kind::Start, Some(e), Some(t), _) => Some((r.ts, e.wrapping_sub(t as u64))),
            (Kind::Entry, _, _, Some(now)) => Some((r.ts, now)),
            _ => None,
        })
        .collect()
}

fn narrow(records: &[Record]) -> Jiffies {
    let widest = records
        .iter()
        .filter(|r| r.class == WHEEL)
        .flat_map(|r| [r.expires, r.now])
        .flatten()
        .max()
        .unwrap_or(0);
    Jiffies {
        narrow: widest <= u64::from(u32::MAX),
    }
}

/// HZ: given, or inferred from the jiffies' rate over at least a second, or 250.
fn jiffies_rate(records: &[Record], given: Option<u64>) -> (u64, &'static str) {
    if let Some(hz) = given {
        return (hz, "from --hz");
    }
    let seen = observations(records);
    if let (Some(first), Some(last)) = (seen.first(), seen.last())
        && last.0 - first.0 >= 1_000_000_000
    {
        let jiffies = narrow(records).diff(last.1, first.1) as f64;
        let rate = jiffies * 1e9 / (last.0 - first.0) as f64;
        if let Some(hz) = [100u64, 250, 300, 1000]
            .into_iter()
            .find(|&hz| (rate - hz as f64).abs() <= hz as f64 * 0.1)
        {
            return (hz, "inferred from the trace");
        }
    }
    (250, "default: not inferable from the trace")
}

/// Each record's hrtimer clock: the current lifetime's setup, else guessed from the size of
/// the value it carries (`None` for wheel timers and values-less records).
fn hrtimer_clocks(records: &[Record]) -> Vec<Option<Clock>> {
    let mut known: HashMap<&str, Clock> = HashMap::new();
    records
        .iter()
        .map(|r| {
            if r.class != HRTIMER {
                return None;
            }
            if r.kind == Kind::Init {
                match r.clock {
                    Some(clock) => known.insert(&r.address, clock),
                    None => known.remove(r.address.as_str()),
                };
            }
            if let Some(clock) = known.get(r.address.as_str()) {
                return Some(*clock);
            }
            let value = r.soft.or(r.expires).or(r.now)?;
            let wall = value >= WALL_CLOCK_FROM && r.ts < i128::from(WALL_CLOCK_FROM);
            Some(if wall { Clock::Real } else { Clock::Mono })
        })
        .collect()
}

/// `ceil(a / b)` for `b > 0`.
fn ceil_div(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

/// Turns the sorted records into the builder's events: quirks 1 to 3, and the clocks.
fn convert(records: &[Record], options: &Options, hz: u64, report: &mut Report) -> Builder {
    let mut builder = Builder::new(2, options.tick_ns, options.moves);
    builder.set_origin(records[0].ts);
    // The next record of the same timer, and of the same CPU (quirks 1 and 2).
    let n = records.len();
    let mut next_same_timer = vec![usize::MAX; n];
    let mut next_same_cpu = vec![usize::MAX; n];
    let mut by_timer: HashMap<(usize, &str), usize> = HashMap::new();
    let mut by_cpu: HashMap<u32, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate().rev() {
        if let Some(j) = by_timer.insert((r.class, r.address.as_str()), i) {
            next_same_timer[i] = j;
        }
        if let Some(j) = by_cpu.insert(r.cpu, i) {
            next_same_cpu[i] = j;
        }
    }
    let clocks = hrtimer_clocks(records);
    // Each hrtimer clock's offset from the trace clock: the largest `now - timestamp` of
    // its firings (`now` is read before the event is stamped, so this never overshoots).
    let mut offsets: HashMap<Clock, i128> = HashMap::new();
    for (r, clock) in records.iter().zip(&clocks) {
        if let (Kind::Entry, Some(now), Some(clock)) = (r.kind, r.now, clock) {
            let offset = i128::from(now) - r.ts;
            let best = offsets.entry(*clock).or_insert(offset);
            *best = (*best).max(offset);
        }
    }
    let offset = |clock: Clock| match clock {
        Clock::Mono => Some(offsets.get(&Clock::Mono).copied().unwrap_or(0)),
        Clock::Boot => Some(
            offsets
                .get(&Clock::Boot)
                .or(offsets.get(&Clock::Mono))
                .copied()
                .unwrap_or(0),
        ),
        Clock::Real | Clock::Tai => offsets.get(&clock).copied(),
    };
    let jiffies = narrow(records);
    let seen = observations(records);
    let hz = i128::from(hz.max(1));
    let mut last_seen: Option<(i128, u64)> = None;
    let mut seen_next = 0;
    for (i, r) in records.iter().enumerate() {
        while seen_next < seen.len() && seen[seen_next].0 <= r.ts {
            last_seen = Some(seen[seen_next]);
            seen_next += 1;
        }
        let who = (r.class, r.address.clone());
        let event = match r.kind {
            Kind::Init => Some(Event::Begin(who)),
            Kind::Exit => None,
            Kind::Entry => Some(Event::Fire(who)),
            Kind::Cancel => {
                let next = records.get(next_same_timer[i]);
                if next.is_some_and(|next| next.kind == Kind::Entry) {
                    report.detaches[r.class] += 1;
                    None
                } else if next.is_some_and(|next| next.kind == Kind::Start)
                    && next_same_cpu[i] == next_same_timer[i]
                {
                    report.rearms[r.class] += 1;
                    None
                } else {
                    Some(Event::Stop(who))
                }
            }
            Kind::Start => {
                let deadline = if r.class == WHEEL {
                    wheel_delay(r, jiffies, last_seen, seen.first(), hz)
                        .map(|jiffies| r.ts + ceil_div(jiffies * 1_000_000_000, hz))
                } else {
                    let value = r.soft.or(r.expires);
                    match (value, clocks[i].and_then(offset)) {
                        (Some(value), Some(offset)) => Some(i128::from(value) - offset),
                        _ => None,
                    }
                };
                match deadline {
                    Some(deadline) => Some(Event::Start(who, deadline)),
                    None => {
                        let name = if r.class == WHEEL { "timer" } else { "hrtimer" };
                        *report
                            .skipped
                            .entry(format!("unplaceable-{name}_start"))
                            .or_default() += 1;
                        None
                    }
                }
            }
        };
        if let Some(event) = event {
            builder.event(r.ts, &event);
        }
    }
    builder
}

/// A wheel start's delay in jiffies: its `timeout`, or `expires` minus jiffies estimated
/// from the latest earlier observation (rounded down, so the delay is not short), or from
/// the first observation when there is no earlier one.
fn wheel_delay(
    r: &Record,
    jiffies: Jiffies,
    last: Option<(i128, u64)>,
    first: Option<&(i128, u64)>,
    hz: i128,
) -> Option<i128> {
    if let Some(timeout) = r.timeout {
        return Some(i128::from(timeout));
    }
    let expires = r.expires?;
    let now = match last {
        Some((ts, seen)) => {
            let elapsed = (r.ts - ts) * hz / 1_000_000_000;
            seen.wrapping_add(u64::try_from(elapsed).ok()?)
        }
        None => {
            let (ts, seen) = *first?;
            let before = ceil_div((ts - r.ts) * hz, 1_000_000_000);
            seen.wrapping_sub(u64::try_from(before).ok()?)
        }
    };
    Some(jiffies.diff(expires, now))
}
