//! The environment of each run (machine, build, suite, limits) side by side, the commands
//! that reproduce each run, and the command that made this report.

use super::Context;
use super::format::shell_word;
use crate::runs::Run;
use maud::{Markup, html};
use timerbench_results::{Environment, Status};

/// A row of the environment table: its heading and how to read it off `environment.json`.
type Field = (&'static str, fn(&Environment) -> String);

const FIELDS: &[Field] = &[
    ("host", |e| e.host.clone()),
    ("CPU", |e| e.cpu.clone()),
    ("logical cores", |e| e.cores.to_string()),
    ("memory", |e| {
        format!("{:.1} GiB", e.memory_bytes as f64 / (1u64 << 30) as f64)
    }),
    ("operating system", |e| e.os.clone()),
    ("compiler", |e| e.rustc.clone()),
    ("git revision", |e| e.git_revision.clone()),
    ("started (UTC)", |e| e.started.clone()),
    ("suite", |e| e.suite.clone()),
    ("timed repeats per cell", |e| e.repeat.to_string()),
    ("time limit per cell", |e| {
        format!("{} s", e.cell_timeout_seconds)
    }),
];

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let folders: Vec<String> = model
        .runs
        .iter()
        .map(|r| shell_word(&r.folder.display().to_string()))
        .collect();
    let body = html! {
        div.scroll {
            table {
                tr {
                    th {}
                    @for run in &model.runs { th { (run.title()) } }
                }
                tr {
                    th { "folder" }
                    @for run in &model.runs { td { code { (run.folder.display()) } } }
                }
                @for (name, field) in FIELDS {
                    tr {
                        th { (name) }
                        @for run in &model.runs {
                            td {
                                @match &run.environment {
                                    Some(environment) => (field(environment)),
                                    None => "(no environment.json)",
                                }
                            }
                        }
                    }
                }
                tr {
                    th { "cells" }
                    @for run in &model.runs {
                        @let ok = run.records.values().filter(|r| r.status == Status::Ok).count();
                        td { (run.records.len()) " (" (ok) " verified)" }
                    }
                }
            }
        }
        @for run in &model.runs {
            h4 {
                "Reproduce "
                @if model.several() { "run " (run.title()) } @else { "this run" }
            }
            (reproduce(run))
        }
        p { "This report: " code { "timerbench report " (folders.join(" ")) } }
    };
    super::section("environment", body)
}

/// The commands that run `run` again, from a checkout of its revision.
fn reproduce(run: &Run) -> Markup {
    let Some(environment) = &run.environment else {
        return html! { p { "This folder has no environment.json: the command is unknown." } };
    };
    let revision = &environment.git_revision;
    let clean = revision.trim_end_matches("-dirty");
    html! {
        p {
            "The exact command of the run, as it was typed, from a checkout of its revision"
            @if revision.ends_with("-dirty") {
                " (the tree had uncommitted changes then, which this does not restore)"
            }
            ":"
        }
        pre {
            "git checkout " (clean) "\n"
            "cargo build --release\n"
            (environment.command) "\n"
        }
    }
}
