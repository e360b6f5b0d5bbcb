//! The page: its frame (head, style, the line on each run, the navigation, the footer)
//! and the sections in order, each written by a module of its own.
//!
//! Every piece of markup is a maud template, so every value spliced into it (names from
//! the records, reasons, paths, numbers) is escaped. Two things go in unescaped, each in
//! one place with the reason it is safe: the style sheet (a file of this crate, in
//! [`style`]) and the charts' SVG (drawn by plotters, in [`charts`]).

mod charts;
mod comparison;
mod counts;
mod environment;
mod file_workload;
mod format;
mod hosts;
mod implementations;
mod lateness;
mod live;
mod live_runtimes;
mod load;
mod not_verified;
mod summary;
mod threads;
mod workloads;

use crate::charts::Chart;
use crate::model::Model;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use std::collections::BTreeMap;
use timerbench_results::{CellKey, CellRecord};

/// The section anchors and headings, in page order. The live runs and the threads study
/// appear only when the report has their records, the comparison between runs only when
/// there are several runs, the hosts only when they are of several hosts.
pub const SECTIONS: &[(&str, &str)] = &[
    ("summary", "Summary"),
    ("implementations", "Implementations"),
    ("workloads", "Workloads"),
    ("not-verified", "Cells that did not verify"),
    ("lateness", "Lateness"),
    ("live", "Live runs"),
    ("threads", "Threads"),
    ("comparison", "Comparison between runs"),
    ("hosts", "Hosts side by side"),
    ("environment", "Environment and reproduction"),
];

/// The page and the charts in it (for `--png`).
pub struct Rendered {
    /// The whole HTML document.
    pub html: String,
    /// Every chart drawn, in page order.
    pub charts: Vec<Chart>,
}

/// What every section reads: the model, and the anchor of each cell without figures (the
/// tables link to its row in the list of cells that did not verify or were unsupported).
struct Context<'m> {
    model: &'m Model,
    /// By (run label, cell).
    failure_ids: BTreeMap<(String, CellKey), String>,
}

impl<'m> Context<'m> {
    fn new(model: &'m Model) -> Self {
        let failure_ids = model
            .without_figures()
            .into_iter()
            .enumerate()
            .map(|(index, (run, record))| {
                let key = (run.label.clone(), record.key.clone());
                (key, format!("cell-{}", index + 1))
            })
            .collect();
        Context { model, failure_ids }
    }

    /// The anchor of a cell of run `label` that has no figures.
    fn failure_id(&self, label: &str, record: &CellRecord) -> Option<&str> {
        self.failure_ids
            .get(&(label.to_string(), record.key.clone()))
            .map(String::as_str)
    }
}

/// Builds the whole page.
pub fn render(model: &Model) -> anyhow::Result<Rendered> {
    let context = Context::new(model);
    let mut drawn = Vec::new();
    let workloads = workloads::section(&context, &mut drawn)?;
    let lateness = lateness::section(&context, &mut drawn)?;
    let live = live::section(&context, &mut drawn)?;
    let threads = threads::section(&context, &mut drawn)?;
    // `timerbench reproduce`'s findings about this run, when it is an experiment's.
    let findings = match &model.findings {
        Some(findings) => Some(crate::findings::section_body(findings)?),
        None => None,
    };
    let html = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title(model)) }
                (style())
            }
            body {
                main {
                    h1 { "timerbench report" }
                    (lede(model))
                    (navigation(model))
                    (summary::section(&context))
                    @if let Some(findings) = findings {
                        section id="findings" {
                            h2 { "Findings" }
                            (findings)
                        }
                    }
                    (implementations::section(&context))
                    (workloads)
                    (not_verified::section(&context))
                    (lateness)
                    @if let Some(live) = live { (live) }
                    @if let Some(threads) = threads { (threads) }
                    @if model.several() {
                        (comparison::section(&context))
                    }
                    @if hosts::several_hosts(model) {
                        (hosts::section(&context))
                    }
                    (environment::section(&context))
                    footer {
                        "Written by " code { "timerbench report" } ". Self-contained: the charts \
                         are inline SVG and nothing is fetched from anywhere."
                    }
                }
            }
        }
    };
    Ok(Rendered {
        html: html.into_string(),
        charts: drawn,
    })
}

/// The style sheet, inline. It is this crate's own file, compiled in, with no value from
/// any record in it, so it goes in as it is (escaping would break its quoted font names).
fn style() -> Markup {
    const CSS: &str = include_str!("report.css");
    html! { style { (PreEscaped(CSS)) } }
}

/// A section with its anchor and heading.
fn section(anchor: &str, body: Markup) -> Markup {
    let heading = SECTIONS
        .iter()
        .find(|(a, _)| *a == anchor)
        .map_or(anchor, |(_, h)| *h);
    html! {
        section id=(anchor) {
            h2 { (heading) }
            (body)
        }
    }
}

fn title(model: &Model) -> String {
    let names: Vec<&str> = model.runs.iter().map(|r| r.name.as_str()).collect();
    format!("timerbench report: {}", names.join(" vs "))
}

/// One line per run: its folder, cells, machine, revision, suite and start.
fn lede(model: &Model) -> Markup {
    html! {
        p.lede {
            @for (index, run) in model.runs.iter().enumerate() {
                @if index > 0 { br; }
                @if model.several() { "Run " (run.label) ", " }
                strong { (run.name) } ": " (run.records.len()) " cells · "
                @match &run.environment {
                    Some(e) => {
                        (e.host) " · " (e.cpu) " · revision " (e.git_revision) " · suite "
                        (e.suite) " · started " (e.started)
                    }
                    None => "no environment.json",
                }
            }
        }
    }
}

/// Whether the page has the section `anchor` (the ones not always there: [`SECTIONS`]).
fn shown(model: &Model, anchor: &str) -> bool {
    match anchor {
        "comparison" => model.several(),
        "hosts" => hosts::several_hosts(model),
        "live" => !model.live.is_empty(),
        "threads" => !model.threads.is_empty(),
        _ => true,
    }
}

fn navigation(model: &Model) -> Markup {
    html! {
        nav {
            div {
                @for (anchor, heading) in SECTIONS {
                    @if shown(model, anchor) {
                        a href=(format!("#{anchor}")) { (heading) }
                    }
                    @if *anchor == "summary" && model.findings.is_some() {
                        a href="#findings" { "Findings" }
                    }
                }
            }
            div.workload-links {
                "Workloads: "
                @for workload in &model.workloads {
                    a href=(format!("#{}", format::workload_anchor(&workload.name))) {
                        (workload.name)
                    }
                }
            }
        }
    }
}
