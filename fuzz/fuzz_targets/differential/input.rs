//! The input read: the fuzzer's bytes as the implementation to run, its setup, and a program
//! of operations (the module documentation of `differential.rs` has the layout).

use super::*;

/// What `TIMERBENCH_FUZZ_IMPL` pins.
pub(crate) enum Pin {
    Implementation(&'static Implementation),
    Variant(Variant),
}

pub(crate) static PIN: OnceLock<Option<Pin>> = OnceLock::new();
pub(crate) static SKIP: OnceLock<Vec<&'static str>> = OnceLock::new();

pub(crate) fn read_pin() -> Option<Pin> {
    let text = std::env::var("TIMERBENCH_FUZZ_IMPL").ok()?;
    match Variant::parse(&text) {
        Ok(variant) if registry::is_floor(variant.implementation.name) => {
            eprintln!("TIMERBENCH_FUZZ_IMPL={text}: the floor is not a queue");
            std::process::exit(2)
        }
        Ok(variant) if text.contains(':') => Some(Pin::Variant(variant)),
        Ok(variant) => Some(Pin::Implementation(variant.implementation)),
        Err(why) => {
            eprintln!("TIMERBENCH_FUZZ_IMPL={text}: {why}");
            std::process::exit(2)
        }
    }
}

pub(crate) fn read_skip() -> Vec<&'static str> {
    let Ok(text) = std::env::var("TIMERBENCH_FUZZ_SKIP") else {
        return Vec::new();
    };
    let names = text
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty());
    names
        .map(|name| match registry::find(name) {
            Some(implementation) => implementation.name,
            None => {
                eprintln!("TIMERBENCH_FUZZ_SKIP={text}: unknown implementation `{name}`");
                std::process::exit(2)
            }
        })
        .collect()
}

/// The input, read front to back; zeros once it is used up.
pub(crate) struct Bytes<'a> {
    pub(crate) data: &'a [u8],
}

impl Bytes<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn byte(&mut self) -> u8 {
        let Some((&first, rest)) = self.data.split_first() else {
            return 0;
        };
        self.data = rest;
        first
    }

    /// `n` bytes, little-endian.
    fn bytes(&mut self, n: u32) -> u64 {
        (0..n).fold(0, |acc, i| acc | u64::from(self.byte()) << (8 * i))
    }

    fn index(&mut self, len: usize) -> usize {
        usize::from(self.byte()) % len
    }
}

/// The variant the input's first bytes choose, and the capacity to build it with; `None`
/// for a skipped implementation.
pub(crate) fn choose(input: &mut Bytes) -> Option<(Variant, usize)> {
    let all: Vec<&'static Implementation> = registry::all().collect();
    let mut implementation = all[input.index(all.len())];
    let setup = input.byte();
    let capacity = CAPACITIES[usize::from(setup & 3)];
    match PIN.get().and_then(Option::as_ref) {
        Some(Pin::Variant(variant)) => return Some((variant.clone(), capacity)),
        Some(Pin::Implementation(pinned)) => implementation = pinned,
        None if SKIP
            .get()
            .is_some_and(|skip| skip.contains(&implementation.name)) =>
        {
            return None;
        }
        None => {}
    }
    if setup & 4 == 0 || implementation.parameters.is_empty() {
        return Some((Variant::of(implementation), capacity));
    }
    let settings: Vec<String> = implementation
        .parameters
        .iter()
        .map(|parameter| {
            let mut values: Vec<u64> = CANDIDATES
                .iter()
                .copied()
                .filter(|&value| (parameter.valid)(value))
                .collect();
            values.push(parameter.default);
            format!("{}={}", parameter.name, values[input.index(values.len())])
        })
        .collect();
    let text = format!("{}:{}", implementation.name, settings.join(","));
    let variant = Variant::parse(&text).unwrap_or_else(|why| panic!("{text}: {why}"));
    Some((variant, capacity))
}

/// Where a started timer's deadline lies.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Deadline {
    /// `now + delay`, saturating.
    After(Tick),
    /// `now - back`, saturating: already due.
    Before(Tick),
    /// `u64::MAX - back`: the end of time.
    End(Tick),
    /// The deadline of the k-th most recent timer: a tie.
    SameAs(usize),
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    Start(Deadline),
    /// Stop the k-th most recent handle (modulo how many were issued).
    Stop(usize),
    /// Stop a handle made up from its parts.
    StopForged(u32, u32),
    /// Restart the k-th most recent handle (a handle never issued when there is none).
    Restart(usize, Deadline),
    /// `advance(now + span)`, saturating.
    Advance(Tick),
    /// `advance(now + 1)`, n times.
    Tick(u8),
    /// `next_deadline`, then advance to it as an event loop sleeps.
    Sleep,
}

pub(crate) fn delay(input: &mut Bytes) -> Tick {
    match input.byte() % 16 {
        0 => 0,
        1..=4 => 1 + input.bytes(1) % 100,
        5 | 6 => BOUNDARY_DELAYS[input.index(BOUNDARY_DELAYS.len())],
        7 => {
            let edge = BOUNDARY_DELAYS[input.index(BOUNDARY_DELAYS.len())];
            (edge + input.bytes(1) % 9).saturating_sub(4)
        }
        8 => {
            let power = 1u64 << (input.byte() % 64);
            (power + input.bytes(1) % 5).saturating_sub(2)
        }
        9 => input.bytes(2),
        10 => 100 + input.bytes(3) % 100_000,
        11 => input.bytes(4),
        12 => input.bytes(8),
        13 => Tick::MAX,
        14 => Tick::MAX - input.bytes(1),
        _ => 1 + input.bytes(1) % 8,
    }
}

pub(crate) fn deadline(input: &mut Bytes) -> Deadline {
    match input.byte() % 16 {
        0..=10 => Deadline::After(delay(input)),
        11 | 12 => Deadline::Before(input.bytes(1)),
        13 => Deadline::End(input.bytes(2) % 5_000),
        _ => Deadline::SameAs(usize::from(input.byte())),
    }
}

pub(crate) fn span(input: &mut Bytes) -> Tick {
    match input.byte() % 24 {
        0 => 0,
        1..=8 => 1 + input.bytes(1) % 70,
        9..=12 => BOUNDARY_DELAYS[input.index(BOUNDARY_DELAYS.len())],
        13..=16 => 70 + input.bytes(2) % 20_000,
        17..=19 => 1 + input.bytes(1) % 8,
        20 | 21 => 1 + input.bytes(3),
        22 => (1 << 20) + input.bytes(8) % (1 << 44),
        // The end of time, rarely: the clock stays there for the rest of the program.
        _ => Tick::MAX,
    }
}

pub(crate) fn op(input: &mut Bytes) -> Op {
    match input.byte() % 32 {
        0..=11 => Op::Start(deadline(input)),
        12..=15 => Op::Stop(usize::from(input.byte())),
        16 => Op::StopForged(u32::from(input.byte() % 64), u32::from(input.byte() % 8)),
        17 | 18 => Op::Restart(usize::from(input.byte()), deadline(input)),
        19..=23 => Op::Advance(span(input)),
        24 | 25 => Op::Tick(1 + input.byte() % 40),
        _ => Op::Sleep,
    }
}
