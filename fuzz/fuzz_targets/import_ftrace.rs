//! The ftrace importer (`timerbench import ftrace`, `workloads/src/import/ftrace.rs` and
//! `ftrace/line.rs`) on arbitrary bytes.
//!
//! The input is the trace file, byte for byte: the importer takes paths, so it is written to
//! a scratch file of this process's own (in /dev/shm when there is one) and removed after.
//! The options the command line gives (`--tick`: 1ns, 1us, 1ms, 4ms, 1s or 1000s;
//! `--timers`: all, wheel or hrtimer; `--hz`: inferred, 1, 100, 250, 1000 or 100000) are
//! chosen from a hash of the input and printed with any panic, so a reproducer is its bytes
//! alone. An error is a result (a trace without timer events, say); a panic, a hang or
//! memory beyond the input's size is the bug. For an import that succeeds:
//!
//! - every line is accounted for once: the timer event lines (`Report::events`, used,
//!   malformed or filtered out) plus the blank, comment, not-an-event and other-event lines
//!   are the lines read (`read_until(b'\n')`, a last line without its newline included);
//!   the other events by name add up to the other-event lines;
//! - per timer kind, every selected record is accounted for once: the starts are the `s`
//!   and `r` lines plus the unplaceable ones; the expiry entries are the firings plus those
//!   of timers never started; the cancels are the stops (less those at a new lifetime) plus
//!   those of timers never started, the detaches (part of a firing) and the re-arms; stops at
//!   a new lifetime are at most the inits; the firings are reproduced or clock-moved; the
//!   metadata's tallies are the report's;
//! - the operations of each kind are the tallies' (only `s`, `r`, `x`, `a` written), the
//!   workload is valid (`compile`, as the command checks before writing), and `x` of a
//!   timer the model already fired is counted (the model's misses);
//! - everything `common::check_accepted` checks, the round trip through the writer's text
//!   and the small replay included.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use timerbench_workloads::import::{Moves, Tally};
use timerbench_workloads::import::ftrace::{self, HRTIMER, Options, Report, Timers, WHEEL};

const TIMERS: [(Timers, &str); 3] = [
    (Timers::All, "all"),
    (Timers::Wheel, "wheel"),
    (Timers::Hrtimer, "hrtimer"),
];
const HZ: [Option<u64>; 6] = [
    None,
    Some(1),
    Some(100),
    Some(250),
    Some(1000),
    Some(100_000),
];

/// Lines as the importer reads them: pieces ending in `\n`, and a last one without.
fn lines_read(data: &[u8]) -> u64 {
    let newlines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(data.last().is_some_and(|&b| b != b'\n'))
}

fn count(map: &std::collections::BTreeMap<String, u64>, key: &str) -> u64 {
    map.get(key).copied().unwrap_or(0)
}

/// The records of one event name that reached the conversion: seen, less the malformed and
/// the filtered out.
fn selected(report: &Report, name: &str) -> u64 {
    count(&report.events, name)
        - count(&report.skipped, &format!("malformed-{name}"))
        - count(&report.skipped, &format!("filtered-{name}"))
}

fn check_report(data: &[u8], report: &Report, timers: Timers) {
    let events: u64 = report.events.values().sum();
    let unused_lines: u64 = ["blank", "comment", "not-an-event", "other-event"]
        .iter()
        .map(|reason| count(&report.skipped, reason))
        .sum();
    assert_eq!(
        events + unused_lines,
        lines_read(data),
        "lines unaccounted for: events {:?}, skipped {:?}",
        report.events,
        report.skipped
    );
    assert_eq!(
        report.other_events.values().sum::<u64>(),
        count(&report.skipped, "other-event"),
        "other events"
    );
    for (class, prefix) in [(WHEEL, "timer"), (HRTIMER, "hrtimer")] {
        let wanted = match timers {
            Timers::All => true,
            Timers::Wheel => class == WHEEL,
            Timers::Hrtimer => class == HRTIMER,
        };
        let name = |kind: &str| format!("{prefix}_{kind}");
        let t = &report.tallies[class];
        let starts = selected(report, &name("start"));
        let entries = selected(report, &name("expire_entry"));
        let cancels = selected(report, &name("cancel"));
        let inits = selected(report, &name("init")) + selected(report, &name("setup"));
        if !wanted {
            assert_eq!(
                starts + entries + cancels + inits,
                0,
                "{prefix}: filtered, yet used"
            );
        }
        assert_eq!(
            t.starts + t.restarts + count(&report.skipped, &format!("unplaceable-{prefix}_start")),
            starts,
            "{prefix}: starts {t:?}"
        );
        assert_eq!(
            t.firings + t.firings_unstarted,
            entries,
            "{prefix}: entries {t:?}"
        );
        assert_eq!(
            t.firings_reproduced + t.firings_clock_moved,
            t.firings,
            "{prefix}: firings {t:?}"
        );
        assert!(t.stops_at_new_lifetime <= inits, "{prefix}: {t:?}");
        assert!(t.stops_at_new_lifetime <= t.stops, "{prefix}: {t:?}");
        assert_eq!(
            t.stops - t.stops_at_new_lifetime
                + t.stops_unstarted
                + report.detaches[class]
                + report.rearms[class],
            cancels,
            "{prefix}: cancels {t:?}, detaches {}, re-arms {}",
            report.detaches[class],
            report.rearms[class]
        );
    }
}

fuzz_target!(
    init: {
        common::install_context_hook();
        common::remove_stale_scratch();
    },
    |data: &[u8]| {
        let (tick_ns, tick_text) = common::TICKS[common::choice(data, 0, common::TICKS.len())];
        let (timers, timers_text) = TIMERS[common::choice(data, 1, TIMERS.len())];
        let hz = HZ[common::choice(data, 2, HZ.len())];
        let hz_text = hz.map_or(String::new(), |hz| format!(" --hz {hz}"));
        common::set_context(format!(
            "import_ftrace: --tick {tick_text} --timers {timers_text}{hz_text}"
        ));
        let options = Options {
            timers,
            tick_ns,
            tick_text: tick_text.to_string(),
            // `a N` only: a `t N` over a fuzzed gap of 2^60 ticks would replay for ever.
            moves: Moves::Advance,
            hz,
            generator: None,
        };
        let path = common::scratch_path("trace.txt");
        let result = common::with_file(&path, data, |p| {
            ftrace::import(&[PathBuf::from(p)], &options)
        });
        let Ok((imported, report)) = result else { return };
        let workload = &imported.workload;
        check_report(data, &report, timers);

        let total = |key| common::total(workload, key);
        let sum = |f: fn(&ftrace::Report, usize) -> u64| f(&report, WHEEL) + f(&report, HRTIMER);
        let [s, r, x, _] = common::op_counts(&workload.ops);
        assert_eq!(
            [s, r, x],
            [
                sum(|rep, c| rep.tallies[c].starts),
                sum(|rep, c| rep.tallies[c].restarts),
                sum(|rep, c| rep.tallies[c].stops),
            ],
            "operations against tallies"
        );
        for (key, field) in [
            ("starts", (|t| t.starts) as fn(&Tally) -> u64),
            ("restarts", |t| t.restarts),
            ("stops", |t| t.stops),
            ("firings", |t| t.firings),
            ("skipped-stops-unstarted", |t| t.stops_unstarted),
        ] {
            for (class, name) in [(WHEEL, "wheel"), (HRTIMER, "hrtimer")] {
                assert_eq!(
                    common::part(workload, key, name),
                    field(&report.tallies[class]),
                    "@{key} {name}"
                );
            }
            assert_eq!(
                total(key),
                field(&report.tallies[WHEEL]) + field(&report.tallies[HRTIMER]),
                "@{key}"
            );
        }

        common::check_import(workload, "trace.tw", sum(|rep, c| rep.tallies[c].stops_after_model_fired));
    }
);
