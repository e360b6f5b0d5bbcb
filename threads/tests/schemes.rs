//! Every scheme around a few structures verifies on small concurrent workloads, and a
//! structure that drops a stop is caught with its first offending timer. No timing is
//! asserted: only what the logs say.

use std::collections::HashMap;
use std::sync::Mutex;
use timerbench_impls::{Tick, TimerId, TimerQueue, Variant};
use timerbench_threads::streams::{Streams, split};
use timerbench_threads::{SchemeKind, run, run_with};
use timerbench_workloads::families::{GenSpec, generate};

fn workload(
    family: &str,
    timers: u64,
    ops: u64,
    params: &[(&str, &str)],
) -> timerbench_workloads::Workload {
    let spec = GenSpec {
        timers,
        ops: Some(ops),
        seed: 7,
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    generate(family, &spec).expect("a valid small workload")
}

/// start-stop whose background timers come due during the run, so that firing is checked
/// as well as stopping; half the stops cross threads.
fn start_stop(threads: usize) -> Streams {
    let w = workload(
        "start-stop",
        300,
        3000,
        &[
            ("far", "2"),
            ("spread", "5"),
            ("delay", "1"),
            ("advance-every", "50"),
        ],
    );
    split(&w, threads, 0.5, 1).expect("split")
}

fn keepalive(threads: usize) -> Streams {
    let w = workload(
        "keepalive",
        200,
        300,
        &[("timeout", "40"), ("rate", "2000")],
    );
    split(&w, threads, 0.5, 1).expect("split")
}

#[test]
fn every_scheme_verifies_on_small_concurrent_workloads() {
    for name in [
        "binary-heap",
        "hierarchical-wheel",
        "incremental-wheel",
        "netty-wheel",
    ] {
        let variant = Variant::parse(name).expect("registered");
        for threads in [1, 3] {
            for streams in [start_stop(threads), keepalive(threads)] {
                for scheme in SchemeKind::ALL {
                    let outcome = run(&variant, scheme, 4, &streams);
                    assert_eq!(
                        outcome.verdict,
                        Ok(()),
                        "{} around {name} at {threads} threads",
                        scheme.name()
                    );
                    assert!(outcome.finished.logs.iter().any(|l| !l.entries.is_empty()));
                }
            }
        }
    }
}

#[test]
fn the_split_crosses_stops_only_with_several_producers() {
    assert_eq!(start_stop(1).cross_stops, 0);
    let two = start_stop(2);
    assert!(two.cross_stops > 0 && two.cross_stops < 3000);
    // Every start and stop lands in exactly one stream: the 300 resident starts and the
    // 3000 start/stop pairs (the first pair's start is among the leading starts).
    let streamed: usize = two.ops.iter().chain(&two.fill).map(Vec::len).sum();
    assert_eq!(streamed, 300 + 6000);
}

/// The keys whose stop [`DropsAStop`] acknowledged without stopping.
static DROPPED: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// A binary heap that acknowledges its fifth successful stop but keeps the timer pending
/// (stops it and starts it again at the same deadline): a lost stop.
struct DropsAStop {
    inner: timerbench_impls::binary_heap::BinaryHeapTimers<u64>,
    deadlines: HashMap<TimerId, Tick>,
    found: u32,
}

impl TimerQueue<u64> for DropsAStop {
    fn with_capacity(capacity: usize) -> Self {
        DropsAStop {
            inner: TimerQueue::with_capacity(capacity),
            deadlines: HashMap::new(),
            found: 0,
        }
    }
    fn start(&mut self, deadline: Tick, value: u64) -> TimerId {
        let id = self.inner.start(deadline, value);
        self.deadlines.insert(id, deadline);
        id
    }
    fn stop(&mut self, id: TimerId) -> Option<u64> {
        let value = self.inner.stop(id)?;
        self.found += 1;
        if self.found == 5 {
            DROPPED.lock().unwrap().push(value);
            self.inner.start(self.deadlines[&id], value);
        }
        Some(value)
    }
    fn advance<F: FnMut(TimerId, u64, Tick)>(&mut self, to: Tick, on_fire: F) {
        self.inner.advance(to, on_fire)
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
}

#[test]
fn a_dropped_stop_is_caught_with_its_timer() {
    let w = workload(
        "start-stop",
        10,
        200,
        &[("delay", "1"), ("advance-every", "1")],
    );
    let streams = split(&w, 2, 0.5, 3).expect("split");
    let variant = Variant::parse("binary-heap").unwrap();
    let outcome = run_with::<DropsAStop>(&variant, SchemeKind::GlobalLock, 1, &streams);
    let offence = outcome.verdict.expect_err("a dropped stop is caught");
    assert_eq!(DROPPED.lock().unwrap().as_slice(), &[offence.key]);
    assert!(
        offence.why.contains("after its stop was acknowledged"),
        "{offence}"
    );
}

#[test]
fn unknown_scheme_names_the_known_ones() {
    let error = SchemeKind::parse("spinlock").unwrap_err();
    assert!(
        error.contains("spinlock") && error.contains("per-thread"),
        "{error}"
    );
}

mod logs {
    use timerbench_impls::Window;
    use timerbench_threads::log::{Entry, ShardLog, verify};

    fn start(key: u64, deadline: u64) -> Entry {
        Entry::Start {
            key,
            deadline,
            window: Window::EXACT,
        }
    }

    fn check(entries: Vec<Entry>) -> Result<(), (u64, usize, String)> {
        verify(&[ShardLog { shard: 0, entries }]).map_err(|o| (o.key, o.sequence, o.why))
    }

    #[test]
    fn a_timer_left_pending_past_its_deadline_is_lost() {
        let verdict = check(vec![
            start(1, 5),
            start(2, 9),
            Entry::Advance {
                to: 6,
                fired: vec![],
            },
        ]);
        let (key, sequence, why) = verdict.unwrap_err();
        assert_eq!((key, sequence), (1, 2));
        assert!(why.starts_with("lost"), "{why}");
    }

    #[test]
    fn a_timer_fired_twice_is_caught() {
        let fire = |to| Entry::Advance {
            to,
            fired: vec![(1, 5)],
        };
        let (key, sequence, why) = check(vec![start(1, 5), fire(5), fire(6)]).unwrap_err();
        assert_eq!((key, sequence), (1, 2));
        assert!(why.starts_with("fired twice"), "{why}");
    }

    #[test]
    fn an_approximate_timer_may_fire_within_its_window() {
        let late = Window {
            late: 3,
            early: false,
        };
        let entries = vec![
            Entry::Start {
                key: 1,
                deadline: 5,
                window: late,
            },
            Entry::Advance {
                to: 6,
                fired: vec![],
            },
            Entry::Advance {
                to: 8,
                fired: vec![(1, 5)],
            },
        ];
        assert_eq!(check(entries), Ok(()));
    }
}
