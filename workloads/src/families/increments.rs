//! The priority-increment distributions of the hold and up/down models (Jones 1986; Tang,
//! Goh and Thng 2005's camel and Pareto), each scaled to a mean of `m` ticks.
//!
//! With `U` uniform on `[0, 1)`:
//!
//! | `dist` | increment | notes |
//! | --- | --- | --- |
//! | `exponential` | `-m ln(1 - U)` | memoryless; Jones's first distribution |
//! | `uniform` | `2m U`, on `[0, 2m]` | |
//! | `narrow` | `m (0.9 + 0.2 U)`, on `[0.9m, 1.1m]` | nearly constant: every timer lands in the same few slots |
//! | `bimodal` | with probability 0.9 uniform on `[0, m]`, else uniform on `[5m, 6m]` | a block of short increments and a rare block ~11× longer (0.9 × 0.5m + 0.1 × 5.5m = m) |
//! | `triangular` | `1.5m sqrt(U)`, on `[0, 1.5m]` | density rising linearly to 1.5m (Jones's form) |
//! | `pareto` | `(m/3) (1 - U)^(-2/3)`: Pareto with shape 1.5, scale m/3 | finite mean, infinite variance (the ladder-queue paper's heavy tail); samples capped at 2^52 ticks |
//! | `camel` | with probability 0.8 uniform on one of two humps `[0.4m, 0.6m]`, `[1.4m, 1.6m]` (0.4 each), else uniform on `[0, 2m]` | two narrow humps on a wide back, symmetric about m |
//!
//! The bimodal and camel constants are this project's (the papers' exact constants could not
//! be checked); they keep the shapes described in the literature with mean exactly `m`.

use super::common::{choice, positive};
use super::{GenError, Params};
use rand::RngExt;
use rand::rngs::SmallRng;

/// The names `dist` accepts, in the order of the table above.
pub const DISTRIBUTIONS: &[&str] = &[
    "exponential",
    "uniform",
    "narrow",
    "bimodal",
    "triangular",
    "pareto",
    "camel",
];

/// The largest mean accepted, in ticks (2^40).
pub const MAX_MEAN: f64 = (1u64 << 40) as f64;

/// Pareto samples are capped here so that one draw cannot run the clock out.
const PARETO_CAP: f64 = (1u64 << 52) as f64;

/// Pareto shape: above 1 for a finite mean, at most 2 for an infinite variance.
const PARETO_SHAPE: f64 = 1.5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Exponential,
    Uniform,
    Narrow,
    Bimodal,
    Triangular,
    Pareto,
    Camel,
}

/// A distribution of increments (in ticks, as a real number) with a given mean.
#[derive(Debug, Clone, Copy)]
pub struct Increments {
    shape: Shape,
    mean: f64,
}

impl Increments {
    /// The distribution named by parameter `dist_key`, with the mean in parameter
    /// `mean_key` (positive, at most [`MAX_MEAN`]).
    pub fn from_params(
        params: &Params<'_>,
        dist_key: &str,
        mean_key: &str,
    ) -> Result<Self, GenError> {
        let shape = match choice(params, dist_key, DISTRIBUTIONS)? {
            "exponential" => Shape::Exponential,
            "uniform" => Shape::Uniform,
            "narrow" => Shape::Narrow,
            "bimodal" => Shape::Bimodal,
            "triangular" => Shape::Triangular,
            "pareto" => Shape::Pareto,
            _ => Shape::Camel,
        };
        let mean = positive(params, mean_key, MAX_MEAN)?;
        Ok(Increments { shape, mean })
    }

    /// The distribution's name.
    pub fn name(&self) -> &'static str {
        DISTRIBUTIONS[self.shape as usize]
    }

    /// The mean, in ticks.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// One increment, in ticks: non-negative and finite.
    pub fn sample(&self, rng: &mut SmallRng) -> f64 {
        let m = self.mean;
        let u: f64 = rng.random();
        match self.shape {
            Shape::Exponential => -m * (1.0 - u).ln(),
            Shape::Uniform => 2.0 * m * u,
            Shape::Narrow => m * (0.9 + 0.2 * u),
            Shape::Bimodal => {
                if u < 0.9 {
                    m * rng.random::<f64>()
                } else {
                    m * (5.0 + rng.random::<f64>())
                }
            }
            Shape::Triangular => 1.5 * m * u.sqrt(),
            Shape::Pareto => {
                let scale = m * (PARETO_SHAPE - 1.0) / PARETO_SHAPE;
                (scale * (1.0 - u).powf(-1.0 / PARETO_SHAPE)).min(PARETO_CAP)
            }
            Shape::Camel => {
                let v: f64 = rng.random();
                if u < 0.4 {
                    m * (0.4 + 0.2 * v)
                } else if u < 0.8 {
                    m * (1.4 + 0.2 * v)
                } else {
                    2.0 * m * v
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_distribution_has_the_stated_mean() {
        let mut rng = SmallRng::seed_from_u64(7);
        for (index, name) in DISTRIBUTIONS.iter().enumerate() {
            let shape = [
                Shape::Exponential,
                Shape::Uniform,
                Shape::Narrow,
                Shape::Bimodal,
                Shape::Triangular,
                Shape::Pareto,
                Shape::Camel,
            ][index];
            let increments = Increments {
                shape,
                mean: 1000.0,
            };
            assert_eq!(increments.name(), *name);
            let n = 200_000;
            let sum: f64 = (0..n).map(|_| increments.sample(&mut rng)).sum();
            let mean = sum / n as f64;
            // Pareto's infinite variance makes its sample mean converge slowly.
            let tolerance = if shape == Shape::Pareto { 0.05 } else { 0.01 };
            assert!(
                (mean / 1000.0 - 1.0).abs() < tolerance,
                "{name}: sample mean {mean}"
            );
        }
    }
}
