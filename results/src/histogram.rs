//! A latency or lateness histogram as a record holds it: the percentiles read off it and
//! the whole histogram, HdrHistogram V2 in base64 (`FORMAT.md`, *Latency*).
//!
//! Written here, beside the schema, so that the harness that records a histogram and the
//! report's tests that make one both use this code, and no copy of it can drift.

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use std::collections::BTreeMap;

/// The percentiles a record holds, by name, with their quantile; `max` besides.
pub const PERCENTILES: [(&str, f64); 5] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
];

/// The record's percentiles (`p50` to `p99.99`, and `max`) of `histogram`.
pub fn percentiles(histogram: &Histogram<u64>) -> BTreeMap<String, u64> {
    let mut percentiles: BTreeMap<String, u64> = PERCENTILES
        .iter()
        .map(|&(name, quantile)| (name.to_string(), histogram.value_at_quantile(quantile)))
        .collect();
    percentiles.insert("max".to_string(), histogram.max());
    percentiles
}

/// `histogram` as HdrHistogram V2 in base64, the record's `histogram_v2`.
pub fn encode_v2(histogram: &Histogram<u64>) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(histogram, &mut bytes)
        .map_err(|e| anyhow::anyhow!("cannot serialize a histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}
