//! One line of an ftrace text trace, read into a record: the line layout and the events'
//! fields, by name (see the parent module for which fields of which kernels). Kept apart
//! from the conversion so that the layout of a line is all in one place.

use super::{HRTIMER, WHEEL};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Init,
    Start,
    Cancel,
    Entry,
    Exit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Clock {
    Mono,
    Boot,
    Real,
    Tai,
}

pub(super) struct Record {
    pub(super) ts: i128,
    pub(super) cpu: u32,
    pub(super) class: usize,
    pub(super) kind: Kind,
    pub(super) address: String,
    pub(super) expires: Option<u64>,
    pub(super) soft: Option<u64>,
    pub(super) timeout: Option<i64>,
    pub(super) now: Option<u64>,
    pub(super) clock: Option<Clock>,
}

/// The timer events, by name: class and kind.
fn classify(name: &str) -> Option<(usize, Kind)> {
    Some(match name {
        "timer_init" => (WHEEL, Kind::Init),
        "timer_start" => (WHEEL, Kind::Start),
        "timer_cancel" => (WHEEL, Kind::Cancel),
        "timer_expire_entry" => (WHEEL, Kind::Entry),
        "timer_expire_exit" => (WHEEL, Kind::Exit),
        "hrtimer_init" | "hrtimer_setup" => (HRTIMER, Kind::Init),
        "hrtimer_start" => (HRTIMER, Kind::Start),
        "hrtimer_cancel" => (HRTIMER, Kind::Cancel),
        "hrtimer_expire_entry" => (HRTIMER, Kind::Entry),
        "hrtimer_expire_exit" => (HRTIMER, Kind::Exit),
        _ => return None,
    })
}

/// `SECONDS.FRACTION` to nanoseconds, exactly.
fn parse_timestamp(text: &str) -> Option<i128> {
    let (seconds, fraction) = text.split_once('.').unwrap_or((text, ""));
    if seconds.is_empty() || !seconds.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) || fraction.len() > 9 {
        return None;
    }
    let nanos: i128 = format!("{fraction:0<9}").parse().ok()?;
    // At most 2^63 nanoseconds (292 years of uptime), so that every later difference of
    // two timestamps times a tick rate stays far inside `i128`.
    let seconds: i128 = seconds.parse().ok()?;
    let total = seconds.checked_mul(1_000_000_000)? + nanos;
    (total <= i128::from(i64::MAX)).then_some(total)
}

/// The clock a setup's `clockid` and `mode` put a timer on.
fn clock_of(clockid: &str, mode: &str) -> Option<Clock> {
    Some(match clockid {
        "CLOCK_MONOTONIC" | "1" => Clock::Mono,
        "CLOCK_BOOTTIME" | "7" => Clock::Boot,
        // hrtimer setup moves a relative realtime timer onto the monotonic clock.
        "CLOCK_REALTIME" | "0" if mode.contains("REL") => Clock::Mono,
        "CLOCK_REALTIME" | "0" => Clock::Real,
        "CLOCK_TAI" | "11" => Clock::Tai,
        _ => return None,
    })
}

/// Why a line is not a record: the reason's name for [`Report::skipped`].
pub(super) enum Skip {
    NotAnEvent,
    Other(String),
    Malformed(String),
}

/// Parses one line of a trace.
pub(super) fn parse_line(line: &str) -> Result<(Record, &str), Skip> {
    let offset = |token: &str| token.as_ptr() as usize - line.as_ptr() as usize;
    let mut tokens = line.split_whitespace();
    // The CPU: the first `[digits]` token (task names may hold spaces, not that).
    let cpu = tokens
        .by_ref()
        .find_map(|t| t.strip_prefix('[')?.strip_suffix(']')?.parse::<u32>().ok())
        .ok_or(Skip::NotAnEvent)?;
    // Then optional flags, then the timestamp, ending in `:`.
    let ts = tokens
        .by_ref()
        .take(2)
        .find_map(|t| parse_timestamp(t.strip_suffix(':')?))
        .ok_or(Skip::NotAnEvent)?;
    let name_token = tokens.next().ok_or(Skip::NotAnEvent)?;
    let name = name_token.strip_suffix(':').ok_or(Skip::NotAnEvent)?;
    let Some((class, kind)) = classify(name) else {
        return Err(Skip::Other(name.to_string()));
    };
    let rest = &line[offset(name_token) + name_token.len()..];
    let fields: Vec<(&str, &str)> = rest
        .split_whitespace()
        .filter_map(|t| {
            t.trim_start_matches('[')
                .trim_end_matches(']')
                .split_once('=')
        })
        .collect();
    let field = |key: &str| fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let number = |key: &str| field(key).and_then(|v| v.parse::<u64>().ok());
    let malformed = || Skip::Malformed(name.to_string());
    let address = field(if class == WHEEL { "timer" } else { "hrtimer" })
        .filter(|a| !a.is_empty())
        .ok_or_else(malformed)?
        .to_string();
    let expires = number("expires");
    if kind == Kind::Start && expires.is_none() {
        return Err(malformed());
    }
    let clock = match (field("clockid"), kind) {
        (Some(id), Kind::Init) => clock_of(id, field("mode").unwrap_or("")),
        _ => None,
    };
    let record = Record {
        ts,
        cpu,
        class,
        kind,
        address,
        expires,
        soft: number("softexpires"),
        timeout: field("timeout").and_then(|v| v.parse().ok()),
        now: number("now"),
        clock,
    };
    Ok((record, name))
}
