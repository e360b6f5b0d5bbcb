//! The findings of `timerbench reproduce` as HTML: one block per claim (its source and the
//! published figures, what was measured, a chart of the cells it read, the computed
//! figures, the rule and the verdict), as a page of its own (`findings.html`) and as the
//! "Findings" section of the report when a folder holds `findings.json`.
//!
//! Everything shown comes from `findings.json`: the verdicts were computed by the harness
//! from the rules and records; this module only draws them.

use crate::charts::{Axis, Chart, Scale, Series, Unit};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use std::collections::BTreeSet;
use std::path::Path;
use timerbench_results::{FINDINGS_FILE, Finding, Findings, Verdict, read_findings};

/// The findings that concern the results folder `folder`: all of `folder/findings.json`
/// when it has one; else, when `folder` is an experiment's run (`DIR/<id>/` beside
/// `DIR/findings.json`), that experiment's finding; else none.
pub(crate) fn for_folder(folder: &Path) -> anyhow::Result<Option<Findings>> {
    if folder.join(FINDINGS_FILE).is_file() {
        return Ok(Some(read_findings(folder)?));
    }
    let (Some(parent), Some(name)) = (folder.parent(), folder.file_name()) else {
        return Ok(None);
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    if !parent.join(FINDINGS_FILE).is_file() {
        return Ok(None);
    }
    let mut findings = read_findings(parent)?;
    findings
        .experiments
        .retain(|f| f.id == name.to_string_lossy() && f.folder == f.id);
    Ok((!findings.experiments.is_empty()).then_some(findings))
}

/// Writes `findings` as a page of its own to `output`, atomically.
pub fn write_findings_page(findings: &Findings, output: &Path) -> anyhow::Result<()> {
    crate::charts::register_fonts()?;
    let body = section_body(findings)?;
    const CSS: &str = include_str!("page/report.css");
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "timerbench findings" }
                // The crate's own style sheet, no record value in it (see `page::style`).
                style { (PreEscaped(CSS)) }
            }
            body {
                main {
                    h1 { "timerbench findings" }
                    section id="findings" { h2 { "Findings" } (body) }
                    footer {
                        "Written by " code { "timerbench reproduce" } ". Self-contained: the \
                         charts are inline SVG and nothing is fetched from anywhere."
                    }
                }
            }
        }
    };
    timerbench_results::write_atomically(output, page.into_string().as_bytes())
}

/// The findings section's content: the lede, the table of verdicts, one block per claim.
pub(crate) fn section_body(findings: &Findings) -> anyhow::Result<Markup> {
    let mut blocks = Vec::new();
    for finding in &findings.experiments {
        blocks.push(block(finding)?);
    }
    Ok(html! {
        p.lede {
            "Revision " (findings.git_revision) " · started " (findings.started) " · "
            code { (findings.command) }
            @if !findings.runs.is_empty() {
                " · combined from " (findings.runs.len()) " runs: each figure the mean over the \
                runs with its 95% interval"
            }
            @if findings.quick {
                " · " strong { "--quick" } ": reduced sizes, a test of the method, not the \
                quoted result"
            }
        }
        p.note {
            "Each verdict is computed by " code { "timerbench reproduce" } " from the rule and \
             the records shown; none is typed in. " code { "findings.json" } " holds every \
             record read."
        }
        table.findings {
            thead { tr { th { "claim" } th { "source" } th { "verdict" } } }
            tbody {
                @for f in &findings.experiments {
                    tr {
                        td { a href=(format!("#finding-{}", f.id)) { (f.title) } }
                        td { (f.source) }
                        td class=(verdict_class(f.verdict)) { (f.verdict.words()) }
                    }
                }
            }
        }
        @for b in blocks { (b) }
    })
}

fn verdict_class(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Holds => "faster",
        Verdict::HoldsWithCaveat => "same",
        Verdict::DoesNotHold => "slower",
        Verdict::NotMeasured => "na",
        // Judged by no band: no colour of a verdict.
        Verdict::Reported => "",
    }
}

/// One claim.
fn block(finding: &Finding) -> anyhow::Result<Markup> {
    let charts = charts(finding)?;
    Ok(html! {
        article.finding id=(format!("finding-{}", finding.id)) {
            h3 { (finding.title) " " span class=(verdict_class(finding.verdict)) { "— " (finding.verdict.words()) } }
            p { strong { "Claim. " } (finding.claim) }
            p { strong { "Source. " } (finding.source) }
            @if !finding.published.is_empty() {
                p { strong { "Published figures. " }
                    @for (i, p) in finding.published.iter().enumerate() {
                        @if i > 0 { "; " }
                        (p.label) ": " (p.value) " " (p.unit)
                    }
                }
            }
            p { strong { "Measured. " } (finding.measured) }
            div.charts { @for c in charts { (c) } }
            p { strong { "Figure. " } (finding.figure) }
            table {
                thead { tr { th { "of" } th.num { "figure" } th { "band" } } }
                tbody {
                    @for v in &finding.values {
                        tr {
                            td { (v.label) }
                            @match (v.value, &v.text) {
                                (Some(n), _) => td.num {
                                    (format!("{n:.3}"))
                                    // Combined runs: the mean's 95% interval beneath it.
                                    @if let Some((low, high)) = v.runs.as_ref().and_then(|r| r.interval) {
                                        br; small { (format!("95%: {low:.3} to {high:.3}")) }
                                    }
                                },
                                // An ordering: one workload a line.
                                (None, Some(t)) => td {
                                    @for (i, line) in t.split("; ").enumerate() {
                                        @if i > 0 { br; }
                                        (line)
                                    }
                                },
                                (None, None) => td.num { "–" },
                            }
                            td class=(verdict_class(v.verdict)) {
                                (v.verdict.words())
                                @if let Some(runs) = v.runs.as_ref().filter(|r| !r.straddle.is_empty()) {
                                    br; small { (runs.straddle) }
                                }
                            }
                        }
                    }
                }
            }
            p { strong { "Rule. " } (finding.rule) }
            p.headline { strong { "Verdict: " (finding.verdict.words()) ". " } (finding.reason) }
            p.note {
                "Records: " code { (finding.records.clone().unwrap_or_else(|| format!("{}/results.jsonl", finding.folder))) }
                @for reused in &finding.reused {
                    "; " (reused.cells) " of its " (finding.cells.len())
                    @if finding.cells.len() == 1 { " cell" } @else { " cells" } " measured in "
                    a href=(format!("#finding-{}", reused.experiment)) { (reused.experiment) }
                    " (the same workload, size and implementation: the record copied, not \
                     measured again)"
                }
            }
        }
    })
}

/// Per workload, the field read against the number of timers, one line per implementation.
fn charts(finding: &Finding) -> anyhow::Result<Vec<Markup>> {
    let workloads: Vec<&str> = {
        let mut seen = BTreeSet::new();
        finding
            .cells
            .iter()
            .map(|c| c.workload.as_str())
            .filter(|w| seen.insert(*w))
            .collect()
    };
    let mut implementations: Vec<&str> = Vec::new();
    for cell in &finding.cells {
        if !implementations.contains(&cell.implementation.as_str()) {
            implementations.push(&cell.implementation);
        }
    }
    let nanoseconds = finding.field.contains("ns");
    let (scale, unit, label) = if nanoseconds {
        (
            Scale::Log,
            Unit::Nanoseconds,
            format!("{} (log scale)", finding.field),
        )
    } else {
        (Scale::Linear, Unit::Count, finding.field.clone())
    };
    let values = finding.cells.iter().filter_map(|c| c.value);
    let y = Axis::fit(label, scale, unit, values);
    let x = Axis::fit(
        format!(
            "{} (log scale)",
            finding.axis.as_deref().unwrap_or("timers")
        ),
        Scale::Log,
        Unit::Count,
        finding.cells.iter().map(|c| c.timers as f64),
    );
    let mut out = Vec::new();
    for workload in workloads {
        let series = implementations
            .iter()
            .enumerate()
            .map(|(index, name)| {
                let mut points: Vec<(f64, f64)> = finding
                    .cells
                    .iter()
                    .filter(|c| c.workload == workload && c.implementation == *name)
                    .filter_map(|c| Some((c.timers as f64, c.value?)))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (color, style) = crate::style::nth(index);
                Series {
                    name: name.to_string(),
                    color,
                    style,
                    hollow: false,
                    points,
                }
            })
            .collect();
        let chart = Chart {
            id: format!("finding-{}-{workload}", finding.id),
            title: format!("{}: {workload}", finding.id),
            x: x.clone(),
            y: y.clone(),
            series,
            markers: true,
            small: false,
            labelled: false,
        };
        if !chart.has_data() {
            out.push(html! { p.note { (chart.title) ": no cell with a value to draw." } });
            continue;
        }
        let svg = chart.svg()?;
        out.push(html! {
            figure.chart id=(format!("chart-{}", chart.id)) aria-label=(chart.title) {
                // Unescaped: plotters escapes everything it writes (see `page`'s comment).
                (PreEscaped(svg))
            }
        });
    }
    Ok(out)
}
