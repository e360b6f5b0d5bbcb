//! The findings written out: `findings.json` (everything, for readers and for tracing a
//! verdict to its records), `findings.md` (the table of claims), and `findings.html` (the
//! page, drawn by the report crate), plus the words the table and page use for a figure and
//! a rule.

use super::experiments::{FigureSpec, Rule};
use super::verdict::number_words;
use std::path::{Path, PathBuf};
use timerbench_results::{Findings, write_atomically, write_findings};

/// The Markdown table of the findings.
pub const MARKDOWN_FILE: &str = "findings.md";
/// The findings page.
pub const HTML_FILE: &str = "findings.html";

/// Writes the three files into `folder`; gives their paths.
pub fn write_all(folder: &Path, findings: &Findings) -> anyhow::Result<Vec<PathBuf>> {
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
    text.push_str(&table(findings));
    text.push_str("\nEvery figure, rule and record read is in `findings.json`.\n");
    write_atomically(&markdown, text.as_bytes())?;
    let html = folder.join(HTML_FILE);
    timerbench_report::write_findings_page(findings, &html)?;
    // Each experiment's report again, now with its finding as its Findings section.
    for finding in &findings.experiments {
        let run = folder.join(&finding.folder);
        if run.join(timerbench_results::RESULTS_FILE).is_file() {
            crate::cmd::report::write_report(
                std::slice::from_ref(&run),
                &run.join(timerbench_results::REPORT_FILE),
                None,
            )?;
        }
    }
    Ok(vec![
        folder.join(timerbench_results::FINDINGS_FILE),
        markdown,
        html,
    ])
}

/// The findings as a GitHub table: claim, source, what was measured, figure, verdict.
pub fn table(findings: &Findings) -> String {
    let columns = [
        "experiment",
        "claim",
        "source",
        "measured",
        "figure",
        "verdict",
    ];
    let rows: Vec<Vec<String>> = findings
        .experiments
        .iter()
        .map(|f| {
            let figures = f
                .values
                .iter()
                .map(|v| match (v.value, &v.text) {
                    (Some(number), _) => format!("{}: {}", v.label, number_words(number)),
                    (None, Some(text)) => format!("{}: {text}", v.label),
                    (None, None) => format!("{}: –", v.label),
                })
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
            vec![
                f.id.clone(),
                f.claim.clone(),
                f.source.clone(),
                measured,
                format!("{}: {figures}", f.figure),
                format!("**{}**", f.verdict.words()),
            ]
        })
        .collect();
    crate::cmd::compare::markdown_table(&columns, &rows)
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
    if let Some(note) = &rule.caveat_note {
        parts.push(format!("caveat: {note}"));
    }
    parts.join(". ")
}
