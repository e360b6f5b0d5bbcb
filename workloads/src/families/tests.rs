//! Checks every family meets: the listed order, valid defaults, determinism, workloads the
//! reference model accepts, and errors (never panics) for unknown or malformed parameters.

use super::common::testing::{make, refuse, replay, spec};
use super::{FAMILIES, GenError, find, generate};
use crate::reference::CLOCK_LIMIT;

/// A small size at which every family is fast in a debug build (keepalive's and sparse's
/// defaults are scaled down by parameters).
fn small(name: &str) -> (u64, Vec<(&'static str, &'static str)>) {
    match name {
        "keepalive" => (2_000, vec![("timeout", "2000")]),
        "sparse" => (200, vec![("gap", "1000")]),
        _ => (2_000, vec![]),
    }
}

#[test]
fn families_are_listed_in_order() {
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
    for family in FAMILIES {
        let info = family.info();
        assert!(find(info.name).is_some());
        for (index, param) in info.params.iter().enumerate() {
            assert!(
                info.params[..index].iter().all(|p| p.name != param.name),
                "{}: {} declared twice",
                info.name,
                param.name
            );
            assert!(!param.help.is_empty() && !param.default.is_empty());
        }
        assert!(!info.models.is_empty() && !info.shape.is_empty() && !info.ops.is_empty());
    }
}

#[test]
fn every_family_makes_a_valid_deterministic_workload() {
    for family in FAMILIES {
        let name = family.info().name;
        let (timers, params) = small(name);
        let first = make(name, &spec(timers, None, 11, &params));
        let again = make(name, &spec(timers, None, 11, &params));
        let other = make(name, &spec(timers, None, 12, &params));
        assert_eq!(first, again, "{name}: not deterministic");
        assert_ne!(first.ops, other.ops, "{name}: the seed changes nothing");
        for key in ["name", "description", "tick", "seed", "generator"] {
            assert!(first.metadata.get(key).is_some(), "{name}: no @{key}");
        }
        assert!(!first.metadata.get("description").unwrap().contains('\n'));
        assert_eq!(first.metadata.get("tick"), Some(family.info().tick));
        let summary = replay(&first);
        assert_eq!(summary.operations, first.ops.len() as u64);
        assert!(summary.started > 0, "{name}: nothing started");
        assert!(summary.final_clock < CLOCK_LIMIT / 2);
    }
}

#[test]
fn every_default_is_valid() {
    // Spelling every default out explicitly must give the same workload as leaving it out.
    for family in FAMILIES {
        let info = family.info();
        let (timers, small_params) = small(info.name);
        let mut params: Vec<(&str, &str)> = info
            .params
            .iter()
            .map(|p| (p.name, p.default))
            .filter(|(k, _)| small_params.iter().all(|(s, _)| s != k))
            .collect();
        params.extend(small_params.iter().copied());
        let explicit = make(info.name, &spec(timers, None, 1, &params));
        let implicit = make(info.name, &spec(timers, None, 1, &small_params));
        assert_eq!(explicit.ops, implicit.ops, "{}", info.name);
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    for family in FAMILIES {
        let name = family.info().name;
        let (timers, params) = small(name);
        let mut unknown = params.clone();
        unknown.push(("no-such-parameter", "1"));
        assert!(matches!(
            refuse(name, &spec(timers, None, 1, &unknown)),
            GenError::UnknownParam { .. }
        ));
        assert!(matches!(
            refuse(name, &spec(0, None, 1, &params)),
            GenError::Invalid { .. }
        ));
        assert!(matches!(
            refuse(name, &spec(1 << 40, None, 1, &params)),
            GenError::Invalid { .. }
        ));
        // Too many operations to hold in memory (or `--ops` where it is not used).
        assert!(matches!(
            refuse(name, &spec(timers, Some(1 << 40), 1, &params)),
            GenError::Invalid { .. }
        ));
        for param in family.info().params {
            for value in ["", "-1", "nonsense", "1e400", "18446744073709551616"] {
                let mut bad = params.clone();
                bad.push((param.name, value));
                // Some values are legal for some parameters (e.g. `idle=-1` is not, but a
                // huge gap may only be rejected as a combination); none may panic.
                if let Err(error) = generate(name, &spec(timers, None, 1, &bad)) {
                    assert!(!error.to_string().is_empty());
                }
            }
        }
    }
    assert!(matches!(
        generate("no-such-family", &spec(1, None, 1, &[])),
        Err(GenError::UnknownFamily(_))
    ));
}

#[test]
fn one_timer_is_enough() {
    for family in FAMILIES {
        let name = family.info().name;
        let (_, params) = small(name);
        replay(&make(name, &spec(1, None, 1, &params)));
    }
}

/// Generation time at the largest sizes: `cargo test --release -p timerbench-workloads
/// large_sizes -- --ignored --nocapture`. Each must take well under a minute.
#[test]
#[ignore = "minutes in a debug build; run in release"]
fn large_sizes_generate_quickly() {
    type Case = (&'static str, u64, &'static [(&'static str, &'static str)]);
    let cases: &[Case] = &[
        ("hold", 10_000_000, &[]),
        ("hold", 10_000_000, &[("dist", "pareto")]),
        ("hold", 10_000_000, &[("mean", "1000000000")]),
        ("up-down", 10_000_000, &[]),
        ("up-down", 10_000_000, &[("mode", "stop")]),
        ("keepalive", 100_000, &[]),
        ("keepalive", 10_000_000, &[]),
        ("purgatory", 10_000_000, &[]),
        ("start-stop", 10_000_000, &[]),
        ("retransmit", 10_000_000, &[]),
        ("cron", 10_000_000, &[]),
        ("burst", 10_000_000, &[]),
        ("sparse", 1_000, &[]),
        ("sparse", 100_000, &[("drive", "next")]),
    ];
    for &(name, timers, params) in cases {
        let started = std::time::Instant::now();
        let workload = make(name, &spec(timers, None, 1, params));
        let elapsed = started.elapsed();
        println!(
            "{name} --timers {timers} {params:?}: {} ops in {:.2} s",
            workload.ops.len(),
            elapsed.as_secs_f64()
        );
        let extra: Vec<_> = workload.metadata.unknown().collect();
        println!("    {extra:?}");
        assert!(elapsed.as_secs() < 60, "{name}: {elapsed:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(300))]

    /// Any mix of parameter values either is refused with an error or makes a workload the
    /// model accepts; nothing panics or overflows.
    #[test]
    fn random_parameters_never_panic(
        family in 0..FAMILIES.len(),
        timers in 1u64..300,
        ops in proptest::option::of(1u64..400),
        seed in proptest::prelude::any::<u64>(),
        picks in proptest::collection::vec((0usize..8, 0usize..16), 0..4),
    ) {
        const VALUES: &[&str] = &[
            "0", "1", "2", "0.5", "0.999", "3", "250", "1000", "-1", "x", "", "auto", "1e300",
            "random", "next", "stop",
        ];
        let info = FAMILIES[family].info();
        let params: Vec<(&str, &str)> = picks
            .iter()
            .filter(|(p, _)| *p < info.params.len())
            .map(|&(p, v)| (info.params[p].name, VALUES[v]))
            .collect();
        if let Ok(workload) = generate(info.name, &spec(timers, ops, seed, &params)) {
            replay(&workload);
        }
    }
}
