//! The floor (`timerbench run --floor`) in the report: a yardstick beside the
//! implementations, marked as such, never the best and never ranked.

use super::*;
use crate::write_report;
use timerbench_results::FLOOR;

/// The run of `records(1.0)` plus a floor cell at every size of every workload, 4 ns/op.
fn run_with_floor() -> Vec<CellRecord> {
    let mut all = records(1.0);
    for (workload, family) in WORKLOADS {
        for &timers in SIZES {
            let mut floor = record(workload, family, timers, "btree", 1.0);
            floor.key.implementation = FLOOR.to_string();
            floor.implementation_base = FLOOR.to_string();
            floor.precision = Some(timerbench_results::FLOOR_PRECISION.to_string());
            floor.status = Status::Ok;
            floor.reason = None;
            floor.throughput = Some(throughput(4.0));
            all.push(floor);
        }
    }
    all
}

#[test]
fn the_floor_is_marked_never_best_and_never_ranked_and_divides_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    write_folder(&folder, &run_with_floor(), &environment("host", "abc1234"));
    let output = folder.join("report.html");
    write_report(std::slice::from_ref(&folder), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();

    let workloads = section(&html, "workloads");
    assert!(workloads.contains("floor, not verified"), "the badge");
    assert!(workloads.contains("× floor"), "the column's second figure");
    // btree at hold-exponential/1k is 20 × (1 + 3/6) = 30 ns/op: 7.50 times the floor's 4.
    assert!(workloads.contains("7.50× floor"), "btree over the floor");
    // The fastest verified implementation is still the best, at 1.00×, not the floor.
    assert!(workloads.contains("1.00×"));
    assert!(workloads.contains("the floor"));
    let summary = section(&html, "summary");
    assert!(
        !summary.contains(">floor<") && !summary.contains("floor, not verified"),
        "the floor is not in the ranking"
    );
}

#[test]
fn the_environment_counts_verified_cells_among_those_that_are_verified() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let records = run_with_floor();
    write_folder(&folder, &records, &environment("host", "abc1234"));
    let output = folder.join("report.html");
    write_report(std::slice::from_ref(&folder), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    let floors = records
        .iter()
        .filter(|r| timerbench_results::is_floor(&r.key.implementation))
        .count();
    let others: Vec<&CellRecord> = records
        .iter()
        .filter(|r| !timerbench_results::is_floor(&r.key.implementation))
        .collect();
    let verified = others.iter().filter(|r| r.status == Status::Ok).count();
    let environment = section(&html, "environment");
    let expected = format!(
        "{} ({verified} of {} verified; {floors} not verified by design",
        records.len(),
        others.len()
    );
    assert!(environment.contains(&expected), "{expected}\n{environment}");
}

#[test]
fn fixed_costs_are_given_per_implementation_beside_the_peers() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    write_folder(&folder, &records(1.0), &environment("host", "abc1234"));
    let output = folder.join("report.html");
    write_report(std::slice::from_ref(&folder), &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    let implementations = section(&html, "implementations");
    assert!(implementations.contains("idle advance / start+stop"));
    // The fixtures give implementation i (from 0) 5(i+1) and 20(i+1) ns: btree is 0, the
    // peer tokio-delay-queue 3.
    assert!(implementations.contains("5.00 / 20.0"), "btree");
    assert!(implementations.contains("20.0 / 80.0"), "the peer");
}
