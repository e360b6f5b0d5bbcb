//! The lists `compare` prints after its table: the cells only in one folder, grouped a
//! line per workload and set of sizes, and the words they share with the rest of the
//! output.

use super::{Row, WITHIN};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use timerbench_report::thousands;
use timerbench_results::CellKey;

/// `Only in A: 3 cells`, then one line per workload and set of sizes: `workload at N / M
/// timers: impl, impl` (one implementation at many sizes, or many at one size, stays one
/// line per workload).
pub(super) fn list(out: &mut String, title: &str, keys: &[CellKey], markdown: bool) {
    if keys.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}: {}", heading(title, markdown), count(keys.len()));
    // Per (workload, implementation), its sizes, in order of first appearance.
    let mut sizes: Vec<(&str, &str, Vec<u64>)> = Vec::new();
    for key in keys {
        match sizes
            .iter_mut()
            .find(|(w, i, _)| *w == key.workload && *i == key.implementation)
        {
            Some((_, _, timers)) => timers.push(key.timers),
            None => sizes.push((&key.workload, &key.implementation, vec![key.timers])),
        }
    }
    let mut lines: Vec<ListLine> = Vec::new();
    for (workload, implementation, timers) in sizes {
        match lines
            .iter_mut()
            .find(|l| l.workload == workload && l.timers == timers)
        {
            Some(line) => line.implementations.push(implementation),
            None => lines.push(ListLine {
                workload,
                timers,
                implementations: vec![implementation],
            }),
        }
    }
    for line in lines {
        let timers: Vec<String> = line.timers.iter().map(|&t| thousands(t)).collect();
        let _ = writeln!(
            out,
            "{}{} at {} timers: {}",
            if markdown { "- " } else { "  " },
            line.workload,
            timers.join(" / "),
            line.implementations.join(", ")
        );
    }
}

/// One line of a list of cells: a workload, some sizes, the implementations at exactly
/// those sizes.
struct ListLine<'k> {
    workload: &'k str,
    timers: Vec<u64>,
    implementations: Vec<&'k str>,
}

pub(super) fn heading(title: &str, markdown: bool) -> String {
    if markdown {
        format!("**{title}**")
    } else {
        title.to_string()
    }
}

pub(super) fn count(n: usize) -> String {
    format!("{n} cell{}", if n == 1 { "" } else { "s" })
}

/// `workload at N timers, implementation`.
pub(super) fn describe(key: &CellKey) -> String {
    format!(
        "{} at {} timers, {}",
        key.workload,
        thousands(key.timers),
        key.implementation
    )
}

/// `By size: 1,000 timers 163 of 182, ...`: the last line's count per size, since what
/// varies between runs on a shared machine is mostly the sizes whose working set outgrows
/// the private caches.
pub(super) fn within_by_size(rows: &[Row]) -> String {
    let mut by_size: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    for row in rows {
        let (within, all) = by_size.entry(row.key.timers).or_default();
        *all += 1;
        if (row.ratio() - 1.0).abs() <= WITHIN + 1e-9 {
            *within += 1;
        }
    }
    let sizes: Vec<String> = by_size
        .iter()
        .map(|(timers, (within, all))| format!("{} timers {within} of {all}", thousands(*timers)))
        .collect();
    format!("By size: {}", sizes.join(", "))
}
