//! A results folder as the run writes it and the report reads it: records appended and
//! read back, a resumed file cut at its last whole line, the latest record of each cell,
//! `summary.csv`, `environment.json`, and the newest run under `results/`.

use std::collections::BTreeMap;
use std::path::Path;
use timerbench_results::{
    Appender, CellIdentity, CellKey, CellRecord, Conditions, Environment, Latency, Lateness,
    Memory, SCHEMA_VERSION, Status, Throughput, latest_by_cell, newest_run, read_environment,
    read_records, recorded_so_far, spread, write_environment, write_summary,
};

fn record(workload: &str, timers: u64, implementation: &str, status: Status) -> CellRecord {
    let identity = CellIdentity {
        key: CellKey {
            workload: workload.to_string(),
            timers,
            implementation: implementation.to_string(),
        },
        family: "hold".to_string(),
        params: BTreeMap::new(),
        ops: None,
        seed: 1,
        generator: format!("timerbench gen hold --timers {timers} --seed 1"),
        peer: false,
        implementation_base: implementation.to_string(),
        implementation_parameters: BTreeMap::new(),
        precision: "exact".to_string(),
        operations: 4 * timers,
        fired: timers,
        reference_digest: "00".to_string(),
    };
    let reason = (status != Status::Ok).then(|| "it, panicked \"here\"".to_string());
    let mut record = CellRecord::for_spec(identity, status, reason);
    if status == Status::Ok {
        // From JSON, as a results file is read: figures the schema adds later, each with
        // a default, need nothing here.
        let throughput = serde_json::json!({
            "repeats": 3,
            "ns_per_op": spread(vec![10.0, 12.0, 11.0]),
            "ns_per_fired": null,
        });
        record.throughput = Some(serde_json::from_value::<Throughput>(throughput).unwrap());
        let latency = |p99: u64| Latency {
            count: 10,
            mean_ns: 5.0,
            percentiles: [("p99".to_string(), p99), ("max".to_string(), 10 * p99)].into(),
            histogram_v2: String::new(),
        };
        record.latency = [
            ("next".to_string(), latency(70)),
            ("tick".to_string(), latency(90)),
        ]
        .into();
        record.memory = Some(Memory {
            peak_live_bytes: 3200,
            peak_pending: 100,
            bytes_per_pending_timer: 32.0,
            allocations: 1,
            allocations_per_op: 0.0025,
            peak_rss_bytes: 4 << 20,
        });
    }
    record
}

fn append_all(folder: &Path, records: &[CellRecord]) {
    let mut appender = Appender::open(folder).unwrap();
    for record in records {
        appender.append(record).unwrap();
    }
}

#[test]
fn records_are_appended_whole_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let records = [
        record("hold", 1_000, "btree", Status::Ok),
        record("hold", 1_000, "kafka-wheel", Status::Failed),
    ];
    append_all(dir.path(), &records);
    let path = dir.path().join("results.jsonl");
    assert_eq!(read_records(&path).unwrap(), records);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.starts_with(&format!("{{\"schema\":{SCHEMA_VERSION},")));
}

#[test]
fn a_resumed_file_loses_only_its_partial_last_line() {
    let dir = tempfile::tempdir().unwrap();
    assert!(recorded_so_far(dir.path()).unwrap().is_empty());
    let first = record("hold", 1_000, "btree", Status::Ok);
    append_all(dir.path(), std::slice::from_ref(&first));
    let path = dir.path().join("results.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"schema\":1,\"workload\":\"ho");
    std::fs::write(&path, &text).unwrap();

    assert_eq!(
        recorded_so_far(dir.path()).unwrap(),
        std::slice::from_ref(&first)
    );
    let second = record("hold", 1_000, "quad-heap", Status::Ok);
    append_all(dir.path(), std::slice::from_ref(&second));
    assert_eq!(read_records(&path).unwrap(), [first, second]);
}

#[test]
fn a_malformed_line_is_named_by_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.jsonl");
    let good = serde_json::to_string(&record("hold", 1_000, "btree", Status::Ok)).unwrap();
    std::fs::write(&path, format!("{good}\n\n{{\"schema\": 1}}\n")).unwrap();
    let error = format!("{:#}", read_records(&path).unwrap_err());
    let expected = format!("{}:3: not a cell record: missing field", path.display());
    assert!(error.starts_with(&expected), "{error}");
}

#[test]
fn the_latest_record_of_a_cell_counts() {
    let failed = record("hold", 1_000, "btree", Status::Failed);
    let ok = record("hold", 1_000, "btree", Status::Ok);
    let other = record("hold", 2_000, "btree", Status::Ok);
    let latest = latest_by_cell([failed, ok.clone(), other.clone()]);
    assert_eq!(latest.into_values().collect::<Vec<_>>(), [ok, other]);
}

#[test]
fn the_summary_has_one_row_per_cell_in_cell_order() {
    let dir = tempfile::tempdir().unwrap();
    // An approximate variant with its parameters and lateness.
    let mut variant = record("hold", 2_000, "linux-wheel:levels=8", Status::Ok);
    variant.implementation_base = "linux-wheel".to_string();
    variant.implementation_parameters =
        [("levels".to_string(), 8), ("shift".to_string(), 3)].into();
    variant.precision = Some("approximate: late by at most 8/63 of the delay".to_string());
    variant.lateness = Some(Lateness {
        firings: 100,
        late: 90,
        early: 0,
        most_early_ticks: 0,
        stopped_late: 0,
        pending_late: 0,
        largest_fraction_of_delay: 0.125,
        largest_fraction_beyond_one_tick: Some(0.1),
        percentiles: [("p99".to_string(), 63), ("max".to_string(), 64)].into(),
        histogram_v2: String::new(),
    });
    // Sampled by three processes with medians 100, 103 and 97 (their MAD 3, 3% of 100),
    // each process's samples ±1 around its median (1/103, 1/100, 1/97 of it, whose median
    // is 1%); the second process under load.
    let throughput = variant.throughput.as_mut().unwrap();
    throughput.ns_per_op = spread(vec![
        100.0, 101.0, 99.0, 103.0, 104.0, 102.0, 97.0, 98.0, 96.0,
    ]);
    throughput.processes = 3;
    throughput.process_medians = vec![100.0, 103.0, 97.0];
    let conditions = |load: f64| Conditions {
        role: "samples".to_string(),
        cpu: Some(1),
        load_before: Some(load),
        load_after: Some(load),
        governor: None,
        cpus: 2,
        calibration_ns: None,
        memory_probe_before_ns: None,
        memory_probe_after_ns: None,
        started_unix_ms: None,
    };
    variant.conditions = vec![conditions(0.5), conditions(2.5), conditions(0.5)];
    // A record of schema 1: no base, parameters or precision.
    let mut old = record("hold", 1_000, "btree", Status::Timeout);
    old.schema = 1;
    old.implementation_base = String::new();
    old.precision = None;
    let records = [
        record("hold", 2_000, "btree", Status::Ok),
        record("hold", 1_000, "btree", Status::Failed),
        old,
        variant,
        record("hold", 1_000, "binary-heap", Status::Unsupported),
    ];
    write_summary(dir.path(), &records).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("summary.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines,
        [
            "workload,timers,implementation,status,ns_per_op_median,ns_per_op_mad,\
             advance_p99_ns,advance_max_ns,bytes_per_pending_timer,peak_rss_bytes,reason,\
             implementation_base,parameters,precision,lateness_p99_ticks,lateness_max_ticks,\
             processes,between_processes,within_process,under_load",
            "hold,1000,binary-heap,unsupported,,,,,,,\"it, panicked \"\"here\"\"\",\
             binary-heap,,exact,,,,,,false",
            // The base derived from the label when the record has none.
            "hold,1000,btree,timeout,,,,,,,\"it, panicked \"\"here\"\"\",btree,,,,,,,,false",
            // `next` is the clock-moving kind when there is no `advance`. One process (a
            // record older than the field): no spread between processes, the MAD of all
            // samples over their median within it.
            "hold,2000,btree,ok,11.0,1.0,70,700,32.0,4194304,,btree,,exact,,,\
             1,,0.09090909090909091,false",
            // Three processes, the second under load.
            "hold,2000,linux-wheel:levels=8,ok,100.0,2.0,70,700,32.0,4194304,,\
             linux-wheel,levels=8;shift=3,approximate,63,64,3,0.03,0.01,true",
        ]
    );
}

#[test]
fn the_environment_is_written_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let environment = Environment {
        schema: SCHEMA_VERSION,
        cpu: "a CPU".to_string(),
        cores: 2,
        memory_bytes: 1 << 30,
        os: "an OS".to_string(),
        rustc: "rustc".to_string(),
        git_revision: "abc".to_string(),
        host: "host".to_string(),
        command: "timerbench run".to_string(),
        started: "2026-11-22T00:00:00Z".to_string(),
        suite: "smoke".to_string(),
        repeat: 5,
        cell_timeout_seconds: 1800,
        processes: 3,
        min_sample_ms: 10,
        max_processes: 0,
        spread_from: 0,
        processes_at_1m: 0,
        plan: Some("0123abcd".to_string()),
        shard: Some(timerbench_results::shards::Shard { index: 2, count: 3 }),
        host_label: Some("left".to_string()),
    };
    write_environment(dir.path(), &environment).unwrap();
    let path = dir.path().join("environment.json");
    assert_eq!(read_environment(&path).unwrap(), environment);
    let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(leftovers, 1, "no temporary file is left");
}

#[test]
fn the_newest_run_is_a_folder_with_results() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("results");
    assert!(newest_run(&root).is_err());
    std::fs::create_dir_all(root.join(".cache")).unwrap();
    std::fs::write(root.join(".cache/results.jsonl"), "").unwrap();
    let error = newest_run(&root).unwrap_err().to_string();
    assert!(error.contains("no run under"), "{error}");
    for name in ["2026-11-20-host-aaa", "2026-11-21-host-bbb"] {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join("results.jsonl"), "").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The format crate's own files live in results/ too, and are newer: not runs.
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    std::fs::write(root.join("README.md"), "not a folder").unwrap();
    assert_eq!(newest_run(&root).unwrap(), root.join("2026-11-21-host-bbb"));
}
