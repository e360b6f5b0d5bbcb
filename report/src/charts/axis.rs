//! The axes of the report's charts: their scale, their range fitted to the data, their
//! tick marks and the labels of those ticks, in the units a reader expects (`1k`,
//! `250 ns`, `99.9%`).
//!
//! Every axis is drawn in linear coordinates of its transformed values (`log10` for a log
//! axis), so the ticks are chosen here, not by plotters: whole decades on log axes, round
//! steps of 1, 2 or 5 on linear ones.

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

/// What an axis's numbers are, for its tick labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A count: `1k`, `10M`.
    Count,
    /// Nanoseconds: `100 ns`, `1 µs`, `10 ms`.
    Nanoseconds,
    /// Bytes, plain.
    Bytes,
    /// `1 / (1 - p)` shown as the percentile `p`: `90%`, `99.9%`.
    Percentile,
    /// Clock ticks, a quantity from zero: `0`, `500`, `1k`.
    Ticks,
}

/// One axis: its label (with the unit), scale, and range in data values.
#[derive(Debug, Clone)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub unit: Unit,
    /// The range, in data values (both positive on a log axis).
    pub range: (f64, f64),
}

impl Axis {
    /// An axis covering `values` (non-positive values are left out on a log axis): whole
    /// decades on a log axis, zero to a round number on a linear one.
    pub fn fit(
        label: impl Into<String>,
        scale: Scale,
        unit: Unit,
        values: impl IntoIterator<Item = f64>,
    ) -> Axis {
        let values: Vec<f64> = values
            .into_iter()
            .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
            .collect();
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range = match scale {
            _ if values.is_empty() => match scale {
                Scale::Log => (1.0, 10.0),
                Scale::Linear => (0.0, 1.0),
            },
            Scale::Log => {
                let mut lo = min.log10().floor();
                let mut hi = max.log10().ceil();
                if unit == Unit::Percentile {
                    lo = 0.0;
                }
                if hi <= lo {
                    // One value on a decade: centre it.
                    if unit == Unit::Percentile {
                        hi = lo + 1.0;
                    } else {
                        lo -= 1.0;
                        hi += 1.0;
                    }
                }
                (10f64.powf(lo), 10f64.powf(hi))
            }
            Scale::Linear => {
                // Quantities (bytes) from zero; positions (operations into a run) from
                // where the data starts.
                let from_zero = unit != Unit::Count || min <= 0.0;
                let step = nice_step((max - if from_zero { min.min(0.0) } else { min }) / 5.0);
                let lo = if from_zero {
                    min.min(0.0)
                } else {
                    (min / step).floor() * step
                };
                let hi = lo + ((max - lo) * 1.01 / step).ceil().max(1.0) * step;
                (lo, hi)
            }
        };
        Axis {
            label: label.into(),
            scale,
            unit,
            range,
        }
    }

    pub(super) fn transform(&self, value: f64) -> Option<f64> {
        match self.scale {
            Scale::Linear => value.is_finite().then_some(value),
            Scale::Log => (value.is_finite() && value > 0.0).then(|| value.log10()),
        }
    }

    fn untransform(&self, value: f64) -> f64 {
        match self.scale {
            Scale::Linear => value,
            Scale::Log => 10f64.powf(value),
        }
    }

    pub(super) fn transformed_range(&self) -> (f64, f64) {
        match self.scale {
            Scale::Linear => self.range,
            Scale::Log => (self.range.0.log10(), self.range.1.log10()),
        }
    }

    /// Labelled ticks and light grid lines, in transformed values.
    pub(super) fn ticks(&self) -> (Vec<f64>, Vec<f64>) {
        let (lo, hi) = self.transformed_range();
        match self.scale {
            Scale::Log => {
                let decades = (hi - lo).round() as i32;
                let first = lo.round() as i32;
                let mut bold = Vec::new();
                let mut light = Vec::new();
                // Every decade; 2 and 5 as well when there are few.
                let every = if decades > 10 { 2 } else { 1 };
                for decade in first..=first + decades {
                    let base = f64::from(decade);
                    if (decade - first) % every == 0 {
                        bold.push(base);
                    }
                    if decade == first + decades {
                        break;
                    }
                    for m in 2..=9 {
                        let t = base + f64::from(m).log10();
                        if decades <= 2 && (m == 2 || m == 5) {
                            bold.push(t);
                        } else if decades <= 6 {
                            light.push(t);
                        }
                    }
                }
                (bold, light)
            }
            Scale::Linear => {
                let step = nice_step((hi - lo) / 5.0);
                let mut bold = Vec::new();
                let mut light = Vec::new();
                let mut k = (lo / step).ceil();
                while k * step <= hi + step * 1e-9 {
                    bold.push(k * step);
                    let half = (k + 0.5) * step;
                    if half < hi {
                        light.push(half);
                    }
                    k += 1.0;
                }
                (bold, light)
            }
        }
    }

    /// A tick label, from a transformed value.
    pub(super) fn label_of(&self, transformed: f64) -> String {
        let value = self.untransform(transformed);
        match self.unit {
            Unit::Count | Unit::Ticks => count_label(value),
            Unit::Nanoseconds => nanoseconds_label(value),
            Unit::Bytes => trim_number(value, 3),
            Unit::Percentile => percentile_label(value),
        }
    }
}

/// A step of 1, 2 or 5 times a power of ten, at least `rough`.
fn nice_step(rough: f64) -> f64 {
    if !(rough.is_finite() && rough > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|step| *step >= rough * 0.999)
        .unwrap_or(10.0 * power)
}

/// `value` to `significant` digits, without trailing zeros.
fn trim_number(value: f64, significant: i32) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (significant - 1 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// `1000` as `1k`, `2500000` as `2.5M`.
pub fn count_label(value: f64) -> String {
    let (scaled, suffix) = if value >= 1e9 {
        (value / 1e9, "G")
    } else if value >= 1e6 {
        (value / 1e6, "M")
    } else if value >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    format!("{}{suffix}", trim_number(scaled, 3))
}

/// Nanoseconds with the unit that keeps the number small: `250 ns`, `1.5 µs`, `3 ms`.
pub fn nanoseconds_label(ns: f64) -> String {
    let (scaled, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    format!("{} {unit}", trim_number(scaled, 3))
}

/// `1 / (1 - p)` as the percentile `p`: `1` is `0%`, `10` is `90%`, `1000` is `99.9%`.
fn percentile_label(x: f64) -> String {
    if x <= 1.0 + 1e-9 {
        return "0%".to_string();
    }
    let percent = 100.0 * (1.0 - 1.0 / x);
    let decimals = (x.log10().ceil() as i32 - 2).max(0) as usize;
    format!("{percent:.decimals$}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(count_label(1000.0), "1k");
        assert_eq!(count_label(10_000_000.0), "10M");
        assert_eq!(count_label(2500.0), "2.5k");
        assert_eq!(count_label(100.0), "100");
        assert_eq!(nanoseconds_label(250.0), "250 ns");
        assert_eq!(nanoseconds_label(1500.0), "1.5 µs");
        assert_eq!(nanoseconds_label(12.34), "12.3 ns");
        assert_eq!(nanoseconds_label(3e6), "3 ms");
        assert_eq!(percentile_label(1.0), "0%");
        assert_eq!(percentile_label(10.0), "90%");
        assert_eq!(percentile_label(100.0), "99%");
        assert_eq!(percentile_label(1000.0), "99.9%");
        assert_eq!(percentile_label(2.0), "50%");
        assert_eq!(percentile_label(1e5), "99.999%");
    }

    #[test]
    fn axes_fit_whole_decades_and_round_numbers() {
        let axis = Axis::fit("t", Scale::Log, Unit::Count, [1000.0, 100_000.0, 1e6]);
        assert_eq!(axis.range, (1e3, 1e6));
        let (bold, _) = axis.ticks();
        assert_eq!(bold.len(), 4);
        let axis = Axis::fit("t", Scale::Log, Unit::Count, [10_000.0]);
        assert_eq!(axis.range, (1e3, 1e5));
        let axis = Axis::fit("b", Scale::Linear, Unit::Bytes, [24.0, 48.0, 71.0]);
        assert_eq!(axis.range.0, 0.0);
        assert!(
            axis.range.1 >= 71.0 && axis.range.1 <= 100.0,
            "{:?}",
            axis.range
        );
        let axis = Axis::fit("p", Scale::Log, Unit::Percentile, [1.0, 3000.0]);
        assert_eq!(axis.range, (1.0, 1e4));
    }
}
