//! The cell measured in this process: verified and unverified outcomes, and a verified
//! cell's figures. The memory figures are checked in the integration tests, where the cell
//! has its process to itself.

use super::*;
use crate::cell_core::testing::{spec_for, variant};
use crate::cmd::cell::StdInstant;
use timerbench_impls::TimerId;
use timerbench_impls::binary_heap::BinaryHeapTimers;
use timerbench_workloads::load;
use timerbench_workloads::program::Step;
use timerbench_workloads::replay::Kind;

fn assert_no_figures(record: &CellRecord) {
    assert!(record.throughput.is_none());
    assert!(record.latency.is_empty());
    assert!(record.clock.is_none());
    assert!(record.advance_series.is_none());
    assert!(record.memory.is_none());
}

/// A binary heap that starts every timer after the fifth one tick late.
struct LateHeap {
    heap: BinaryHeapTimers<u64>,
    starts: u64,
}

impl TimerQueue<u64> for LateHeap {
    fn with_capacity(capacity: usize) -> Self {
        LateHeap {
            heap: BinaryHeapTimers::with_capacity(capacity),
            starts: 0,
        }
    }
    fn start(&mut self, deadline: u64, value: u64) -> TimerId {
        self.starts += 1;
        let late = u64::from(self.starts > 5);
        self.heap.start(deadline + late, value)
    }
    fn stop(&mut self, id: TimerId) -> Option<u64> {
        self.heap.stop(id)
    }
    fn advance<F: FnMut(TimerId, u64, u64)>(&mut self, to: u64, on_fire: F) {
        self.heap.advance(to, on_fire)
    }
    fn next_deadline(&mut self) -> Option<u64> {
        self.heap.next_deadline()
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
    fn now(&self) -> u64 {
        self.heap.now()
    }
    fn work(&self) -> u64 {
        self.heap.work()
    }
}

#[test]
fn a_wrong_structure_is_unverified_with_its_first_differing_firing_and_no_figures() {
    let dir = tempfile::tempdir().unwrap();
    // Up-down starts each timer once, so a late timer is not restarted while pending
    // (that would be caught as a wrong handle first).
    let spec = spec_for(dir.path(), "up-down", 200, "binary-heap");
    let program = load_unchecked(&spec.workload_path).unwrap();
    let Outcome::Unverified { reason, digest } =
        measure_queue::<LateHeap, StdInstant>(&spec, &variant("binary-heap"), &program, StdInstant)
            .unwrap()
    else {
        panic!("a late heap verified");
    };
    assert!(
        reason.starts_with("first differing firing at line "),
        "{reason}"
    );
    assert!(reason.contains("expected `"), "{reason}");
    // Its digest is its own, not the reference's.
    let digest = digest.expect("the warm-up got as far as a digest");
    assert_ne!(digest, spec.reference.digest);
}

#[test]
fn a_wrong_reference_digest_is_unverified_without_figures() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec_for(dir.path(), "retransmit", 100, "quad-heap");
    let right = std::mem::replace(&mut spec.reference.digest, "0".repeat(64));
    let (record, _) = measure(&spec, Instant::now()).unwrap();
    assert_eq!(record.status, Status::Unverified);
    let reason = record.reason.as_deref().unwrap();
    assert!(reason.contains("digest: expected 0000"), "{reason}");
    assert!(reason.contains("the cell spec"), "{reason}");
    assert_eq!(record.digest.as_deref(), Some(right.as_str()));
    assert_eq!(record.reference_digest, "0".repeat(64));
    assert_no_figures(&record);
}

#[test]
fn a_verified_cell_has_every_figure() {
    // The memory figures are checked in the integration tests, where the cell has its
    // process to itself; here other tests allocate on other threads.
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_for(dir.path(), "retransmit", 100, "hierarchical-wheel");
    let program = load(&spec.workload_path).unwrap();
    let (record, diagnostics) = measure(&spec, Instant::now()).unwrap();
    assert_eq!(record.status, Status::Ok, "{:?}", record.reason);
    assert_eq!(record.digest.as_ref(), Some(&spec.reference.digest));
    let throughput = record.throughput.as_ref().unwrap();
    assert_eq!(throughput.repeats, 3);
    assert_eq!(throughput.ns_per_op.samples.len(), 3);
    assert!(throughput.ns_per_op.median > 0.0);
    assert!(throughput.ns_per_fired.as_ref().unwrap().median > 0.0);
    // Samples of at least the spec's 1 ms, each of whole replays.
    assert_eq!(throughput.min_sample_ns, 1_000_000);
    assert_eq!(throughput.iterations.len(), 3);
    assert!(throughput.iterations.iter().all(|&n| n >= 1));
    let lines = record.operations as f64;
    for (sample, &replays) in throughput
        .ns_per_op
        .samples
        .iter()
        .zip(&throughput.iterations)
    {
        assert!(
            sample * lines * replays as f64 >= 1e6,
            "{sample} ns/op × {replays}"
        );
    }
    assert_eq!(throughput.fill_operations, program.fill_steps() as u64);
    for figure in [
        &throughput.ns_per_unit,
        &throughput.ns_per_op_after_fill,
        &throughput.ns_per_unit_after_fill,
    ] {
        let figure = figure.as_ref().unwrap();
        assert_eq!(figure.samples.len(), 3);
        assert!(figure.median > 0.0);
    }
    let counts: BTreeMap<&str, u64> = record
        .latency
        .iter()
        .map(|(kind, latency)| (kind.as_str(), latency.count))
        .collect();
    assert_eq!(counts, units(&program));
    let series = record.advance_series.as_ref().unwrap();
    assert_eq!(
        series.max_ns.len() as u64,
        record.operations.div_ceil(series.window_ops)
    );
    assert!(series.max_ns.iter().any(|&n| n > 0));
    assert_eq!(diagnostics.throughput_drive_page_faults.len(), 3);
    assert!(record.memory.as_ref().unwrap().peak_pending > 0);
    assert!(record.elapsed_seconds > 0.0);
}

/// The units of each kind a replay of `program` times: one per line, except one per
/// tick of a `t`.
fn units(program: &Program) -> BTreeMap<&'static str, u64> {
    let mut units = BTreeMap::new();
    for step in &program.steps {
        let (kind, n) = match *step {
            Step::Start { .. } => (Kind::Start, 1),
            Step::Stop { .. } => (Kind::Stop, 1),
            Step::Restart { .. } => (Kind::Restart, 1),
            Step::Advance { .. } => (Kind::Advance, 1),
            Step::Tick { ticks } => (Kind::Tick, ticks),
            Step::Next => (Kind::Next, 1),
        };
        if n > 0 {
            *units.entry(kind.name()).or_insert(0) += n;
        }
    }
    units
}
