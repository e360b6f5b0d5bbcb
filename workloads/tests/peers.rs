//! The outside peers verify like any implementation: every workload of the standard
//! suite, at a small size, replays through every peer to the reference model's log.

use std::path::Path;
use timerbench_impls::registry::{self, PEERS};
use timerbench_impls::{Implementation, QueueVisitor, TimerQueue};
use timerbench_workloads::program::Firing;
use timerbench_workloads::replay::{Replay, ReplayError, replay};
use timerbench_workloads::suite::SuiteFile;
use timerbench_workloads::{Program, compile, families};

struct ReplayThrough<'a>(&'a Program, &'a mut Vec<Firing>);

impl QueueVisitor for ReplayThrough<'_> {
    type Output = Result<Replay, ReplayError>;
    fn visit<Q: TimerQueue<u64>>(self, _: &'static Implementation) -> Self::Output {
        replay::<Q>(self.0, self.1)
    }
}

#[test]
fn every_peer_verifies_on_the_standard_suite() {
    assert_eq!(PEERS.len(), 4, "the peers feature is on by default");
    let mut log = Vec::new();
    let mut failures = Vec::new();
    for mut case in SuiteFile::standard().cases("smoke").expect("smoke level") {
        // Small: 1000 timers (100 for the sparse ones, whose ticks grow with the size).
        case.spec.timers = if case.family == "sparse" { 100 } else { 1_000 };
        let workload = families::generate(&case.family, &case.spec)
            .unwrap_or_else(|e| panic!("{}: {e}", case.workload));
        let program = compile(&workload, Path::new(&case.workload))
            .unwrap_or_else(|e| panic!("{}: {e}", case.workload));
        for peer in PEERS {
            let result =
                registry::visit(peer.name, ReplayThrough(&program, &mut log)).expect("registered");
            if let Err(error) = result {
                failures.push(format!("{} through {}: {error}", case.workload, peer.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
