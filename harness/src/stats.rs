//! The statistics every subcommand shares: the median (defined once, in the results
//! crate, so that the records' spreads and the subcommands' figures agree), the bootstrap
//! interval of a median, and Student's t quantile of a mean's interval.
//!
//! The median rather than the mean where a sample holds outliers: a round that an outside
//! burst hit gives one wild value, which moves a mean but not a median. The bootstrap
//! rather than a formula where the distribution is skewed and unknown (a ratio of times).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use statrs::distribution::{ContinuousCDF, StudentsT};

pub use timerbench_results::stats::median;

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

/// The 97.5th percentile of Student's t with `degrees` of freedom: the factor of a
/// two-sided 95% interval.
pub fn t_975(degrees: f64) -> f64 {
    StudentsT::new(0.0, 1.0, degrees)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::NAN)
}

/// The mean of the runs' figures for one cell and its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Combined {
    /// Runs with figures for the cell.
    pub runs: usize,
    pub mean: f64,
    /// The sample standard deviation over the runs (`None` with one run).
    pub deviation: Option<f64>,
    /// Half the width of the 95% interval of the mean (`None` with one run).
    pub half_width: Option<f64>,
}

/// The mean of `values` (one per run) and its Student's t 95% interval.
pub fn combine(values: &[f64]) -> Combined {
    let runs = values.len();
    let mean = values.iter().sum::<f64>() / runs as f64;
    if runs < 2 {
        return Combined {
            runs,
            mean,
            deviation: None,
            half_width: None,
        };
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (runs - 1) as f64;
    let deviation = variance.sqrt();
    Combined {
        runs,
        mean,
        deviation: Some(deviation),
        half_width: Some(t_975(runs as f64 - 1.0) * deviation / (runs as f64).sqrt()),
    }
}

/// The 1-based ranks of `values`, smallest first; tied values share the mean of the ranks
/// they span, as Spearman's coefficient requires.
pub fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end hold one value: each takes the mean of ranks start+1..=end.
        let shared = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = shared;
        }
        start = end;
    }
    ranks
}

/// Spearman's rank correlation of `a` and `b` (paired, same length): the Pearson
/// correlation of their ranks, 1 when both order the items alike, -1 when reversed; NaN
/// with fewer than two items or when either is constant.
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "spearman takes paired values");
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let covariance: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let spread = |r: &[f64], m: f64| r.iter().map(|x| (x - m).powi(2)).sum::<f64>().sqrt();
    covariance / (spread(&ra, ma) * spread(&rb, mb))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Ratios around `centre` with a deterministic spread of about ±1% (the verdict's
    /// tests use them too).
    pub(crate) fn ratios(centre: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| centre * (1.0 + 0.01 * (((i * 7) % 11) as f64 - 5.0) / 5.0))
            .collect()
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
    fn t_widens_a_small_sample_and_tends_to_the_normal() {
        assert!(t_975(2.0) > t_975(10.0) && t_975(10.0) > t_975(1000.0));
        assert!((t_975(1e6) - 1.96).abs() < 0.01);
        assert!(t_975(0.0).is_nan());
    }

    #[test]
    fn ties_share_their_mean_rank() {
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    }

    #[test]
    fn spearman_is_one_for_the_same_order_and_minus_one_reversed() {
        let a = [1.0, 2.0, 3.0, 4.0];
        // Any increasing transform keeps the order, whatever its scale.
        assert!((spearman(&a, &[10.0, 200.0, 3000.0, 40000.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&a, &[4.0, 3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        // One swap of neighbours among four: 1 - 6 x 2 / (4 x 15) = 0.8.
        assert!((spearman(&a, &[1.0, 3.0, 2.0, 4.0]) - 0.8).abs() < 1e-12);
        assert!(spearman(&a, &[5.0; 4]).is_nan());
    }
}
