//! The implementations of a report: one per *variant label* the records carry
//! (`hashed-wheel`, `hashed-wheel:slots=65536`, `linux-wheel:levels=8`), each its own line
//! in every table and chart, described by its base (the registry name without
//! parameters), which is what the catalog knows.
//!
//! Order, colour and line style come from the base: the registry's implementations in
//! registry order, each with the style of its place in the registry ([`crate::style`]),
//! so that a structure keeps its look from one report to the next; then the peers and
//! unknown names, continuing the sequence. The variants of one base follow it, ordered by
//! their parameter values (a sweep reads in order), each in a shade of the base's colour
//! with the base's dash: a sweep reads as one family, and no variant is drawn in its
//! base's colour.

use crate::catalog::{Catalog, ParamInfo};
use crate::style::{self, LineStyle};
use std::collections::{BTreeMap, BTreeSet};
use timerbench_results::CellRecord;

/// An implementation as the report shows it: one variant label.
#[derive(Debug, Clone)]
pub struct Implementation {
    /// Its label in the results: the registry name, with the parameters the run set.
    pub name: String,
    /// The registry name without parameters: what the catalog describes.
    pub base: String,
    /// What it is, when the catalog knows its base.
    pub summary: Option<String>,
    /// An outside crate behind an adapter (a record or the catalog says so).
    pub peer: bool,
    /// An engine: another runtime's timers run through the engine protocol, not a Rust
    /// structure (its records carry `engine`).
    pub engine: bool,
    /// Its colour in every chart.
    pub color: (u8, u8, u8),
    /// Its dash and marker in every chart (with the colour, unique in the report).
    pub style: LineStyle,
    /// Every parameter with its value, defaults included (none for a structure without
    /// parameters, and in records older than schema 2).
    pub parameters: BTreeMap<String, u64>,
    /// What the catalog says of the base's parameters: their meaning and defaults.
    pub parameter_info: Vec<ParamInfo>,
    /// `exact`, or `approximate: ` and the declared bound in words; `None` when the
    /// records do not say (schema 1, whose implementations were all exact).
    pub precision: Option<String>,
}

impl Implementation {
    /// Whether it declared itself approximate (fires within a bound, not exactly).
    pub fn is_approximate(&self) -> bool {
        self.precision
            .as_deref()
            .is_some_and(|p| p.starts_with("approximate"))
    }

    /// The declared bound of an approximate implementation, in words.
    pub fn bound(&self) -> Option<&str> {
        let precision = self.precision.as_deref()?;
        let bound = precision.strip_prefix("approximate")?;
        Some(bound.trim_start_matches(':').trim())
    }
}

/// What the records say of one label.
#[derive(Default)]
struct Seen {
    base: String,
    peer: bool,
    engine: bool,
    parameters: BTreeMap<String, u64>,
    precision: Option<String>,
}

/// The implementations of `records`, in report order with their colours (module
/// documentation).
pub fn implementations<'r>(
    records: impl Iterator<Item = &'r CellRecord>,
    catalog: &Catalog,
) -> Vec<Implementation> {
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    for record in records {
        let entry = seen.entry(record.key.implementation.clone()).or_default();
        entry.base = record.base_implementation().to_string();
        entry.peer |= record.peer;
        entry.engine |= record.is_engine();
        if entry.parameters.is_empty() {
            entry.parameters = record.implementation_parameters.clone();
        }
        if entry.precision.is_none() {
            entry.precision = record.precision.clone();
        }
    }
    let bases: BTreeSet<&str> = seen.values().map(|s| s.base.as_str()).collect();
    let peer_base = |base: &str| {
        catalog.peer_index(base).is_some() || seen.values().any(|s| s.base == base && s.peer)
    };

    // (base, its place in the style sequence): the registry's first, then the others.
    let mut ordered: Vec<(&str, usize)> = catalog
        .implementations
        .iter()
        .enumerate()
        .filter(|(_, registered)| bases.contains(registered.name.as_str()))
        .map(|(index, registered)| (registered.name.as_str(), index))
        .collect();
    let mut others: Vec<&str> = bases
        .iter()
        .copied()
        .filter(|base| !ordered.iter().any(|(b, _)| b == base))
        .collect();
    others.sort_by_key(|base| {
        let peer_order = catalog.peer_index(base);
        (peer_base(base), peer_order.is_none(), peer_order, *base)
    });
    for (index, base) in others.into_iter().enumerate() {
        ordered.push((base, catalog.implementations.len() + index));
    }

    let mut implementations = Vec::new();
    for (base, place) in ordered {
        let (color, line_style) = style::nth(place);
        let described = catalog.described(base);
        let mut labels: Vec<(&String, &Seen)> =
            seen.iter().filter(|(_, s)| s.base == base).collect();
        // The base itself first, then its variants by their parameter values.
        let order = |(label, s): &(&String, &Seen)| {
            let values: Vec<u64> = s.parameters.values().copied().collect();
            (label.as_str() != base, values)
        };
        labels.sort_by(|a, b| order(a).cmp(&order(b)).then_with(|| a.0.cmp(b.0)));
        let mut variants = 0;
        for (label, s) in labels {
            let color = if label == base {
                color
            } else {
                variants += 1;
                variant_shade(color, variants)
            };
            implementations.push(Implementation {
                name: label.clone(),
                base: base.to_string(),
                summary: described.map(|d| d.summary.clone()),
                peer: peer_base(base),
                engine: s.engine,
                color,
                style: line_style,
                parameters: s.parameters.clone(),
                parameter_info: described.map_or_else(Vec::new, |d| d.parameters.clone()),
                precision: s.precision.clone(),
            });
        }
    }
    implementations
}

/// The colour of the `variant`-th variant (from 1) of a base drawn in `color`: darker and
/// lighter shades in turn, further from the base as the variants go on. A near-black base
/// has no darker shade to give, so its variants only lighten.
fn variant_shade(color: (u8, u8, u8), variant: usize) -> (u8, u8, u8) {
    // (towards white, how far), in turn.
    const STEPS: &[(bool, f64)] = &[(false, 0.4), (true, 0.4), (false, 0.65), (true, 0.6)];
    const DARK_STEPS: &[(bool, f64)] = &[(true, 0.3), (true, 0.5), (true, 0.65), (true, 0.75)];
    let (r, g, b) = color;
    let luminance = 0.2126 * f64::from(r) + 0.7152 * f64::from(g) + 0.0722 * f64::from(b);
    let steps = if luminance < 60.0 { DARK_STEPS } else { STEPS };
    let index = (variant.max(1) - 1) % steps.len();
    let round = (variant.max(1) - 1) / steps.len();
    let (lighter, amount) = steps[index];
    // Past the last step the shades repeat a little closer to the base, never on it.
    let amount = (amount - 0.08 * round as f64).max(0.15);
    let mix = |channel: u8| {
        let channel = f64::from(channel);
        let target = if lighter { 255.0 } else { 0.0 };
        (channel + (target - channel) * amount).round() as u8
    };
    (mix(r), mix(g), mix(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_are_shades_apart_from_their_base_and_each_other() {
        for &base in style::PALETTE {
            let shades: Vec<(u8, u8, u8)> = (1..=6).map(|v| variant_shade(base, v)).collect();
            for (index, shade) in shades.iter().enumerate() {
                assert_ne!(*shade, base, "variant {} of {base:?}", index + 1);
                assert!(
                    !shades[..index].contains(shade),
                    "variant {} of {base:?} repeats an earlier one",
                    index + 1
                );
            }
        }
        // Black only lightens.
        let (r, g, b) = variant_shade((0, 0, 0), 1);
        assert!(r > 0 && r == g && g == b);
    }
}
