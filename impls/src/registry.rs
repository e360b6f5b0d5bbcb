//! The implementations by name, for the command line, the results and the report.
//!
//! The list itself is [`for_each_implementation!`](crate::for_each_implementation): one
//! line per implementation. Everything that needs "all implementations" (this runtime
//! list, the conformance suite, the differential test) expands from it, so adding an
//! implementation means writing its file and adding its line there.

use crate::contract::TimerQueue;

/// One registered implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Implementation {
    /// The name used on the command line and in results, e.g. `hierarchical-wheel`.
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
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
            $(Implementation { name: $name, summary: $summary },)*
        ];

        /// Runs `visitor` with the implementation called `name`, or returns `None` when no
        /// implementation has that name.
        pub fn visit<R: QueueVisitor>(name: &str, visitor: R) -> Option<R::Output> {
            let mut registered = IMPLEMENTATIONS.iter();
            $(
                let implementation = registered.next().expect("one entry per registry line");
                if name == $name {
                    return Some(visitor.visit::<crate::$module::$ty<u64>>(implementation));
                }
            )*
            let _ = registered;
            None
        }
    };
}

crate::for_each_implementation!(runtime_registry);

/// The implementation called `name`.
pub fn find(name: &str) -> Option<&'static Implementation> {
    IMPLEMENTATIONS.iter().find(|i| i.name == name)
}
