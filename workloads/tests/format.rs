//! The v1 format end to end: semantic errors found by running the model, writing and
//! reading back, no panic on any input, atomic writes, and a replay check that does fail
//! when an implementation is wrong.

use proptest::prelude::*;
use std::path::Path;
use timerbench_impls::btree::BTreeTimers;
use timerbench_impls::{Tick, TimerId, TimerQueue};
use timerbench_workloads::metadata::Metadata;
use timerbench_workloads::program::load_from;
use timerbench_workloads::reader::Reader;
use timerbench_workloads::replay::{ReplayError, replay};
use timerbench_workloads::writer::{write_atomically, write_file, write_to};
use timerbench_workloads::{Op, Workload, load};

fn load_text(text: &str) -> Result<timerbench_workloads::Program, String> {
    load_from(text.as_bytes(), Path::new("w.tw")).map_err(|e| e.to_string())
}

#[test]
fn starting_a_pending_timer_is_an_error_on_its_line() {
    let error = load_text("timer-workload v1\ns 1 5\na 1\ns 1 6\n").unwrap_err();
    assert!(
        error.starts_with("w.tw:4: timer 1 is already pending"),
        "{error}"
    );
    // Legal once it fired or was stopped.
    load_text("timer-workload v1\ns 1 5\na 5\ns 1 6\nx 1\ns 1 2\n").unwrap();
}

#[test]
fn sums_that_reach_2_pow_63_are_errors_on_their_line() {
    let limit = 1u64 << 63;
    for (text, line) in [
        (format!("timer-workload v1\na 5\ns 1 {}\n", limit - 5), 3),
        (format!("timer-workload v1\na 5\nr 1 {}\n", limit - 1), 3),
        (format!("timer-workload v1\na 1\na {}\n", limit - 1), 3),
        (format!("timer-workload v1\nt 3\nt {}\n", limit - 3), 3),
    ] {
        let error = load_text(&text).unwrap_err();
        assert!(error.starts_with(&format!("w.tw:{line}: now (")), "{error}");
        assert!(error.contains("reaches 2^63"), "{error}");
    }
    // Just below the limit is fine.
    load_text(&format!("timer-workload v1\na 5\ns 1 {}\nn\n", limit - 6)).unwrap();
}

#[test]
fn a_missing_file_is_named() {
    let error = load(Path::new("/no/such/workload.tw"))
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("/no/such/workload.tw: cannot open:"),
        "{error}"
    );
}

#[test]
fn a_failed_write_leaves_nothing_behind() {
    let folder = tempfile::tempdir().unwrap();
    let target = folder.path().join("out.tw");
    let result = write_atomically(&target, |file| {
        use std::io::Write;
        file.write_all(b"timer-workload v1\ns 1 ")?;
        Err(std::io::Error::other("interrupted"))
    });
    assert!(result.is_err());
    let left: Vec<_> = std::fs::read_dir(folder.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn a_written_file_reads_back_identical() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("w.tw");
    let mut metadata = Metadata::new();
    metadata.push("name", "round trip");
    metadata.push("description", "two\nlines become one");
    metadata.push("custom-key", "");
    let workload = Workload {
        metadata,
        ops: vec![
            Op::Start { id: 3, delay: 0 },
            Op::Restart { id: 4, delay: 9 },
            Op::Next,
            Op::Stop { id: 3 },
            Op::Tick { ticks: 2 },
            Op::Advance { ticks: 7 },
        ],
    };
    write_file(&path, &workload).unwrap();
    let program = load(&path).unwrap();
    assert_eq!(
        program.metadata.get("description"),
        Some("two lines become one")
    );
    assert_eq!(program.metadata.get("custom-key"), Some(""));
    assert_eq!(program.steps.len(), workload.ops.len());
    assert_eq!(program.bytes, std::fs::metadata(&path).unwrap().len());
}

fn op() -> impl Strategy<Value = Op> {
    let id = prop_oneof![0u64..10, any::<u64>()];
    let amount = prop_oneof![0u64..100, 0u64..(1 << 63)];
    prop_oneof![
        (id.clone(), amount.clone()).prop_map(|(id, delay)| Op::Start { id, delay }),
        id.clone().prop_map(|id| Op::Stop { id }),
        (id, amount.clone()).prop_map(|(id, delay)| Op::Restart { id, delay }),
        amount.clone().prop_map(|t| Op::Advance { ticks: t.max(1) }),
        amount.prop_map(|t| Op::Tick { ticks: t.max(1) }),
        Just(Op::Next),
    ]
}

fn read_back(bytes: &[u8]) -> (Metadata, Vec<Op>) {
    let mut reader = Reader::new(bytes, Path::new("mem.tw")).expect("readable");
    let mut ops = Vec::new();
    while let Some((_, op)) = reader.next_op().expect("well-formed") {
        ops.push(op);
    }
    (reader.metadata().clone(), ops)
}

proptest! {
    /// Whatever is written reads back the same, metadata and operations alike (the reader
    /// alone: these sequences need not be runnable).
    #[test]
    fn write_then_read_is_the_identity(
        ops in proptest::collection::vec(op(), 0..200),
        entries in proptest::collection::vec(("[a-z][a-z0-9-]{0,10}", "[ -~]{0,30}"), 0..5),
    ) {
        let mut metadata = Metadata::new();
        for (key, value) in &entries {
            metadata.push(key.as_str(), value.trim_matches(' '));
        }
        let workload = Workload { metadata: metadata.clone(), ops: ops.clone() };
        let bytes = write_to(Vec::new(), &workload).unwrap();
        let (read_metadata, read_ops) = read_back(&bytes);
        prop_assert_eq!(read_metadata, metadata);
        prop_assert_eq!(read_ops, ops);
    }

    /// No input makes the loader panic: it loads or it says where it is wrong.
    #[test]
    fn any_bytes_load_or_fail_cleanly(
        lines in proptest::collection::vec(
            prop_oneof![
                Just("timer-workload v1".to_string()),
                "[sxratn@# ]{0,3}[ 0-9-]{0,25}",
                "[ -~]{0,20}",
                proptest::collection::vec(any::<u8>(), 0..10)
                    .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
            ],
            0..30,
        ),
        raw in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut bytes = lines.join("\n").into_bytes();
        bytes.extend(&raw);
        match load_from(&bytes[..], Path::new("f.tw")) {
            Ok(_) => {}
            Err(e) => {
                let message = e.to_string();
                prop_assert!(message.starts_with("f.tw:"), "{}", message);
            }
        }
    }
}

/// A queue that is wrong on purpose: it delays every timer whose deadline is a multiple of
/// 7 by one tick. The replay must catch it and name where.
struct LateBySeven(BTreeTimers<u64>);

impl TimerQueue<u64> for LateBySeven {
    fn with_capacity(capacity: usize) -> Self {
        LateBySeven(BTreeTimers::with_capacity(capacity))
    }
    fn start(&mut self, deadline: Tick, value: u64) -> TimerId {
        let late = if deadline.is_multiple_of(7) {
            deadline + 1
        } else {
            deadline
        };
        self.0.start(late, value)
    }
    fn stop(&mut self, id: TimerId) -> Option<u64> {
        self.0.stop(id)
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
}

#[test]
fn a_replay_that_fires_late_is_caught_at_the_right_line() {
    let program = load_text("timer-workload v1\ns 1 5\ns 2 7\na 6\na 1\na 1\n").unwrap();
    let mut log = Vec::new();
    replay(BTreeTimers::<u64>::new(), &program, &mut log).expect("the real btree is right");
    let error = replay(LateBySeven::new(), &program, &mut log).unwrap_err();
    match &error {
        ReplayError::Differs {
            line,
            expected,
            got,
            ..
        } => {
            assert_eq!(*line, 5, "{error}");
            assert_eq!(expected, "`7 2 7`");
            assert_eq!(got, "`8 2 8`");
        }
        other => panic!("expected a differing firing, got {other}"),
    }
}

/// A queue that is wrong on purpose in a way only the clock of the log shows: it fires
/// every timer one clock move late, with its true deadline. Under `a 1` steps and inside a
/// single `t N` line alike, the replay must catch it.
struct OneMoveLate {
    inner: BTreeTimers<u64>,
    now: Tick,
}

impl TimerQueue<u64> for OneMoveLate {
    fn with_capacity(capacity: usize) -> Self {
        OneMoveLate {
            inner: BTreeTimers::with_capacity(capacity),
            now: 0,
        }
    }
    fn start(&mut self, deadline: Tick, value: u64) -> TimerId {
        self.inner.start(deadline, value)
    }
    fn stop(&mut self, id: TimerId) -> Option<u64> {
        self.inner.stop(id)
    }
    fn advance<F: FnMut(TimerId, u64, Tick)>(&mut self, to: Tick, on_fire: F) {
        // The inner clock trails by one move: what is due now fires on the next call.
        self.inner.advance(self.now, on_fire);
        self.now = to;
    }
    fn next_deadline(&mut self) -> Option<Tick> {
        self.inner.next_deadline()
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn now(&self) -> Tick {
        self.now
    }
    fn work(&self) -> u64 {
        self.inner.work()
    }
}

#[test]
fn a_firing_late_within_one_tick_line_is_caught_at_its_tick() {
    // Deadline 3 inside `t 10`: the reference fires it on the third tick (`3 1 3`); the
    // late queue on the fourth. Logged at the end of the line, both would read `10 1 3`.
    let program = load_text("timer-workload v1\ns 1 3\nt 10\n").unwrap();
    let mut log = Vec::new();
    replay(BTreeTimers::<u64>::new(), &program, &mut log).expect("the real btree is right");
    assert_eq!((log[0].now, log[0].deadline), (3, 3));
    let error = replay(OneMoveLate::new(), &program, &mut log).unwrap_err();
    match &error {
        ReplayError::Differs {
            line,
            expected,
            got,
            ..
        } => {
            assert_eq!(*line, 3, "{error}");
            assert_eq!(expected, "`3 1 3`");
            assert_eq!(got, "`4 1 3`");
        }
        other => panic!("expected a differing firing, got {other}"),
    }
}

#[cfg(unix)]
#[test]
fn a_written_file_is_readable_by_others_like_any_file() {
    use std::os::unix::fs::PermissionsExt;
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("w.tw");
    write_file(&path, &Workload::default()).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn the_digest_is_of_the_log_sorted_across_operations() {
    // Found by the reader fuzz target: an `n` that stays put fires at the clock of the
    // operation before it, so timer 4 is logged after timer 5 at the same NOW unless the
    // log is sorted as a whole, as the format says.
    use sha2::{Digest, Sha256};
    let program = load_text("timer-workload v1\ns 5 0\nn\ns 4 0\nn\n").unwrap();
    let sorted: String = Sha256::digest(b"0 4 0\n0 5 0\n")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(program.summary.digest, sorted);
}

#[test]
fn a_metadata_key_holding_other_whitespace_is_refused() {
    // Found by the reader fuzz target: the writer refused what the reader accepted.
    for key in ["a\u{c}b", "a\u{b}b", "a\u{a0}b", "a\u{85}b"] {
        let error = load_text(&format!("timer-workload v1\n@{key} v\ns 1 1\n")).unwrap_err();
        assert!(
            error.starts_with("w.tw:2: metadata key"),
            "{key:?}: {error}"
        );
    }
}
