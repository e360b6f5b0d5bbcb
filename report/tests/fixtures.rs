//! Results folders written by earlier timerbench builds still render, and folders of a
//! newer schema are refused.
//!
//! `fixtures/schema-1/` is a real folder of schema version 1, written by `timerbench run`
//! before the results format and the report became crates of their own: three workloads
//! (keepalive, start-stop, burst) at 1,000 and 4,000 timers through binary-heap,
//! hierarchical-wheel and the std-heap-lazy peer, two repeats, and one cell made to fail
//! (`--inject-panic burst/4000/std-heap-lazy`).
//!
//! `fixtures/schema-2/` is a real folder of schema version 2: the smoke suite at 10,000
//! timers through binary-heap, hierarchical-wheel, linux-wheel (approximate) and its
//! variant `linux-wheel:levels=8`, the variant `hashed-wheel:slots=65536` and the
//! tokio-delay-queue peer, cut to three of its workloads to keep it small: purgatory
//! (most firings late by a few ticks), cron (some of the variant's firings early: deadlines
//! beyond its range, clamped) and burst (no timer fired in lockstep before the workload
//! ended).

use std::path::{Path, PathBuf};
use timerbench_report::{Catalog, Described, FamilyInfo, ParamInfo, SECTIONS, write_report};
use timerbench_results::{SCHEMA_VERSION, version};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-1")
}

fn schema_2_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-2")
}

/// What the registries said of the fixture's implementations and families.
fn catalog() -> Catalog {
    let described = |name: &str| Described {
        name: name.to_string(),
        summary: format!("what {name} is"),
        parameters: Vec::new(),
    };
    let family = |name: &str| FamilyInfo {
        name: name.to_string(),
        models: format!("what {name} models"),
        shape: format!("the shape of {name}"),
        tick: "1ms".to_string(),
        params: Vec::new(),
    };
    Catalog {
        implementations: vec![described("binary-heap"), described("hierarchical-wheel")],
        peers: vec![described("std-heap-lazy")],
        families: vec![family("keepalive"), family("start-stop"), family("burst")],
        suite_order: ["keepalive", "start-stop", "burst"]
            .map(String::from)
            .to_vec(),
    }
}

/// What the registries said of the schema-2 fixture's implementations and families.
fn schema_2_catalog() -> Catalog {
    let described = |name: &str, parameters: Vec<ParamInfo>| Described {
        name: name.to_string(),
        summary: format!("what {name} is"),
        parameters,
    };
    let parameter = |name: &str, default: u64| {
        vec![ParamInfo {
            name: name.to_string(),
            default: default.to_string(),
            help: format!("the {name}"),
        }]
    };
    let family = |name: &str| FamilyInfo {
        name: name.to_string(),
        models: format!("what {name} models"),
        shape: format!("the shape of {name}"),
        tick: "1ms".to_string(),
        params: Vec::new(),
    };
    Catalog {
        implementations: vec![
            described("binary-heap", Vec::new()),
            described("hierarchical-wheel", Vec::new()),
            described("hashed-wheel", parameter("slots", 4096)),
            described("linux-wheel", parameter("levels", 9)),
        ],
        peers: vec![described("tokio-delay-queue", Vec::new())],
        families: vec![family("purgatory"), family("cron"), family("burst")],
        suite_order: ["purgatory", "cron", "burst"].map(String::from).to_vec(),
    }
}

/// A copy of the fixture in a temporary folder, to change.
fn copy_of_fixture(dir: &Path) -> PathBuf {
    let copy = dir.join("schema-1");
    std::fs::create_dir(&copy).unwrap();
    for entry in std::fs::read_dir(fixture()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    copy
}

#[test]
fn a_schema_1_folder_renders_every_section_workload_and_chart() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("report.html");
    let written = write_report(&[fixture()], &output, None, &catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();

    assert_eq!((written.runs, written.cells), (1, 18));
    for (anchor, heading) in SECTIONS {
        let present = html.contains(&format!("<section id=\"{anchor}\"><h2>{heading}</h2>"));
        let optional = ["comparison", "hosts", "live", "threads"].contains(anchor);
        assert_eq!(present, !optional, "{heading}");
    }
    for workload in ["keepalive", "start-stop", "burst"] {
        assert!(html.contains(&format!("<h3>{workload}</h3>")), "{workload}");
        assert!(
            html.contains(&format!("what {workload} models")),
            "{workload}"
        );
        for chart in ["ns-per-op", "bytes-per-timer", "latency-start"] {
            let id = format!("id=\"chart-{workload}-{chart}\"");
            assert!(html.contains(&id), "no chart {id}");
        }
    }
    for implementation in ["binary-heap", "hierarchical-wheel", "std-heap-lazy"] {
        let id = format!("id=\"chart-keepalive-advance-series-{implementation}\"");
        assert!(html.contains(&id), "no chart {id}");
    }
    assert!(html.contains("badge peer"), "the peer is marked");

    // Every chart is well-formed SVG, and there is one per figure.
    let mut charts = 0;
    let mut rest = html.as_str();
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").unwrap() + start + 6;
        roxmltree::Document::parse(&rest[start..end]).expect("each SVG is well-formed XML");
        charts += 1;
        rest = &rest[end..];
    }
    assert_eq!(charts, written.charts);
    assert_eq!(charts, html.matches("<figure class=\"chart\"").count());

    // The failed cell, with its reason; the command that made the run.
    assert!(html.contains("injected panic: the cell spec asked for one"));
    assert!(html.contains("1 cell did not verify"));
    assert!(html.contains("run --suite smoke --workload start-stop --workload burst"));
    one_process_and_no_conditions(&html);
}

/// A folder older than a cell's several processes and their conditions: each cell is one
/// process, with no spread between processes to show and no load to flag.
fn one_process_and_no_conditions(html: &str) {
    assert!(
        !html.contains("class=\"num spread"),
        "no spread between processes"
    );
    assert!(!html.contains("badge load"), "no cell flagged");
    assert!(!html.contains("Measured under load"));
    let environment = section(html, "environment");
    assert!(environment.contains("<th>processes per cell</th><td>1 (the run predates"));
    assert!(environment.contains("<th>cells measured under load</th><td>not recorded"));
}

#[test]
fn a_schema_2_folder_renders_its_variants_and_the_lateness_of_the_approximate_ones() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("report.html");
    let png = dir.path().join("png");
    let folder = schema_2_fixture();
    let written = write_report(&[folder], &output, Some(&png), &schema_2_catalog()).unwrap();
    let html = std::fs::read_to_string(&output).unwrap();
    assert_eq!((written.runs, written.cells), (1, 18));
    for (anchor, heading) in SECTIONS {
        let present = html.contains(&format!("<section id=\"{anchor}\"><h2>{heading}</h2>"));
        let optional = ["comparison", "hosts", "live", "threads"].contains(anchor);
        assert_eq!(present, !optional, "{heading}");
    }

    // Each label its own row, described by its base, with its parameters and precision.
    let implementations = section(&html, "implementations");
    for label in [
        "binary-heap",
        "hierarchical-wheel",
        "linux-wheel",
        "linux-wheel:levels=8",
        "hashed-wheel:slots=65536",
        "tokio-delay-queue",
    ] {
        // The name after its swatch, then the end of its span or the peer badge.
        let row = format!("</span>{label}<");
        assert!(implementations.contains(&row), "{label}");
    }
    assert_eq!(implementations.matches("what linux-wheel is").count(), 2);
    assert!(implementations.contains(">levels=9</code> <span class=\"note\">(default)"));
    assert!(implementations.contains(">levels=8</code>"));
    assert_eq!(
        implementations
            .matches("<span class=\"badge approximate\">approximate</span> late by at most")
            .count(),
        2
    );

    // The lateness of purgatory and cron, each with its table and two charts; burst fired
    // nothing in lockstep, so it has its table and no chart.
    let lateness = section(&html, "lateness");
    for workload in ["purgatory", "cron"] {
        for chart in ["lateness", "cost-precision"] {
            let id = format!("id=\"chart-{workload}-{chart}\"");
            assert!(lateness.contains(&id), "no chart {id}");
            let path = png.join(format!("{workload}-{chart}.png"));
            assert!(path.exists(), "{}", path.display());
        }
    }
    assert_eq!(lateness.matches("<svg").count(), 4);
    // cron's p99 lateness, in ticks, as the records give it (1,732 and 1,723).
    assert!(lateness.contains("<strong>1,732</strong>"));
    assert!(lateness.contains("<strong>1,723</strong>"));
    assert!(lateness.contains("2,061 <span class=\"note\">(up to 2,458,922,613 ticks)"));
    assert!(lateness.contains("No approximate cell fired a timer in lockstep"));
    assert!(!html.contains("did not verify;"), "every cell verified");
    one_process_and_no_conditions(&html);

    // Every chart is well-formed SVG, one per figure.
    let svgs = html.matches("<svg").count();
    assert_eq!(svgs, written.charts);
    assert_eq!(svgs, html.matches("<figure class=\"chart\"").count());
    let mut rest = html.as_str();
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").unwrap() + start + 6;
        roxmltree::Document::parse(&rest[start..end]).expect("each SVG is well-formed XML");
        rest = &rest[end..];
    }
}

/// The top-level section `anchor` of a page, up to the next one.
fn section<'h>(html: &'h str, anchor: &str) -> &'h str {
    let opening = format!("<section id=\"{anchor}\">");
    let start = html.find(&opening).expect("the section");
    let after = start + opening.len();
    let end = html[after..]
        .find("<section id=")
        .map_or(html.len(), |e| after + e);
    &html[start..end]
}

#[test]
fn a_newer_schema_is_refused_and_no_report_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let folder = copy_of_fixture(dir.path());
    let results = folder.join("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap();
    let newer = SCHEMA_VERSION + 1;
    let changed: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(index, line)| {
            if index == 2 {
                line.replacen("\"schema\":1,", &format!("\"schema\":{newer},"), 1)
            } else {
                line.to_string()
            }
        })
        .collect();
    assert_ne!(
        changed.join("\n") + "\n",
        text,
        "the fixture's third line changed"
    );
    std::fs::write(&results, changed.join("\n") + "\n").unwrap();

    let output = dir.path().join("report.html");
    let error = write_report(std::slice::from_ref(&folder), &output, None, &catalog())
        .expect_err("a newer schema is refused");
    assert_eq!(
        format!("{error:#}"),
        format!(
            "{}:3: schema version {newer} is newer than this timerbench reads ({}); use a newer timerbench",
            results.display(),
            version::readable()
        )
    );
    assert!(!output.exists(), "no report is written");
    let leftovers = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".partial")
        })
        .count();
    assert_eq!(leftovers, 0, "no partial file is left");
}
