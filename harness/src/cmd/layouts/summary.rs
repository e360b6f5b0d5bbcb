//! The study's summary, from its layout folders (`layout-N`, each a `timerbench run`
//! folder): `layouts.csv` (one row per cell), `layout-orders.csv` (one row per pair of
//! implementations at a workload and size), `layouts.md` (the cells and the orders that
//! flip, as Markdown), and the same tables on standard output. `results/FORMAT.md`,
//! *Layout studies*, has the columns.

use super::spread::{CellSpread, Order, cell_spreads, flips_with, orders};
use crate::runs::read_cells;
use crate::table::{Format, table};
use anyhow::{Context, anyhow, bail};
use std::path::{Path, PathBuf};
use timerbench_results::{RESULTS_FILE, write_atomically};

/// One row per cell: its figure in each layout and their spread.
pub const CELLS_FILE: &str = "layouts.csv";
/// One row per pair of implementations at a workload and size: the range of B/A.
pub const ORDERS_FILE: &str = "layout-orders.csv";
/// The cell table and the orders that flip, as Markdown.
pub const MARKDOWN_FILE: &str = "layouts.md";

/// The run folder of layout `layout` in the study `study`.
pub fn layout_folder(study: &Path, layout: u32) -> PathBuf {
    study.join(format!("layout-{layout}"))
}

/// The layout folders of `study` that hold a run (`layout-N` with a `results.jsonl`), in
/// order of N.
pub fn layout_folders(study: &Path) -> anyhow::Result<Vec<(u32, PathBuf)>> {
    let entries = std::fs::read_dir(study)
        .with_context(|| format!("cannot read the study folder {}", study.display()))?;
    let mut folders = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot read the study folder {}", study.display()))?
            .path();
        let number = path
            .file_name()
            .and_then(|name| name.to_str()?.strip_prefix("layout-")?.parse::<u32>().ok());
        if let Some(number) = number
            && path.join(RESULTS_FILE).is_file()
        {
            folders.push((number, path));
        }
    }
    folders.sort();
    Ok(folders)
}

/// Reads every layout folder of `study`, writes the summary files into it and prints the
/// tables.
pub fn summarize(study: &Path) -> anyhow::Result<()> {
    let folders = layout_folders(study)?;
    if folders.is_empty() {
        bail!(
            "{}: no layout folder to summarize (layout-N holding a {RESULTS_FILE})",
            study.display()
        );
    }
    let runs = folders
        .iter()
        .map(|(_, folder)| read_cells(folder))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let cells = cell_spreads(&runs);
    if cells.is_empty() {
        bail!(
            "{}: no cell with figures in any of its {} layout folders",
            study.display(),
            folders.len()
        );
    }
    let orders = orders(&cells);
    let numbers: Vec<u32> = folders.iter().map(|(number, _)| *number).collect();
    write_atomically(&study.join(CELLS_FILE), &cells_csv(&cells, &numbers)?)?;
    write_atomically(&study.join(ORDERS_FILE), &orders_csv(&orders)?)?;
    let markdown = format!(
        "# Layout study: {} layouts\n\n{}",
        numbers.len(),
        render(&cells, &orders, &numbers, Format::Markdown)
    );
    write_atomically(&study.join(MARKDOWN_FILE), markdown.as_bytes())?;
    print!("{}", render(&cells, &orders, &numbers, Format::Text));
    eprintln!(
        "timerbench layouts: summary in {}, {} and {}",
        study.join(CELLS_FILE).display(),
        study.join(ORDERS_FILE).display(),
        study.join(MARKDOWN_FILE).display()
    );
    Ok(())
}

/// The cell table, the table of the orders that flip, and what the figures are.
fn render(cells: &[CellSpread], orders: &[Order], numbers: &[u32], format: Format) -> String {
    let layout_columns: Vec<String> = numbers.iter().map(|n| format!(">layout {n}")).collect();
    let mut header: Vec<&str> = vec!["workload", ">timers", "implementation"];
    header.extend(layout_columns.iter().map(String::as_str));
    header.extend([">min", ">max", ">spread", ">CV", "order flips with"]);
    let rows = cells
        .iter()
        .map(|cell| {
            let mut row = vec![
                cell.key.workload.clone(),
                cell.key.timers.to_string(),
                cell.key.implementation.clone(),
            ];
            row.extend(
                cell.figures
                    .iter()
                    .map(|f| f.map_or("-".to_string(), |f| format!("{f:.2}"))),
            );
            row.extend([
                format!("{:.2}", cell.min),
                format!("{:.2}", cell.max),
                percent(cell.spread),
                cell.variation.map_or("-".to_string(), percent),
            ]);
            row.push(flips_with(cell, orders).join(", "));
            row
        })
        .collect();
    let mut text = table(&header, rows, format);
    text.push('\n');
    text.push_str(&flips_section(orders, format));
    text.push_str(
        "\nEach figure is one layout's median ns/op (`combine`'s figure of a run). Spread: \
         max/min − 1; CV: standard deviation over mean. Layout 0 is linked unshuffled, the \
         others with their sections shuffled (study.json). One run per layout: the spread \
         holds the variation between runs as well as between layouts (METHODOLOGY.md, \
         *Layout as a measured spread*).\n",
    );
    text
}

/// The orders that flip across the layouts, or a line saying none does.
fn flips_section(orders: &[Order], format: Format) -> String {
    let flipped: Vec<&Order> = orders.iter().filter(|o| o.flips()).collect();
    if flipped.is_empty() {
        return format!(
            "No order between two implementations flips across the layouts ({} orders \
             compared).\n",
            orders.len()
        );
    }
    let header = [
        "workload",
        ">timers",
        "A",
        "B",
        ">A faster in",
        ">B faster in",
        ">B/A range",
    ];
    let rows = flipped
        .iter()
        .map(|order| {
            vec![
                order.workload.clone(),
                order.timers.to_string(),
                order.a.clone(),
                order.b.clone(),
                format!("{}/{}", order.a_faster, order.layouts),
                format!("{}/{}", order.b_faster, order.layouts),
                format!("{:.3}–{:.3}", order.min_ratio, order.max_ratio),
            ]
        })
        .collect();
    format!(
        "{} of {} orders between two implementations flip across the layouts \
         (layout-sensitive):\n\n{}",
        flipped.len(),
        orders.len(),
        table(&header, rows, format)
    )
}

/// `fraction` as a percentage with one decimal.
fn percent(fraction: f64) -> String {
    format!("{:.1}%", 100.0 * fraction)
}

/// `layouts.csv`: one row per cell.
fn cells_csv(cells: &[CellSpread], numbers: &[u32]) -> anyhow::Result<Vec<u8>> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = ["workload", "timers", "implementation", "layouts"]
        .map(String::from)
        .to_vec();
    header.extend(numbers.iter().map(|n| format!("layout_{n}")));
    header.extend(["min", "max", "spread", "cv"].map(String::from));
    csv.write_record(&header)?;
    for cell in cells {
        let mut row = vec![
            cell.key.workload.clone(),
            cell.key.timers.to_string(),
            cell.key.implementation.clone(),
            cell.layouts().to_string(),
        ];
        row.extend(
            cell.figures
                .iter()
                .map(|f| f.map_or(String::new(), |f| f.to_string())),
        );
        row.extend([
            cell.min.to_string(),
            cell.max.to_string(),
            cell.spread.to_string(),
            cell.variation.map_or(String::new(), |v| v.to_string()),
        ]);
        csv.write_record(&row)?;
    }
    csv.into_inner().map_err(|e| anyhow!("csv: {e}"))
}

/// `layout-orders.csv`: one row per pair of implementations at a workload and size.
fn orders_csv(orders: &[Order]) -> anyhow::Result<Vec<u8>> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "workload",
        "timers",
        "a",
        "b",
        "layouts",
        "a_faster",
        "b_faster",
        "min_ratio",
        "max_ratio",
        "flips",
    ])?;
    for order in orders {
        csv.write_record([
            order.workload.clone(),
            order.timers.to_string(),
            order.a.clone(),
            order.b.clone(),
            order.layouts.to_string(),
            order.a_faster.to_string(),
            order.b_faster.to_string(),
            order.min_ratio.to_string(),
            order.max_ratio.to_string(),
            order.flips().to_string(),
        ])?;
    }
    csv.into_inner().map_err(|e| anyhow!("csv: {e}"))
}
