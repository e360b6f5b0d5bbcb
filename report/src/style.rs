//! How each line of a chart is told apart: a colour from a colour-blind-safe palette
//! (Okabe and Ito's, without its yellow, which does not show on white) and, every time the
//! palette comes round again, another dash pattern and marker. The `index`-th style is the
//! same in every chart and table swatch of a report, and no two of the first
//! `PALETTE.len() * DASHES.len()` share colour and dash.

/// Okabe and Ito's colours ("Color Universal Design"), yellow left out: told apart by
/// readers with any common colour-vision deficiency.
pub(crate) const PALETTE: &[(u8, u8, u8)] = &[
    (0x00, 0x72, 0xb2), // blue
    (0xe6, 0x9f, 0x00), // orange
    (0x00, 0x9e, 0x73), // bluish green
    (0xd5, 0x5e, 0x00), // vermillion
    (0xcc, 0x79, 0xa7), // reddish purple
    (0x56, 0xb4, 0xe9), // sky blue
    (0x00, 0x00, 0x00), // black
];

/// A line's dash pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
    LongDashed,
}

/// The dash patterns, in turn each time the palette comes round.
pub(crate) const DASHES: &[Dash] = &[Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::LongDashed];

impl Dash {
    /// Its name: the page's `data-series` attributes and CSS classes.
    pub fn name(self) -> &'static str {
        match self {
            Dash::Solid => "solid",
            Dash::Dashed => "dashed",
            Dash::Dotted => "dotted",
            Dash::LongDashed => "long-dashed",
        }
    }

    /// The CSS border style of a swatch drawn with it.
    pub fn css(self) -> &'static str {
        match self {
            Dash::Solid => "solid",
            Dash::Dashed => "dashed",
            Dash::Dotted => "dotted",
            Dash::LongDashed => "double",
        }
    }

    /// Dash and gap lengths in pixels (none for a solid line).
    pub fn pattern(self) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Dashed => Some((7, 5)),
            Dash::Dotted => Some((2, 4)),
            Dash::LongDashed => Some((16, 5)),
        }
    }
}

/// A point's marker, in charts with markers; it changes with the dash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Cross,
}

/// A line's look beside its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LineStyle {
    pub dash: Dash,
    pub marker: Marker,
}

impl LineStyle {
    /// The plain line: solid, circles.
    pub const PLAIN: LineStyle = LineStyle {
        dash: Dash::Solid,
        marker: Marker::Circle,
    };
}

/// The `index`-th colour and style: the palette's colours in turn, then again with the next
/// dash and marker.
pub(crate) fn nth(index: usize) -> ((u8, u8, u8), LineStyle) {
    const MARKERS: &[Marker] = &[
        Marker::Circle,
        Marker::Square,
        Marker::Triangle,
        Marker::Cross,
    ];
    let round = index / PALETTE.len();
    let style = LineStyle {
        dash: DASHES[round % DASHES.len()],
        marker: MARKERS[round % MARKERS.len()],
    };
    (PALETTE[index % PALETTE.len()], style)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_of_the_first_styles_share_colour_and_dash() {
        let count = PALETTE.len() * DASHES.len();
        let looks: Vec<_> = (0..count)
            .map(|i| {
                let (color, style) = nth(i);
                (color, style.dash)
            })
            .collect();
        for (index, look) in looks.iter().enumerate() {
            assert!(!looks[..index].contains(look), "style {index} repeats");
        }
    }
}
