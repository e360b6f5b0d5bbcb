//! The verdict of a duet, read from the bootstrap 95% interval of the median of the
//! per-round ratios B/A ([`crate::stats`] computes both).

/// What an interval of B/A says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// The interval holds 1.0, or lies within 1 ± the margin.
    NoChange,
    /// B is faster: the interval lies below 1 (and not within the margin).
    Faster,
    /// B is slower: the interval lies above 1 (and not within the margin).
    Slower,
}

impl Verdict {
    /// The record's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::NoChange => "no change",
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
        }
    }
}

/// The verdict on `interval` of B/A with the equivalence `margin` (a fraction, 0 for
/// none): no change when the interval holds 1.0 or lies within 1 ± margin, else the side
/// of 1 it lies on.
pub fn verdict(interval: [f64; 2], margin: f64) -> Verdict {
    let [low, high] = interval;
    let holds_one = low <= 1.0 && 1.0 <= high;
    let within_margin = low >= 1.0 - margin && high <= 1.0 + margin;
    if holds_one || within_margin || low.is_nan() || high.is_nan() {
        Verdict::NoChange
    } else if low > 1.0 {
        Verdict::Slower
    } else {
        Verdict::Faster
    }
}

/// The verdict as a sentence: "no change (...)" or "B slower by X% (interval ...)".
pub fn describe(median_ratio: f64, interval: [f64; 2], verdict: Verdict) -> String {
    let percent = |ratio: f64| (ratio - 1.0) * 100.0;
    let range = format!(
        "95% interval {:+.2}% to {:+.2}%",
        percent(interval[0]),
        percent(interval[1])
    );
    match verdict {
        Verdict::NoChange => format!("no change (median {:+.2}%, {range})", percent(median_ratio)),
        Verdict::Slower => format!("B slower by {:.2}% ({range})", percent(median_ratio)),
        Verdict::Faster => format!("B faster by {:.2}% ({range})", -percent(median_ratio)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::tests::ratios;
    use crate::stats::{bootstrap_interval, median};

    #[test]
    fn identical_samples_are_no_change() {
        let interval = bootstrap_interval(&[1.0; 20], 2000, 1);
        assert_eq!(interval, [1.0, 1.0]);
        assert_eq!(verdict(interval, 0.0), Verdict::NoChange);
        let noisy = bootstrap_interval(&ratios(1.0, 20), 2000, 1);
        assert!(noisy[0] < 1.0 && noisy[1] > 1.0, "{noisy:?}");
        assert_eq!(verdict(noisy, 0.0), Verdict::NoChange);
    }

    #[test]
    fn a_three_percent_shift_is_slower_and_its_mirror_faster() {
        let slower = bootstrap_interval(&ratios(1.03, 20), 2000, 1);
        assert!(slower[0] > 1.0, "{slower:?}");
        assert_eq!(verdict(slower, 0.0), Verdict::Slower);
        let faster = bootstrap_interval(&ratios(0.97, 20), 2000, 1);
        assert_eq!(verdict(faster, 0.0), Verdict::Faster);
        let text = describe(median(&ratios(1.03, 20)), slower, Verdict::Slower);
        assert!(text.starts_with("B slower by 3.0"), "{text}");
    }

    #[test]
    fn an_interval_within_the_margin_is_no_change() {
        assert_eq!(verdict([1.002, 1.008], 0.01), Verdict::NoChange);
        assert_eq!(verdict([1.002, 1.008], 0.0), Verdict::Slower);
        assert_eq!(verdict([1.002, 1.02], 0.01), Verdict::Slower);
    }

    #[test]
    fn the_interval_is_reproducible_from_its_seed_and_holds_the_median() {
        let sample = ratios(1.01, 15);
        let first = bootstrap_interval(&sample, 1000, 9);
        assert_eq!(first, bootstrap_interval(&sample, 1000, 9));
        let m = median(&sample);
        assert!(first[0] <= m && m <= first[1], "{first:?} {m}");
    }
}
