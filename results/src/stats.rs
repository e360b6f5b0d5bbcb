//! The median, defined once for the workspace: the records' spreads (`schema`), the
//! engines' exchange times and every subcommand's figures (through `timerbench::stats`)
//! call this one function, so a median means the same thing everywhere; and the one
//! rule of a difference beyond noise ([`NOISE_K`], [`MAD_TO_SIGMA`]).

/// The MAD of normally distributed samples times this estimates their standard deviation:
/// a cell's σ is this times the MAD of its samples, which ignores an outlier.
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// How many combined standard deviations apart two medians must be to differ beyond
/// noise: `|a − b| > NOISE_K × √(σa² + σb²)`, the rule of `compare` and of the flips
/// between hosts, so that a difference marked is one the two cells' samples barely
/// overlap on.
pub const NOISE_K: f64 = 3.0;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
