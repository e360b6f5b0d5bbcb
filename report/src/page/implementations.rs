//! The implementations: each with its colour, what it is, and how many of its cells
//! verified in each run.

use super::Context;
use super::format;
use maud::{Markup, html};
use timerbench_results::Status;

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let body = html! {
        p {
            "Each implementation keeps its colour in every chart. Peers (outside crates behind \
             an adapter) are drawn with dashed lines and hollow markers and marked "
            span.badge.peer { "peer" } " in the tables."
        }
        div.scroll {
            table {
                tr {
                    th { "Implementation" }
                    th { "What it is" }
                    @for run in &model.runs {
                        th.num {
                            @if model.several() { (run.label) ": " }
                            "verified cells"
                        }
                    }
                }
                @for implementation in &model.implementations {
                    tr {
                        td { (format::implementation(model, &implementation.name)) }
                        td {
                            @match (&implementation.summary, implementation.peer) {
                                (Some(summary), _) => (summary),
                                (None, true) => "an outside crate behind an adapter",
                                (None, false) => "not in this build's registry",
                            }
                        }
                        @for run in &model.runs {
                            @let cells = run
                                .records
                                .values()
                                .filter(|r| r.key.implementation == implementation.name);
                            @let (ok, all) = cells.fold((0, 0), |(ok, all), r| {
                                (ok + usize::from(r.status == Status::Ok), all + 1)
                            });
                            td.num { (ok) " of " (all) }
                        }
                    }
                }
            }
        }
    };
    super::section("implementations", body)
}
