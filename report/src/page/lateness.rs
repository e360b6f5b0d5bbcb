//! Lateness: why there is no lateness histogram (the records have no lateness field, and
//! a verified cell is exact by construction), and which implementations could have had
//! one: the peers, and any with unverified cells.

use super::Context;
use super::format;
use maud::{Markup, html};
use timerbench_results::Status;

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    // (implementation, verified cells, unverified cells)
    let inexact: Vec<(&str, usize, usize)> = model
        .implementations
        .iter()
        .filter_map(|i| {
            let statuses: Vec<Status> = model
                .runs
                .iter()
                .flat_map(|r| r.records.values())
                .filter(|r| r.key.implementation == i.name)
                .map(|r| r.status)
                .collect();
            let count = |status| statuses.iter().filter(|s| **s == status).count();
            let unverified = count(Status::Unverified);
            (i.peer || unverified > 0).then(|| (i.name.as_str(), count(Status::Ok), unverified))
        })
        .collect();
    let body = html! {
        p {
            "No record carries lateness data: the results schema has no lateness field yet, so \
             there is no lateness histogram to draw. For every cell that verified, lateness is \
             zero by construction: verification compares the whole expiry log (each timer, its \
             firing tick, the order) with the reference model before anything is timed. A \
             structure that is not exact (coarser resolution, early or late firing) fails \
             verification instead, and is listed above with the first differing firing."
        }
        @if !inexact.is_empty() {
            table {
                tr {
                    th { "Implementation" }
                    th.num { "verified (exact) cells" }
                    th.num { "unverified cells" }
                    th { "lateness data" }
                }
                @for (name, ok, unverified) in inexact {
                    tr {
                        td { (format::implementation(model, name)) }
                        td.num { (ok) }
                        td.num { (unverified) }
                        td { "none recorded" }
                    }
                }
            }
        }
    };
    super::section("lateness", body)
}
