//! A cell's samples from several processes: the spread between the processes and within
//! one beside each median, the cells measured under load marked, counted and never left
//! out, and records older than either rendering without them.

use super::*;
use crate::write_report;
use std::path::PathBuf;
use timerbench_results::Conditions;

/// The conditions of one process on a machine of two CPUs, pinned to CPU 1, with the load
/// before and after.
fn conditions(role: &str, load_before: f64, load_after: f64) -> Conditions {
    Conditions {
        role: role.to_string(),
        cpu: Some(1),
        load_before: Some(load_before),
        load_after: Some(load_after),
        governor: Some("performance".to_string()),
        cpus: 2,
        calibration_ns: Some(320_000.0),
        memory_probe_before_ns: Some(100.0),
        memory_probe_after_ns: Some(150.0),
        started_unix_ms: None,
    }
}

/// `record` as if three processes had sampled it (their samples in the order run), on an
/// idle machine.
fn sampled(record: &mut CellRecord, processes: &[[f64; 3]]) {
    let throughput = record.throughput.as_mut().expect("a verified cell");
    let samples: Vec<f64> = processes.iter().flatten().copied().collect();
    throughput.repeats = samples.len() as u32;
    throughput.ns_per_op = spread(samples);
    throughput.processes = processes.len() as u32;
    throughput.process_medians = processes
        .iter()
        .map(|p| spread(p.to_vec()).median)
        .collect();
    record.conditions = (0..processes.len())
        .map(|index| conditions(if index == 0 { "full" } else { "samples" }, 0.2, 0.3))
        .collect();
}

/// A run whose every verified cell was sampled by three processes around its own median,
/// one of them (hold-exponential at 1,000 timers, btree) with spreads worked out here,
/// and one (burst at 1,000 timers, binary-heap) measured under load in its second process.
fn three_process_records() -> Vec<CellRecord> {
    let mut records = records(1.0);
    for record in &mut records {
        let Some(ns) = record.throughput.as_ref().map(|t| t.ns_per_op.median) else {
            continue;
        };
        let around = [ns, ns * 1.01, ns * 0.99];
        let key = record.key.clone();
        let is = |workload: &str, implementation: &str| {
            key.workload == workload && key.timers == 1_000 && key.implementation == implementation
        };
        if is("hold-exponential", "btree") {
            // Medians 100, 104 and 97: their MAD is 3, 3.0% of 100. The processes' own
            // relative MADs are 1/100, 2/104 and 1/97, whose median is 1.03%.
            sampled(
                record,
                &[
                    [100.0, 101.0, 99.0],
                    [104.0, 106.0, 102.0],
                    [97.0, 98.0, 96.0],
                ],
            );
        } else {
            sampled(record, &[around, around, around]);
        }
        if is("burst", "binary-heap") {
            // Above a two-CPU machine's 2 (the measuring process and the CPU it left free),
            // at the end.
            record.conditions[1] = conditions("samples", 0.9, 2.7);
        }
    }
    records
}

/// The workload `name`'s part of the workloads section.
fn workload_section<'h>(html: &'h str, name: &str) -> &'h str {
    let opening = format!("<section class=\"workload\" id=\"w-{name}\">");
    let start = html.find(&opening).expect("the workload's section");
    let end = html[start..].find("</section>").expect("its end") + start;
    &html[start..end]
}

fn render(folders: &[PathBuf]) -> String {
    let dir = folders[0].parent().unwrap();
    let output = dir.join("report.html");
    write_report(folders, &output, None, &catalog()).unwrap();
    std::fs::read_to_string(&output).unwrap()
}

#[test]
fn three_processes_show_both_spreads_and_a_loaded_cell_is_marked_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    write_folder(
        &folder,
        &three_process_records(),
        &environment("alpha", "abc1234"),
    );
    let html = render(std::slice::from_ref(&folder));

    // Both spreads beside the median, the processes' medians in the tooltip; every
    // verified cell has them, under a header that names the processes.
    let hold = workload_section(&html, "hold-exponential");
    assert!(
        hold.contains("between / within<br><span class=\"note\">3 processes</span>"),
        "{hold}"
    );
    assert!(hold.contains(
        "title=\"between its 3 processes (medians 100, 104, 97.0 ns/op, in the order run): \
         ±3.0%; within one: ±1.0%\">±3.0% / ±1.0%</td>"
    ));
    let verified = IMPLEMENTATIONS.len() * SIZES.len() * WORKLOADS.len() - BAD.len();
    assert_eq!(html.matches("<td class=\"num spread\"").count(), verified);
    // Each other cell's processes agree with one another, each within ±1%.
    assert_eq!(html.matches(">±0.0% / ±1.0%</td>").count(), verified - 1);

    // The loaded cell is marked in its table, with its legend, and nowhere else; the
    // other tables have neither.
    let marks = "<span class=\"badge load\" title=\"measured under load";
    assert_eq!(html.matches(marks).count(), 1);
    let burst = workload_section(&html, "burst");
    assert!(burst.contains(&format!(
        "{marks}, its figures may be inflated: process 2 (samples): load 0.90 before, 2.70 \
         after, above 2\">load</span>"
    )));
    assert_eq!(html.matches("class=\"note legend\"").count(), 1);
    assert!(
        burst.contains(
            "measured under load: the one-minute load average was above the machine's CPUs (2)"
        ),
        "{burst}"
    );
    for name in ["hold-exponential", "keepalive"] {
        assert!(
            !workload_section(&html, name).contains("badge load"),
            "{name}"
        );
    }

    // Counted in the summary and in binary-heap's ranking over all workloads (the family
    // cards have no room for it).
    let summary = section(&html, "summary");
    assert!(summary.contains(&format!(
        "<strong>Measured under load.</strong> 1 of the {verified} verified cells had a load \
         average above"
    )));
    assert_eq!(summary.matches(">1 load</span>").count(), 1);

    // The environment: how each cell was sampled, and what its processes saw.
    let environment = section(&html, "environment");
    for row in [
        "<th>processes per cell</th><td>3</td>",
        "<th>timed samples per process</th><td>3</td>",
        "<th>least time per sample</th><td>10 ms</td>",
        "<th>pinned to CPU</th><td>1</td>",
        "<th>CPU frequency governor</th><td>performance</td>",
        "<th>load average (1 min)</th><td>0.20 to 2.70",
        "<th>CPU speed (calibration kernel)</th><td>median 320 µs, 10th to 90th percentile 320 to 320, over ",
        "<th>memory speed (32 MiB pointer chase)</th><td>median ",
        " ns per load, 10th to 90th percentile 100 to 150, over ",
    ] {
        assert!(environment.contains(row), "{row}");
    }
    assert!(environment.contains(&format!(
        "<th>cells measured under load</th><td>1 of {verified} verified</td>"
    )));
}

#[test]
fn records_of_one_process_without_conditions_show_neither() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let older = Environment {
        processes: 0,
        min_sample_ms: 0,
        max_processes: 0,
        spread_from: 0,
        ..environment("alpha", "abc1234")
    };
    write_folder(&folder, &records(1.0), &older);
    let html = render(std::slice::from_ref(&folder));

    assert!(!html.contains("3 processes</span>"));
    assert!(!html.contains("class=\"num spread"), "no spread column");
    assert!(!html.contains("between / within"), "nor its explanation");
    assert!(!html.contains("badge load"));
    assert!(!html.contains("Measured under load"));
    let environment = section(&html, "environment");
    for row in [
        "<th>processes per cell</th><td>1 (the run predates --processes)</td>",
        "<th>least time per sample</th><td>none: each sample one replay",
        "<th>pinned to CPU</th><td>not recorded",
        "<th>cells measured under load</th><td>not recorded",
    ] {
        assert!(environment.contains(row), "{row}");
    }
}

#[test]
fn an_older_run_beside_a_newer_one_keeps_its_table_in_line() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("run-a"), dir.path().join("run-b"));
    write_run(&a, "alpha", 1.0);
    let mut newer = three_process_records();
    // One cell of the newer run from one process (a run resumed from an older build).
    let single = newer
        .iter_mut()
        .find(|r| r.key.workload == "keepalive" && r.status == Status::Ok)
        .unwrap();
    single.throughput = Some(throughput(50.0));
    single.conditions.clear();
    write_folder(&b, &newer, &environment("beta", "abc1234"));
    let html = render(&[a, b]);

    // Only run B has the spread column; every row of every table spans as many columns
    // as its header.
    assert_eq!(html.matches("3 processes</span>").count(), WORKLOADS.len());
    let workloads = section(&html, "workloads");
    for table in workloads.split("<table").skip(1) {
        let table = &table[..table.find("</table>").unwrap()];
        let widths: Vec<usize> = table
            .split("<tr")
            .skip(1)
            .map(|row| {
                row.split("<t")
                    .skip(1)
                    .filter(|cell| cell.starts_with('d') || cell.starts_with('h'))
                    .map(|cell| {
                        let tag = &cell[..cell.find('>').unwrap()];
                        tag.split("colspan=\"")
                            .nth(1)
                            .map_or(1, |n| n[..n.find('"').unwrap()].parse().unwrap())
                    })
                    .sum()
            })
            .collect();
        // One implementation column, 8 of run A (5 and the tail of each of the 3 operation
        // kinds), 9 of run B, one ratio.
        assert!(widths.iter().all(|w| *w == 19), "{widths:?}");
    }
    // The summary counts each run's cells measured under load.
    let verified = IMPLEMENTATIONS.len() * SIZES.len() * WORKLOADS.len() - BAD.len();
    assert!(section(&html, "summary").contains(&format!(
        "<strong>Measured under load.</strong> Run A: none; run B: 1 of the {verified} verified \
         cells had"
    )));
    // The cell of one process shows only the spread within it.
    assert!(html.contains(
        "title=\"one process, so no spread between processes; within it: ±1.0%\">\
         <span class=\"na\">–</span> / ±1.0%</td>"
    ));
}

#[test]
fn a_run_measured_all_under_load_says_so_in_a_word() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let mut records = three_process_records();
    for record in &mut records {
        for conditions in &mut record.conditions {
            conditions.load_after = Some(2.5);
        }
    }
    write_folder(&folder, &records, &environment("alpha", "abc1234"));
    let html = render(std::slice::from_ref(&folder));
    let verified = IMPLEMENTATIONS.len() * SIZES.len() * WORKLOADS.len() - BAD.len();
    assert!(html.contains(&format!(
        "<strong>Measured under load.</strong> All {verified} verified cells had"
    )));
    // Every verified cell marked, a legend under every table.
    let marks = "<span class=\"badge load\" title=\"measured under load";
    assert_eq!(html.matches(marks).count(), verified);
    assert_eq!(
        html.matches("class=\"note legend\"").count(),
        WORKLOADS.len()
    );
}
