//! The CSV importer: the documented form converted as its module says, and every way a row
//! can be wrong reported as one error naming the file and line.

mod support;

use std::path::{Path, PathBuf};
use support::ops;
use timerbench_impls::TimerQueue;
use timerbench_impls::linux_wheel::LinuxWheel;
use timerbench_workloads::compile;
use timerbench_workloads::import::{Moves, csv};
use timerbench_workloads::replay::replay_within_bound;

fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("events.csv");
    std::fs::write(&path, text).unwrap();
    (folder, path)
}

const MS: u64 = 1_000_000;

#[test]
fn rows_become_operations() {
    let (_folder, path) = write(
        "time,event,id,deadline\n\
         # a comment\n\
         0,start,conn-a,10000000\n\
         0, start, conn-b, 4500000\n\
         2000000,start,conn-a,12000000\n\
         5000000,fire,conn-b\n\
         6000000,stop,conn-a\n\
         7000000,start,conn-a,6000000\n",
    );
    let imported = csv::import(&path, MS, "1ms", Moves::Advance, None).unwrap();
    let ops = ops(&imported);
    // conn-b's deadline 4.5 ms rounds up to 5; conn-a's re-arm is a restart; the last
    // start's deadline is past: delay 0.
    assert_eq!(
        ops,
        "s 0 10\ns 1 5\na 2\nr 0 10\na 3\na 1\nx 0\na 1\ns 0 0\n"
    );
    let metadata = &imported.workload.metadata;
    assert_eq!(metadata.get("firings-reproduced"), Some("1 (csv 1)"));
    assert_eq!(metadata.get("past-deadlines"), Some("1 (csv 1)"));
    assert_eq!(metadata.get("rows"), Some("6"));
    compile(&imported.workload, Path::new("events.tw")).unwrap();
}

#[test]
fn a_bad_row_is_one_error_naming_the_line() {
    for (text, line, what) in [
        ("0,start,a\n", 1, "needs a deadline"),
        ("0,start,a,5\n1,bogus,a\n", 2, "start, stop or fire"),
        ("5,start,a,9\n4,stop,a\n", 2, "time goes back"),
        ("x,stop,a\n", 1, "whole number"),
        ("0,stop,a,5\n", 1, "only a start"),
        ("0,stop\n", 1, "expected time,event,id"),
        ("0,stop,,\n", 1, "empty"),
        ("0,fire,a b\n", 1, "spaces"),
    ] {
        let (_folder, path) = write(text);
        let error = csv::import(&path, MS, "1ms", Moves::Advance, None)
            .unwrap_err()
            .to_string();
        let prefix = format!("{}:{line}: ", path.display());
        assert!(error.starts_with(&prefix), "{text:?}: {error}");
        assert!(error.contains(what), "{text:?}: {error}");
    }
    let (_folder, path) = write("# nothing\n");
    let error = csv::import(&path, MS, "1ms", Moves::Advance, None)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("events.csv") && error.contains("no events"),
        "{error}"
    );
}

#[test]
fn moves_tick_makes_every_tick_a_clock_move_and_the_wheels_lateness_its_own() {
    // A delay-1 timer, the recording's next events one tick later and then after a gap of
    // seven: Linux's wheel rounds the deadline (1) up to tick 2, inside that gap.
    let (_folder, path) = write(
        "0,start,a,1000000\n\
         1000000,start,b,100000000\n\
         8000000,stop,b\n",
    );
    let mut lateness = Vec::new();
    for (moves, expected) in [
        (Moves::Advance, "s 0 1\na 1\ns 1 99\na 7\nx 1\n"),
        (Moves::Tick, "s 0 1\nt 1\ns 1 99\nt 7\nx 1\n"),
    ] {
        let imported = csv::import(&path, MS, "1ms", moves, None).unwrap();
        assert_eq!(ops(&imported), expected, "{moves:?}");
        assert_eq!(imported.workload.metadata.get("moves"), Some(moves.name()));
        let program = compile(&imported.workload, Path::new("events.tw")).unwrap();
        let replay = replay_within_bound(
            LinuxWheel::<u64>::with_capacity(0),
            &program,
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(replay.lateness.firings(), 1, "{moves:?}");
        lateness.push(replay.lateness.max());
    }
    // Under `a 7` the model fires timer 0 at the end of `a 1` (tick 1) and the wheel at the
    // end of `a 7` (tick 8): the gap. Under `t` the wheel fires on tick 2: its own tick.
    assert_eq!(lateness, [7, 1]);
}
