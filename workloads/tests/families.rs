//! Every standard family: a small instance is valid, deterministic, recorded with its
//! generator command, and replayed identically by every implementation.

use std::path::Path;
use timerbench_impls::registry::{IMPLEMENTATIONS, visit};
use timerbench_impls::{Implementation, QueueVisitor, TimerQueue};
use timerbench_workloads::families::{FAMILIES, GenSpec, command_line, generate};
use timerbench_workloads::program::Firing;
use timerbench_workloads::replay::{Replay, ReplayError, replay};
use timerbench_workloads::{Program, compile};

struct ReplayThrough<'a>(&'a Program, &'a mut Vec<Firing>);

impl QueueVisitor for ReplayThrough<'_> {
    type Output = Result<Replay, ReplayError>;
    fn visit<Q: TimerQueue<u64>>(self, _: &'static Implementation) -> Self::Output {
        replay::<Q>(self.0, self.1)
    }
}

fn small(seed: u64) -> GenSpec {
    GenSpec {
        timers: 300,
        ops: None,
        seed,
        params: Vec::new(),
    }
}

#[test]
fn there_are_the_nine_standard_families() {
    let names: Vec<_> = FAMILIES.iter().map(|f| f.info().name).collect();
    assert_eq!(
        names,
        [
            "hold",
            "up-down",
            "keepalive",
            "purgatory",
            "start-stop",
            "retransmit",
            "cron",
            "burst",
            "sparse"
        ]
    );
}

#[test]
fn every_family_replays_identically_through_every_implementation() {
    for family in FAMILIES {
        let name = family.info().name;
        let spec = small(11);
        let workload = generate(name, &spec).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(workload.metadata.get("generator"), Some(command_line(name, &spec).as_str()));
        assert_eq!(workload.metadata.get("seed"), Some("11"));
        let program = compile(&workload, Path::new(name)).unwrap_or_else(|e| panic!("{e}"));
        assert!(program.summary.operations > 0, "{name}: empty");
        for implementation in IMPLEMENTATIONS {
            let mut log = Vec::new();
            let outcome = visit(implementation.name, ReplayThrough(&program, &mut log)).unwrap();
            let replay = outcome
                .unwrap_or_else(|e| panic!("{name} through {}: {e}", implementation.name));
            assert_eq!(replay.summary, program.summary, "{name} through {}", implementation.name);
        }
    }
}

#[test]
fn every_family_is_deterministic_for_a_seed() {
    for family in FAMILIES {
        let name = family.info().name;
        let first = generate(name, &small(5)).unwrap();
        let again = generate(name, &small(5)).unwrap();
        assert_eq!(first, again, "{name}");
    }
}
