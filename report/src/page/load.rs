//! Cells measured under load: flagged where their figures are shown, never hidden.
//!
//! Every cell process records the one-minute load average when it starts and ends. The
//! measuring process is one of the load; a load above the machine's CPUs
//! ([`Conditions::load_threshold`](timerbench_results::Conditions::load_threshold)) means
//! other work wanted more than the CPUs the measurement left free, so some of it ran on
//! the CPU the cell was pinned to, or shared its caches and memory bandwidth: its figures
//! may be inflated. The report cannot tell by how
//! much, so it shows the figures with a mark and a legend, and counts the cells in the
//! summary, instead of leaving them out (which would quietly change the rankings).

use crate::figures::measured_under_load;
use crate::model::Model;
use maud::{Markup, html};
use std::collections::BTreeSet;
use timerbench_results::CellRecord;

/// The word of the mark, also the legend's first word.
const WORD: &str = "load";

/// The mark of a cell measured under load, with the loaded processes in its tooltip.
pub(super) fn mark(record: &CellRecord) -> Markup {
    let loaded: Vec<String> = record
        .conditions
        .iter()
        .enumerate()
        .filter(|(_, c)| c.under_load())
        .map(|(index, c)| {
            let load = |l: Option<f64>| l.map_or("unknown".to_string(), |l| format!("{l:.2}"));
            format!(
                "process {} ({}): load {} before, {} after, above {}",
                index + 1,
                c.role,
                load(c.load_before),
                load(c.load_after),
                c.load_threshold()
            )
        })
        .collect();
    let title = format!(
        "measured under load, its figures may be inflated: {}",
        loaded.join("; ")
    );
    html! { span.badge.load title=(title) { (WORD) } }
}

/// The legend under a table with any cell measured under load (nothing otherwise).
pub(super) fn legend<'r>(records: impl IntoIterator<Item = &'r CellRecord>) -> Markup {
    let thresholds: BTreeSet<u32> = records
        .into_iter()
        .filter(|r| measured_under_load(r))
        .flat_map(|r| r.conditions.iter().filter(|c| c.under_load()))
        .map(|c| c.load_threshold() as u32)
        .collect();
    if thresholds.is_empty() {
        return html! {};
    }
    let free: Vec<String> = thresholds.iter().map(u32::to_string).collect();
    html! {
        p.note.legend {
            span.badge.load { (WORD) } " measured under load: the one-minute load average was \
             above the machine's CPUs (" (free.join(" or ")) ") when at least one of the cell's \
             processes started or ended: the measuring process itself is one of the load, so \
             other work wanted more than the CPUs it left free. Its figures may be inflated; they are shown, not \
             left out, so compare them with their neighbours before trusting them."
        }
    }
}

/// The sentence of the summary on the cells measured under load in each run, or nothing
/// when there were none.
pub(super) fn summary(model: &Model) -> Markup {
    let counts: Vec<(&str, usize, usize)> = model
        .runs
        .iter()
        .map(|run| {
            let (verified, loaded) = run.under_load();
            (run.label.as_str(), verified, loaded)
        })
        .collect();
    if counts.iter().all(|&(_, _, loaded)| loaded == 0) {
        return html! {};
    }
    html! {
        p.note {
            strong { "Measured under load." } " "
            @for (index, (label, verified, loaded)) in counts.iter().enumerate() {
                @if index > 0 { "; " }
                @if model.several() { @if index == 0 { "Run " } @else { "run " } (label) ": " }
                @if *loaded == 0 {
                    "none"
                } @else if loaded == verified {
                    @if model.several() { "all " } @else { "All " }
                    (verified) " verified cells"
                } @else {
                    (loaded) " of the " (verified) " verified cells"
                }
            }
            " had a load average above the machine's CPUs (more than the measuring process and \
             the CPUs it left free) during at least one of their processes: their figures may be inflated. They are marked "
            span.badge.load { (WORD) } " in the workload tables and still ranked."
        }
    }
}
