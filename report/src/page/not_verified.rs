//! The cells that did not verify: every one, in every run, with its status, how long it
//! ran and its whole reason (a long one folded), each row the target of the "(reason)"
//! links in the workload tables.

use super::Context;
use super::format::{self, short_reason, status_badge, workload_anchor};
use crate::figures::thousands;
use maud::{Markup, html};
use timerbench_results::Status;

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let failures = model.failures();
    let count = |status: Status| failures.iter().filter(|(_, r)| r.status == status).count();
    let body = html! {
        @if failures.is_empty() {
            p { "None: every cell verified against the reference model and was measured." }
        } @else {
            p {
                (failures.len()) " cells have no figures: " (count(Status::Failed))
                " failed (panicked, aborted, killed, or could not run), " (count(Status::Timeout))
                " timed out, " (count(Status::Unverified)) " did not verify (their firings differ \
                 from the reference model's; a wrong structure's speed is never reported). Each \
                 is listed here with its reason."
            }
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
                    @for (run, record) in &failures {
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
    };
    super::section("not-verified", body)
}
