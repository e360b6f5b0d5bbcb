//! The findings written out: `findings.json` (everything, for readers and for tracing a
//! verdict to its records), `findings.md` (the table of claims), and `findings.html` (the
//! page, drawn by the report crate), plus the words the table and page use for a figure and
//! a rule. Combined findings (several runs) show each figure's interval and each verdict's
//! qualification beside it.

use super::experiments::{FigureSpec, Rule};
use super::verdict::number_words;
use std::path::{Path, PathBuf};
use timerbench_results::{FigureValue, Finding, Findings, write_atomically, write_findings};

/// The Markdown table of the findings.
pub const MARKDOWN_FILE: &str = "findings.md";
/// The findings page.
pub const HTML_FILE: &str = "findings.html";

/// The three files of the findings in `folder`.
pub fn files(folder: &Path) -> Vec<PathBuf> {
    vec![
        folder.join(timerbench_results::FINDINGS_FILE),
        folder.join(MARKDOWN_FILE),
        folder.join(HTML_FILE),
    ]
}

/// Writes the three files into `folder`.
pub fn write_all(folder: &Path, findings: &Findings) -> anyhow::Result<()> {
    write_findings(folder, findings)?;
    let markdown = folder.join(MARKDOWN_FILE);
    let mut text = format!(
        "# Findings of `timerbench reproduce`{}\n\nRevision {}, started {}.\n\n",
        if findings.quick {
            " --quick (reduced sizes: a test of the method, not the quoted result)"
        } else {
            ""
        },
        findings.git_revision,
        findings.started
    );
    if !findings.runs.is_empty() {
        let runs: Vec<String> = findings
            .runs
            .iter()
            .map(|r| format!("`{}` (started {})", r.folder, r.started))
            .collect();
        text.push_str(&format!(
            "Combined from {} runs: {}. Each figure is the mean over the runs with its 95% \
             interval (Student's t over the runs), judged by the rule on the mean; an ordering, \
             which has no mean, is judged in each run.\n\n",
            runs.len(),
            runs.join(", ")
        ));
    }
    text.push_str(&table(findings));
    text.push_str("\nEvery figure, rule and record read is in `findings.json`.\n");
    write_atomically(&markdown, text.as_bytes())?;
    let html = folder.join(HTML_FILE);
    timerbench_report::write_findings_page(findings, &html)?;
    // Each experiment's report again, now with its finding as its Findings section; not
    // for combined findings, whose runs' folders keep their own run's.
    if findings.runs.is_empty() {
        for finding in &findings.experiments {
            let run = folder.join(&finding.folder);
            if run.join(timerbench_results::RESULTS_FILE).is_file() {
                crate::catalog::write_report(
                    std::slice::from_ref(&run),
                    &run.join(timerbench_results::REPORT_FILE),
                    None,
                )?;
            }
        }
    }
    Ok(())
}

/// The findings as a GitHub table: claim, source, what was measured, figure, verdict (and
/// the runs, when combined).
pub fn table(findings: &Findings) -> String {
    let (columns, rows) = columns_and_rows(findings);
    crate::table::markdown_table(&columns, &rows)
}

/// The width the terminal form wraps its text to.
const TERMINAL_WIDTH: usize = 100;

/// The findings for the terminal: one block per experiment, each column of the Markdown
/// table on a line of its own with its name, the text wrapped to [`TERMINAL_WIDTH`]
/// characters. A row of the Markdown table runs to several hundred characters (the claim,
/// the source and what was measured are sentences), which a terminal shows as one line
/// that wraps mid-word through every column.
pub fn terminal_table(findings: &Findings) -> String {
    let (columns, rows) = columns_and_rows(findings);
    let blocks: Vec<String> = rows
        .iter()
        .map(|row| {
            let mut table = crate::table::Table::new(&["", ""]);
            for (column, cell) in columns.iter().zip(row).skip(1) {
                table.row(vec![format!("{column}:"), cell.replace("**", "")]);
            }
            format!(
                "{}\n{}",
                row[0],
                table
                    .render_within("  ", TERMINAL_WIDTH)
                    .trim_start_matches('\n')
                    .trim_end()
            )
        })
        .collect();
    blocks.join("\n\n")
}

/// The table's columns and one row of cells per experiment.
fn columns_and_rows(findings: &Findings) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let mut columns = vec![
        "experiment",
        "claim",
        "source",
        "measured",
        "figure",
        "verdict",
    ];
    let combined = !findings.runs.is_empty();
    if combined {
        columns.insert(4, "runs");
    }
    let rows: Vec<Vec<String>> = findings
        .experiments
        .iter()
        .map(|f| {
            let figures = f
                .values
                .iter()
                .map(figure_cell)
                .collect::<Vec<_>>()
                .join("; ");
            let measured = if f.reused.is_empty() {
                f.measured.clone()
            } else {
                format!(
                    "{} Of its {}, {} (records copied).",
                    f.measured,
                    super::reuse::count(f.cells.len() as u64),
                    super::reuse::words(&f.reused)
                )
            };
            let mut row = vec![
                f.id.clone(),
                f.claim.clone(),
                f.source.clone(),
                measured,
                format!("{}: {figures}", f.figure),
                verdict_cell(f),
            ];
            if combined {
                row.insert(4, runs_cell(f, findings.runs.len()));
            }
            row
        })
        .collect();
    (columns, rows)
}

/// A figure in the table: `LABEL: VALUE`, with its interval and where it reaches another
/// verdict when combined (`0.81 (95% interval 0.76 to 0.86; holds with a caveat at the
/// high end)`), or in how many runs each verdict came for an ordering; a figure the rule
/// reports says so (`3.02 (reported, not judged)`), as no verdict of it is in the table.
pub fn figure_cell(value: &FigureValue) -> String {
    let shown = match (value.value, &value.text) {
        (Some(number), _) => number_words(number),
        (None, Some(text)) => text.clone(),
        (None, None) => "–".to_string(),
    };
    let mut notes = Vec::new();
    if value.verdict == timerbench_results::Verdict::Reported {
        notes.push(value.verdict.words().to_string());
    }
    if let Some(runs) = &value.runs {
        if let Some((low, high)) = runs.interval {
            notes.push(format!(
                "95% interval {} to {}",
                number_words(low),
                number_words(high)
            ));
        }
        if !runs.straddle.is_empty() {
            notes.push(runs.straddle.clone());
        }
    }
    if notes.is_empty() {
        format!("{}: {shown}", value.label)
    } else {
        format!("{}: {shown} ({})", value.label, notes.join("; "))
    }
}

/// The verdict in the table, with how the runs gave it when combined.
fn verdict_cell(finding: &Finding) -> String {
    match &finding.runs {
        Some(runs) if finding.verdict != timerbench_results::Verdict::NotMeasured => {
            format!("**{}** {}", finding.verdict.words(), runs.note)
        }
        _ => format!("**{}**", finding.verdict.words()),
    }
}

/// The runs of a combined finding: `3`, or `2 of 3` when some did not run it.
fn runs_cell(finding: &Finding, total: usize) -> String {
    let count = finding.runs.as_ref().map_or(0, |r| r.folders.len());
    if count == total {
        count.to_string()
    } else {
        format!("{count} of {total}")
    }
}

/// A figure in words.
pub fn figure_words(figure: &FigureSpec) -> String {
    match figure {
        FigureSpec::Value => "the value of each cell".to_string(),
        FigureSpec::Ratio {
            numerator,
            denominator,
        } => format!("{numerator} / {denominator}, per workload and size"),
        FigureSpec::Difference {
            minuend,
            subtrahend,
        } => format!("{minuend} minus {subtrahend}, per workload and size"),
        FigureSpec::Slope => {
            "the least-squares slope of ln(value) over ln(size), per workload and implementation"
                .to_string()
        }
        FigureSpec::Ordering { tolerance } => format!(
            "the implementations ordered by value (lowest first) per workload and size; values \
             within {}% are a tie",
            tolerance * 100.0
        ),
    }
}

/// A rule in words.
pub fn rule_words(rule: &Rule) -> String {
    let mut parts = Vec::new();
    if let Some(name) = &rule.expect_lowest {
        parts.push(format!(
            "holds when {name} has the lowest value in every workload at every size; a caveat \
             when another is lowest but not beyond the tolerance; else does not hold"
        ));
    }
    if let Some(changes) = rule.expect_fastest_changes {
        parts.push(if changes {
            "holds when, at one size at least, two workloads have no fastest implementation in \
             common (the fastest being every implementation within the tolerance of the lowest \
             value, so a tie is not a change); else does not hold"
                .to_string()
        } else {
            "holds when, at every size, every two workloads have a fastest implementation in \
             common (within the tolerance of the lowest value); else does not hold"
                .to_string()
        });
    }
    if let Some(holds) = &rule.holds {
        let mut text = format!("holds when every figure is {}", holds.words());
        if let Some(caveat) = &rule.caveat {
            text.push_str(&format!(
                "; with a caveat when every figure is that or {}",
                caveat.words()
            ));
        }
        text.push_str("; else does not hold");
        parts.push(text);
    }
    for (name, own) in &rule.implementation {
        parts.push(format!("for {name}: {}", rule_words(own)));
    }
    if !rule.reported.is_empty() {
        parts.push(format!(
            "{}: reported, not judged (no part in the verdict, unless it cannot be computed:              then not measured)",
            rule.reported.join(", ")
        ));
    }
    if let Some(note) = &rule.caveat_note {
        parts.push(format!("caveat: {note}"));
    }
    parts.join(". ")
}
