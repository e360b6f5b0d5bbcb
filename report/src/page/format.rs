//! The small pieces every section writes the same way: numbers, ratios, anchors, and the
//! implementation cell with its colour swatch and peer badge.

use crate::figures::thousands;
use crate::model::Model;
use maud::{Markup, html};
use timerbench_results::Status;

/// A word safe in an element id and a file name.
pub fn slug(text: &str) -> String {
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

/// The anchor of a workload's section.
pub fn workload_anchor(workload: &str) -> String {
    format!("w-{}", slug(workload))
}

/// `#1f77b4`.
pub fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Nanoseconds per operation as a plain number: thousands grouped from 1,000 on, else
/// `decimals` after the point.
pub fn ns_number(ns: f64, decimals: usize) -> String {
    if ns >= 1000.0 {
        thousands(ns.round() as u64)
    } else {
        format!("{ns:.decimals$}")
    }
}

/// The decimals that give a time per operation about three significant digits.
pub fn decimals_for(ns: f64) -> usize {
    if ns >= 100.0 {
        0
    } else if ns >= 10.0 {
        1
    } else {
        2
    }
}

/// A relative spread as a percentage with its sign: `±2.4%`, or `±0.04%` below a tenth of
/// a percent, where one decimal would round a real spread to nothing.
pub fn spread_percent(fraction: f64) -> String {
    let percent = 100.0 * fraction;
    if percent > 0.0 && percent < 0.1 {
        format!("±{percent:.2}%")
    } else {
        format!("±{percent:.1}%")
    }
}

/// `1.23×`.
pub fn ratio(r: f64) -> String {
    format!("{r:.2}×")
}

/// The class of a ratio between runs: faster, slower or about the same.
pub fn ratio_class(r: f64) -> &'static str {
    if r < 0.95 {
        "faster"
    } else if r > 1.05 {
        "slower"
    } else {
        "same"
    }
}

/// The first line of a reason, cut to `limit` characters, with `…` when anything was cut.
pub fn short_reason(reason: &str, limit: usize) -> String {
    let line = reason.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut short: String = line.chars().take(limit).collect();
    if short.len() < line.len() || reason.lines().filter(|l| !l.trim().is_empty()).count() > 1 {
        short.push('…');
    }
    short
}

/// A word for a shell command line, quoted when it needs to be.
pub fn shell_word(word: &str) -> String {
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

/// A status as a coloured badge.
pub fn status_badge(status: Status) -> Markup {
    let word = status.as_str();
    html! { span.badge.(word) { (word) } }
}

/// The peer badge of the tables.
pub fn peer_badge() -> Markup {
    html! { span.badge.peer title="an outside crate behind an adapter" { "peer" } }
}

/// An implementation's name with its swatch (its colour and dash, as in the charts) and
/// peer badge.
pub fn implementation(model: &Model, name: &str) -> Markup {
    let (color, style, peer, engine) = model.implementation(name).map_or(
        ((0, 0, 0), crate::style::LineStyle::PLAIN, false, false),
        |i| (i.color, i.style, i.peer, i.engine),
    );
    let swatch = format!(
        "border-top-color:{};border-top-style:{}",
        hex(color),
        style.dash.css()
    );
    html! {
        span.impl {
            span.swatch style=(swatch) {}
            (name)
            @if peer { (peer_badge()) }
            @if engine { (engine_badge()) }
            @if timerbench_results::is_floor(name) { (floor_badge()) }
        }
    }
}

/// The engine badge: another runtime's timers (Go, the JDK, Netty), not a Rust structure.
pub fn engine_badge() -> Markup {
    html! {
        span.badge.engine title=(crate::ENGINE_LEGEND) { "engine" }
    }
}

/// The legend line under a table that shows an engine; with the null engine's exchange
/// (process start to answer, seconds) when the table has it: the protocol's own cost,
/// shown beside the engines' figures, which never include it.
pub fn engine_legend(null_exchange: Option<f64>) -> Markup {
    html! {
        p.note {
            (engine_badge()) " "
            (crate::ENGINE_LEGEND.trim_start_matches("engine: "))
            @if let Some(seconds) = null_exchange {
                ". The protocol's own cost, the null engine's exchange (process start to \
                 answer, never in a figure): " (format!("{:.0} ms", seconds * 1e3))
            }
        }
    }
}

/// The floor's badge: it is a yardstick, never verified.
pub fn floor_badge() -> Markup {
    html! {
        span.badge.floor title="not a queue: an arena slot per start, freed on stop and on \
                                firing, what fires read from a list recorded before; never \
                                verified, never ranked" { "floor, not verified" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_reasons_and_shell_words() {
        assert_eq!(ns_number(1234.4, 0), "1,234");
        assert_eq!(ns_number(12.345, 1), "12.3");
        assert_eq!(decimals_for(5.0), 2);
        assert_eq!(ratio(1.0), "1.00×");
        assert_eq!(spread_percent(0.024), "±2.4%");
        assert_eq!(spread_percent(0.0004), "±0.04%");
        assert_eq!(spread_percent(0.0), "±0.0%");
        assert_eq!(ratio_class(0.5), "faster");
        assert_eq!(short_reason("first line\nsecond", 100), "first line…");
        assert_eq!(short_reason("abc", 100), "abc");
        assert_eq!(short_reason("abcdef", 3), "abc…");
        assert_eq!(shell_word("results/a b"), "'results/a b'");
        assert_eq!(shell_word("results/x-1"), "results/x-1");
        assert_eq!(slug("a b/c"), "a-b-c");
    }
}
