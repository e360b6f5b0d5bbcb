//! The spread of each cell's figure over the layouts, and the orders between two
//! implementations that flip from one layout to another.
//!
//! A layout's figure for a cell is what `combine` reads from a run: the median ns/op over
//! the cell's processes ([`read_cells`](crate::runs::read_cells)). A cell's spread
//! is `max / min − 1` over the layouts that have a figure, its coefficient of variation the
//! sample standard deviation over the mean. An order is the ratio B/A of two
//! implementations at one workload and size, taken within each layout's run (so the two
//! figures share that run's conditions); it flips when A is faster in one layout and B in
//! another, and such a pair is "layout-sensitive": no single build can say which is faster.

use crate::runs::RunCells;
use std::collections::BTreeMap;
use timerbench_results::CellKey;

/// One cell's figure in each layout and how far they spread.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSpread {
    pub key: CellKey,
    /// The median ns/op in each layout, in layout order (`None`: no figure there).
    pub figures: Vec<Option<f64>>,
    pub min: f64,
    pub max: f64,
    /// `max / min − 1`.
    pub spread: f64,
    /// The sample standard deviation over the mean (`None` with one figure).
    pub variation: Option<f64>,
}

impl CellSpread {
    /// The layouts with a figure for the cell.
    pub fn layouts(&self) -> usize {
        self.figures.iter().flatten().count()
    }
}

/// Two implementations at one workload and size: how B/A ranges over the layouts.
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub workload: String,
    pub timers: u64,
    /// The first of the two in name order; ratios are `b / a`.
    pub a: String,
    pub b: String,
    /// Layouts where both have a figure.
    pub layouts: usize,
    /// Layouts where A is faster (B/A above 1).
    pub a_faster: usize,
    /// Layouts where B is faster (B/A below 1).
    pub b_faster: usize,
    pub min_ratio: f64,
    pub max_ratio: f64,
}

impl Order {
    /// Whether each of the two is faster in some layout: the order is layout-sensitive.
    pub fn flips(&self) -> bool {
        self.a_faster > 0 && self.b_faster > 0
    }
}

/// Every cell with a figure in at least one of `layouts` (given in layout order), with
/// its figures and spread, in cell order.
pub fn cell_spreads(layouts: &[RunCells]) -> Vec<CellSpread> {
    let mut figures: BTreeMap<CellKey, Vec<Option<f64>>> = BTreeMap::new();
    for (index, layout) in layouts.iter().enumerate() {
        for (key, &median) in &layout.medians {
            figures
                .entry(key.clone())
                .or_insert_with(|| vec![None; layouts.len()])[index] = Some(median);
        }
    }
    figures
        .into_iter()
        .map(|(key, figures)| spread_of(key, figures))
        .collect()
}

/// The spread of one cell's `figures` (at least one is present).
fn spread_of(key: CellKey, figures: Vec<Option<f64>>) -> CellSpread {
    let values: Vec<f64> = figures.iter().flatten().copied().collect();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variation = (values.len() >= 2).then(|| {
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        variance.sqrt() / mean
    });
    CellSpread {
        key,
        figures,
        min,
        max,
        spread: max / min - 1.0,
        variation,
    }
}

/// Every pair of implementations measured at the same workload and size in at least one
/// common layout, with the range of B/A over the layouts where both have a figure.
pub fn orders(cells: &[CellSpread]) -> Vec<Order> {
    let mut groups: BTreeMap<(&str, u64), Vec<&CellSpread>> = BTreeMap::new();
    for cell in cells {
        groups
            .entry((cell.key.workload.as_str(), cell.key.timers))
            .or_default()
            .push(cell);
    }
    let mut orders = Vec::new();
    for ((workload, timers), group) in groups {
        // `cells` is in key order, so each group is in implementation-name order.
        for (i, a) in group.iter().enumerate() {
            for b in &group[i + 1..] {
                if let Some(order) = order_of(workload, timers, a, b) {
                    orders.push(order);
                }
            }
        }
    }
    orders
}

/// The order of `a` and `b` over their common layouts (`None` when they share none).
fn order_of(workload: &str, timers: u64, a: &CellSpread, b: &CellSpread) -> Option<Order> {
    let ratios: Vec<f64> = a
        .figures
        .iter()
        .zip(&b.figures)
        .filter_map(|(a, b)| Some(b.as_ref()? / a.as_ref()?))
        .collect();
    if ratios.is_empty() {
        return None;
    }
    Some(Order {
        workload: workload.to_string(),
        timers,
        a: a.key.implementation.clone(),
        b: b.key.implementation.clone(),
        layouts: ratios.len(),
        a_faster: ratios.iter().filter(|&&r| r > 1.0).count(),
        b_faster: ratios.iter().filter(|&&r| r < 1.0).count(),
        min_ratio: ratios.iter().copied().fold(f64::INFINITY, f64::min),
        max_ratio: ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The implementations whose order with `cell`'s flips across the layouts.
pub fn flips_with<'o>(cell: &CellSpread, orders: &'o [Order]) -> Vec<&'o str> {
    let key = &cell.key;
    orders
        .iter()
        .filter(|o| o.flips() && o.workload == key.workload && o.timers == key.timers)
        .filter_map(|o| {
            if o.a == key.implementation {
                Some(o.b.as_str())
            } else if o.b == key.implementation {
                Some(o.a.as_str())
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn key(workload: &str, implementation: &str) -> CellKey {
        CellKey {
            workload: workload.to_string(),
            timers: 1000,
            implementation: implementation.to_string(),
        }
    }

    /// A layout's run with these (workload, implementation, median) cells.
    fn layout(cells: &[(&str, &str, f64)]) -> RunCells {
        RunCells {
            folder: PathBuf::from("layout"),
            medians: cells
                .iter()
                .map(|&(w, i, median)| (key(w, i), median))
                .collect(),
            geometry: None,
            without_counts: 0,
        }
    }

    #[test]
    fn a_cells_spread_is_max_over_min_and_its_variation_the_deviation_over_the_mean() {
        let layouts = [
            layout(&[("hold", "heap", 10.0)]),
            layout(&[("hold", "heap", 12.0)]),
            layout(&[("hold", "heap", 11.0)]),
        ];
        let cells = cell_spreads(&layouts);
        assert_eq!(cells.len(), 1);
        let cell = &cells[0];
        assert_eq!((cell.min, cell.max), (10.0, 12.0));
        assert!((cell.spread - 0.2).abs() < 1e-12, "{cell:?}");
        // Mean 11, sample deviation 1.
        assert!(
            (cell.variation.unwrap() - 1.0 / 11.0).abs() < 1e-12,
            "{cell:?}"
        );
    }

    #[test]
    fn a_cell_missing_from_a_layout_is_spread_over_the_others_and_one_figure_has_no_variation() {
        let layouts = [
            layout(&[("hold", "heap", 10.0), ("cron", "heap", 4.0)]),
            layout(&[("hold", "heap", 15.0)]),
        ];
        let cells = cell_spreads(&layouts);
        let cron = cells.iter().find(|c| c.key.workload == "cron").unwrap();
        assert_eq!(cron.figures, vec![Some(4.0), None]);
        assert_eq!(
            (cron.layouts(), cron.spread, cron.variation),
            (1, 0.0, None)
        );
        let hold = cells.iter().find(|c| c.key.workload == "hold").unwrap();
        assert!((hold.spread - 0.5).abs() < 1e-12);
    }

    #[test]
    fn an_order_flips_only_when_each_is_faster_in_some_layout() {
        let layouts = [
            layout(&[
                ("hold", "a", 10.0),
                ("hold", "b", 11.0),
                ("hold", "c", 20.0),
            ]),
            layout(&[
                ("hold", "a", 12.0),
                ("hold", "b", 11.0),
                ("hold", "c", 21.0),
            ]),
            layout(&[
                ("hold", "a", 11.0),
                ("hold", "b", 11.0),
                ("hold", "c", 22.0),
            ]),
        ];
        let cells = cell_spreads(&layouts);
        let orders = orders(&cells);
        assert_eq!(orders.len(), 3, "{orders:?}");
        let ab = &orders[0];
        assert_eq!((ab.a.as_str(), ab.b.as_str()), ("a", "b"));
        // B/A: 1.1, 0.9167, 1.0 (a tie counts for neither).
        assert_eq!((ab.layouts, ab.a_faster, ab.b_faster), (3, 1, 1));
        assert!(ab.flips());
        assert!((ab.min_ratio - 11.0 / 12.0).abs() < 1e-12);
        assert!((ab.max_ratio - 1.1).abs() < 1e-12);
        assert!(orders[1..].iter().all(|o| !o.flips()), "{orders:?}");
        let a = cells.iter().find(|c| c.key.implementation == "a").unwrap();
        assert_eq!(flips_with(a, &orders), vec!["b"]);
        let c = cells.iter().find(|c| c.key.implementation == "c").unwrap();
        assert!(flips_with(c, &orders).is_empty());
    }

    #[test]
    fn orders_pair_only_cells_of_one_workload_and_size_in_common_layouts() {
        let layouts = [
            layout(&[("hold", "a", 10.0), ("cron", "b", 5.0)]),
            layout(&[("hold", "b", 9.0), ("cron", "a", 6.0)]),
        ];
        let orders = orders(&cell_spreads(&layouts));
        // hold: a only in layout 0, b only in layout 1; cron likewise: no common layout.
        assert!(orders.is_empty(), "{orders:?}");
    }
}
