//! The CSV importer (`timerbench import csv`, `workloads/src/import/csv.rs`) on arbitrary
//! bytes.
//!
//! The input is the CSV file, byte for byte: the importer takes a path, so it is written to
//! a scratch file of this process's own (in /dev/shm when there is one) and removed after.
//! The tick, which the command line gives, is chosen from a hash of the input (1ns, 1us,
//! 1ms, 4ms, 1s or 1000s; printed with any panic), so a reproducer is its bytes alone.
//! An error is a result (this form is written on purpose: a bad row is an error); a panic,
//! a hang or memory beyond the input's size is the bug. For an import that succeeds:
//!
//! - the counts are the file's: `@rows` is its lines that are not blank, a comment or the
//!   header; the `start` rows are the `s` plus `r` lines (`@starts` + `@restarts`); the
//!   `fire` rows are the firings counted plus those of timers never started; the `stop` rows
//!   are the `x` lines plus the stops of timers never started (a CSV has no new lifetimes);
//!   `@timers` is the number of distinct ids started; the operations of each kind are what
//!   the tallies say, and only `s`, `r`, `x` and `a` are written;
//! - the workload is valid (`compile`, as the command checks before writing), `x` of a timer
//!   the model already fired is counted (`@stops-after-model-fired` = the model's misses);
//! - everything `common::check_accepted` checks, the round trip through the writer's text
//!   and the small replay included.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;
use timerbench_workloads::import::{Moves, csv};

/// The rows of each kind, as the format defines them: `[start, stop, fire]`, and the ids
/// the start rows name.
fn rows(text: &str) -> ([u64; 3], HashSet<&str>) {
    let mut counts = [0; 3];
    let mut started = HashSet::new();
    let mut first = true;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if std::mem::take(&mut first) && line.starts_with("time") {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        match fields[1] {
            "start" => {
                counts[0] += 1;
                started.insert(fields[2]);
            }
            "stop" => counts[1] += 1,
            "fire" => counts[2] += 1,
            other => panic!("the import accepted a row with event `{other}`: `{line}`"),
        }
    }
    (counts, started)
}

fuzz_target!(
    init: {
        common::install_context_hook();
        common::remove_stale_scratch();
    },
    |data: &[u8]| {
        let (tick_ns, tick_text) = common::TICKS[common::choice(data, 0, common::TICKS.len())];
        common::set_context(format!("import_csv: --tick {tick_text}"));
        let path = common::scratch_path("events.csv");
        let result = common::with_file(&path, data, |p| csv::import(p, tick_ns, tick_text, Moves::Advance, None));
        let Ok(imported) = result else { return };
        let workload = &imported.workload;
        let text = std::str::from_utf8(data).expect("the import accepted bytes that are not UTF-8");

        let ([starts, stops, fires], started) = rows(text);
        let total = |key| common::total(workload, key);
        assert_eq!(total("rows"), starts + stops + fires, "@rows");
        assert_eq!(total("starts") + total("restarts"), starts, "start rows");
        assert_eq!(
            total("firings") + total("skipped-firings-unstarted"),
            fires,
            "fire rows"
        );
        assert_eq!(total("stops-at-new-lifetime"), 0);
        assert_eq!(total("stops") + total("skipped-stops-unstarted"), stops, "stop rows");
        assert_eq!(total("timers"), started.len() as u64, "@timers");
        assert!(
            total("firings-reproduced") + total("firings-clock-moved") == total("firings"),
            "every firing is reproduced or moved"
        );
        let [s, r, x, _] = common::op_counts(&workload.ops);
        assert_eq!(
            [s, r, x],
            [total("starts"), total("restarts"), total("stops")],
            "operations against tallies"
        );

        common::check_import(workload, "events.tw", total("stops-after-model-fired"));
    }
);
