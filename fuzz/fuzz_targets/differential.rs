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
#[path = "differential/input.rs"]
mod input;
#[path = "differential/pair.rs"]
mod pair;
#[path = "differential/trace.rs"]
mod trace;

use boundaries::BOUNDARY_DELAYS;
use input::*;
use libfuzzer_sys::fuzz_target;
use pair::*;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::OnceLock;
use timerbench_impls::reference::ReferenceQueue;
use timerbench_impls::registry::{self, Implementation, QueueVisitor, Variant};
use timerbench_impls::{EmptyTime, Tick, TimerId, TimerQueue, Window};
use trace::*;

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
