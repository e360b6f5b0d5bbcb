//! `quad-heap:branchy=1` as a type of its own, so that the suites written over a type
//! (conformance, differential) check the branchy sift-down as they check every registered
//! implementation. Each call goes to a quad-heap built with `branchy=1`.

use timerbench_impls::quad_heap::QuadHeapTimers;
use timerbench_impls::{Parameters, Tick, TimerId, TimerQueue};

/// The registry's name of what this type runs, for the conformance checks' messages (the
/// differential test names its test instead).
#[allow(dead_code)]
pub const NAME: &str = "quad-heap:branchy=1";

/// A quad-heap whose sift-down runs the branchy tournament.
pub struct BranchyQuadHeap<V>(QuadHeapTimers<V>);

impl<V> TimerQueue<V> for BranchyQuadHeap<V> {
    fn with_capacity(capacity: usize) -> Self {
        let mut parameters = Parameters::defaults(QuadHeapTimers::<V>::PARAMETERS);
        parameters
            .set("branchy", 1)
            .expect("quad-heap declares branchy");
        BranchyQuadHeap(QuadHeapTimers::with_parameters(capacity, &parameters))
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        self.0.start(deadline, value)
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        self.0.stop(id)
    }

    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        self.0.restart(id, deadline, value)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, on_fire: F) {
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
