//! The implementations by name, for the command line, the results and the report.
//!
//! The list itself is [`for_each_implementation!`](crate::for_each_implementation): one
//! line per implementation. Everything that needs "all implementations" (this runtime
//! list, the conformance suite, the differential test) expands from it, so adding an
//! implementation means writing its file and adding its line there.
//!
//! The outside peers (`src/peers/`, feature `peers`) are listed the same way by
//! [`for_each_peer!`](crate::for_each_peer) and kept apart: [`IMPLEMENTATIONS`] is the
//! project's seven, [`PEERS`] the peers, [`all`] both in that order. [`visit`] and
//! [`find`] know both; [`is_peer`] tells them apart.

use crate::contract::TimerQueue;

/// One registered implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Implementation {
    /// The name used on the command line and in results, e.g. `hierarchical-wheel`.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// Whether it is an outside peer (another crate behind an adapter) rather than one of
    /// the project's implementations.
    pub peer: bool,
}

/// Something to do with one implementation, generic over its concrete type so that the
/// queue's operations are monomorphised (no dynamic dispatch in a measured loop).
pub trait QueueVisitor {
    /// What the visit returns.
    type Output;
    /// Called with the implementation's type; `Q::new()` builds one.
    fn visit<Q: TimerQueue<u64>>(self, implementation: &'static Implementation) -> Self::Output;
}

macro_rules! runtime_registry {
    ($($module:ident :: $ty:ident, $name:literal, $summary:literal;)*) => {
        /// Every implementation, in registry order.
        pub const IMPLEMENTATIONS: &[Implementation] = &[
            $(Implementation { name: $name, summary: $summary, peer: false },)*
        ];

        /// Runs `visitor` with the implementation or peer called `name`, or returns `None`
        /// when none has that name.
        pub fn visit<R: QueueVisitor>(name: &str, visitor: R) -> Option<R::Output> {
            let mut registered = IMPLEMENTATIONS.iter();
            $(
                let implementation = registered.next().expect("one entry per registry line");
                if name == $name {
                    return Some(visitor.visit::<crate::$module::$ty<u64>>(implementation));
                }
            )*
            let _ = registered;
            visit_peer(name, visitor)
        }
    };
}

crate::for_each_implementation!(runtime_registry);

macro_rules! peer_registry {
    ($($module:ident :: $ty:ident, $name:literal, $summary:literal;)*) => {
        /// Every outside peer, in registry order (empty without the `peers` feature).
        pub const PEERS: &[Implementation] = &[
            $(Implementation { name: $name, summary: $summary, peer: true },)*
        ];

        /// Runs `visitor` with the peer called `name`.
        #[allow(unused_variables, unused_mut)]
        fn visit_peer<R: QueueVisitor>(name: &str, visitor: R) -> Option<R::Output> {
            let mut registered = PEERS.iter();
            $(
                let implementation = registered.next().expect("one entry per registry line");
                if name == $name {
                    return Some(visitor.visit::<crate::peers::$module::$ty<u64>>(implementation));
                }
            )*
            None
        }
    };
}

crate::for_each_peer!(peer_registry);

/// The implementations, then the peers: everything `visit` can run, in the order a
/// command line or a report lists them.
pub fn all() -> impl Iterator<Item = &'static Implementation> + Clone {
    IMPLEMENTATIONS.iter().chain(PEERS)
}

/// The implementation or peer called `name`.
pub fn find(name: &str) -> Option<&'static Implementation> {
    all().find(|i| i.name == name)
}

/// Whether `name` is an outside peer (false for implementations and unknown names).
pub fn is_peer(name: &str) -> bool {
    PEERS.iter().any(|p| p.name == name)
}
