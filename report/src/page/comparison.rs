//! The runs side by side: for each run after the first, per implementation, the geometric
//! mean of its ns/op over the first run's, overall and per workload family.

use super::Context;
use super::format::{self, ratio, ratio_class};
use maud::{Markup, html};

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let base = &model.runs[0];
    let families = model.families();
    let body = html! {
        p {
            "Each run against run " (base.label) " (" (base.name) "): the geometric mean, over \
             the cells verified in both, of the ratio of their median times per operation. \
             Below 1.00× the run is faster than " (base.label) "; the number of cells is in \
             brackets."
        }
        @for run in &model.runs[1..] {
            h4 { (run.title()) " / " (base.title()) }
            div.scroll {
                table {
                    tr {
                        th { "Implementation" }
                        th.num { "all" }
                        @for family in &families { th.num { (family) } }
                    }
                    @for implementation in &model.implementations {
                        @let name = implementation.name.as_str();
                        @let overall = model.run_ratio(run, name, |_| true);
                        @let per_family = families
                            .iter()
                            .map(|family| model.run_ratio(run, name, |w| &w.family == family));
                        tr {
                            td { (format::implementation(model, name)) }
                            @for cell in std::iter::once(overall).chain(per_family) {
                                @match cell {
                                    Some((r, n)) => {
                                        td.num.(ratio_class(r)) {
                                            (ratio(r)) " " span.note { "(" (n) ")" }
                                        }
                                    }
                                    None => td.num.na { "–" },
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    super::section("comparison", body)
}
