//! Every registered timer queue against the reference model, on programs the fuzzer writes.
//!
//! # The input
//!
//! | bytes | meaning |
//! | --- | --- |
//! | 1st | the implementation: `registry::all()` (the project's, then the peers), modulo their number |
//! | 2nd | the setup: bits 0-1 the capacity the queue is built with (0, 1, 16, 1000); bit 2 set: non-default parameters |
//! | then, with bit 2 set | one byte per declared parameter, choosing among the candidate values its `valid` accepts |
//! | the rest | a program: one opcode byte and its operands per operation, until the bytes run out |
//!
//! `TIMERBENCH_FUZZ_IMPL=name` pins the implementation (the first byte is then read and
//! ignored, the parameters still come from the input); `TIMERBENCH_FUZZ_IMPL=name:k=v,...`
//! pins the whole variant (no parameter bytes are read). `TIMERBENCH_FUZZ_SKIP=a,b` leaves
//! implementations out of an unpinned run (an input choosing one does nothing): for known
//! failures while they wait for a fix. Both are read once, at start.
//!
//! The operations: start (a delay drawn from zero, small, slot- and level-boundary, powers
//! of two, huge and `u64::MAX` values; a deadline in the past; a deadline at the end of
//! time; or the deadline of an earlier timer, for ties), stop of the k-th most recent
//! handle, stop of a forged handle, restart (also of a handle never issued), advance by a
//! span (also by 0, and rarely to the end of time), single ticks, and a sleep to
//! `next_deadline` as an event loop would. At the end every queue is drained, every handle
//! stopped, and the queue must be empty and stay silent.
//!
//! The boundary delays are the test suite's (`impls/tests/support/boundaries.rs`), so new
//! edges reach the fuzzer with no edit here; an input's meaning changes with that list (and
//! with the registry's order), so a reproducer is best kept with its printed trace.
//!
//! A failure is a panic: a failed check names the implementation and what broke, and a
//! panic hook prints the last operations asked of the queue (timers by index, deadlines
//! resolved), also for a panic inside the queue itself.
//!
//! # What is checked
//!
//! For every queue, exact or not, per timer (its window is taken at start: `window()` for an
//! approximate queue, [`Window::EXACT`] for an exact one):
//! - it fires at most once, never after a stop or a restart away, with the handle its start
//!   gave and its deadline;
//! - never before the reference fires it unless its window allows early firing;
//! - no longer pending once a clock move reaches `max(deadline, now at start) + window.late`;
//! - `stop` returns its value exactly when it is still pending; `len()` counts those;
//! - a forged handle stops nothing that is not pending; every handle issued is new;
//! - `next_deadline` is `None` exactly when nothing is pending, and repeating
//!   `advance(max(next_deadline, now))` fires something within `next_deadline_steps` rounds.
//!
//! For an exact queue (`precision().is_exact()`), besides: every advance fires the same set
//! as the reference (values and deadlines), in non-decreasing deadline order; every stop
//! and restart returns what the reference's does; `len` and `now` agree; `next_deadline` is
//! at most the earliest deadline (equal when `next_deadline_steps` is 1).
//!
//! # The declarations honoured
//!
//! - `range()`: a start or restart beyond `max_delay` or `max_tick` is skipped; the clock
//!   never moves past `max_tick`.
//! - `empty_time()`: a [`EmptyTime::Walked`] queue visits a bucket per `step` ticks of any
//!   move, so each move is capped at [`WALK_MOVE`] bucket visits (`WALK_MOVE * step` ticks)
//!   and a whole program at [`WALK_TOTAL`] (then the clock stays put). The final drain and
//!   the move after the last stops get one capped move each, towards the latest bound of
//!   any timer started rather than the end of time. A sleep cut short by a cap is not
//!   required to fire anything; timers beyond the caps are stopped at the end instead.
//!   `Scanned` and `Skipped` queues move as asked.
//! - `release()`: a queue that frees a stopped entry later (`Release::Later`) keeps the dead
//!   entry inside; the contract's checks are the same for it (a stop returns the value at
//!   once, a stopped timer never fires, `len` and `next_deadline` ignore dead entries), and
//!   the move after the final stops brings the deferred entries due while nothing may fire.

#![no_main]

#[path = "../../impls/tests/support/boundaries.rs"]
mod boundaries;

use boundaries::BOUNDARY_DELAYS;
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::OnceLock;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::registry::{self, Implementation, QueueVisitor, Variant};
use timerbench_impls::{EmptyTime, Tick, TimerId, TimerQueue, Window};

/// Most bucket visits one clock move of a walked queue may cost.
const WALK_MOVE: Tick = 1 << 16;
/// Most bucket visits a whole program may cost a walked queue (the drain comes on top).
const WALK_TOTAL: Tick = 1 << 18;
/// Operations per program at most (inputs are short anyway: libFuzzer's default -max_len is 4096).
const MAX_OPS: usize = 4096;
/// Parameter values tried, each kept only where the parameter's `valid` accepts it. Kept
/// small so a queue of any of them builds in microseconds.
const CANDIDATES: &[u64] = &[
    1, 2, 3, 4, 5, 7, 8, 9, 16, 20, 32, 60, 63, 64, 100, 128, 256, 512, 1000, 1024, 4096,
];
const CAPACITIES: [usize; 4] = [0, 1, 16, 1000];

/// What `TIMERBENCH_FUZZ_IMPL` pins.
enum Pin {
    Implementation(&'static Implementation),
    Variant(Variant),
}

static PIN: OnceLock<Option<Pin>> = OnceLock::new();
static SKIP: OnceLock<Vec<&'static str>> = OnceLock::new();

fn read_pin() -> Option<Pin> {
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

fn read_skip() -> Vec<&'static str> {
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
struct Bytes<'a> {
    data: &'a [u8],
}

impl Bytes<'_> {
    fn is_empty(&self) -> bool {
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
fn choose(input: &mut Bytes) -> Option<(Variant, usize)> {
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
enum Deadline {
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
enum Op {
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

fn delay(input: &mut Bytes) -> Tick {
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

fn deadline(input: &mut Bytes) -> Deadline {
    match input.byte() % 16 {
        0..=10 => Deadline::After(delay(input)),
        11 | 12 => Deadline::Before(input.bytes(1)),
        13 => Deadline::End(input.bytes(2) % 5_000),
        _ => Deadline::SameAs(usize::from(input.byte())),
    }
}

fn span(input: &mut Bytes) -> Tick {
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

fn op(input: &mut Bytes) -> Op {
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

/// What the queue was asked, as the trace of a failure shows it (timers by their index,
/// which is also their value).
#[derive(Debug, Clone, Copy)]
#[allow(
    dead_code,
    reason = "the fields are read through Debug, by the panic hook"
)]
enum Event {
    Start {
        timer: usize,
        deadline: Tick,
    },
    Stop {
        timer: usize,
    },
    StopForged {
        id: TimerId,
    },
    Restart {
        old: Option<usize>,
        timer: usize,
        deadline: Tick,
    },
    Advance {
        to: Tick,
    },
    NextDeadline,
}

/// The implementation being run and what it was asked so far: kept where the panic hook
/// can print it, since libFuzzer's hook aborts before anything unwinds.
struct Trace {
    label: String,
    events: Vec<Event>,
}

thread_local! {
    static TRACE: RefCell<Trace> = const {
        RefCell::new(Trace { label: String::new(), events: Vec::new() })
    };
}

fn log(event: Event) {
    TRACE.with_borrow_mut(|trace| trace.events.push(event));
}

/// Prints the implementation and its last events after any panic (a failed check or a
/// panic inside the queue), then hands over to libFuzzer's hook.
fn install_trace_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        TRACE.with(|trace| {
            if let Ok(trace) = trace.try_borrow() {
                let skipped = trace.events.len().saturating_sub(60);
                let mut text = format!(
                    "\n{}: {} events; the last {}:\n",
                    trace.label,
                    trace.events.len(),
                    trace.events.len() - skipped
                );
                for (n, event) in trace.events.iter().enumerate().skip(skipped) {
                    let _ = writeln!(text, "  #{n}: {event:?}");
                }
                eprintln!("{text}");
            }
        });
        previous(info);
    }));
}

/// How far the clock may move: `range().max_tick`, and for a walked queue the caps.
struct Limits {
    max_tick: Tick,
    /// Per move and left in total, in ticks, for a walked queue.
    walk: Option<(Tick, Tick)>,
}

impl Limits {
    /// Where a move from `now` that wants to reach `wanted` may go.
    fn reach(&mut self, now: Tick, wanted: Tick) -> Tick {
        let mut to = wanted.min(self.max_tick).max(now);
        if let Some((per_move, left)) = &mut self.walk {
            to = to.min(now.saturating_add((*per_move).min(*left)));
            *left -= to - now;
        }
        to
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Fired,
    Stopped,
}

/// One start, as both queues know it. Its value is its index.
struct Timer {
    subject: TimerId,
    model: TimerId,
    deadline: Tick,
    /// `max(deadline, now at start) + window.late`: no longer pending once a move reaches it.
    latest: Tick,
    early: bool,
    state: State,
    fired_in_model: bool,
}

struct Pair<Q> {
    subject: Q,
    model: ReferenceQueue<u64>,
    exact: bool,
    label: String,
    limits: Limits,
    timers: Vec<Timer>,
    /// The subject's handles, to their timer.
    handles: HashMap<TimerId, usize>,
    /// The subject's pending timers by `(latest, index)`.
    pending: BTreeSet<(Tick, usize)>,
}

macro_rules! ensure {
    ($pair:expr, $condition:expr, $($what:tt)*) => {
        if !$condition {
            $pair.fail(format!($($what)*));
        }
    };
}

impl<Q: TimerQueue<u64>> Pair<Q> {
    #[cold]
    fn fail(&self, what: String) -> ! {
        panic!(
            "{} ({}): {what} (now {}, {} timers started)",
            self.label,
            if self.exact { "exact" } else { "approximate" },
            self.model.now(),
            self.timers.len(),
        );
    }

    fn now(&self) -> Tick {
        self.model.now()
    }

    fn picked(&self, k: usize) -> Option<usize> {
        let last = self.timers.len().checked_sub(1)?;
        Some(last - k % self.timers.len())
    }

    /// The tick `deadline` names now, or `None` when the range forbids it.
    fn resolve(&self, deadline: Deadline) -> Option<Tick> {
        let now = self.now();
        let tick = match deadline {
            Deadline::After(delay) => now.saturating_add(delay),
            Deadline::Before(back) => now.saturating_sub(back),
            Deadline::End(back) => Tick::MAX - back,
            Deadline::SameAs(k) => self.timers[self.picked(k)?].deadline,
        };
        let range = self.subject.range();
        (tick.saturating_sub(now) <= range.max_delay && tick <= range.max_tick).then_some(tick)
    }

    fn window(&self, deadline: Tick) -> Window {
        if self.exact {
            Window::EXACT
        } else {
            self.subject.window(deadline)
        }
    }

    /// Records a timer the subject just started (or restarted) with `handle`, and starts it
    /// in the model.
    fn record(&mut self, handle: TimerId, deadline: Tick, window: Window) {
        let index = self.timers.len();
        let model = self.model.start(deadline, index as u64);
        if let Some(earlier) = self.handles.insert(handle, index) {
            self.fail(format!(
                "start of timer {index} returned {handle:?}, the handle of timer {earlier}"
            ));
        }
        let latest = deadline.max(self.now()).saturating_add(window.late);
        self.timers.push(Timer {
            subject: handle,
            model,
            deadline,
            latest,
            early: window.early,
            state: State::Pending,
            fired_in_model: false,
        });
        self.pending.insert((latest, index));
    }

    fn start(&mut self, deadline: Deadline) {
        let Some(deadline) = self.resolve(deadline) else {
            return;
        };
        let window = self.window(deadline);
        let timer = self.timers.len();
        log(Event::Start { timer, deadline });
        let handle = self.subject.start(deadline, timer as u64);
        self.record(handle, deadline, window);
    }

    /// Checks what the subject's stop (or restart) of timer `index` returned, and stops it
    /// in the model.
    fn stopped(&mut self, index: usize, got: Option<u64>, what: &str) {
        let timer = &self.timers[index];
        let expected = (timer.state == State::Pending).then_some(index as u64);
        ensure!(
            self,
            got == expected,
            "{what} of timer {index} ({:?}, deadline {}, {:?}) returned {got:?}",
            timer.subject,
            timer.deadline,
            timer.state
        );
        let in_model = self.model.stop(timer.model);
        if self.exact {
            ensure!(
                self,
                got == in_model,
                "{what} of timer {index} returned {got:?}, the reference {in_model:?}"
            );
        }
        let timer = &mut self.timers[index];
        if got.is_some() {
            timer.state = State::Stopped;
            self.pending.remove(&(timer.latest, index));
        }
    }

    fn stop(&mut self, k: usize) {
        if let Some(index) = self.picked(k) {
            log(Event::Stop { timer: index });
            let got = self.subject.stop(self.timers[index].subject);
            self.stopped(index, got, "stop");
        }
    }

    fn stop_forged(&mut self, id: TimerId) {
        log(Event::StopForged { id });
        let got = self.subject.stop(id);
        match self.handles.get(&id) {
            Some(&index) => self.stopped(index, got, "stop (forged)"),
            None => ensure!(
                self,
                got.is_none(),
                "stop of {id:?}, a handle never issued, returned {got:?}"
            ),
        }
    }

    fn restart(&mut self, k: usize, deadline: Deadline) {
        let Some(tick) = self.resolve(deadline) else {
            return;
        };
        let window = self.window(tick);
        let value = self.timers.len() as u64;
        let old = self.picked(k);
        // A handle no queue issues (its arena slots stop short of u32::MAX): a plain start.
        let old_handle = old.map_or(TimerId::from_parts(u32::MAX - 1, 1), |i| {
            self.timers[i].subject
        });
        log(Event::Restart {
            old,
            timer: value as usize,
            deadline: tick,
        });
        let (handle, got) = self.subject.restart(old_handle, tick, value);
        match old {
            Some(index) => self.stopped(index, got, "restart"),
            None => ensure!(
                self,
                got.is_none(),
                "restart of a handle never issued returned {got:?}"
            ),
        }
        self.record(handle, tick, window);
    }

    /// Advances both to `to`; returns how many timers the subject fired.
    fn advance(&mut self, to: Tick) -> usize {
        log(Event::Advance { to });
        let mut expected = Vec::new();
        self.model
            .advance(to, |_, value, deadline| expected.push((deadline, value)));
        for &(_, value) in &expected {
            self.timers[value as usize].fired_in_model = true;
        }
        let mut fired = Vec::new();
        self.subject
            .advance(to, |id, value, deadline| fired.push((id, value, deadline)));
        for &(id, value, deadline) in &fired {
            let Some(timer) = self.timers.get(value as usize) else {
                self.fail(format!("advance({to}) fired value {value}, never given"));
            };
            ensure!(
                self,
                id == timer.subject && deadline == timer.deadline,
                "advance({to}) fired timer {value} as {id:?} with deadline {deadline}; \
                 its start gave {:?} and {}",
                timer.subject,
                timer.deadline
            );
            ensure!(
                self,
                timer.state == State::Pending,
                "advance({to}) fired timer {value} (deadline {deadline}), which was {:?}",
                timer.state
            );
            ensure!(
                self,
                timer.fired_in_model || timer.early,
                "advance({to}) fired timer {value} early: deadline {deadline}"
            );
            let latest = timer.latest;
            self.timers[value as usize].state = State::Fired;
            self.pending.remove(&(latest, value as usize));
        }
        if let Some(&(latest, index)) = self.pending.first() {
            ensure!(
                self,
                latest > to,
                "timer {index} (deadline {}) is still pending at {to}, past its bound {latest}",
                self.timers[index].deadline
            );
        }
        if self.exact {
            for pair in fired.windows(2) {
                ensure!(
                    self,
                    pair[0].2 <= pair[1].2,
                    "advance({to}) fired deadline {} before {}",
                    pair[0].2,
                    pair[1].2
                );
            }
            let mut got: Vec<(Tick, u64)> = fired.iter().map(|&(_, v, d)| (d, v)).collect();
            got.sort_unstable();
            expected.sort_unstable();
            ensure!(
                self,
                got == expected,
                "advance({to}) fired {got:?}, the reference {expected:?}"
            );
        }
        fired.len()
    }

    /// A clock move towards `wanted`, as far as the limits allow; returns how many fired and
    /// whether the move was cut short.
    fn move_towards(&mut self, wanted: Tick) -> (usize, bool) {
        let to = self.limits.reach(self.now(), wanted);
        (self.advance(to), to < wanted)
    }

    fn sleep(&mut self) {
        let steps = self.subject.next_deadline_steps();
        let earliest = self.model.next_deadline();
        log(Event::NextDeadline);
        let mut bound = self.subject.next_deadline();
        ensure!(
            self,
            bound.is_none() == self.pending.is_empty(),
            "next_deadline {bound:?} with {} timers pending",
            self.pending.len()
        );
        for round in 0..steps {
            let Some(tick) = bound else {
                if round > 0 {
                    self.fail("next_deadline became None with timers pending".to_string());
                }
                return;
            };
            if self.exact {
                let earliest = earliest.expect("pending in the subject, hence in the model");
                ensure!(
                    self,
                    tick <= earliest,
                    "next_deadline {tick} is past the earliest deadline {earliest}"
                );
                ensure!(
                    self,
                    steps > 1 || tick == earliest,
                    "next_deadline {tick}, the earliest deadline {earliest}: with one step \
                     it must be the deadline itself"
                );
            }
            let wanted = tick.max(self.now());
            let (fired, cut) = self.move_towards(wanted);
            if fired > 0 || cut {
                return;
            }
            log(Event::NextDeadline);
            bound = self.subject.next_deadline();
        }
        self.fail(format!(
            "{steps} rounds of advance(next_deadline) fired nothing (earliest {earliest:?})"
        ));
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Start(deadline) => self.start(deadline),
            Op::Stop(k) => self.stop(k),
            Op::StopForged(index, generation) => {
                self.stop_forged(TimerId::from_parts(index, generation))
            }
            Op::Restart(k, deadline) => self.restart(k, deadline),
            Op::Advance(span) => {
                self.move_towards(self.now().saturating_add(span));
            }
            Op::Tick(n) => {
                for _ in 0..n {
                    self.move_towards(self.now().saturating_add(1));
                }
            }
            Op::Sleep => self.sleep(),
        }
        self.check_counts();
    }

    fn check_counts(&self) {
        let (len, now) = (self.subject.len(), self.subject.now());
        ensure!(
            self,
            len == self.pending.len(),
            "len() is {len}, {} timers pending",
            self.pending.len()
        );
        ensure!(
            self,
            !self.exact || len == self.model.len(),
            "len() is {len}, the reference's {}",
            self.model.len()
        );
        ensure!(
            self,
            now == self.now(),
            "now() is {now}, the reference's {}",
            self.now()
        );
    }

    /// Drains the clock (as far as the limits allow), stops every handle, and checks that the
    /// queue is empty and stays silent.
    fn finish(&mut self) {
        // A skipping queue goes to the end of time; a walker only as far as the last bound
        // of a timer it was given (a move of at most one cap), stopped ones included so that
        // their deferred entries come due in the second move.
        let end = match self.limits.walk {
            Some(_) => self.timers.iter().map(|t| t.latest).max().unwrap_or(0),
            None => Tick::MAX,
        };
        if let Some((per_move, left)) = &mut self.limits.walk {
            *left = *per_move;
        }
        self.move_towards(end);
        for index in 0..self.timers.len() {
            let got = self.subject.stop(self.timers[index].subject);
            self.stopped(index, got, "the final stop");
        }
        self.check_counts();
        log(Event::NextDeadline);
        let bound = self.subject.next_deadline();
        ensure!(
            self,
            bound.is_none(),
            "next_deadline {bound:?} once all is stopped"
        );
        if let Some((per_move, left)) = &mut self.limits.walk {
            *left = *per_move;
        }
        let (fired, _) = self.move_towards(end);
        ensure!(
            self,
            fired == 0,
            "{fired} fired after every timer was stopped"
        );
        self.check_counts();
    }
}

/// Runs the program on the visited implementation.
struct Run<'a> {
    input: Bytes<'a>,
    capacity: usize,
}

impl QueueVisitor for Run<'_> {
    type Output = ();

    fn visit<Q: TimerQueue<u64>>(mut self, variant: &Variant) {
        let subject: Q = variant.build(self.capacity);
        let walk = match subject.empty_time() {
            EmptyTime::Walked { step } => {
                let step = step.max(1);
                Some((
                    WALK_MOVE.saturating_mul(step),
                    WALK_TOTAL.saturating_mul(step),
                ))
            }
            EmptyTime::Skipped | EmptyTime::Scanned => None,
        };
        let limits = Limits {
            max_tick: subject.range().clock_limit(),
            walk,
        };
        let mut pair = Pair {
            exact: subject.precision().is_exact(),
            subject,
            model: ReferenceQueue::new(),
            label: variant.label().to_string(),
            limits,
            timers: Vec::new(),
            handles: HashMap::new(),
            pending: BTreeSet::new(),
        };
        TRACE.with_borrow_mut(|trace| {
            trace.label.clone_from(&pair.label);
            trace.events.clear();
        });
        pair.check_counts();
        for _ in 0..MAX_OPS {
            if self.input.is_empty() {
                break;
            }
            let op = op(&mut self.input);
            pair.apply(op);
        }
        pair.finish();
    }
}

fuzz_target!(
    init: {
        PIN.get_or_init(read_pin);
        SKIP.get_or_init(read_skip);
        install_trace_hook();
    },
    |data: &[u8]| {
        let mut input = Bytes { data };
        if let Some((variant, capacity)) = choose(&mut input) {
            registry::visit(&variant, Run { input, capacity });
        }
    }
);
