//! The lockstep verification of approximate implementations (`workloads::bounded`): a
//! queue that keeps its declared window verifies and its lateness is measured; one that
//! breaks it in any way (late past its bound, early without a clamp, a stopped timer
//! fired, a timer fired twice) is caught at the line where it happens.

use std::path::Path;
use timerbench_impls::btree::BTreeTimers;
use timerbench_impls::{Precision, Tick, TimerId, TimerQueue, Window};
use timerbench_workloads::Program;
use timerbench_workloads::program::load_from;
use timerbench_workloads::replay::replay_within_bound;

fn program(text: &str) -> Program {
    load_from(text.as_bytes(), Path::new("w.tw")).unwrap()
}

/// An exact B-tree behind a shift: every timer is filed `shift` ticks after its deadline
/// (before it, when negative), and the queue declares a window of `late` ticks (early
/// firing allowed when `early`). The values carry the requested deadline, so `on_fire`
/// reports it as a real approximate structure does.
struct Shifted {
    inner: BTreeTimers<(u64, Tick)>,
    shift: i64,
    late: Tick,
    early: bool,
    /// Fire this timer value a second time, on the move after its first firing.
    echo: Option<u64>,
    echoed: Option<(TimerId, u64, Tick)>,
}

impl Shifted {
    fn new(shift: i64, late: Tick, early: bool) -> Self {
        Shifted {
            inner: BTreeTimers::new(),
            shift,
            late,
            early,
            echo: None,
            echoed: None,
        }
    }
}

impl TimerQueue<u64> for Shifted {
    fn with_capacity(_: usize) -> Self {
        Shifted::new(0, 0, false)
    }
    fn start(&mut self, deadline: Tick, value: u64) -> TimerId {
        let filed = deadline.saturating_add_signed(self.shift);
        self.inner.start(filed, (value, deadline))
    }
    fn stop(&mut self, id: TimerId) -> Option<u64> {
        self.inner.stop(id).map(|(value, _)| value)
    }
    fn advance<F: FnMut(TimerId, u64, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        if let Some((id, value, deadline)) = self.echoed.take() {
            on_fire(id, value, deadline);
        }
        let echo = self.echo;
        let mut echoed = None;
        self.inner.advance(to, |id, (value, deadline), _| {
            if echo == Some(value) {
                echoed = Some((id, value, deadline));
            }
            on_fire(id, value, deadline)
        });
        self.echoed = echoed;
    }
    fn next_deadline(&mut self) -> Option<Tick> {
        self.inner.next_deadline()
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn now(&self) -> Tick {
        self.inner.now()
    }
    fn work(&self) -> u64 {
        self.inner.work()
    }
    fn precision(&self) -> Precision {
        Precision::Approximate("shifted by a fixed number of ticks")
    }
    fn window(&self, _: Tick) -> Window {
        Window {
            late: self.late,
            early: self.early,
        }
    }
}

/// Three timers, the clock moved tick by tick, one stopped, one restarted.
const TICKS: &str = "timer-workload v1\ns 1 5\ns 2 10\ns 3 12\nt 3\nx 3\nr 2 4\nt 20\n";

#[test]
fn late_within_the_window_verifies_and_is_measured() {
    let mut log = Vec::new();
    let replay = replay_within_bound(Shifted::new(2, 2, false), &program(TICKS), &mut log)
        .expect("two ticks late within a two-tick window");
    let lateness = replay.lateness;
    assert_eq!((lateness.firings(), lateness.late), (2, 2));
    assert_eq!((lateness.quantile(0.5), lateness.max()), (2, 2));
    // Timer 1: delay 5, 2 late; timer 2, restarted at 3 with delay 4: 2 late.
    assert!((lateness.largest_fraction - 0.5).abs() < 1e-9);
    // Beyond the first tick: 1 of 4.
    assert!((lateness.largest_fraction_beyond_one_tick - 0.25).abs() < 1e-9);
    assert_eq!(replay.summary.fired, 2);
    // Its own log: timer 1 fired at tick 7, not 5.
    assert_eq!((log[0].now, log[0].deadline), (7, 5));
}

#[test]
fn the_one_tick_every_timer_is_rounded_up_is_not_counted_beyond_it() {
    // A wheel that files every timer one tick late (Linux's round-up at level 0): on
    // delays 1 and 2 that tick is all of the delay, or half, and nothing beyond it.
    let text = "timer-workload v1\ns 1 1\ns 2 2\ns 3 10\nt 20\n";
    let replay = replay_within_bound(Shifted::new(1, 1, false), &program(text), &mut Vec::new())
        .expect("one tick late within a one-tick window");
    let lateness = replay.lateness;
    assert_eq!(
        (lateness.firings(), lateness.late, lateness.max()),
        (3, 3, 1)
    );
    assert!((lateness.largest_fraction - 1.0).abs() < 1e-9);
    assert_eq!(lateness.largest_fraction_beyond_one_tick, 0.0);
    // Three ticks late on delay 10: 0.3 of it, two ticks (0.2) beyond the first.
    let text = "timer-workload v1\ns 1 10\nt 20\n";
    let replay =
        replay_within_bound(Shifted::new(3, 3, false), &program(text), &mut Vec::new()).unwrap();
    assert!((replay.lateness.largest_fraction - 0.3).abs() < 1e-9);
    assert!((replay.lateness.largest_fraction_beyond_one_tick - 0.2).abs() < 1e-9);
}

#[test]
fn late_past_the_window_is_caught_at_its_line() {
    let mut log = Vec::new();
    let error =
        replay_within_bound(Shifted::new(3, 2, false), &program(TICKS), &mut log).unwrap_err();
    // Timer 1 (deadline 5) must be gone once a move reaches 7: the tick to 7 is in the
    // `t 20` of line 8.
    assert!(error.starts_with("line 8 (`t 20`): timer 1"), "{error}");
    assert!(error.contains("past its declared bound (7)"), "{error}");
}

#[test]
fn early_is_caught_unless_the_window_allows_it() {
    let mut log = Vec::new();
    let error =
        replay_within_bound(Shifted::new(-1, 5, false), &program(TICKS), &mut log).unwrap_err();
    assert!(
        error.starts_with("line 8 (`t 20`): timer 1 (deadline 5) fired early, at 4"),
        "{error}"
    );
    let replay = replay_within_bound(Shifted::new(-1, 5, true), &program(TICKS), &mut log)
        .expect("early firing declared (a clamp)");
    assert_eq!((replay.lateness.early, replay.lateness.most_early), (2, 1));
}

#[test]
fn a_timer_fired_twice_is_caught() {
    let mut queue = Shifted::new(0, 0, false);
    queue.echo = Some(0);
    let error = replay_within_bound(queue, &program(TICKS), &mut Vec::new()).unwrap_err();
    assert!(
        error.contains("timer 1 fired at 6 but was not pending"),
        "{error}"
    );
}

#[test]
fn a_stopped_timer_that_fires_is_caught() {
    /// Forgets stops: the timer stays filed and fires.
    struct Forgetful(Shifted);
    impl TimerQueue<u64> for Forgetful {
        fn with_capacity(_: usize) -> Self {
            Forgetful(Shifted::new(0, 0, false))
        }
        fn start(&mut self, deadline: Tick, value: u64) -> TimerId {
            self.0.start(deadline, value)
        }
        fn stop(&mut self, id: TimerId) -> Option<u64> {
            // Answers as if it stopped it, but keeps it.
            self.0.inner.stop(id).map(|(value, deadline)| {
                self.0.inner.start(deadline, (value, deadline));
                value
            })
        }
        fn advance<F: FnMut(TimerId, u64, Tick)>(&mut self, to: Tick, on_fire: F) {
            self.0.advance(to, on_fire)
        }
        fn next_deadline(&mut self) -> Option<Tick> {
            self.0.next_deadline()
        }
        fn len(&self) -> usize {
            self.0.len()
        }
        fn now(&self) -> Tick {
            self.0.now()
        }
        fn work(&self) -> u64 {
            self.0.work()
        }
        fn precision(&self) -> Precision {
            self.0.precision()
        }
    }
    let text = "timer-workload v1\ns 1 5\na 2\nx 1\na 10\n";
    let error = replay_within_bound(
        Forgetful(Shifted::new(0, 0, false)),
        &program(text),
        &mut Vec::new(),
    )
    .unwrap_err();
    assert!(error.starts_with("line 5 (`a 10`): timer 1 "), "{error}");
}

#[test]
fn a_late_timer_stopped_or_left_pending_is_counted_not_failed() {
    // Timer 1 is due at 5 and fires 3 late in a 4-tick window: stopped at 6 while late.
    // Timer 2 is due at 9 and still pending, late, when the workload ends at 10.
    let text = "timer-workload v1\ns 1 5\ns 2 9\na 6\nx 1\na 4\n";
    let replay =
        replay_within_bound(Shifted::new(3, 4, false), &program(text), &mut Vec::new()).unwrap();
    assert_eq!(replay.lateness.stopped_late, 1);
    assert_eq!(replay.lateness.pending_late, 1);
    assert_eq!(replay.summary.stopped, 1, "the queue's own count");
    assert_eq!(replay.summary.pending, 1);
}

#[test]
fn a_timer_named_again_while_its_late_instance_is_pending_is_followed_apart() {
    // The model fires timer 1 at 5; the workload starts it again at 6 while the queue
    // still holds the first one (3 late): both fire, each within its window.
    let text = "timer-workload v1\ns 1 5\na 6\ns 1 10\nt 20\n";
    let mut log = Vec::new();
    let replay = replay_within_bound(Shifted::new(3, 3, false), &program(text), &mut log).unwrap();
    assert_eq!(replay.summary.fired, 2);
    let fired: Vec<(u64, u64)> = log.iter().map(|f| (f.now, f.deadline)).collect();
    assert_eq!(fired, [(8, 5), (19, 16)]);
}
