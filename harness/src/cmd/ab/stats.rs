//! The statistics of a duet: the median of the per-round ratios B/A, its bootstrap 95%
//! confidence interval (percentile method), and the verdict read from that interval.
//!
//! The median rather than the mean: a round that an outside burst hit on one side only
//! gives one wild ratio, which moves a mean but not a median. The bootstrap rather than a
//! formula: the distribution of a ratio of times is skewed and unknown.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The bootstrap 95% interval of the median of `ratios`: `resamples` resamples with
/// replacement from a generator seeded with `seed` (so a record can be recomputed), the
/// 2.5th and 97.5th percentiles of their medians.
pub fn bootstrap_interval(ratios: &[f64], resamples: u32, seed: u64) -> [f64; 2] {
    if ratios.is_empty() || resamples == 0 {
        return [f64::NAN, f64::NAN];
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut resample = vec![0.0; ratios.len()];
    let mut medians: Vec<f64> = (0..resamples)
        .map(|_| {
            for slot in resample.iter_mut() {
                *slot = ratios[rng.random_range(0..ratios.len())];
            }
            median(&resample)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    [percentile(&medians, 0.025), percentile(&medians, 0.975)]
}

/// The bootstrap 95% interval of the median of the pooled ratios of `groups` (one group
/// per pair of processes), at two levels as Kalibera and Jones resample a hierarchy: each
/// resample draws as many groups as there are, with replacement, then within each drawn
/// group as many of its ratios, with replacement. A difference that holds for a pair's
/// whole life then widens the interval as much as it moves the median. One group is
/// [`bootstrap_interval`] itself.
pub fn bootstrap_interval_grouped(groups: &[Vec<f64>], resamples: u32, seed: u64) -> [f64; 2] {
    if groups.len() <= 1 {
        return bootstrap_interval(groups.first().map_or(&[][..], |g| g), resamples, seed);
    }
    if groups.iter().any(|g| g.is_empty()) || resamples == 0 {
        return [f64::NAN, f64::NAN];
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut resample = Vec::with_capacity(groups.iter().map(Vec::len).sum());
    let mut medians: Vec<f64> = (0..resamples)
        .map(|_| {
            resample.clear();
            for _ in 0..groups.len() {
                let group = &groups[rng.random_range(0..groups.len())];
                for _ in 0..group.len() {
                    resample.push(group[rng.random_range(0..group.len())]);
                }
            }
            median(&resample)
        })
        .collect();
    medians.sort_by(f64::total_cmp);
    [percentile(&medians, 0.025), percentile(&medians, 0.975)]
}

/// The `q` quantile of `sorted` (nearest rank).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

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

    /// Ratios around `centre` with a deterministic spread of about ±1%.
    fn ratios(centre: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| centre * (1.0 + 0.01 * (((i * 7) % 11) as f64 - 5.0) / 5.0))
            .collect()
    }

    #[test]
    fn the_median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

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
    fn pairs_that_disagree_widen_the_interval_and_one_pair_is_the_plain_bootstrap() {
        // Within each pair the rounds agree tightly; the pairs sit at 0.98 and 1.02.
        let low = ratios(0.98, 40);
        let high = ratios(1.02, 40);
        let pooled = [low.clone(), high.clone()].concat();
        let plain = bootstrap_interval(&pooled, 2000, 7);
        let grouped = bootstrap_interval_grouped(&[low.clone(), high], 2000, 7);
        // Pooled, the median moves only between the pairs' inner edges; by pairs, a
        // resample can be all one pair, so the interval reaches both pairs' levels.
        assert!(plain[0] > 0.982 && plain[1] < 1.018, "{plain:?}");
        assert!(grouped[0] < 0.982 && grouped[1] > 1.018, "{grouped:?}");
        assert_eq!(
            bootstrap_interval_grouped(std::slice::from_ref(&low), 2000, 7),
            bootstrap_interval(&low, 2000, 7)
        );
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
