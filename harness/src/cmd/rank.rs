//! `timerbench rank [RUN]`: the rankings of the report's summary in the terminal (after
//! rebar's `rank`), over all workloads and per workload family.
//!
//! The figures come from the report crate's own ranking code
//! ([`timerbench_report::rank_run`]), so the terminal and the page can never disagree: an
//! implementation's `× best` is the geometric mean of its ratios to the fastest over the
//! cells (a workload at a size) it verified, and `cells` says how many of them that was.
//! Exact structures are ranked among themselves, the approximate ones apart with their
//! lateness, and only one that verified every cell of a ranking can lead it.
//!
//! With `--metric` and a count (a `timerbench run --counts` run), the ratios are of each
//! cell's count per counted line to the fewest at its size; the cells without counts are
//! missing from the ranking, never 0, and the output says how many and where counts come
//! from. Counts judge a change to one structure; a ranking across structures stays on time
//! (METHODOLOGY.md, *Counts*), so a count ranking says what each did, not which is faster.

use crate::catalog::catalog;
use crate::table::{ENGINE_MARK, Format, Table, duration, engine_legend, markdown_table};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use timerbench_report::{RankEntry, Ranking, RunRankings, rank_group_by, rank_hosts_by};
use timerbench_results::counts::Metric;
use timerbench_results::latest_by_cell;
use timerbench_results::newest_run;
use timerbench_results::shards::{RunGroup, group_runs};

mod hosts;

/// Print the rankings of the report's summary: per workload family, best first.
///
/// Each implementation's `× best` is the geometric mean of its ratios to the fastest over
/// the cells (a workload at a size) it verified, computed by the report's own code; its
/// worst ratio and where, its slowest single call and where (the tail an event loop
/// budgets for), and how many cells it verified, follow.
#[derive(clap::Args)]
pub struct Args {
    /// A results folder of `timerbench run` (default: the newest folder under results/,
    /// as `timerbench report` picks it); or the folders of one plan: its shards, read as
    /// one run, and runs of it from several hosts, each ranked on its own with the pairs
    /// whose order flips between hosts (docs/scale-out.md).
    #[arg(value_name = "RESULTS_DIR")]
    folders: Vec<PathBuf>,
    /// `text` (aligned columns) or `markdown` (GitHub tables, for an issue).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// What the cells are ranked by: `ns` (median ns/op) or a count per counted line of a
    /// `timerbench run --counts` run: `instructions`, `est-cycles`, `ll-misses`,
    /// `d1-misses`, `branch-mispredicts` (the fewest is the best).
    #[arg(long, default_value_t = Metric::Ns)]
    metric: Metric,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let folders = if args.folders.is_empty() {
        vec![newest_run(Path::new("results")).map_err(|e| {
            anyhow::anyhow!(
                "no results folder given, and {e:#} (run `timerbench run` first, or name a folder)"
            )
        })?]
    } else {
        args.folders.clone()
    };
    let groups = group_runs(&folders)?;
    let mut out = if let [group] = groups.as_slice() {
        let rankings = rank_group_by(group, &catalog(), args.metric)?;
        render(&group.describe(), &rankings, args.format, args.metric)
    } else {
        let view = rank_hosts_by(&groups, &catalog(), args.metric)?;
        hosts::render(&view, args.format, args.metric)
    };
    if args.metric.is_count() {
        for group in &groups {
            out.push_str(&without_counts(group, args.metric)?);
        }
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// The closing note of a count ranking: how many verified cells of the run have no
/// counts (they are missing from the ranking), and where counts come from; refuses a
/// run whose counts model two different machines.
fn without_counts(group: &RunGroup, metric: Metric) -> anyhow::Result<String> {
    let records = latest_by_cell(group.read()?.records.into_iter().map(|(_, l)| l.record));
    crate::runs::run_geometry(group.first(), records.values())?;
    let missing = records
        .values()
        .filter(|r| crate::runs::lacks_counts(r, metric))
        .count();
    Ok(if missing == 0 {
        String::new()
    } else {
        format!(
            "\n{missing} verified cell{} without counts, missing from the ranking ({}).\n",
            if missing == 1 { "" } else { "s" },
            crate::runs::NO_COUNTS
        )
    })
}

fn render(folder: &str, rankings: &RunRankings, format: Format, metric: Metric) -> String {
    let markdown = format == Format::Markdown;
    let mut out = String::new();
    if metric.is_count() {
        let _ = writeln!(
            out,
            "Ranking of {} ({} workload{}) by {}. × best: the geometric mean of an\n\
             implementation's ratios to the fewest of any exact one over the cells (a workload\n\
             at a size) it has counts for; a size whose fewest is 0 is left out. Counts say\n\
             what a structure did on a simulated machine, exactly; which is faster stays a\n\
             question for the time (`--metric ns`).",
            folder,
            rankings.workloads,
            if rankings.workloads == 1 { "" } else { "s" },
            metric.unit()
        );
    } else {
        let _ = writeln!(
            out,
            "Ranking of {} ({} workload{}). × best: the geometric mean of an implementation's\n\
             ratios to the fastest exact one over the cells (a workload at a size) it verified;\n\
             1.00× is the fastest everywhere. Exact structures are ranked among themselves; one\n\
             with fewer cells than the most is listed after them, unranked (`–`). Approximate\n\
             ones, which may fire late, are ranked apart, their lateness beside their speed.",
            folder,
            rankings.workloads,
            if rankings.workloads == 1 { "" } else { "s" }
        );
    }
    let overall = &rankings.overall;
    if overall
        .entries
        .iter()
        .chain(&overall.approximate)
        .all(|e| e.geomean.is_none())
    {
        if metric.is_count() {
            let _ = writeln!(
                out,
                "\nNo verified cell has counts: there is no count to rank."
            );
        } else {
            let _ = writeln!(out, "\nNo cell verified: there is no speed to rank.");
        }
        return out;
    }
    section(&mut out, "All workloads", &rankings.overall, markdown);
    for family in &rankings.families {
        // A family none of whose cells was counted has nothing to rank by a count: the
        // closing note counts the cells without counts.
        if metric.is_count() && family.ranking.cells == 0 {
            continue;
        }
        // A family of one workload of its own name needs no list.
        let title = if family.workloads == [family.family.as_str()] {
            family.family.clone()
        } else {
            format!("{} ({})", family.family, family.workloads.join(", "))
        };
        section(&mut out, &title, &family.ranking, markdown);
    }
    out
}

/// One ranking: its title with the cells it covers, then its table of exact structures,
/// then the approximate ones apart.
fn section(out: &mut String, title: &str, ranking: &Ranking, markdown: bool) {
    let cells = format!(
        "{} cell{}",
        ranking.cells,
        if ranking.cells == 1 { "" } else { "s" }
    );
    let floor = ranking
        .entries
        .iter()
        .chain(&ranking.approximate)
        .any(|e| e.floor.is_some());
    let heading = format!("{title}: {cells}");
    table(
        out,
        &heading,
        &ranking.entries,
        ranking.cells,
        floor,
        false,
        markdown,
    );
    if !ranking.approximate.is_empty() {
        let heading = format!("{title}: approximate structures, ranked apart");
        table(
            out,
            &heading,
            &ranking.approximate,
            ranking.cells,
            floor,
            true,
            markdown,
        );
    }
}

/// One table of a ranking under its heading.
fn table(
    out: &mut String,
    heading: &str,
    entries: &[RankEntry],
    cells: usize,
    floor: bool,
    approximate: bool,
    markdown: bool,
) {
    let mut columns = vec![">#", "implementation", ">× best"];
    if floor {
        columns.push(">× floor");
    }
    columns.push(">cells");
    if approximate {
        // Two maxima over the cells, each its own column: the most ticks a firing came
        // late, and the largest lateness over its timer's delay, which is most often
        // another timer's (a short delay a tick late), so one must not read as a share of
        // the other.
        columns.extend([">max late", ">max late / delay"]);
    }
    columns.extend([">worst", "worst at", ">slowest call", "slowest at"]);
    let rows: Vec<Vec<String>> = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| row(index, entry, cells, floor, approximate))
        .collect();
    if markdown {
        let _ = writeln!(out, "\n### {heading}\n");
        out.push_str(&markdown_table(&columns, &rows));
    } else {
        let _ = writeln!(out, "\n{heading}");
        let mut table = Table::new(&columns);
        for row in rows {
            table.row(row);
        }
        out.push_str(&table.render("  "));
        out.push('\n');
    }
    if entries.iter().any(|e| e.engine) {
        let _ = writeln!(out, "{}", engine_legend(markdown));
    }
}

fn row(
    index: usize,
    entry: &RankEntry,
    cells: usize,
    floor: bool,
    approximate: bool,
) -> Vec<String> {
    let rank = match entry.geomean {
        Some(_) if !entry.partial => (index + 1).to_string(),
        _ => "–".to_string(),
    };
    let geomean = entry
        .geomean
        .map_or("no verified cell".to_string(), |g| format!("{g:.2}×"));
    let (worst, at) = match &entry.worst {
        Some((worst, at)) => (format!("{worst:.2}×"), at.clone()),
        None => (String::new(), String::new()),
    };
    let (slowest, slowest_at) = match &entry.slowest {
        Some(call) => (
            format!("{} {}", call.kind, duration(Duration::from_nanos(call.ns))),
            call.at.clone(),
        ),
        None => (String::new(), String::new()),
    };
    let mut covered = format!("{} of {cells}", entry.covered);
    if entry.unsupported > 0 {
        let _ = write!(covered, " ({} not run)", entry.unsupported);
    }
    let mut name = entry.implementation.clone();
    if entry.engine {
        name.push_str(ENGINE_MARK);
    }
    let mut row = vec![rank, name, geomean];
    if floor {
        row.push(entry.floor.map_or(String::new(), |f| format!("{f:.2}×")));
    }
    row.push(covered);
    if approximate {
        let (ticks, share) = entry
            .lateness
            .map_or((String::new(), String::new()), |late| {
                let percent = format!("{:.1}", late.largest_fraction * 100.0);
                (
                    format!(
                        "{} tick{}",
                        late.most_ticks,
                        if late.most_ticks == 1 { "" } else { "s" }
                    ),
                    format!("{}%", percent.strip_suffix(".0").unwrap_or(&percent)),
                )
            });
        row.extend([ticks, share]);
    }
    row.extend([worst, at, slowest, slowest_at]);
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerbench_report::LatenessFigures;

    fn entry(name: &str, covered: usize, partial: bool) -> RankEntry {
        RankEntry {
            engine: false,
            implementation: name.to_string(),
            geomean: Some(0.5),
            floor: Some(3.0),
            lateness: Some(LatenessFigures {
                most_ticks: 999,
                largest_fraction: 999.0,
            }),
            partial,
            worst: None,
            worst_under_load: false,
            slowest: None,
            covered,
            under_load: 0,
            unsupported: 2,
        }
    }

    #[test]
    fn a_row_says_coverage_floor_and_lateness_and_ranks_no_partial_entry() {
        let row = row(0, &entry("ring-buckets", 3, false), 3, true, true);
        assert_eq!(
            row[..7],
            [
                "1",
                "ring-buckets",
                "0.50×",
                "3.00×",
                "3 of 3 (2 not run)",
                "999 ticks",
                "99900%"
            ]
        );
        let partial = super::row(1, &entry("polling-scan", 1, true), 3, false, false);
        assert_eq!(
            partial.len(),
            8,
            "no lateness columns for exact ones: {partial:?}"
        );
        assert_eq!(
            partial[..4],
            ["–", "polling-scan", "0.50×", "1 of 3 (2 not run)"]
        );
    }
}
