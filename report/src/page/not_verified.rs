//! The cells without figures: every one, in every run, with its status, how long it ran and
//! its whole reason (a long one folded), each row the target of the "(reason)" links in the
//! workload tables. The cells that did not verify (failed, timed out, unverified) come
//! first; the unsupported ones (the workload reaches beyond the range the implementation
//! declares, so it was not run) and the skipped ones (the suite's size is above the
//! implementation's declared suite limit) are listed apart and counted apart, since they
//! are no failure of the implementation.

use super::Context;
use super::format::{self, short_reason, status_badge, workload_anchor};
use crate::figures::thousands;
use crate::model::counts_against;
use crate::runs::Run;
use maud::{Markup, html};
use timerbench_results::{CellRecord, Status};

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let (failures, left_out): (Vec<_>, Vec<_>) = model
        .without_figures()
        .into_iter()
        .partition(|(_, r)| counts_against(r.status));
    let (unsupported, skipped): (Vec<_>, Vec<_>) = left_out
        .into_iter()
        .partition(|(_, r)| r.status == Status::Unsupported);
    let count = |status: Status| failures.iter().filter(|(_, r)| r.status == status).count();
    let body = html! {
        @if failures.is_empty() {
            p {
                "None: every cell that ran verified against the reference model and was \
                 measured."
            }
        } @else {
            p {
                (failures.len()) " cells did not verify and have no figures: "
                (count(Status::Failed)) " failed (panicked, aborted, killed, or could not run), "
                (count(Status::Timeout)) " timed out, " (count(Status::Unverified))
                " did not verify (their firings differ from the reference model's, or an \
                 approximate implementation's fall outside its declared bound; a wrong \
                 structure's speed is never reported). Each is listed here with its reason."
            }
            (table(context, &failures))
        }
        @if !unsupported.is_empty() {
            h4 { "Unsupported" }
            p {
                (unsupported.len()) " unsupported (beyond the implementation's declared \
                 range): the workload holds a delay or reaches a tick the implementation \
                 declares it cannot, so the cell was not run. These are not failures: they \
                 count neither against the implementation in the rankings nor among the \
                 cells that did not verify. The reason names the workload line and the limit."
            }
            (table(context, &unsupported))
        }
        @if !skipped.is_empty() {
            h4 { "Skipped" }
            p {
                (skipped.len()) " skipped (above the implementation's suite limit): the \
                 implementation walks every tick or scans every timer, and declares the \
                 largest size at which a suite runs it, so that the main job keeps its time \
                 budget. Not failures, and not in the rankings; an explicit --timers runs \
                 them. The reason gives the limit and why."
            }
            (table(context, &skipped))
        }
    };
    super::section("not-verified", body)
}

/// The cells, one row each, with the anchor the workload tables link to.
fn table(context: &Context, cells: &[(&Run, &CellRecord)]) -> Markup {
    let model = context.model;
    html! {
        div.scroll {
            table {
                tr {
                    @if model.several() { th { "Run" } }
                    th { "Workload" }
                    th.num { "Timers" }
                    th { "Implementation" }
                    th { "Status" }
                    th.num { "After" }
                    th { "Reason" }
                }
                @for (run, record) in cells {
                    @let reason = record.reason.as_deref().unwrap_or("(no reason recorded)");
                    tr id=[context.failure_id(&run.label, record)] {
                        @if model.several() { td { (run.label) } }
                        td.impl {
                            a href=(format!("#{}", workload_anchor(&record.key.workload))) {
                                (record.key.workload)
                            }
                        }
                        td.num { (thousands(record.key.timers)) }
                        td { (format::implementation(model, &record.key.implementation)) }
                        td { (status_badge(record.status)) }
                        td.num { (format!("{:.1}", record.elapsed_seconds)) " s" }
                        td {
                            @if reason.len() > 400 || reason.lines().count() > 6 {
                                details {
                                    summary { (short_reason(reason, 100)) }
                                    pre.reason { (reason) }
                                }
                            } @else {
                                pre.reason { (reason) }
                            }
                        }
                    }
                }
            }
        }
    }
}
