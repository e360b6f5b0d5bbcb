//! Flag values that several subcommands read the same way, so that `1ms` means one thing
//! to `live`, `ab` and `reproduce`'s experiments.

/// A duration with its unit (`ns`, `us`, `ms`, `s`), in nanoseconds; above 0.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("`{text}`: give a unit: ns, us, ms or s (e.g. 1ms)"))?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}`: a whole number then a unit, e.g. 250us"))?;
    let scale = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(format!("`{text}`: the unit is ns, us, ms or s")),
    };
    match number.checked_mul(scale) {
        Some(0) => Err(format!("`{text}`: must be above 0")),
        Some(ns) => Ok(ns),
        None => Err(format!("`{text}`: too long")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations_need_a_unit_and_a_positive_value() {
        assert_eq!(parse_duration("1ms"), Ok(1_000_000));
        assert_eq!(parse_duration("250us"), Ok(250_000));
        assert_eq!(parse_duration("2s"), Ok(2_000_000_000));
        assert!(parse_duration("5").unwrap_err().contains("unit"));
        assert!(parse_duration("0ms").unwrap_err().contains("above 0"));
        assert!(
            parse_duration("3h")
                .unwrap_err()
                .contains("ns, us, ms or s")
        );
        assert!(parse_duration("ms").is_err());
    }
}
