//! The report page: plain HTML built as a string, every piece of text escaped, the charts
//! inline as SVG, the style inline. No script, no external resource.

use super::charts::{Axis, Chart, Scale, Series, Unit, count_label, nanoseconds_label};
use super::data::{
    Model, RankEntry, Ranking, Run, Workload, bytes_per_timer, detail_size, latency, ns_per_op,
    percentile_curve, thousands,
};
use crate::schema::{CellRecord, Status};
use anyhow::Context;
use std::fmt::Write;

/// The page and the charts in it (for `--png`).
pub struct Page {
    pub html: String,
    pub charts: Vec<Chart>,
}

/// The section headings, with their anchors, in page order. The comparison between runs
/// appears only when there are several.
pub const SECTIONS: &[(&str, &str)] = &[
    ("summary", "Summary"),
    ("implementations", "Implementations"),
    ("workloads", "Workloads"),
    ("not-verified", "Cells that did not verify"),
    ("lateness", "Lateness"),
    ("comparison", "Comparison between runs"),
    ("environment", "Environment and reproduction"),
];

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A word safe in an element id and a file name.
fn slug(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `#1f77b4`.
fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Nanoseconds per operation as a plain number, three significant digits.
fn ns_number(ns: f64, decimals: usize) -> String {
    if ns >= 1000.0 {
        thousands(ns.round() as u64)
    } else {
        format!("{ns:.decimals$}")
    }
}

fn decimals_for(ns: f64) -> usize {
    if ns >= 100.0 {
        0
    } else if ns >= 10.0 {
        1
    } else {
        2
    }
}

fn ratio(r: f64) -> String {
    format!("{r:.2}×")
}

/// The class of a ratio between runs: faster, slower or about the same.
fn ratio_class(r: f64) -> &'static str {
    if r < 0.95 {
        "faster"
    } else if r > 1.05 {
        "slower"
    } else {
        "same"
    }
}

fn status_word(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Unverified => "unverified",
        Status::Failed => "failed",
        Status::Timeout => "timeout",
    }
}

/// The first line of a reason, cut to `limit` characters.
fn short_reason(reason: &str, limit: usize) -> String {
    let line = reason.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut short: String = line.chars().take(limit).collect();
    if short.len() < line.len() || reason.lines().filter(|l| !l.trim().is_empty()).count() > 1 {
        short.push('…');
    }
    short
}

/// Builds the whole page.
pub fn render(model: &Model) -> anyhow::Result<Page> {
    let mut page = Builder {
        model,
        out: String::with_capacity(1 << 20),
        charts: Vec::new(),
        failure_ids: Default::default(),
    };
    page.assign_failure_ids();
    page.head();
    page.summary();
    page.implementations();
    page.workloads()?;
    page.not_verified();
    page.lateness();
    if model.runs.len() > 1 {
        page.comparison();
    }
    page.environment();
    page.out.push_str(
        "<footer>Written by <code>timerbench report</code>. Self-contained: the charts are \
         inline SVG and nothing is fetched from anywhere.</footer>\n</main>\n</body>\n</html>\n",
    );
    Ok(Page {
        html: page.out,
        charts: page.charts,
    })
}

struct Builder<'m> {
    model: &'m Model,
    out: String,
    charts: Vec<Chart>,
    /// The anchor of each cell that did not verify, by (run label, cell key).
    failure_ids: std::collections::BTreeMap<(String, crate::schema::CellKey), String>,
}

const CSS: &str = r#"
:root { --ink: #1d232a; --muted: #5b6570; --line: #d9dee3; --soft: #f4f6f8; --accent: #1f5f99; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1360px; margin: 0 auto; padding: 20px 28px 40px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 21px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--ink); }
h3 { font-size: 18px; margin: 30px 0 6px; padding-top: 10px; border-top: 1px solid var(--line); }
h4 { font-size: 15px; margin: 16px 0 6px; }
p { margin: 6px 0; max-width: 1100px; }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: var(--soft); padding: 8px 10px; border-radius: 4px; white-space: pre-wrap; word-break: break-word; margin: 6px 0; }
.lede { color: var(--muted); }
nav { background: var(--soft); border-radius: 6px; padding: 8px 12px; margin: 12px 0; }
nav a { margin-right: 14px; white-space: nowrap; }
nav .workload-links a { margin-right: 10px; font-size: 13px; }
.headline { font-size: 15.5px; background: #eef5fb; border-left: 4px solid var(--accent); padding: 8px 12px; max-width: none; }
.note { color: var(--muted); font-size: 13px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 7px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { text-align: left; background: var(--soft); font-weight: 600; font-size: 13px; }
td.num, th.num { text-align: right; white-space: nowrap; }
tr.size th { background: #e6ebf0; font-weight: 600; }
tr.group th { text-align: center; border-left: 2px solid #fff; }
td.sep, th.sep { border-left: 2px solid var(--line); }
td.best { font-weight: 700; }
td.bad { color: #8a1c1c; background: #fdf3f3; font-size: 13px; }
td.na { color: var(--muted); font-style: italic; font-size: 13px; }
.faster { color: #146c2e; font-weight: 600; }
.slower { color: #a11d1d; font-weight: 600; }
.same { color: var(--muted); }
.swatch { display: inline-block; width: 22px; height: 0; border-top: 3px solid; vertical-align: middle; margin-right: 6px; }
.swatch.peer { border-top-style: dashed; }
.impl { white-space: nowrap; }
.badge { display: inline-block; font-size: 11px; line-height: 1.3; padding: 0 5px; border-radius: 8px; margin-left: 5px; vertical-align: 1px; }
.badge.peer { background: #fff1d6; color: #7a4b00; border: 1px solid #e8c98a; }
.badge.failed, .badge.timeout { background: #fbe0e0; color: #8a1c1c; }
.badge.unverified { background: #f6e9ff; color: #5d2b86; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 8px 22px; }
.cards.wide { grid-template-columns: repeat(auto-fill, minmax(500px, 1fr)); }
.card { overflow-x: auto; }
.card h4 { margin: 10px 0 2px; }
.card table { width: 100%; margin: 2px 0; }
.card td, .card th { padding: 2px 6px; font-size: 13px; }
.charts { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 10px 18px; margin: 10px 0; }
.charts.runs-3, .charts.small { grid-template-columns: repeat(3, minmax(0, 1fr)); }
figure { margin: 0; }
figure svg { width: 100%; height: auto; display: block; border: 1px solid var(--line); border-radius: 4px; }
figcaption { color: var(--muted); font-size: 12.5px; margin-top: 3px; }
details summary { cursor: pointer; color: var(--accent); }
.reason { margin: 0; font-size: 12px; max-height: 16em; overflow: auto; }
dl.params { display: grid; grid-template-columns: max-content 1fr; gap: 1px 12px; margin: 6px 0; }
dl.params dt { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
dl.params dd { margin: 0; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; border-top: 1px solid var(--line); padding-top: 8px; }
@media (max-width: 900px) { .charts, .charts.runs-3, .charts.small { grid-template-columns: 1fr; } }
"#;

impl Builder<'_> {
    fn assign_failure_ids(&mut self) {
        for (index, (run, record)) in self.model.failures().into_iter().enumerate() {
            self.failure_ids.insert(
                (run.label.clone(), record.key.clone()),
                format!("cell-{}", index + 1),
            );
        }
    }

    fn several(&self) -> bool {
        self.model.runs.len() > 1
    }

    fn impl_cell(&self, name: &str) -> String {
        let (color, peer) = self
            .model
            .implementation(name)
            .map_or(((0, 0, 0), false), |i| (i.color, i.peer));
        format!(
            "<span class=\"impl\"><span class=\"swatch{}\" style=\"border-top-color:{}\"></span>{}{}</span>",
            if peer { " peer" } else { "" },
            hex(color),
            escape(name),
            if peer {
                "<span class=\"badge peer\" title=\"an outside crate behind an adapter\">peer</span>"
            } else {
                ""
            }
        )
    }

    fn head(&mut self) {
        let model = self.model;
        let title = match model.runs.as_slice() {
            [run] => format!("timerbench report: {}", run.name),
            runs => format!(
                "timerbench report: {}",
                runs.iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" vs ")
            ),
        };
        let _ = write!(
            self.out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n<h1>timerbench report</h1>\n",
            escape(&title)
        );
        self.out.push_str("<p class=\"lede\">");
        for (index, run) in model.runs.iter().enumerate() {
            if index > 0 {
                self.out.push_str("<br>");
            }
            let environment = run.environment.as_ref().map_or_else(
                || "no environment.json".to_string(),
                |e| {
                    format!(
                        "{} · {} · revision {} · suite {} · started {}",
                        e.host, e.cpu, e.git_revision, e.suite, e.started
                    )
                },
            );
            let _ = write!(
                self.out,
                "{}<strong>{}</strong>: {} cells · {}",
                if self.several() {
                    format!("Run {}, ", escape(&run.label))
                } else {
                    String::new()
                },
                escape(&run.name),
                run.records.len(),
                escape(&environment)
            );
        }
        self.out.push_str("</p>\n<nav><div>");
        for (anchor, heading) in SECTIONS {
            if *anchor == "comparison" && !self.several() {
                continue;
            }
            let _ = write!(self.out, "<a href=\"#{anchor}\">{}</a>", escape(heading));
        }
        self.out
            .push_str("</div><div class=\"workload-links\">Workloads: ");
        for workload in &model.workloads {
            let _ = write!(
                self.out,
                "<a href=\"#w-{}\">{}</a>",
                slug(&workload.name),
                escape(&workload.name)
            );
        }
        self.out.push_str("</div></nav>\n");
    }

    fn section(&mut self, anchor: &str) {
        let heading = SECTIONS
            .iter()
            .find(|(a, _)| *a == anchor)
            .map_or(anchor, |(_, h)| *h);
        let _ = write!(
            self.out,
            "<section id=\"{anchor}\">\n<h2>{}</h2>\n",
            escape(heading)
        );
    }

    fn summary(&mut self) {
        let model = self.model;
        self.section("summary");
        let base = &model.runs[0];
        let overall = model.ranking(base, |_| true);
        let families = model.families();
        let rankings: Vec<(String, Ranking)> = families
            .iter()
            .map(|family| (family.clone(), model.ranking(base, |w| &w.family == family)))
            .collect();

        // The headline.
        let not_verified = model.failures().len();
        let mut headline = String::new();
        match overall.entries.first() {
            Some(RankEntry {
                implementation,
                geomean: Some(g),
                covered,
                ..
            }) => {
                let _ = write!(
                    headline,
                    "Over {} cells (a workload at a size) of {} workloads{}, <strong>{}</strong> \
                     is the fastest overall: the geometric mean of its time per operation over the \
                     fastest's in each cell is {}, over the {} cells it verified.",
                    overall.cells,
                    model.workloads.len(),
                    if self.several() {
                        format!(" in run {}", escape(&base.label))
                    } else {
                        String::new()
                    },
                    escape(implementation),
                    ratio(*g),
                    covered
                );
                let winners: Vec<String> = rankings
                    .iter()
                    .filter_map(|(family, ranking)| {
                        let first = ranking.entries.first()?;
                        let winner = format!(
                            "{}: <strong>{}</strong> ({})",
                            escape(family),
                            escape(&first.implementation),
                            ratio(first.geomean?)
                        );
                        Some(match ranking.entries.get(1) {
                            Some(RankEntry {
                                implementation,
                                geomean: Some(g),
                                ..
                            }) => {
                                format!("{winner}, then {} ({})", escape(implementation), ratio(*g))
                            }
                            _ => winner,
                        })
                    })
                    .collect();
                if !winners.is_empty() {
                    let _ = write!(headline, " Best per family: {}.", winners.join("; "));
                }
            }
            _ => headline.push_str("No cell verified: there is no speed to compare."),
        }
        if not_verified > 0 {
            let _ = write!(
                headline,
                " {not_verified} cell{} did not verify; <a href=\"#not-verified\">each is listed with its reason</a>.",
                if not_verified == 1 { "" } else { "s" }
            );
        }
        let _ = writeln!(self.out, "<p class=\"headline\">{headline}</p>");

        self.out.push_str(
            "<p>A cell's <em>ratio to the best</em> is its median time per operation over the \
             smallest any implementation reached on the same workload at the same size (1.00× is \
             the best, 2.00× twice as slow). An implementation's rank in an <em>operation \
             family</em> (a workload family: its workloads exercise the same mix of operations) is \
             the geometric mean of its ratios over the cells of the family's workloads (each \
             workload at each size) it verified; <em>cells</em> counts them, out of the cells \
             any implementation verified.</p>\n",
        );
        self.out.push_str(
            "<p class=\"note\"><strong>What the geometric mean hides.</strong> It weighs every \
             size alike, so a structure that is best on small sizes and falls apart at a million \
             timers can rank beside one that is steady everywhere; it says nothing of tail latency \
             (an occasional cascade of milliseconds) or memory, which the workload tables show; \
             and cells an implementation failed or did not run are left out, not counted against \
             it: compare the cells column before the ratios.",
        );
        if let Some((family, entry, (worst, cell))) = rankings
            .iter()
            .flat_map(|(family, ranking)| {
                ranking.entries.iter().filter_map(move |e| {
                    let worst = e.worst.as_ref()?;
                    Some((family, e, worst))
                })
            })
            .filter(|(_, e, (w, _))| e.geomean.is_some_and(|g| *w > g * 1.2))
            .max_by(|a, b| {
                let gap = |(_, e, (w, _)): &(&String, &RankEntry, &(f64, String))| {
                    w / e.geomean.unwrap_or(1.0)
                };
                gap(a).total_cmp(&gap(b))
            })
        {
            let _ = write!(
                self.out,
                " Here, for example, {} averages {} in the {} family but is {} the best on {}.",
                escape(&entry.implementation),
                ratio(entry.geomean.unwrap_or(1.0)),
                escape(family),
                ratio(*worst),
                escape(cell)
            );
        }
        self.out.push_str("</p>\n");

        self.out
            .push_str("<h4>All workloads</h4>\n<div class=\"scroll\">");
        self.ranking_table(&overall, |_| true, true);
        self.out.push_str(if self.several() {
            "</div>\n<div class=\"cards wide\">\n"
        } else {
            "</div>\n<div class=\"cards\">\n"
        });
        for (family, ranking) in &rankings {
            let description = model
                .workloads
                .iter()
                .find(|w| &w.family == family)
                .and_then(|w| w.models)
                .unwrap_or("");
            let names: Vec<&str> = model
                .workloads
                .iter()
                .filter(|w| &w.family == family)
                .map(|w| w.name.as_str())
                .collect();
            let _ = write!(
                self.out,
                "<div class=\"card\"><h4>{}</h4><div class=\"note\">{} ({})</div>",
                escape(family),
                escape(description),
                escape(&names.join(", "))
            );
            let family = family.clone();
            self.ranking_table(ranking, move |w| w.family == family, false);
            self.out.push_str("</div>\n");
        }
        self.out.push_str("</div>\n</section>\n");
    }

    /// A ranking as a table; with several runs, the other runs' geometric means beside.
    fn ranking_table(
        &mut self,
        ranking: &Ranking,
        include: impl Fn(&Workload) -> bool,
        wide: bool,
    ) {
        let model = self.model;
        let others = &model.runs[1..];
        self.out
            .push_str("<table><tr><th class=\"num\">#</th><th>Implementation</th>");
        let _ = write!(
            self.out,
            "<th class=\"num\" title=\"geometric mean of the ratios to the best\">{}× best</th>",
            if others.is_empty() {
                String::new()
            } else {
                format!("{} ", escape(&model.runs[0].label))
            }
        );
        self.out.push_str("<th class=\"num\">worst</th>");
        if wide {
            self.out.push_str("<th>worst at</th>");
        }
        self.out.push_str("<th class=\"num\">cells</th>");
        for run in others {
            if wide {
                let _ = write!(
                    self.out,
                    "<th class=\"num sep\">{} × best</th>",
                    escape(&run.label)
                );
            }
            let _ = write!(
                self.out,
                "<th class=\"num{}\" title=\"geometric mean of the ratios of ns/op between the runs\">{}/{}</th>",
                if wide { "" } else { " sep" },
                escape(&run.label),
                escape(&model.runs[0].label)
            );
        }
        self.out.push_str("</tr>\n");
        for (index, entry) in ranking.entries.iter().enumerate() {
            let rank = if entry.geomean.is_some() {
                (index + 1).to_string()
            } else {
                "–".to_string()
            };
            let _ = write!(
                self.out,
                "<tr><td class=\"num\">{rank}</td><td>{}</td><td class=\"num{}\">{}</td><td class=\"num\">{}</td>",
                self.impl_cell(&entry.implementation),
                if index == 0 && entry.geomean.is_some() {
                    " best"
                } else {
                    ""
                },
                entry.geomean.map_or("no verified cell".to_string(), ratio),
                entry
                    .worst
                    .as_ref()
                    .map_or(String::new(), |(w, _)| ratio(*w)),
            );
            if wide {
                let _ = write!(
                    self.out,
                    "<td>{}</td>",
                    entry
                        .worst
                        .as_ref()
                        .map_or(String::new(), |(_, at)| escape(at))
                );
            }
            let _ = write!(
                self.out,
                "<td class=\"num\">{} of {}</td>",
                entry.covered, ranking.cells
            );
            for run in others {
                let between = model.run_ratio(run, &entry.implementation, &include);
                if wide {
                    let other = model.ranking(run, &include);
                    let geomean = other
                        .entries
                        .iter()
                        .find(|e| e.implementation == entry.implementation)
                        .and_then(|e| e.geomean.map(|g| (g, e.covered)));
                    let _ = write!(
                        self.out,
                        "<td class=\"num sep\">{}</td>",
                        geomean.map_or("–".to_string(), |(g, n)| format!("{} ({n})", ratio(g))),
                    );
                }
                let _ = write!(
                    self.out,
                    "<td class=\"num {}{}\">{}</td>",
                    if wide { "" } else { "sep " },
                    between.map_or("", |(r, _)| ratio_class(r)),
                    between.map_or("–".to_string(), |(r, _)| ratio(r)),
                );
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</table>\n");
    }

    fn implementations(&mut self) {
        let model = self.model;
        self.section("implementations");
        self.out.push_str(
            "<p>Each implementation keeps its colour in every chart. Peers (outside crates \
             behind an adapter) are drawn with dashed lines and hollow markers and marked \
             <span class=\"badge peer\">peer</span> in the tables.</p>\n<div class=\"scroll\"><table><tr><th>Implementation</th><th>What it is</th>",
        );
        for run in &model.runs {
            let _ = write!(
                self.out,
                "<th class=\"num\">{}verified cells</th>",
                if self.several() {
                    format!("{}: ", escape(&run.label))
                } else {
                    String::new()
                }
            );
        }
        self.out.push_str("</tr>\n");
        for implementation in &model.implementations {
            let what = match (implementation.summary, implementation.peer) {
                (Some(summary), _) => summary.to_string(),
                (None, true) => "an outside crate behind an adapter".to_string(),
                (None, false) => "not in this build's registry".to_string(),
            };
            let _ = write!(
                self.out,
                "<tr><td>{}</td><td>{}</td>",
                self.impl_cell(&implementation.name),
                escape(&what)
            );
            for run in &model.runs {
                let cells: Vec<&CellRecord> = run
                    .records
                    .values()
                    .filter(|r| r.key.implementation == implementation.name)
                    .collect();
                let ok = cells.iter().filter(|r| r.status == Status::Ok).count();
                let _ = write!(self.out, "<td class=\"num\">{ok} of {}</td>", cells.len());
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</table></div>\n</section>\n");
    }

    fn workloads(&mut self) -> anyhow::Result<()> {
        let model = self.model;
        self.section("workloads");
        self.out.push_str(
            "<p>Per workload: what it models, its parameters, the figures of every cell, and the \
             charts. In the tables, <em>ns/op</em> is the median time per operation line over the \
             timed replays of the whole workload, ± the median absolute deviation; <em>× best</em> \
             its ratio to the fastest at that size (the fastest in bold); <em>p99, p99.9, max</em> \
             the latency of the operation that moves the clock (<code>advance</code>, \
             <code>next</code> or <code>tick</code>, named in the header), from a separate pass \
             that times each operation; <em>B/timer</em> the peak live heap bytes of the queue over \
             the peak number of pending timers.",
        );
        if self.several() {
            self.out.push_str(
                " The last columns are each run's ns/op over the first run's \
                 (<span class=\"faster\">green: faster</span>, <span class=\"slower\">red: \
                 slower</span>).",
            );
        }
        self.out.push_str("</p>\n");
        for workload in &model.workloads {
            self.workload(workload)
                .with_context(|| format!("the section of workload {}", workload.name))?;
        }
        self.out.push_str("</section>\n");
        Ok(())
    }

    fn workload(&mut self, workload: &Workload) -> anyhow::Result<()> {
        let _ = write!(
            self.out,
            "<section class=\"workload\" id=\"w-{}\">\n<h3>{}</h3>\n",
            slug(&workload.name),
            escape(&workload.name)
        );
        let _ = writeln!(
            self.out,
            "<p><strong>Models</strong> {}. <span class=\"note\">Family <code>{}</code>{}.</span></p>",
            escape(
                workload
                    .models
                    .unwrap_or("(a family this build does not know)")
            ),
            escape(&workload.family),
            workload
                .tick
                .map_or(String::new(), |t| format!(", one tick is {}", escape(t)))
        );
        if let Some(shape) = workload.shape {
            let _ = writeln!(self.out, "<p><strong>Shape</strong> {}.</p>", escape(shape));
        }
        self.out.push_str("<dl class=\"params\">");
        for (name, value, default, help) in &workload.params {
            let _ = write!(
                self.out,
                "<dt>{}={}</dt><dd>{}{}</dd>",
                escape(name),
                escape(value),
                escape(help),
                if *default {
                    " <span class=\"note\">(default)</span>"
                } else {
                    ""
                }
            );
        }
        let _ = write!(
            self.out,
            "<dt>timers</dt><dd>{}</dd>",
            workload
                .sizes
                .iter()
                .map(|&t| thousands(t))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if let Some(ops) = workload.ops {
            let _ = write!(self.out, "<dt>ops</dt><dd>{}</dd>", thousands(ops));
        }
        self.out
            .push_str("</dl>\n<details><summary>Regenerate the workload</summary><pre>");
        for generator in workload.generators.values() {
            let _ = writeln!(self.out, "{}", escape(generator));
        }
        self.out.push_str("</pre></details>\n");

        self.workload_table(workload);
        self.workload_charts(workload)?;
        self.out.push_str("</section>\n");
        Ok(())
    }

    fn workload_table(&mut self, workload: &Workload) {
        let model = self.model;
        let runs = &model.runs;
        let kind = workload.clock_kind.as_deref();
        let per_run = 6;
        let columns = 1 + per_run * runs.len() + (runs.len() - 1);
        self.out
            .push_str("<div class=\"scroll\"><table class=\"cells\">\n");
        let kind_label = kind.unwrap_or("latency");
        if self.several() {
            self.out.push_str("<tr class=\"group\"><th></th>");
            for run in runs {
                let _ = write!(
                    self.out,
                    "<th colspan=\"{per_run}\" class=\"sep\">{}</th>",
                    escape(&run.title())
                );
            }
            if runs.len() > 1 {
                let _ = write!(
                    self.out,
                    "<th colspan=\"{}\" class=\"sep\">ratio</th>",
                    runs.len() - 1
                );
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("<tr><th>Implementation</th>");
        for _ in runs {
            let _ = write!(
                self.out,
                "<th class=\"num sep\">ns/op ± MAD</th><th class=\"num\">× best</th>\
                 <th class=\"num\" title=\"{0} latency, 99th percentile\">{0} p99</th>\
                 <th class=\"num\">p99.9</th><th class=\"num\">max</th>\
                 <th class=\"num\" title=\"peak live heap bytes over peak pending timers\">B/timer</th>",
                escape(kind_label)
            );
        }
        for run in &runs[1..] {
            let _ = write!(
                self.out,
                "<th class=\"num sep\">{}/{}</th>",
                escape(&run.label),
                escape(&runs[0].label)
            );
        }
        self.out.push_str("</tr>\n");

        for &timers in &workload.sizes {
            let _ = writeln!(
                self.out,
                "<tr class=\"size\"><th colspan=\"{columns}\">{} timers</th></tr>",
                thousands(timers)
            );
            // Rows: the baseline's fastest first, then the rest in registry order.
            let mut rows: Vec<&str> = model
                .implementations
                .iter()
                .map(|i| i.name.as_str())
                .filter(|name| {
                    runs.iter()
                        .any(|r| r.cell(&workload.name, timers, name).is_some())
                })
                .collect();
            rows.sort_by(|a, b| {
                let speed = |name: &str| {
                    runs[0]
                        .cell(&workload.name, timers, name)
                        .and_then(ns_per_op)
                        .unwrap_or(f64::INFINITY)
                };
                speed(a).total_cmp(&speed(b))
            });
            for name in rows {
                let _ = write!(self.out, "<tr><td>{}</td>", self.impl_cell(name));
                for run in runs {
                    let cell = self.run_cells(run, workload, timers, name, kind, per_run);
                    self.out.push_str(&cell);
                }
                let base = runs[0]
                    .cell(&workload.name, timers, name)
                    .and_then(ns_per_op);
                for run in &runs[1..] {
                    let other = run.cell(&workload.name, timers, name).and_then(ns_per_op);
                    match (base, other) {
                        (Some(base), Some(other)) => {
                            let r = other / base;
                            let _ = write!(
                                self.out,
                                "<td class=\"num sep {}\">{}</td>",
                                ratio_class(r),
                                ratio(r)
                            );
                        }
                        _ => self.out.push_str("<td class=\"num sep na\">–</td>"),
                    }
                }
                self.out.push_str("</tr>\n");
            }
        }
        self.out.push_str("</table></div>\n");
    }

    /// The columns of one run for one cell.
    fn run_cells(
        &self,
        run: &Run,
        workload: &Workload,
        timers: u64,
        name: &str,
        kind: Option<&str>,
        per_run: usize,
    ) -> String {
        let Some(record) = run.cell(&workload.name, timers, name) else {
            return format!("<td colspan=\"{per_run}\" class=\"na sep\">not run</td>");
        };
        if record.status != Status::Ok || ns_per_op(record).is_none() {
            let status = status_word(record.status);
            let anchor = self
                .failure_ids
                .get(&(run.label.clone(), record.key.clone()))
                .map_or(String::new(), |id| {
                    format!(" <a href=\"#{id}\">(reason)</a>")
                });
            return format!(
                "<td colspan=\"{per_run}\" class=\"bad sep\"><span class=\"badge {status}\">{status}</span> {}{anchor}</td>",
                escape(&short_reason(
                    record.reason.as_deref().unwrap_or("no figures recorded"),
                    90
                ))
            );
        }
        let mut out = String::new();
        let throughput = record.throughput.as_ref().expect("ns_per_op had it");
        let median = throughput.ns_per_op.median;
        let decimals = decimals_for(median);
        let best = run.ratio_to_best(record).is_some_and(|r| r <= 1.0 + 1e-12);
        let bold = if best { " best" } else { "" };
        let _ = write!(
            out,
            "<td class=\"num sep{bold}\">{} ± {}</td><td class=\"num{bold}\">{}</td>",
            ns_number(median, decimals),
            ns_number(throughput.ns_per_op.mad, decimals),
            run.ratio_to_best(record).map_or(String::new(), ratio)
        );
        let latency = kind.and_then(|k| latency(record, k));
        for percentile in ["p99", "p99.9", "max"] {
            let value = latency
                .and_then(|l| l.percentiles.get(percentile))
                .map_or("–".to_string(), |&v| nanoseconds_label(v as f64));
            let _ = write!(out, "<td class=\"num\">{value}</td>");
        }
        let _ = write!(
            out,
            "<td class=\"num\">{}</td>",
            bytes_per_timer(record).map_or("–".to_string(), |b| format!("{b:.1}"))
        );
        out
    }

    /// Adds a chart, or a note when it has nothing to draw.
    fn figure(&mut self, chart: Chart, caption: &str) -> anyhow::Result<()> {
        if !chart.has_data() {
            let _ = writeln!(
                self.out,
                "<figure class=\"empty\"><p class=\"note\">{}: no verified cell to draw.</p></figure>",
                escape(&chart.title)
            );
            return Ok(());
        }
        let svg = chart.svg()?;
        let svg = svg.replacen(
            "<svg ",
            &format!("<svg role=\"img\" aria-label=\"{}\" ", escape(&chart.title)),
            1,
        );
        let _ = write!(
            self.out,
            "<figure class=\"chart\" id=\"chart-{}\">\n{svg}{}</figure>\n",
            chart.id,
            if caption.is_empty() {
                String::new()
            } else {
                format!("<figcaption>{caption}</figcaption>")
            }
        );
        self.charts.push(chart);
        Ok(())
    }

    /// The implementations with a cell of `workload` in any run, as empty series.
    fn series_of(&self, workload: &Workload) -> Vec<Series> {
        self.model
            .implementations
            .iter()
            .filter(|i| {
                self.model.runs.iter().any(|r| {
                    r.records
                        .keys()
                        .any(|k| k.workload == workload.name && k.implementation == i.name)
                })
            })
            .map(|i| Series {
                name: i.name.clone(),
                color: i.color,
                dashed: i.peer,
                points: Vec::new(),
            })
            .collect()
    }

    fn chart_id(&self, workload: &Workload, what: &str, run: &Run) -> String {
        if self.several() {
            format!("{}-{what}-{}", slug(&workload.name), slug(&run.label))
        } else {
            format!("{}-{what}", slug(&workload.name))
        }
    }

    fn for_run(&self, title: String, run: &Run) -> String {
        if self.several() {
            format!("{title} — {}", run.label)
        } else {
            title
        }
    }

    fn workload_charts(&mut self, workload: &Workload) -> anyhow::Result<()> {
        let model = self.model;
        let runs = &model.runs;
        let class = match runs.len() {
            1 | 2 => "charts".to_string(),
            _ => "charts runs-3".to_string(),
        };
        // What a chart of `run` lacks: its cells at `timers` (all sizes when `None`) that have
        // no figures.
        let missing_note = |run: &Run, timers: Option<u64>| -> String {
            let missing: Vec<String> = run
                .records
                .values()
                .filter(|r| r.key.workload == workload.name && ns_per_op(r).is_none())
                .filter(|r| timers.is_none_or(|t| r.key.timers == t))
                .map(|r| {
                    format!(
                        "{} at {} ({})",
                        r.key.implementation,
                        count_label(r.key.timers as f64),
                        status_word(r.status)
                    )
                })
                .collect();
            if missing.is_empty() {
                String::new()
            } else {
                format!("No point for {}: see the table.", missing.join(", "))
            }
        };

        // Throughput and memory against size, side by side (one pair per run).
        let all = |f: &dyn Fn(&CellRecord) -> Option<(f64, f64)>| -> Vec<(f64, f64)> {
            runs.iter()
                .flat_map(|r| r.records.values())
                .filter(|r| r.key.workload == workload.name)
                .filter_map(f)
                .collect()
        };
        let speed = |r: &CellRecord| Some((r.key.timers as f64, ns_per_op(r)?));
        let memory = |r: &CellRecord| Some((r.key.timers as f64, bytes_per_timer(r)?));
        let speed_points = all(&speed);
        let memory_points = all(&memory);
        let x_sizes = Axis::fit(
            "timers (log scale)",
            Scale::Log,
            Unit::Count,
            workload.sizes.iter().map(|&t| t as f64),
        );
        let y_speed = Axis::fit(
            "time per operation (log scale)",
            Scale::Log,
            Unit::Nanoseconds,
            speed_points.iter().map(|p| p.1),
        );
        let y_memory = Axis::fit(
            "bytes per pending timer (B)",
            Scale::Linear,
            Unit::Bytes,
            memory_points.iter().map(|p| p.1),
        );
        let _ = writeln!(
            self.out,
            "<h4>Throughput and memory</h4><p class=\"note\">The median time per operation line \
             (log-log) and the peak live heap bytes of the queue over the peak number of pending \
             timers, against the number of timers. One line per implementation; peers dashed with \
             hollow markers.</p><div class=\"{class}\">"
        );
        type Point<'f> = &'f dyn Fn(&CellRecord) -> Option<(f64, f64)>;
        let pairs: Vec<(&str, &Axis, Point)> = vec![
            ("ns-per-op", &y_speed, &speed),
            ("bytes-per-timer", &y_memory, &memory),
        ];
        for (what, y, point) in pairs {
            for run in runs {
                let mut series = self.series_of(workload);
                for s in &mut series {
                    s.points = workload
                        .sizes
                        .iter()
                        .filter_map(|&t| run.cell(&workload.name, t, &s.name).and_then(point))
                        .collect();
                }
                let title = if what == "ns-per-op" {
                    format!("{}: time per operation", workload.name)
                } else {
                    format!("{}: memory per timer", workload.name)
                };
                let caption = missing_note(run, None);
                let chart = Chart {
                    id: self.chart_id(workload, what, run),
                    title: self.for_run(title, run),
                    x: x_sizes.clone(),
                    y: y.clone(),
                    series,
                    markers: true,
                    small: false,
                };
                self.figure(chart, &escape(&caption))?;
            }
        }
        self.out.push_str("</div>\n");

        // Latency percentiles per kind, and for keepalive the advance series, at one size.
        let Some(timers) = detail_size(model, workload) else {
            self.out.push_str(
                "<p class=\"note\">No verified cell has latency data: no latency charts.</p>\n",
            );
            return Ok(());
        };
        let clock = runs
            .iter()
            .flat_map(|r| r.records.values())
            .filter(|r| r.key.workload == workload.name)
            .find_map(|r| r.clock.as_ref());
        let clock_note = clock.map_or(String::new(), |c| {
            format!(
                " Latencies include the cost of reading the clock ({}, about {} per operation).",
                escape(&c.source),
                nanoseconds_label(c.overhead_ns)
            )
        });
        let _ = writeln!(
            self.out,
            "<h4>Latency per operation kind, at {} timers</h4><p class=\"note\">Each operation's \
             latency against its percentile, HdrHistogram style: the percentile axis is \
             logarithmic in 1 / (1 − p), so the tail (99.9%, 99.99%) gets as much room as the \
             median; each line ends at the slowest operation of its kind. Drawn at the size where \
             the most implementations verified.{clock_note}</p><div class=\"{class}\">",
            thousands(timers)
        );
        for kind in &workload.kinds {
            // (run index, implementation, curve)
            type Curve<'n> = (usize, &'n str, Vec<(f64, f64)>);
            let mut curves: Vec<Curve> = Vec::new();
            for (index, run) in runs.iter().enumerate() {
                for implementation in &model.implementations {
                    if let Some(l) = run
                        .cell(&workload.name, timers, &implementation.name)
                        .and_then(|r| latency(r, kind))
                    {
                        let curve = percentile_curve(l).with_context(|| {
                            format!("the {kind} latency of {}", implementation.name)
                        })?;
                        curves.push((index, implementation.name.as_str(), curve));
                    }
                }
            }
            let x = Axis::fit(
                "percentile (log scale of 1 / (1 − p))",
                Scale::Log,
                Unit::Percentile,
                curves.iter().flat_map(|c| c.2.iter().map(|p| p.0)),
            );
            let y = Axis::fit(
                format!("{kind} latency (log scale)"),
                Scale::Log,
                Unit::Nanoseconds,
                curves.iter().flat_map(|c| c.2.iter().map(|p| p.1)),
            );
            for (index, run) in runs.iter().enumerate() {
                let mut series = self.series_of(workload);
                for s in &mut series {
                    if let Some((_, _, curve)) = curves
                        .iter()
                        .find(|(i, name, _)| *i == index && *name == s.name)
                    {
                        s.points = curve.clone();
                    }
                }
                let chart = Chart {
                    id: self.chart_id(workload, &format!("latency-{kind}"), run),
                    title: self.for_run(
                        format!(
                            "{}: {kind} latency, {} timers",
                            workload.name,
                            count_label(timers as f64)
                        ),
                        run,
                    ),
                    x: x.clone(),
                    y: y.clone(),
                    series,
                    markers: false,
                    small: false,
                };
                let caption = missing_note(run, Some(timers));
                self.figure(chart, &escape(&caption))?;
            }
        }
        self.out.push_str("</div>\n");

        if workload.family == "keepalive" {
            let mut windows = 0u64;
            let mut all_points = Vec::new();
            let mut per_run = Vec::new();
            for run in runs {
                let mut series = self.series_of(workload);
                for s in &mut series {
                    if let Some(record) = run.cell(&workload.name, timers, &s.name)
                        && record.status == Status::Ok
                        && let Some(advance) = &record.advance_series
                    {
                        windows = windows.max(advance.window_ops);
                        s.points = advance
                            .max_ns
                            .iter()
                            .enumerate()
                            .filter(|(_, ns)| **ns > 0)
                            .map(|(i, &ns)| ((i as u64 * advance.window_ops) as f64, ns as f64))
                            .collect();
                        all_points.extend(s.points.iter().copied());
                    }
                }
                per_run.push(series);
            }
            let x = Axis::fit(
                "operations into the run (count)",
                Scale::Linear,
                Unit::Count,
                all_points.iter().map(|p| p.0),
            );
            let y = Axis::fit(
                "slowest advance (log scale)",
                Scale::Log,
                Unit::Nanoseconds,
                all_points.iter().map(|p| p.1),
            );
            let missing: Vec<String> = runs
                .iter()
                .map(|run| missing_note(run, Some(timers)))
                .filter(|note| !note.is_empty())
                .collect();
            let _ = writeln!(
                self.out,
                "<h4>Advance latency over the run, at {} timers</h4><p class=\"note\">The run cut \
                 into windows of {} operations; each point is the slowest advance (or tick) in its \
                 window, so cascades (a hierarchical wheel moving a level's slot down) and \
                 overflow-wheel turns show as spikes. One chart per implementation{}, all on the \
                 same axes.{clock_note} {}</p><div class=\"{}\">",
                thousands(timers),
                thousands(windows),
                if self.several() { " and run" } else { "" },
                escape(&missing.join(" ")),
                match runs.len() {
                    1 => "charts small",
                    2 => "charts",
                    _ => "charts runs-3",
                }
            );
            let names: Vec<(String, String)> = per_run[0]
                .iter()
                .map(|s| (s.name.clone(), slug(&s.name)))
                .collect();
            for (index, (name, name_slug)) in names.iter().enumerate() {
                for (run, series) in runs.iter().zip(&per_run) {
                    let chart = Chart {
                        id: self.chart_id(workload, &format!("advance-series-{name_slug}"), run),
                        title: self.for_run(format!("{name}: slowest advance per window"), run),
                        x: x.clone(),
                        y: y.clone(),
                        series: vec![series[index].clone()],
                        markers: false,
                        small: true,
                    };
                    self.figure(chart, "")?;
                }
            }
            self.out.push_str("</div>\n");
        }
        Ok(())
    }

    fn not_verified(&mut self) {
        let model = self.model;
        self.section("not-verified");
        let failures = model.failures();
        if failures.is_empty() {
            self.out.push_str(
                "<p>None: every cell verified against the reference model and was measured.</p>\n</section>\n",
            );
            return;
        }
        let count = |status: Status| failures.iter().filter(|(_, r)| r.status == status).count();
        let _ = writeln!(
            self.out,
            "<p>{} cells have no figures: {} failed (panicked, aborted, killed, or could not run), \
             {} timed out, {} did not verify (their firings differ from the reference model's; a \
             wrong structure's speed is never reported). Each is listed here with its reason.</p>",
            failures.len(),
            count(Status::Failed),
            count(Status::Timeout),
            count(Status::Unverified)
        );
        self.out.push_str("<div class=\"scroll\"><table><tr>");
        if self.several() {
            self.out.push_str("<th>Run</th>");
        }
        self.out.push_str(
            "<th>Workload</th><th class=\"num\">Timers</th><th>Implementation</th><th>Status</th>\
             <th class=\"num\">After</th><th>Reason</th></tr>\n",
        );
        for (run, record) in failures {
            let id = self
                .failure_ids
                .get(&(run.label.clone(), record.key.clone()))
                .cloned()
                .unwrap_or_default();
            let status = status_word(record.status);
            let _ = write!(self.out, "<tr id=\"{id}\">");
            if self.several() {
                let _ = write!(self.out, "<td>{}</td>", escape(&run.label));
            }
            let reason = record.reason.as_deref().unwrap_or("(no reason recorded)");
            let reason_html = if reason.len() > 400 || reason.lines().count() > 6 {
                format!(
                    "<details><summary>{}</summary><pre class=\"reason\">{}</pre></details>",
                    escape(&short_reason(reason, 100)),
                    escape(reason)
                )
            } else {
                format!("<pre class=\"reason\">{}</pre>", escape(reason))
            };
            let _ = writeln!(
                self.out,
                "<td class=\"impl\"><a href=\"#w-{}\">{}</a></td><td class=\"num\">{}</td><td>{}</td>\
                 <td><span class=\"badge {status}\">{status}</span></td><td class=\"num\">{:.1} s</td><td>{reason_html}</td></tr>",
                slug(&record.key.workload),
                escape(&record.key.workload),
                thousands(record.key.timers),
                self.impl_cell(&record.key.implementation),
                record.elapsed_seconds
            );
        }
        self.out.push_str("</table></div>\n</section>\n");
    }

    fn lateness(&mut self) {
        let model = self.model;
        self.section("lateness");
        self.out.push_str(
            "<p>No record carries lateness data: the results schema has no lateness field yet, so \
             there is no lateness histogram to draw. For every cell that verified, lateness is \
             zero by construction: verification compares the whole expiry log (each timer, its \
             firing tick, the order) with the reference model before anything is timed. A \
             structure that is not exact (coarser resolution, early or late firing) fails \
             verification instead, and is listed above with the first differing firing.</p>\n",
        );
        let inexact: Vec<(String, usize, usize, bool)> = model
            .implementations
            .iter()
            .filter_map(|i| {
                let records: Vec<&CellRecord> = model
                    .runs
                    .iter()
                    .flat_map(|r| r.records.values())
                    .filter(|r| r.key.implementation == i.name)
                    .collect();
                let unverified = records
                    .iter()
                    .filter(|r| r.status == Status::Unverified)
                    .count();
                let ok = records.iter().filter(|r| r.status == Status::Ok).count();
                (i.peer || unverified > 0).then(|| (i.name.clone(), ok, unverified, i.peer))
            })
            .collect();
        if !inexact.is_empty() {
            self.out.push_str(
                "<table><tr><th>Implementation</th><th class=\"num\">verified (exact) cells</th>\
                 <th class=\"num\">unverified cells</th><th>lateness data</th></tr>\n",
            );
            for (name, ok, unverified, _) in inexact {
                let _ = writeln!(
                    self.out,
                    "<tr><td>{}</td><td class=\"num\">{ok}</td><td class=\"num\">{unverified}</td><td>none recorded</td></tr>",
                    self.impl_cell(&name)
                );
            }
            self.out.push_str("</table>\n");
        }
        self.out.push_str("</section>\n");
    }

    fn comparison(&mut self) {
        let model = self.model;
        self.section("comparison");
        let base = &model.runs[0];
        let _ = writeln!(
            self.out,
            "<p>Each run against run {} ({}): the geometric mean, over the cells verified in \
             both, of the ratio of their median times per operation. Below 1.00× the run is \
             faster than {}; the number of cells is in brackets.</p>",
            escape(&base.label),
            escape(&base.name),
            escape(&base.label)
        );
        let families = model.families();
        for run in &model.runs[1..] {
            let _ = write!(
                self.out,
                "<h4>{} / {}</h4><div class=\"scroll\"><table><tr><th>Implementation</th><th class=\"num\">all</th>",
                escape(&run.title()),
                escape(&base.title())
            );
            for family in &families {
                let _ = write!(self.out, "<th class=\"num\">{}</th>", escape(family));
            }
            self.out.push_str("</tr>\n");
            for implementation in &model.implementations {
                let _ = write!(
                    self.out,
                    "<tr><td>{}</td>",
                    self.impl_cell(&implementation.name)
                );
                let overall = model.run_ratio(run, &implementation.name, |_| true);
                let mut cells = vec![overall];
                for family in &families {
                    cells.push(model.run_ratio(run, &implementation.name, |w| &w.family == family));
                }
                for cell in cells {
                    match cell {
                        Some((r, n)) => {
                            let _ = write!(
                                self.out,
                                "<td class=\"num {}\">{} <span class=\"note\">({n})</span></td>",
                                ratio_class(r),
                                ratio(r)
                            );
                        }
                        None => self.out.push_str("<td class=\"num na\">–</td>"),
                    }
                }
                self.out.push_str("</tr>\n");
            }
            self.out.push_str("</table></div>\n");
        }
        self.out.push_str("</section>\n");
    }

    fn environment(&mut self) {
        let model = self.model;
        self.section("environment");
        self.out
            .push_str("<div class=\"scroll\"><table><tr><th></th>");
        for run in &model.runs {
            let _ = write!(self.out, "<th>{}</th>", escape(&run.title()));
        }
        self.out.push_str("</tr>\n");
        type Field = fn(&crate::schema::Environment) -> String;
        let fields: &[(&str, Field)] = &[
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
        let _ = write!(self.out, "<tr><th>folder</th>");
        for run in &model.runs {
            let _ = write!(
                self.out,
                "<td><code>{}</code></td>",
                escape(&run.folder.display().to_string())
            );
        }
        self.out.push_str("</tr>\n");
        for (name, field) in fields {
            let _ = write!(self.out, "<tr><th>{}</th>", escape(name));
            for run in &model.runs {
                let value = run
                    .environment
                    .as_ref()
                    .map_or("(no environment.json)".to_string(), field);
                let _ = write!(self.out, "<td>{}</td>", escape(&value));
            }
            self.out.push_str("</tr>\n");
        }
        let _ = write!(self.out, "<tr><th>cells</th>");
        for run in &model.runs {
            let ok = run
                .records
                .values()
                .filter(|r| r.status == Status::Ok)
                .count();
            let _ = write!(self.out, "<td>{} ({ok} verified)</td>", run.records.len());
        }
        self.out.push_str("</tr>\n</table></div>\n");

        for run in &model.runs {
            let _ = write!(
                self.out,
                "<h4>Reproduce {}</h4>",
                if self.several() {
                    format!("run {}", escape(&run.title()))
                } else {
                    "this run".to_string()
                }
            );
            match &run.environment {
                Some(environment) => {
                    let revision = &environment.git_revision;
                    let clean = revision.trim_end_matches("-dirty");
                    let mut script = String::new();
                    let _ = writeln!(script, "git checkout {clean}");
                    let _ = writeln!(script, "cargo build --release");
                    let _ = writeln!(script, "{}", environment.command);
                    let _ = write!(
                        self.out,
                        "<p>The exact command of the run, as it was typed, from a checkout of \
                         its revision{}:</p><pre>{}</pre>",
                        if revision.ends_with("-dirty") {
                            " (the tree had uncommitted changes then, which this does not restore)"
                        } else {
                            ""
                        },
                        escape(&script)
                    );
                }
                None => self.out.push_str(
                    "<p>This folder has no environment.json: the command is unknown.</p>",
                ),
            }
        }
        let folders: Vec<String> = model
            .runs
            .iter()
            .map(|r| shell_word(&r.folder.display().to_string()))
            .collect();
        let _ = write!(
            self.out,
            "<p>This report: <code>timerbench report {}</code></p>\n</section>\n",
            escape(&folders.join(" "))
        );
    }
}

/// A word for a shell command line, quoted when it needs to be.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_formats() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(ns_number(1234.4, 0), "1,234");
        assert_eq!(ns_number(12.345, 1), "12.3");
        assert_eq!(short_reason("first line\nsecond", 100), "first line…");
        assert_eq!(short_reason("abc", 100), "abc");
        assert_eq!(shell_word("results/a b"), "'results/a b'");
        assert_eq!(shell_word("results/x-1"), "results/x-1");
    }
}
