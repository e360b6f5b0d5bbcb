//! The text `compare` prints: the table of cells in both runs, what its verdicts mean, the
//! lists of cells in one run only, and the machines' speeds with the share of cells that
//! agree.

use super::lists::{count, describe, heading, list, within_by_size};
use super::{Comparison, Format, K, MAD_TO_SIGMA, Row, Side, Verdict, WITHIN, markdown_table, ns};
use crate::runs::{NO_COUNTS, per_line_text};
use crate::table::Table;
use std::fmt::Write as _;
use timerbench_report::thousands;
use timerbench_results::counts::Metric;

pub(super) fn render(
    comparison: &Comparison,
    a: &Side,
    b: &Side,
    format: Format,
    colour: bool,
) -> String {
    let markdown = format == Format::Markdown;
    let mut out = String::new();
    let _ = writeln!(out, "A: {}", a.folder.display());
    let _ = writeln!(out, "B: {}", b.folder.display());
    out.push('\n');
    // The memory column only when the records have the probe (schema 3, later records).
    let with_memory = comparison.rows.iter().any(|r| r.memory.is_some());
    if comparison.metric.is_count() {
        let _ = writeln!(
            out,
            "Compared by {}: counts per counted line of `timerbench run --counts`.\n",
            comparison.metric.unit()
        );
    }
    out.push_str(&render_table(comparison, with_memory, markdown, colour));
    out.push_str(&render_legend(comparison, with_memory));
    out.push_str(&render_lists(comparison, markdown));
    out.push_str(&render_summary(comparison, a, b));
    out
}

/// The table of cells in both runs: one row per cell, coloured or bold where beyond noise.
fn render_table(
    comparison: &Comparison,
    with_memory: bool,
    markdown: bool,
    colour: bool,
) -> String {
    let metric = comparison.metric;
    let (unit_a, unit_b) = (
        format!(">A {}", metric.unit()),
        format!(">B {}", metric.unit()),
    );
    let mut columns = vec![
        "workload",
        ">timers",
        "implementation",
        unit_a.as_str(),
        unit_b.as_str(),
        ">B/A",
    ];
    if metric.is_count() {
        columns.push(">B − A");
    }
    if with_memory {
        columns.push(">memory B/A");
    }
    columns.push(if metric.is_count() {
        "change"
    } else {
        "beyond noise"
    });
    let cells: Vec<Vec<String>> = comparison
        .rows
        .iter()
        .map(|row| table_row(row, metric, with_memory, markdown))
        .collect();
    if markdown {
        return markdown_table(&columns, &cells);
    }
    let mut out = String::new();
    let mut table = Table::new(&columns);
    for row in cells {
        table.row(row);
    }
    for (index, line) in table.render("").lines().enumerate() {
        let verdict = index.checked_sub(1).map(|i| comparison.rows[i].verdict);
        match verdict {
            Some(Verdict::Slower) if colour => out.push_str(&format!("\x1b[31m{line}\x1b[0m")),
            Some(Verdict::Faster) if colour => out.push_str(&format!("\x1b[32m{line}\x1b[0m")),
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// One cell's row of the table.
fn table_row(row: &Row, metric: Metric, with_memory: bool, markdown: bool) -> Vec<String> {
    let count = metric.is_count();
    // A count's ratio to four places: an exact change of a few instructions must show.
    let ratio = if count {
        format!("{:.4}", row.ratio())
    } else {
        format!("{:.2}", row.ratio())
    };
    let figure = |value: f64| {
        if count {
            per_line_text(value, metric)
        } else {
            ns(value)
        }
    };
    let beyond = matches!(row.verdict, Verdict::Slower | Verdict::Faster);
    let memory = row.memory.map_or(String::new(), |m| format!("{m:.2}"));
    let mut cells = vec![
        row.key.workload.clone(),
        thousands(row.key.timers),
        if crate::schema::is_floor(&row.key.implementation) {
            format!("{} (not verified)", row.key.implementation)
        } else if row.engine {
            format!("{}{}", row.key.implementation, crate::table::ENGINE_MARK)
        } else {
            row.key.implementation.clone()
        },
        figure(row.a),
        figure(row.b),
        if markdown && beyond {
            format!("**{ratio}**")
        } else {
            ratio
        },
    ];
    if count {
        cells.push(format!("{:+.4}", row.b - row.a));
    }
    if with_memory {
        cells.push(memory);
    }
    let (slower, faster) = if count {
        ("more", "fewer")
    } else {
        ("slower", "faster")
    };
    cells.push(match row.verdict {
        Verdict::Within => String::new(),
        Verdict::Slower if markdown => format!("**{slower}**"),
        Verdict::Faster if markdown => format!("**{faster}**"),
        Verdict::Slower => slower.into(),
        Verdict::Faster => faster.into(),
        Verdict::Unknown => "?".into(),
    });
    cells
}

/// What a slower/faster verdict between two separate runs does not cover: the noise rule
/// sees each cell's processes within its own run, but a whole run moves against another on
/// the same host by more than that (METHODOLOGY.md, *Between runs at 1M*), so a verdict
/// between two runs needs the duet or several runs a side.
const BETWEEN_RUNS: &str = "The noise is each cell's within its own run: between \
     two separate runs on one host, whole runs drift by more than that, even with the same \
     binary (METHODOLOGY.md, *Between runs at 1M*), so a cell beyond noise here may be the \
     drift. For a verdict between two builds, time them side by side with `timerbench ab`, \
     or take several runs a side: `timerbench compare --a RUN... --b RUN...` (as `timerbench \
     combine` pools them).";

/// What the table's verdicts and memory column mean, for the ones the table shows.
fn render_legend(comparison: &Comparison, with_memory: bool) -> String {
    let mut out = String::new();
    if comparison.metric.is_count() {
        let marked = if comparison.tolerance > 0.0 {
            format!(
                "a change beyond ±{}% is marked (--tolerance)",
                100.0 * comparison.tolerance
            )
        } else {
            "any change is a change".to_string()
        };
        let _ = writeln!(
            out,
            "\nmore, fewer: a count of a deterministic replay on a simulated machine does not \
             move from run to run, so the noise rule (which is about time) does not apply: \
             B/A and B − A per line are exact, and {marked}."
        );
    } else if comparison.rows.iter().any(|r| r.verdict != Verdict::Within) {
        let _ = writeln!(
            out,
            "\nslower, faster: B's median differs from A's beyond the noise of the two cells:\n\
             |B − A| > {K} × √(σA² + σB²), σ = {MAD_TO_SIGMA} × the MAD of a cell's ns/op samples."
        );
        let _ = writeln!(out, "\n{BETWEEN_RUNS}");
        if comparison
            .rows
            .iter()
            .any(|r| r.verdict == Verdict::Unknown)
        {
            let _ = writeln!(
                out,
                "\n?: a cell has fewer than two samples: its noise is unknown, the difference \
                 not judged."
            );
        }
    }

    if comparison.rows.iter().any(|r| r.engine) {
        let _ = writeln!(out, "\n{}", crate::table::engine_legend(true).trim());
    }
    if with_memory {
        let _ = writeln!(
            out,
            "\nmemory B/A: the cell's memory probe in B over A (a 32 MiB pointer chase before \
             and after each of its processes, median): far from 1, memory answered the cell \
             differently in the two runs (something else used it). Near 1 does not clear a \
             large cell: the probe does not see how much of a shared cache the run kept."
        );
    }
    out
}

/// The cells only one run has, and those without figures in either.
fn render_lists(comparison: &Comparison, markdown: bool) -> String {
    let mut lists = String::new();
    list(&mut lists, "Only in A", &comparison.only_a, markdown);
    list(&mut lists, "Only in B", &comparison.only_b, markdown);
    if !comparison.without.is_empty() {
        let _ = writeln!(
            lists,
            "\n{} (status not ok in A or B{}): {}",
            heading("Without figures", markdown),
            if comparison.metric.is_count() {
                ", or not counted"
            } else {
                ""
            },
            count(comparison.without.len())
        );
        for (key, status_a, status_b) in &comparison.without {
            let _ = writeln!(
                lists,
                "{}{}: A {}, B {}",
                if markdown { "- " } else { "  " },
                describe(key),
                status_a,
                status_b
            );
        }
        if comparison
            .without
            .iter()
            .any(|(_, a, b)| a.contains("without counts") || b.contains("without counts"))
        {
            let _ = writeln!(lists, "{NO_COUNTS}");
        }
    }
    lists
}

/// The two machines' speeds and how many cells agree within ±5%, overall and by size.
fn render_summary(comparison: &Comparison, a: &Side, b: &Side) -> String {
    let mut out = String::new();
    let n = comparison.rows.len();
    let within = comparison
        .rows
        .iter()
        .filter(|r| (r.ratio() - 1.0).abs() <= WITHIN + 1e-9)
        .count();
    if let (Some(speed_a), Some(speed_b)) = (a.calibration(), b.calibration()) {
        let _ = writeln!(
            out,
            "\nMachine speed (the calibration kernel, median over every process): A {:.0} µs, \
             B {:.0} µs, B/A {:.2}",
            speed_a / 1e3,
            speed_b / 1e3,
            speed_b / speed_a
        );
    }
    if let (Some(memory_a), Some(memory_b)) = (a.memory_probe(), b.memory_probe()) {
        let _ = writeln!(
            out,
            "Memory speed (a 32 MiB pointer chase before and after every process, median): \
             A {memory_a:.0} ns, B {memory_b:.0} ns per load, B/A {:.2}",
            memory_b / memory_a
        );
    }
    let _ = writeln!(out, "\n{}", within_by_size(&comparison.rows));
    let _ = writeln!(out, "{within} of {n} cells within ±5%");
    out
}
