//! The implementations: each variant label with its colour, its parameters, its precision
//! (exact, or approximate with its declared bound), what its base is, and how many of its
//! cells verified in each run.

use super::Context;
use super::format;
use crate::implementations::Implementation;
use maud::{Markup, html};
use timerbench_results::Status;

pub(super) fn section(context: &Context) -> Markup {
    let model = context.model;
    let body = html! {
        p {
            "Each implementation keeps its colour and line style in every chart and in the \
             tables' swatches: seven colour-blind-safe colours (Okabe and Ito's), then the \
             same again dashed, dotted and long-dashed with other markers, so that no two \
             share both. Peers (outside crates behind an adapter) are drawn with hollow \
             markers and marked "
            span.badge.peer { "peer" } " in the tables. A name with parameters ("
            code { "hashed-wheel:slots=65536" } ") is a " em { "variant" } " of the registry's \
             implementation: a line of its own in every table and chart, drawn in a shade of \
             its base's colour. " em { "Exact" } " implementations fire every timer at its \
             deadline tick, checked against the reference model's whole expiry log; "
            span.badge.approximate { "approximate" } " ones may fire within the bound they \
             declare, and how late they fired is in "
            a href="#lateness" { "Lateness" } ". " em { "Fixed costs" } " are measured in each \
             cell apart from its workload, on a queue holding one far timer: a one-tick advance \
             with nothing due, and a start then stop of one timer (the median over the run's \
             cells). For a peer they are mostly the price of driving it through the contract \
             (a paused runtime moved per clock move, a handle map), which its figures include."
        }
        div.scroll {
            table {
                tr {
                    th { "Implementation" }
                    th { "Parameters" }
                    th { "Precision" }
                    th.num title="one-tick advance with nothing due / start and stop of one \
                                  timer, ns, the median over the first run's cells" {
                        "Fixed costs, ns" br; span.note { "idle advance / start+stop" }
                    }
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
                        td { (parameters(implementation)) }
                        td { (precision(implementation)) }
                        td.num { (fixed_costs(&model.runs[0], &implementation.name)) }
                        td {
                            @match (&implementation.summary, implementation.peer) {
                                (Some(summary), _) => (summary),
                                (None, true) => "an outside crate behind an adapter",
                                (None, false) => "not in this build's registry",
                            }
                            @if implementation.name != implementation.base {
                                " " span.note {
                                    "(a variant of " code { (implementation.base) } ")"
                                }
                            }
                        }
                        @for run in &model.runs {
                            @let (ok, unsupported, all) = run
                                .records
                                .values()
                                .filter(|r| r.key.implementation == implementation.name)
                                .fold((0, 0, 0), |(ok, unsupported, all), r| {
                                    (
                                        ok + usize::from(r.status == Status::Ok),
                                        unsupported + usize::from(r.status.left_out()),
                                        all + 1,
                                    )
                                });
                            td.num {
                                (ok) " of " (all)
                                @if unsupported > 0 {
                                    " " span.note { "(" (unsupported) " not run: unsupported or above its suite limit)" }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    super::section("implementations", body)
}

/// Every parameter as `key=value`, the defaults marked and each one's meaning as its
/// tooltip, when the catalog knows the base.
fn parameters(implementation: &Implementation) -> Markup {
    html! {
        @if implementation.parameters.is_empty() {
            span.note { "none" }
        }
        @for (index, (name, value)) in implementation.parameters.iter().enumerate() {
            @let info = implementation.parameter_info.iter().find(|p| p.name == *name);
            @if index > 0 { ", " }
            code title=[info.map(|p| p.help.as_str())] { (name) "=" (value) }
            @if info.is_some_and(|p| p.default == value.to_string()) {
                " " span.note { "(default)" }
            }
        }
    }
}

/// `exact`, or the approximate badge and the declared bound in words.
fn precision(implementation: &Implementation) -> Markup {
    html! {
        @match (implementation.bound(), implementation.precision.as_deref()) {
            (Some(bound), _) => {
                span.badge.approximate { "approximate" } " " (bound)
            }
            (None, Some(precision)) => (precision),
            (None, None) => {
                "exact " span.note { "(not recorded: schema-1 records were all exact)" }
            }
        }
    }
}

/// `idle / start+stop` in ns: the medians over `run`'s cells of `name`, or a dash.
fn fixed_costs(run: &crate::runs::Run, name: &str) -> Markup {
    let mut idle = Vec::new();
    let mut pairs = Vec::new();
    for costs in run
        .records
        .values()
        .filter(|r| r.key.implementation == name)
        .filter_map(|r| r.fixed_costs.as_ref())
    {
        idle.push(costs.idle_advance_ns);
        pairs.push(costs.start_stop_ns);
    }
    if idle.is_empty() {
        return html! { span.na { "–" } };
    }
    let median = |values: &mut Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let (idle, pairs) = (median(&mut idle), median(&mut pairs));
    html! { (format::ns_number(idle, format::decimals_for(idle))) " / "
    (format::ns_number(pairs, format::decimals_for(pairs))) }
}
