//! Engine cells (`timerbench run --engine`) in the report: beside the Rust structures,
//! marked with the engine badge and a legend line, never the best of a size.

use super::*;
use crate::write_report;
use timerbench_results::EngineInfo;

/// The run of `records(1.0)` plus an engine cell, 1 ns/op, at every size of every workload:
/// faster than every structure, so the best of a size would be its if engines counted.
fn run_with_an_engine() -> Vec<CellRecord> {
    let mut all = records(1.0);
    for (workload, family) in WORKLOADS {
        for &timers in SIZES {
            let mut engine = record(workload, family, timers, "btree", 1.0);
            engine.key.implementation = "jdk-delay-queue".to_string();
            engine.implementation_base = "jdk-delay-queue".to_string();
            engine.status = Status::Ok;
            engine.reason = None;
            engine.throughput = Some(throughput(1.0));
            engine.engine = Some(EngineInfo {
                name: "jdk-delay-queue".into(),
                runtime: "OpenJDK 64-Bit Server VM".into(),
                runtime_version: "17".into(),
                protocol: 1,
                mode: "replay".into(),
                unit: "replay".into(),
                samples_ns: vec![1000.0],
                conversion: "over the lines".into(),
                warmup_iterations: vec![5],
                warmup_settled: vec![true],
                peak_rss_bytes: Some(1 << 26),
                resident_fired: Vec::new(),
                exchange_seconds: vec![0.5],
                ..EngineInfo::default()
            });
            let mut null = engine.clone();
            null.key.implementation = "null".into();
            null.implementation_base = "null".into();
            null.throughput = None;
            null.engine = Some(EngineInfo {
                name: "null".into(),
                runtime: "sh".into(),
                unit: "nothing".into(),
                samples_ns: Vec::new(),
                exchange_seconds: vec![0.004, 0.006, 0.005],
                ..engine.engine.clone().unwrap()
            });
            all.push(engine);
            all.push(null);
        }
    }
    all
}

#[test]
fn engine_cells_are_marked_with_a_legend_and_never_the_best() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    write_folder(
        &folder,
        &run_with_an_engine(),
        &environment("host", "abc1234"),
    );
    let output = folder.join("report.html");
    write_report(std::slice::from_ref(&folder), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    let workloads = section(&html, "workloads");
    assert!(workloads.contains("badge engine"), "the badge");
    assert!(
        workloads.contains("through the engine protocol"),
        "the legend"
    );
    // btree is the fastest structure, the best at every size though the engine is faster:
    // at hold-exponential/1k btree is 20 × (1 + 3/6) = 30 ns/op, the engine 1 ns/op, 0.03×.
    let row = workloads
        .split("<tr>")
        .find(|row| row.contains("jdk-delay-queue"))
        .unwrap();
    assert!(row.contains("0.03×"), "{row}");
    let summary = section(&html, "summary");
    assert!(summary.contains("jdk-delay-queue"), "ranked beside them");
    assert!(summary.contains("badge engine"), "and marked");
}
