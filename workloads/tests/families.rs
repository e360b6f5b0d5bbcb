//! Every standard family: a small instance is valid, deterministic, recorded with its
//! generator command, and replayed identically by every exact implementation (and within
//! its declared bound by every approximate one).

use std::path::Path;
use timerbench_impls::Variant;
use timerbench_impls::registry::IMPLEMENTATIONS;
use timerbench_workloads::compile;
use timerbench_workloads::families::{FAMILIES, GenSpec, command_line, generate};
use timerbench_workloads::replay::{Verified, verify_as_declared};

fn small(seed: u64) -> GenSpec {
    GenSpec {
        timers: 300,
        ops: None,
        seed,
        params: Vec::new(),
    }
}

#[test]
fn every_family_replays_identically_through_every_implementation() {
    for family in FAMILIES {
        let name = family.info().name;
        let spec = small(11);
        let workload = generate(name, &spec).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            workload.metadata.get("generator"),
            Some(command_line(name, &spec).as_str())
        );
        assert_eq!(workload.metadata.get("seed"), Some("11"));
        let program = compile(&workload, Path::new(name)).unwrap_or_else(|e| panic!("{e}"));
        assert!(program.summary.operations > 0, "{name}: empty");
        for implementation in IMPLEMENTATIONS {
            let mut log = Vec::new();
            let variant = Variant::of(implementation);
            let outcome = verify_as_declared(&variant, &program, &mut log)
                .unwrap_or_else(|e| panic!("{name} through {}: {e}", implementation.name));
            // An approximate implementation verified within its bound; its summary is its
            // own.
            if let Verified::Exact(replay) = outcome {
                assert_eq!(
                    replay.summary, program.summary,
                    "{name} through {}",
                    implementation.name
                );
            }
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

#[test]
fn the_standard_suite_names_known_families_and_parameters() {
    use timerbench_workloads::suite::SuiteFile;
    let suite =
        SuiteFile::parse(timerbench_workloads::suite::STANDARD).unwrap_or_else(|e| panic!("{e}"));
    let smoke = suite.cases("smoke").unwrap();
    let default = suite.cases("default").unwrap();
    let full = suite.cases("full").unwrap();
    // Every family appears at every level.
    for family in FAMILIES {
        let name = family.info().name;
        for cases in [&smoke, &default, &full] {
            assert!(cases.iter().any(|c| c.family == name), "{name} missing");
        }
    }
    // full adds 10M for exactly hold, start-stop, keepalive, burst and cron.
    let mut ten_million: Vec<&str> = full
        .iter()
        .filter(|c| c.spec.timers == 10_000_000)
        .map(|c| c.family.as_str())
        .collect();
    ten_million.sort_unstable();
    assert_eq!(
        ten_million,
        ["burst", "cron", "hold", "keepalive", "start-stop"]
    );
    assert!(suite.cases("huge").is_err());
    // Every smoke case generates.
    for case in &smoke {
        generate(&case.family, &case.spec).unwrap_or_else(|e| panic!("{}: {e}", case.workload));
    }
}

#[test]
fn a_suite_with_a_typo_is_refused() {
    use timerbench_workloads::suite::SuiteFile;
    let bad_family =
        "seed = 1\n[sizes]\nsmoke = [1]\n[[workload]]\nname = \"x\"\nfamily = \"hodl\"\n";
    assert!(
        SuiteFile::parse(bad_family)
            .unwrap_err()
            .contains("unknown family `hodl`")
    );
    let bad_param = "seed = 1\n[sizes]\n[[workload]]\nname = \"x\"\nfamily = \"hold\"\nparams = { distt = \"pareto\" }\n";
    assert!(
        SuiteFile::parse(bad_param)
            .unwrap_err()
            .contains("no parameter `distt`")
    );
    let bad_level =
        "seed = 1\n[sizes]\nhuge = [1]\n[[workload]]\nname = \"x\"\nfamily = \"hold\"\n";
    assert!(
        SuiteFile::parse(bad_level)
            .unwrap_err()
            .contains("unknown suite `huge`")
    );
    let bad_variant = "seed = 1\nimplementations = [\"btree\", \"hashed-wheel:slots=3\"]\n[sizes]\n[[workload]]\nname = \"x\"\nfamily = \"hold\"\n";
    let error = SuiteFile::parse(bad_variant).unwrap_err();
    assert!(
        error.starts_with("implementations: `hashed-wheel:slots=3`: slots=3: slots must be"),
        "{error}"
    );
}

#[test]
fn a_suite_may_name_its_implementations_as_variants() {
    use timerbench_workloads::suite::SuiteFile;
    let text = "seed = 1\nimplementations = [\"btree\", \"linux-wheel:levels=8\"]\n[sizes]\n[[workload]]\nname = \"x\"\nfamily = \"hold\"\n";
    let suite = SuiteFile::parse(text).unwrap();
    let labels: Vec<String> = suite
        .variants()
        .iter()
        .map(|v| v.label().to_string())
        .collect();
    assert_eq!(labels, ["btree", "linux-wheel:levels=8"]);
    assert!(
        SuiteFile::standard().variants().is_empty(),
        "the standard suite runs every one"
    );
}
