//! The ftrace importer: its counts on the committed capture (`traces/`), checked against
//! the raw file counted independently; the capture replayed through every implementation;
//! and each kernel quirk on a tiny hand-written trace.

mod support;

use std::io::Read;
use std::path::{Path, PathBuf};
use support::ops;
use timerbench_impls::Variant;
use timerbench_impls::registry::IMPLEMENTATIONS;
use timerbench_workloads::import::ftrace::{self, HRTIMER, Options, Report, Timers, WHEEL};
use timerbench_workloads::import::{Moves, parse_tick};
use timerbench_workloads::replay::verify_as_declared;
use timerbench_workloads::{compile, load, writer};

fn capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/linux-6.18-timer-12s.txt.gz")
}

fn options(tick: &str, hz: Option<u64>) -> Options {
    Options {
        timers: Timers::All,
        tick_ns: parse_tick(tick).unwrap(),
        tick_text: tick.to_string(),
        moves: Moves::Advance,
        hz,
        generator: None,
    }
}

/// Writes each text to a file in a fresh folder; returns the folder (kept alive) and paths.
fn files(texts: &[&str]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let folder = tempfile::tempdir().unwrap();
    let paths = texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let path = folder.path().join(format!("trace{i}.txt"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    (folder, paths)
}

/// Imports `texts` (one file each); the operations as text, and the report.
fn import(texts: &[&str], tick: &str, hz: Option<u64>) -> (String, Report) {
    let (_folder, paths) = files(texts);
    let (imported, report) = ftrace::import(&paths, &options(tick, hz)).unwrap();
    // Every import must be a valid workload.
    compile(&imported.workload, Path::new("fixture.tw")).unwrap();
    (ops(&imported), report)
}

#[test]
fn the_capture_counts_match_the_raw_file() {
    let mut raw = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(capture()).unwrap())
        .read_to_string(&mut raw)
        .unwrap();
    let count = |event: &str| {
        let needle = format!(" {event}: ");
        raw.lines().filter(|l| l.contains(&needle)).count() as u64
    };
    let (imported, report) = ftrace::import(&[capture()], &options("1ms", None)).unwrap();
    for event in [
        "timer_init",
        "timer_start",
        "timer_cancel",
        "timer_expire_entry",
        "timer_expire_exit",
        "hrtimer_setup",
        "hrtimer_start",
        "hrtimer_cancel",
        "hrtimer_expire_entry",
        "hrtimer_expire_exit",
    ] {
        assert_eq!(
            report.events.get(event).copied(),
            Some(count(event)),
            "{event}"
        );
    }
    assert_eq!(count("timer_start"), 514);
    assert_eq!(count("hrtimer_start"), 6756);
    assert_eq!(report.hz, (250, "inferred from the trace"));
    let comments = raw.lines().filter(|l| l.starts_with('#')).count() as u64;
    assert_eq!(report.skipped.get("comment").copied(), Some(comments));
    let others = count("tick_stop") + count("timer_base_idle") + count("itimer_expire");
    assert_eq!(report.skipped.get("other-event").copied(), Some(others));
    // Every start, cancel and firing is accounted for: used, folded into a quirk, or
    // skipped with a reason.
    for (class, prefix) in [(WHEEL, "timer"), (HRTIMER, "hrtimer")] {
        let t = report.tallies[class];
        let unplaceable = report
            .skipped
            .get(&format!("unplaceable-{prefix}_start"))
            .copied()
            .unwrap_or(0);
        assert_eq!(
            t.starts + t.restarts + unplaceable,
            count(&format!("{prefix}_start"))
        );
        assert_eq!(
            t.stops - t.stops_at_new_lifetime
                + t.stops_unstarted
                + report.detaches[class]
                + report.rearms[class],
            count(&format!("{prefix}_cancel"))
        );
        assert_eq!(
            t.firings + t.firings_unstarted,
            count(&format!("{prefix}_expire_entry"))
        );
        assert_eq!(
            t.firings_reproduced + t.firings_clock_moved,
            t.firings,
            "{prefix}"
        );
    }
    // The wheel's detaches (quirk 1) are every wheel firing's cancel.
    assert_eq!(report.detaches[WHEEL], count("timer_expire_entry"));
    let metadata = &imported.workload.metadata;
    assert_eq!(metadata.get("tick"), Some("1ms"));
    assert_eq!(metadata.get("source"), Some("linux-6.18-timer-12s.txt.gz"));
    assert!(metadata.get("starts").unwrap().contains("wheel 514"));
}

#[test]
fn the_capture_loads_and_every_implementation_replays_it() {
    let (imported, _) = ftrace::import(&[capture()], &options("1ms", None)).unwrap();
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("capture.tw");
    writer::write_file(&path, &imported.workload).unwrap();
    let program = load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(program.summary.started, 6791 + 479);
    let mut replayed = 0;
    for implementation in IMPLEMENTATIONS {
        let variant = Variant::of(implementation);
        // A structure that walks every tick may declare a range the capture is beyond: it
        // refuses the workload up front, as examples.rs checks; nothing to verify then.
        if !program.reach.within(&variant.declarations().range) {
            continue;
        }
        let mut log = Vec::new();
        verify_as_declared(&variant, &program, &mut log)
            .unwrap_or_else(|e| panic!("{}: {e}", implementation.name));
        replayed += 1;
    }
    assert!(replayed * 2 > IMPLEMENTATIONS.len(), "{replayed} replayed");
}

const WHEEL_DETACH: &str = "\
# tracer: nop
 kworker/0:1-9  [000] d..1. 100.000000: timer_init: timer=00000000aaaa0001
 kworker/0:1-9  [000] d..1. 100.000000: timer_start: timer=00000000aaaa0001 function=f expires=1005 [timeout=5] bucket_expiry=1005 cpu=0 idx=5 flags=
      <idle>-0  [000] d.s1. 100.020000: timer_cancel: timer=00000000aaaa0001
      <idle>-0  [000] ..s.. 100.020001: timer_expire_entry: timer=00000000aaaa0001 function=f now=1005 baseclk=1005
      <idle>-0  [000] ..s.. 100.020002: timer_expire_exit: timer=00000000aaaa0001
 kworker/0:1-9  [000] d..1. 100.030000: timer_start: timer=00000000aaaa0001 function=f expires=1012 [timeout=5] bucket_expiry=1012 cpu=0 idx=5 flags=
";

#[test]
fn quirk_1_the_cancel_before_an_expiry_is_part_of_the_firing() {
    // 1 jiffy = 1 tick of 4ms at HZ 250.
    let (ops, report) = import(&[WHEEL_DETACH], "4ms", Some(250));
    // The second start at 7.5 ticks: its deadline, 12.5, rounds up to 13.
    assert_eq!(ops, "s 0 5\na 5\na 2\ns 0 6\n");
    let t = report.tallies[WHEEL];
    assert_eq!((t.starts, t.stops, t.firings), (2, 0, 1));
    assert_eq!(t.firings_reproduced, 1);
    assert_eq!(report.detaches[WHEEL], 1);
}

const HRTIMER_REARM: &str = "\
 app-7 [000] ..... 10.000000: hrtimer_setup: hrtimer=00000000bbbb0001 clockid=CLOCK_MONOTONIC mode=REL
 app-7 [000] d..1. 10.000000: hrtimer_start: hrtimer=00000000bbbb0001 function=f expires=10005000000 softexpires=10005000000 mode=REL was_armed=0
 app-7 [000] d..2. 10.002000: hrtimer_cancel: hrtimer=00000000bbbb0001
 app-7 [000] d..2. 10.002000: hrtimer_start: hrtimer=00000000bbbb0001 function=f expires=10010000000 softexpires=10010000000 mode=REL was_armed=0
 app-7 [000] d..1. 10.003000: hrtimer_cancel: hrtimer=00000000bbbb0001
 app-7 [001] d..1. 10.003500: hrtimer_start: hrtimer=00000000bbbb0002 function=g expires=10009000000 softexpires=10009000000 mode=REL was_armed=0
 app-7 [001] d..1. 10.004000: hrtimer_cancel: hrtimer=00000000bbbb0002
 app-7 [000] d..1. 10.004000: hrtimer_start: hrtimer=00000000bbbb0002 function=g expires=10009000000 softexpires=10009000000 mode=REL was_armed=0
";

#[test]
fn quirk_2_cancel_then_start_on_one_cpu_is_a_restart() {
    let (ops, report) = import(&[HRTIMER_REARM], "1ms", None);
    // The second timer's cancel and start are on different CPUs: a stop, then a start.
    assert_eq!(ops, "s 0 5\na 2\nr 0 8\na 1\nx 0\ns 1 6\na 1\nx 1\ns 1 5\n");
    let t = report.tallies[HRTIMER];
    assert_eq!((t.starts, t.restarts, t.stops), (3, 1, 2));
    assert_eq!(report.rearms[HRTIMER], 1);
}

const ADDRESS_REUSE: &str = "\
 sleep-5 [001] ..... 5.000000: hrtimer_setup: hrtimer=00000000cccc0001 clockid=CLOCK_MONOTONIC mode=REL
 sleep-5 [001] d..1. 5.000000: hrtimer_start: hrtimer=00000000cccc0001 function=hrtimer_wakeup expires=5003000000 softexpires=5003000000 mode=REL was_armed=0
  <idle>-0 [001] d.h.. 5.003000: hrtimer_expire_entry: hrtimer=00000000cccc0001 function=hrtimer_wakeup now=5003000000
  <idle>-0 [001] d.h.. 5.003001: hrtimer_expire_exit: hrtimer=00000000cccc0001
 sleep-6 [001] ..... 5.004000: hrtimer_setup: hrtimer=00000000cccc0001 clockid=CLOCK_MONOTONIC mode=REL
 sleep-6 [001] d..1. 5.004000: hrtimer_start: hrtimer=00000000cccc0001 function=hrtimer_wakeup expires=5006000000 softexpires=5006000000 mode=REL was_armed=0
";

#[test]
fn quirk_3_a_setup_begins_a_new_lifetime_with_a_new_id() {
    let (ops, report) = import(&[ADDRESS_REUSE], "1ms", None);
    assert_eq!(ops, "s 0 3\na 3\na 1\ns 1 2\n");
    assert_eq!(report.tallies[HRTIMER].firings_reproduced, 1);
}

#[test]
fn quirk_4_cpus_and_files_are_merged_in_time_order() {
    let cpu0 = "\
 a-1 [000] d..1. 1.000000: hrtimer_start: hrtimer=00000000dddd0001 function=f expires=1100000000 softexpires=1100000000 mode=ABS
 a-1 [000] d..1. 1.010000: hrtimer_start: hrtimer=00000000dddd0002 function=f expires=1100000000 softexpires=1100000000 mode=ABS
";
    let cpu1 = "\
 b-2 [001] d..1. 1.005000: hrtimer_start: hrtimer=00000000dddd0003 function=f expires=1100000000 softexpires=1100000000 mode=ABS
";
    let (ops, _) = import(&[cpu0, cpu1], "1ms", None);
    assert_eq!(ops, "s 0 100\na 5\ns 1 95\na 5\ns 2 90\n");
}

#[test]
fn quirk_5_jiffies_wrap_at_32_bits_and_pass_2_to_the_32_as_64_bits() {
    // A 32-bit kernel without `timeout`: jiffies 2^32 - 6, a deadline of 10 after the wrap.
    let narrow = "\
 x-1 [000] ..s.. 100.000000: timer_expire_entry: timer=00000000eeee0009 function=f now=4294967290
 x-1 [000] d..1. 100.000000: timer_start: timer=00000000eeee0001 function=f expires=10 cpu=0 idx=0 flags=
";
    let (ops, report) = import(&[narrow], "4ms", Some(250));
    assert_eq!(ops, "s 0 16\n");
    assert_eq!(report.tallies[WHEEL].firings_unstarted, 1);
    // A 64-bit kernel: the same jiffies go on past 2^32.
    let wide = "\
 x-1 [000] ..s.. 100.000000: timer_expire_entry: timer=00000000eeee0009 function=f now=4294967200
 x-1 [000] d..1. 100.008000: timer_start: timer=00000000eeee0001 function=f expires=4294967396 cpu=0 idx=0 flags=
";
    let (ops, _) = import(&[wide], "4ms", Some(250));
    assert_eq!(ops, "a 2\ns 0 194\n");
}

#[test]
fn older_formats_and_damaged_lines_are_read_or_counted() {
    let old = "\
CPU:0 [LOST 12 EVENTS]
 <idle>-0 [000] 50.000000: hrtimer_init: hrtimer=ffff88003a5b1e28 clockid=CLOCK_MONOTONIC mode=HRTIMER_MODE_ABS
 <idle>-0 [000] 50.000000: hrtimer_start: hrtimer=ffff88003a5b1e28 function=tick_sched_timer expires=50004000000 softexpires=50004000000
 <idle>-0 [000] 50.004010: hrtimer_cancel: hrtimer=ffff88003a5b1e28
 <idle>-0 [000] 50.004010: hrtimer_expire_entry: hrtimer=ffff88003a5b1e28 function=tick_sched_timer now=50004000000
 kworker-1 [000] d.s. 50.005000: timer_start: timer=ffff880012345678 function=delayed_work_timer_fn expires=4294892300 [timeout=250] cpu=0 idx=0 flags=
 kworker-1 [000] d.s. 50.006000: timer_start: timer=ffff880012345678 function=delayed_wo
 kworker-1 [000] d.s. 50.007000: sched_switch: prev_comm=a
";
    let (ops, report) = import(&[old], "1ms", Some(250));
    // The firing's `now` is 10us behind its timestamp: the monotonic clock's measured
    // offset puts the deadline at 4.01 ms, tick 5; the firing (at tick 4) moves the clock
    // there, so the model fires it at once.
    assert_eq!(ops, "s 0 5\na 4\na 1\ns 1 1000\n");
    assert_eq!(report.detaches[HRTIMER], 1);
    assert_eq!(report.tallies[HRTIMER].firings_clock_moved, 1);
    assert_eq!(report.skipped.get("not-an-event"), Some(&1));
    assert_eq!(report.skipped.get("malformed-timer_start"), Some(&1));
    assert_eq!(report.other_events.get("sched_switch"), Some(&1));
}

#[test]
fn a_past_deadline_is_delay_0_and_counted() {
    let past = "\
 a-1 [000] d..1. 2.000000: hrtimer_start: hrtimer=00000000ffff0001 function=f expires=1500000000 softexpires=1500000000 mode=ABS
";
    let (ops, report) = import(&[past], "1ms", None);
    assert_eq!(ops, "s 0 0\n");
    assert_eq!(report.tallies[HRTIMER].past_deadlines, 1);
}

#[test]
fn timers_selects_a_kind() {
    let (_folder, paths) = files(&[WHEEL_DETACH]);
    let mut only_hrtimers = options("1ms", Some(250));
    only_hrtimers.timers = Timers::Hrtimer;
    let error = ftrace::import(&paths, &only_hrtimers)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("trace0.txt") && error.contains("--timers"),
        "{error}"
    );
    let (imported, report) = ftrace::import(&paths, &options("1ms", Some(250))).unwrap();
    assert!(!imported.workload.ops.is_empty());
    assert_eq!(report.tallies[HRTIMER].starts, 0);
}

#[test]
fn a_trace_without_timer_events_is_one_error_naming_the_file() {
    let (_folder, paths) = files(&["# tracer: nop\n a-1 [000] ..... 1.0: tick_stop: success=1\n"]);
    let error = ftrace::import(&paths, &options("1ms", None))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("trace0.txt") && error.contains("no timer events"),
        "{error}"
    );
    let missing = ftrace::import(
        &[PathBuf::from("/nonexistent/trace.txt")],
        &options("1ms", None),
    )
    .unwrap_err()
    .to_string();
    assert!(missing.starts_with("/nonexistent/trace.txt:"), "{missing}");
}

#[test]
fn ticks_parse_with_units() {
    assert_eq!(parse_tick("1ms").unwrap(), 1_000_000);
    assert_eq!(parse_tick("100us").unwrap(), 100_000);
    assert_eq!(parse_tick("1s").unwrap(), 1_000_000_000);
    assert!(parse_tick("0ms").is_err());
    assert!(parse_tick("1 ms").is_err());
    assert!(parse_tick("ms").is_err());
}

#[test]
fn a_timestamp_beyond_2_pow_63_ns_is_not_an_event() {
    // Found by the import_ftrace fuzz target: 30 digits of seconds overflowed the
    // nanoseconds; 25 overflowed a delay computed from two timestamps.
    let huge = " a-1 [000] 5.000000: timer_expire_entry: timer=ffff880012345678 function=f now=5\n\
                 a-1 [000] 100000000000000000000000000000.000000: timer_start: timer=ffff880012345679 function=f expires=9 flags=0\n\
                 [1] 566666666666666666666666666556:\n\
                 a-1 [000] 9.000000: timer_start: timer=ffff880012345678 function=f expires=4294892300 [timeout=250] cpu=0 idx=0 flags=\n";
    let (ops, report) = import(&[huge], "1ms", Some(250));
    assert_eq!(ops, "a 4000\ns 0 1000\n");
    assert_eq!(report.skipped.get("not-an-event"), Some(&2));
}
