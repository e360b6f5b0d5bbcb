//! The outside peers verify like any implementation: every workload of the standard
//! suite, at a small size, replays through every peer to the reference model's log.

use std::path::Path;
use timerbench_impls::Variant;
use timerbench_impls::registry::PEERS;
use timerbench_workloads::replay::verify_as_declared;
use timerbench_workloads::suite::SuiteFile;
use timerbench_workloads::{compile, families};

#[test]
fn every_peer_verifies_on_the_standard_suite() {
    assert_eq!(PEERS.len(), 5, "the peers feature is on by default");
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
            let result = verify_as_declared(&Variant::of(peer), &program, &mut log);
            if let Err(error) = result {
                failures.push(format!("{} through {}: {error}", case.workload, peer.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
