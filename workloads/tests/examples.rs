//! The hand-written examples in `workloads/examples/`: each `NAME.tw` comes with
//! `NAME.expiries`, its expiry log traced by hand, and `NAME.expected`, its summary (the
//! digest being `sha256sum NAME.expiries`). The reference model and every implementation
//! must reproduce both.

use std::path::{Path, PathBuf};
use timerbench_impls::Variant;
use timerbench_impls::registry::IMPLEMENTATIONS;
use timerbench_workloads::program::Firing;
use timerbench_workloads::reach::first_beyond;
use timerbench_workloads::reference::Summary;
use timerbench_workloads::replay::{Verified, expiry, verify_as_declared};
use timerbench_workloads::{Program, load};

fn examples() -> Vec<PathBuf> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut paths: Vec<_> = std::fs::read_dir(&folder)
        .expect("examples folder")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "tw"))
        .collect();
    paths.sort();
    paths
}

fn expected_summary(path: &Path) -> Summary {
    let text = std::fs::read_to_string(path.with_extension("expected")).expect(".expected");
    let field = |name: &str| -> String {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("{}: no `{name}`", path.display()))
            .to_string()
    };
    let number = |name: &str| field(name).parse::<u64>().expect("a number");
    Summary {
        operations: number("operations"),
        started: number("started"),
        fired: number("fired"),
        stopped: number("stopped"),
        misses: number("misses"),
        pending: number("pending"),
        final_clock: number("final_clock"),
        digest: field("digest"),
    }
}

fn log_text(program: &Program, log: &[Firing]) -> String {
    log.iter()
        .map(|f| format!("{}\n", expiry(program, f)))
        .collect()
}

#[test]
fn there_is_an_example_per_operation_kind() {
    let names: Vec<String> = examples()
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for kind in ["start", "stop", "restart", "advance", "tick", "next"] {
        assert!(
            names.iter().any(|n| n == kind),
            "no example for {kind}: {names:?}"
        );
    }
}

#[test]
fn the_reference_model_gives_each_expected_summary_and_log() {
    for path in examples() {
        let program = load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            program.summary,
            expected_summary(&path),
            "{}",
            path.display()
        );
        let log = std::fs::read_to_string(path.with_extension("expiries")).expect(".expiries");
        assert_eq!(
            log_text(&program, &program.expected),
            log,
            "{}",
            path.display()
        );
    }
}

#[test]
fn every_implementation_replays_each_example_exactly() {
    for path in examples() {
        let program = load(&path).unwrap_or_else(|e| panic!("{e}"));
        let hand_traced = std::fs::read_to_string(path.with_extension("expiries")).unwrap();
        for implementation in IMPLEMENTATIONS {
            let mut log = Vec::new();
            let variant = Variant::of(implementation);
            // A structure that walks every bucket declares a walk budget, and advance.tw's
            // jump of 10^12 ticks is beyond it: refused, naming the line, never replayed.
            let range = variant.declarations().range;
            if !program.reach.within(&range) {
                let beyond = first_beyond(&program, &range).expect("a line beyond the range");
                assert!(
                    beyond.what.starts_with("the clock at tick 1000000000"),
                    "{}: {}",
                    implementation.name,
                    beyond.what
                );
                continue;
            }
            let outcome = verify_as_declared(&variant, &program, &mut log)
                .unwrap_or_else(|e| panic!("{} on {}: {e}", implementation.name, path.display()));
            // An approximate implementation verified within its bound, and its log is
            // its own.
            let Verified::Exact(replay) = outcome else {
                continue;
            };
            assert_eq!(
                replay.summary,
                expected_summary(&path),
                "{}",
                implementation.name
            );
            assert_eq!(
                log_text(&program, &log),
                hand_traced,
                "{}",
                implementation.name
            );
        }
    }
}
