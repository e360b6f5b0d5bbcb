//! [`Sendable`]: a queue moved to, and used from, one thread at a time.
//!
//! The registry's visitor hands out a queue type without a `Send` bound, since every
//! single-threaded measurement keeps a queue on one thread. The project's structures are
//! plain data in arenas (`u32` links, `Vec`s) and are `Send`; the outside peers are not all
//! (an `Rc` inside, or a runtime entered on one thread), so the threads study refuses peers
//! (`timerbench threads` says so) and wraps only the project's structures.

use timerbench_impls::{Precision, Range, Tick, TimerId, TimerQueue, Window};

/// A queue that the schemes move between threads, always behind a mutex or owned by one
/// thread, so no two threads ever touch it at once.
pub struct Sendable<Q>(pub Q);

// SAFETY: the schemes only reach the queue under its shard's mutex or from its owner
// thread, so its state is never touched by two threads at once, and each hand-over is
// ordered by that mutex or channel. Only the project's structures are wrapped (see the
// module documentation): plain data, with no thread-bound state such as an `Rc` shared
// outside the queue or a thread-local runtime.
unsafe impl<Q> Send for Sendable<Q> {}

impl<Q: TimerQueue<u64>> TimerQueue<u64> for Sendable<Q> {
    fn with_capacity(capacity: usize) -> Self {
        Sendable(Q::with_capacity(capacity))
    }

    fn start(&mut self, deadline: Tick, value: u64) -> TimerId {
        self.0.start(deadline, value)
    }

    fn stop(&mut self, id: TimerId) -> Option<u64> {
        self.0.stop(id)
    }

    fn restart(&mut self, id: TimerId, deadline: Tick, value: u64) -> (TimerId, Option<u64>) {
        self.0.restart(id, deadline, value)
    }

    fn advance<F: FnMut(TimerId, u64, Tick)>(&mut self, to: Tick, on_fire: F) {
        self.0.advance(to, on_fire)
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        self.0.next_deadline()
    }

    fn precision(&self) -> Precision {
        self.0.precision()
    }

    fn window(&self, deadline: Tick) -> Window {
        self.0.window(deadline)
    }

    fn range(&self) -> Range {
        self.0.range()
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
