//! Approximate implementations, variants and unsupported cells: the lateness section with
//! its table and both charts, a variant as a line of its own in a colour apart from its
//! base, and a cell beyond an implementation's range listed with its reason and never
//! counted as a failure.

use super::*;
use crate::catalog::ParamInfo;
use crate::write_report;
use timerbench_results::Lateness;

const BOUND: &str = "late by at most the granularity of the level its delay selects";

/// A lateness with the firings `ticks` late, its percentiles read off its histogram as the
/// harness does.
fn lateness_of(ticks: &[u64], early: u64) -> Lateness {
    let mut histogram = Histogram::<u64>::new(3).unwrap();
    for &t in ticks {
        histogram.record(t).unwrap();
    }
    Lateness {
        firings: histogram.len(),
        late: ticks.iter().filter(|t| **t > 0).count() as u64,
        early,
        most_early_ticks: if early > 0 { 4_096 } else { 0 },
        stopped_late: 3,
        pending_late: 2,
        largest_fraction_of_delay: 0.125,
        largest_fraction_beyond_one_tick: Some(0.1),
        percentiles: timerbench_results::histogram::percentiles(&histogram),
        histogram_v2: timerbench_results::histogram::encode_v2(&histogram).unwrap(),
    }
}

/// A verified exact cell of `label`, a variant of `base` with `parameters`, at `ns` per
/// operation.
fn cell(
    (workload, family): (&str, &str),
    timers: u64,
    (label, base): (&str, &str),
    parameters: &[(&str, u64)],
    ns: f64,
) -> CellRecord {
    let mut record = record(workload, family, timers, "btree", 1.0);
    record.key.implementation = label.to_string();
    record.implementation_base = base.to_string();
    record.implementation_parameters = parameters
        .iter()
        .map(|(name, value)| (name.to_string(), *value))
        .collect();
    record.throughput = Some(throughput(ns));
    record
}

/// `record` made approximate, with `lateness` when it verified.
fn approximate(mut record: CellRecord, lateness: Option<Lateness>) -> CellRecord {
    record.precision = Some(format!("approximate: {BOUND}"));
    record.lateness = lateness;
    record
}

/// Ticks late of 1,000 firings: `i % modulus`.
fn spread_ticks(modulus: u64) -> Vec<u64> {
    (0..1_000).map(|i| (i * 37) % modulus).collect()
}

fn write(folder: &Path, records: &[CellRecord]) {
    std::fs::create_dir_all(folder).unwrap();
    let lines: String = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(folder.join("results.jsonl"), lines).unwrap();
}

/// The report of a run of `records`, written with the synthetic catalog, as HTML.
fn report_html(records: &[CellRecord]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    write(&folder, records);
    let output = folder.join("report.html");
    write_report(
        std::slice::from_ref(&folder),
        &output,
        None,
        &catalog_with_parameters(),
    )
    .unwrap();
    std::fs::read_to_string(&output).unwrap()
}

/// The synthetic catalog, with linux-wheel and hashed-wheel and their parameters.
fn catalog_with_parameters() -> Catalog {
    let mut catalog = catalog();
    let parameter = |name: &str, default: u64, help: &str| ParamInfo {
        name: name.to_string(),
        default: default.to_string(),
        help: help.to_string(),
    };
    catalog.implementations.push(Described {
        name: "linux-wheel".to_string(),
        summary: "what linux-wheel is".to_string(),
        parameters: vec![parameter("levels", 9, "levels of 64 slots")],
    });
    catalog.implementations.push(Described {
        name: "hashed-wheel".to_string(),
        summary: "what hashed-wheel is".to_string(),
        parameters: vec![parameter("slots", 4096, "slots of the wheel")],
    });
    catalog
}

const HOLD: (&str, &str) = ("hold-exponential", "hold");
const BURST: (&str, &str) = ("burst", "burst");
const LINUX: (&str, &str) = ("linux-wheel", "linux-wheel");
const LINUX_8: (&str, &str) = ("linux-wheel:levels=8", "linux-wheel");

/// hold-exponential at two sizes and burst at one: two exact implementations, linux-wheel
/// and its variant with lateness (none fired on burst), and one variant cell beyond its
/// range.
fn approximate_run() -> Vec<CellRecord> {
    let mut records = Vec::new();
    for timers in [1_000, 100_000] {
        records.push(cell(HOLD, timers, ("btree", "btree"), &[], 40.0));
        records.push(cell(
            HOLD,
            timers,
            ("hierarchical-wheel", "hierarchical-wheel"),
            &[],
            15.0,
        ));
        let linux = cell(HOLD, timers, LINUX, &[("levels", 9)], 10.0);
        records.push(approximate(linux, Some(lateness_of(&spread_ticks(64), 0))));
        let levels_8 = cell(HOLD, timers, LINUX_8, &[("levels", 8)], 9.0);
        let lateness = lateness_of(&spread_ticks(4_096), 7);
        records.push(approximate(levels_8, Some(lateness)));
    }
    records.push(cell(BURST, 1_000, ("btree", "btree"), &[], 30.0));
    let no_firing = lateness_of(&[], 0);
    let linux = cell(BURST, 1_000, LINUX, &[("levels", 9)], 12.0);
    records.push(approximate(linux, Some(no_firing)));
    let mut beyond = approximate(cell(BURST, 1_000, LINUX_8, &[("levels", 8)], 1.0), None);
    beyond.status = Status::Unsupported;
    beyond.reason = Some(UNSUPPORTED.to_string());
    beyond.throughput = None;
    beyond.latency.clear();
    beyond.memory = None;
    records.push(beyond);
    records
}

/// As the run words it: the workload's first line past the range, and the limit.
const UNSUPPORTED: &str = "results/.cache/burst-1a2b.tw line 3 asks for a delay of \
     562949953421312 ticks, beyond the limit of 16777215 (<levels=8>)";

#[test]
fn approximate_cells_have_a_lateness_table_and_two_charts_per_workload() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let records = approximate_run();
    write(&folder, &records);
    let output = folder.join("report.html");
    let png = dir.path().join("png");
    let catalog = catalog_with_parameters();
    write_report(std::slice::from_ref(&folder), &output, Some(&png), &catalog).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    let lateness = section(&html, "lateness");

    // What lateness is, and how the exact ones are verified.
    assert!(lateness.contains("minus the clock at which the reference model fires"));
    assert!(lateness.contains("whole expiry log"));
    assert!(lateness.contains(BOUND), "each approximate label's bound");
    // The table: each approximate label at each size, its p99 in bold, exact ones absent.
    let p99 = |label: &str| {
        let record = records
            .iter()
            .find(|r| r.key.implementation == label && r.key.workload == HOLD.0)
            .unwrap();
        record.lateness.as_ref().unwrap().percentiles["p99"]
    };
    assert_eq!(p99(LINUX.0), 63);
    for label in [LINUX.0, LINUX_8.0] {
        let bold = format!("<strong>{}</strong>", crate::figures::thousands(p99(label)));
        assert!(lateness.contains(&bold), "{label}: {bold}");
        let row = format!("</span>{}</span>", escaped(label));
        assert_eq!(
            lateness.matches(&row).count(),
            4,
            "{label}: three rows, its bound"
        );
    }
    assert!(
        lateness.contains("12.5%"),
        "the largest lateness of its delay"
    );
    assert!(
        lateness.contains("<td class=\"num\">10%</td>"),
        "the largest lateness beyond one tick"
    );
    assert!(
        lateness.contains("(up to 4,096 ticks)"),
        "the early firings"
    );
    assert!(!lateness.contains("</span>btree</span>"), "no exact row");

    // Both charts of hold-exponential, with their aria-labels; burst fired nothing.
    let svgs = svgs(lateness);
    assert_eq!(svgs.len(), 2, "two charts in the section");
    for (id, title) in [
        (
            "hold-exponential-lateness",
            "lateness by percentile, 100k timers",
        ),
        (
            "hold-exponential-cost-precision",
            "cost against precision, 100k timers",
        ),
    ] {
        let figure = format!("id=\"chart-{id}\" aria-label=\"hold-exponential: {title}\"");
        assert!(lateness.contains(&figure), "{figure}");
        let path = png.join(format!("{id}.png"));
        assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
    }
    let texts: Vec<Vec<String>> = svgs.iter().map(|svg| texts(svg)).collect();
    assert!(texts[0].iter().any(|t| t == "lateness (ticks, linear)"));
    assert!(
        texts[1]
            .iter()
            .any(|t| t == "p99 lateness (ticks, linear; exact = 0)")
    );
    // Only the approximate ones have a lateness curve; every implementation is in the
    // cost chart, labelled beside its point and in the legend.
    assert!(!texts[0].iter().any(|t| t == "btree"));
    for label in ["btree", "hierarchical-wheel", LINUX.0, LINUX_8.0] {
        let drawn = texts[1].iter().filter(|t| *t == label).count();
        assert_eq!(drawn, 2, "{label} in the legend and beside its point");
    }
    assert!(lateness.contains("No approximate cell fired a timer in lockstep"));
    check_self_contained(&html);
}

#[test]
fn the_cost_chart_puts_exact_implementations_at_zero_and_approximate_ones_at_their_p99() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    write(&folder, &approximate_run());
    let run = crate::runs::load_run(&folder, 0).unwrap();
    let model = crate::model::Model::new(vec![run], &catalog_with_parameters()).unwrap();
    let rendered = crate::page::render(&model).unwrap();
    let chart = rendered
        .charts
        .iter()
        .find(|c| c.id == "hold-exponential-cost-precision")
        .expect("the cost chart is drawn");
    let point = |name: &str| {
        let series = chart.series.iter().find(|s| s.name == name).unwrap();
        assert_eq!(series.points.len(), 1, "{name}: one point");
        series.points[0]
    };
    assert_eq!(point("btree").0, 0.0);
    assert_eq!(point("hierarchical-wheel").0, 0.0);
    assert_eq!(point(LINUX.0).0, 63.0);
    assert!(point(LINUX_8.0).0 > 4_000.0, "{:?}", point(LINUX_8.0));
    assert!((point(LINUX_8.0).1 - 9.0).abs() < 1e-9, "ns/op median");
    assert_eq!(chart.x.range.0, 0.0, "a linear axis from 0");
    // The percentile chart: only the approximate implementations.
    let percentiles = rendered
        .charts
        .iter()
        .find(|c| c.id == "hold-exponential-lateness")
        .unwrap();
    let names: Vec<&str> = percentiles.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [LINUX.0, LINUX_8.0]);
    let last = percentiles.series[0].points.last().unwrap();
    assert_eq!(last.1, 63.0, "the curve ends at the largest lateness");
}

/// The texts of an SVG (which must be well-formed), each trimmed.
fn texts(svg: &str) -> Vec<String> {
    let document = roxmltree::Document::parse(svg).expect("well-formed SVG");
    document
        .descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The colour of `label`'s swatch on the page, `#rrggbb`.
fn swatch<'h>(html: &'h str, label: &str) -> &'h str {
    let name = format!("\"></span>{}</span>", escaped(label));
    let at = html
        .find(&name)
        .unwrap_or_else(|| panic!("no swatch of {label}"));
    let colour = html[..at].rfind("border-top-color:").unwrap() + "border-top-color:".len();
    &html[colour..colour + 7]
}

#[test]
fn a_variant_is_its_own_line_coloured_apart_from_its_base() {
    let mut records = Vec::new();
    for timers in [1_000, 100_000] {
        let base = ("hashed-wheel", "hashed-wheel");
        let variant = ("hashed-wheel:slots=65536", "hashed-wheel");
        records.push(cell(HOLD, timers, base, &[("slots", 4096)], 20.0));
        records.push(cell(HOLD, timers, variant, &[("slots", 65536)], 12.0));
        records.push(cell(HOLD, timers, ("btree", "btree"), &[], 30.0));
    }
    let html = report_html(&records);

    let implementations = section(&html, "implementations");
    let (base, variant) = (
        swatch(implementations, "hashed-wheel"),
        swatch(implementations, "hashed-wheel:slots=65536"),
    );
    assert_ne!(base, variant, "a variant has a colour of its own");
    assert_ne!(swatch(implementations, "btree"), variant);
    // Described by its base, with its parameters (the base's at their default).
    assert_eq!(implementations.matches("what hashed-wheel is").count(), 2);
    assert!(implementations.contains(">slots=65536</code>"));
    assert!(implementations.contains(">slots=4096</code> <span class=\"note\">(default)"));
    assert!(implementations.contains("a variant of <code>hashed-wheel</code>"));
    assert!(
        implementations.contains("slots of the wheel"),
        "the help as a title"
    );
    // The variant is a row of its own in the workload table, and a line of its own in the
    // charts, in its colour.
    let workloads = section(&html, "workloads");
    assert_eq!(
        workloads
            .matches("</span>hashed-wheel:slots=65536</span>")
            .count(),
        2
    );
    let chart = svgs(workloads)
        .into_iter()
        .find(|svg| svg.contains("time per operation"))
        .unwrap()
        .to_lowercase();
    for colour in [base, variant] {
        assert!(chart.contains(colour), "a line in {colour}");
    }
    assert!(section(&html, "lateness").contains("No approximate implementation was run"));
}

#[test]
fn an_unsupported_cell_is_listed_with_its_reason_and_is_no_failure() {
    let html = report_html(&approximate_run());

    let listed = section(&html, "not-verified");
    assert!(listed.contains("None: every cell that ran verified"));
    assert!(listed.contains("1 unsupported (beyond the implementation's declared range)"));
    assert!(listed.contains(&escaped(UNSUPPORTED)));
    assert!(listed.contains("<span class=\"badge unsupported\">unsupported</span>"));
    // Not a failure in the summary, said apart in the ranking.
    let summary = section(&html, "summary");
    assert!(!summary.contains("did not verify;"));
    assert!(summary.contains("1 not run on purpose (unsupported: beyond the"));
    assert!(summary.contains("(1 not run)"));
    // In the workload table: a neutral cell linking to its reason, not a failed one,
    // across the run's 8 columns (5 and the tail of each of the 3 operation kinds).
    let workloads = section(&html, "workloads");
    assert!(
        workloads.contains("<td class=\"sep na\" colspan=\"8\"><span class=\"badge unsupported\">")
    );
    assert!(!workloads.contains("class=\"sep bad\""));
    // In the lateness table too, as a cell with no lateness.
    assert!(section(&html, "lateness").contains("badge unsupported"));
}

#[test]
fn approximate_implementations_without_a_verified_cell_are_named_not_drawn() {
    let mut late = approximate(cell(HOLD, 1_000, LINUX, &[("levels", 9)], 10.0), None);
    late.status = Status::Unverified;
    late.reason = Some("timer 7 fired 600 ticks late, beyond its bound of 512".to_string());
    late.throughput = None;
    let records = [cell(HOLD, 1_000, ("btree", "btree"), &[], 40.0), late];
    let html = report_html(&records);
    let lateness = section(&html, "lateness");
    assert!(lateness.contains("No approximate cell verified"));
    assert!(lateness.contains("</span>linux-wheel</span> ran, but none of its cells verified"));
    assert!(!lateness.contains("<svg"));
    // A failure, unlike an unsupported cell: counted in the summary.
    assert!(section(&html, "summary").contains("1 cell did not verify"));
}

#[test]
fn a_skipped_cell_is_listed_apart_from_the_unsupported_and_is_no_failure() {
    let mut records = approximate_run();
    let mut skipped = cell(HOLD, 100_000, ("btree", "btree"), &[], 1.0);
    skipped.key.timers = 1_000_000;
    skipped.status = Status::Skipped;
    skipped.reason = Some("btree runs at most 100000 timers in a suite (why)".to_string());
    skipped.throughput = None;
    skipped.latency.clear();
    skipped.memory = None;
    records.push(skipped);
    let html = report_html(&records);
    let listed = section(&html, "not-verified");
    assert!(listed.contains("None: every cell that ran verified"));
    assert!(listed.contains("<h4>Skipped</h4>"));
    assert!(listed.contains("1 skipped (above the implementation's suite limit)"));
    assert!(listed.contains("btree runs at most 100000 timers in a suite (why)"));
    assert!(listed.contains("1 unsupported (beyond the implementation's declared range)"));
    let summary = section(&html, "summary");
    assert!(!summary.contains("did not verify;"));
    assert!(summary.contains("2 not run on purpose"));
}

/// The rows of the workloads section's first table of `workload` at its first size: each
/// row's HTML, in the page's order.
fn first_size_rows<'h>(html: &'h str, workload: &str) -> Vec<&'h str> {
    let workloads = section(html, "workloads");
    let start = workloads
        .find(&format!("id=\"w-{workload}\""))
        .unwrap_or_else(|| panic!("no table of {workload}"));
    let table = &workloads[start..];
    let first = table.find("<tr class=\"size\">").expect("a size row");
    let sized = &table[first + 1..];
    let end = sized.find("<tr class=\"size\">").unwrap_or(sized.len());
    sized[..end].split("<tr>").skip(1).collect()
}

#[test]
fn the_best_in_a_workload_table_is_the_fastest_exact_structure() {
    let records = approximate_run();
    let html = report_html(&records);
    let rows = first_size_rows(&html, HOLD.0);
    let named = |name: &str| {
        rows.iter()
            .position(|row| row.contains(&format!(">{name}<")))
            .unwrap_or_else(|| panic!("no row {name} in {rows:#?}"))
    };
    let speed = |label: &str| {
        records
            .iter()
            .find(|r| r.key.implementation == label && r.key.workload == HOLD.0)
            .and_then(|r| r.throughput.as_ref())
            .map(|t| t.ns_per_op.median)
            .unwrap()
    };
    // The data: an approximate variant is faster than every exact structure.
    let fastest_exact = ["btree", "hierarchical-wheel"]
        .into_iter()
        .min_by(|a, b| speed(a).total_cmp(&speed(b)))
        .unwrap();
    assert!(speed(LINUX_8.0) < speed(fastest_exact));
    let bold = |index: usize| rows[index].contains("best");
    assert!(bold(named(fastest_exact)), "{}", rows[named(fastest_exact)]);
    for approximate in [LINUX.0, LINUX_8.0] {
        let index = named(&escaped(approximate));
        assert!(!bold(index), "{}", rows[index]);
        // Read against the fastest exact one, and listed after every exact one.
        assert!(index > named("btree") && index > named(fastest_exact));
    }
    let ratio = format!("{:.2}×", speed(LINUX_8.0) / speed(fastest_exact));
    assert!(rows[named(&escaped(LINUX_8.0))].contains(&ratio), "{ratio}");
}

#[test]
fn the_summary_gives_the_two_lateness_maxima_in_columns_of_their_own() {
    let html = report_html(&approximate_run());
    let summary = section(&html, "summary");
    assert!(summary.contains(">max late<"), "a column of ticks");
    assert!(summary.contains(">max late / delay<"), "a column of shares");
    // No cell puts a share in brackets after the ticks, as if it were the same timer's.
    assert!(!summary.contains("ticks ("), "{summary}");
    assert!(!summary.contains("of delay)"), "{summary}");
}
