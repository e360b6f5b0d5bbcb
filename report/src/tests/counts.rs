//! Counts in the report (`timerbench run --counts`): a run whose records hold them gets a
//! counts table and a chart of the estimated cycles per line under each counted workload;
//! a run without them has neither (the other tests' pages are those runs).

use super::*;
use crate::write_report;
use timerbench_results::counts::{CacheGeometry, CacheLevel, CountTotals, Counts};

/// Counts of `instructions` over 100 lines, with 30 + 10 D1 misses, 5 LL misses and 20
/// mispredicts.
fn counts(instructions: u64) -> Counts {
    let level = |size_bytes| CacheLevel {
        size_bytes,
        associativity: 8,
        line_bytes: 64,
    };
    Counts {
        tool: "valgrind-3.19.0 callgrind".to_string(),
        cache: CacheGeometry {
            i1: level(32768),
            d1: level(32768),
            ll: level(8 << 20),
        },
        lines: 100,
        totals: CountTotals {
            instructions,
            data_reads: 300,
            data_writes: 100,
            d1_read_misses: 30,
            d1_write_misses: 10,
            ll_read_misses: 5,
            conditional_mispredicts: 20,
            ..CountTotals::default()
        },
        seconds: 2.0,
    }
}

#[test]
fn a_counted_workload_has_its_counts_table_and_an_estimated_cycles_chart() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let mut all = records(1.0);
    // Only burst is counted: btree with 1234 instructions over 100 lines at every size.
    for record in all
        .iter_mut()
        .filter(|r| r.key.workload == "burst" && r.key.implementation == "btree")
    {
        record.counts = Some(counts(1234));
    }
    write_folder(&folder, &all, &environment("host", "abc1234"));
    let output = folder.join("report.html");
    write_report(std::slice::from_ref(&folder), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();

    let workloads = section(&html, "workloads");
    let burst = &workloads[workloads.find("id=\"w-burst\"").expect("the burst section")..];
    assert!(burst.contains("<h4>Counts</h4>"), "the counts block");
    assert!(burst.contains("instructions/line") && burst.contains("12.34"));
    // Estimated cycles: 1234 + 300 + 100 accesses, 40 L1 misses of which 5 went to
    // memory: 1594 L1 hits + 5 x 35 LL hits + 35 x 5 = 1944 over 100 lines.
    assert!(burst.contains("19.44"), "estimated cycles per line");
    assert!(html.contains("id=\"chart-burst-est-cycles\""), "the chart");
    // The uncounted workloads have none.
    assert_eq!(workloads.matches("<h4>Counts</h4>").count(), 1);
    assert!(!html.contains("chart-keepalive-est-cycles"));
    check_self_contained(&html);
}
