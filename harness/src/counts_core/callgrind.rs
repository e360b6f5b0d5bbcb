//! Reading a Callgrind out file: its `events:` line names the columns, its `totals:` line
//! (or `summary:`, the older name) holds the sum of each over what was collected. Only
//! those two lines are read; the per-function cost lines are not needed, since collection
//! was on only inside the counted function.

use timerbench_results::counts::CountTotals;

/// The totals of a Callgrind out file's `text`; `path` names it in an error. An event the
/// file does not list counts 0 (a tool run without branch simulation has no `Bc`), but a
/// file without `events:` or totals, or with a total that is not a number, is refused.
pub fn parse_totals(text: &str, path: &str) -> Result<CountTotals, String> {
    let mut events: Option<(usize, Vec<&str>)> = None;
    let mut totals: Option<(usize, Vec<&str>)> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if let Some(rest) = line.strip_prefix("events:") {
            events = Some((number, rest.split_whitespace().collect()));
        } else if let Some(rest) = line
            .strip_prefix("totals:")
            .or_else(|| line.strip_prefix("summary:"))
        {
            // `totals:` wins over `summary:` when both are there: they agree by definition.
            if totals.is_none() || line.starts_with("totals:") {
                totals = Some((number, rest.split_whitespace().collect()));
            }
        }
    }
    let (_, names) = events.ok_or_else(|| format!("{path}: no `events:` line"))?;
    let (number, values) =
        totals.ok_or_else(|| format!("{path}: no `totals:` or `summary:` line"))?;
    if values.len() > names.len() {
        return Err(format!(
            "{path} line {number}: {} totals for {} events",
            values.len(),
            names.len()
        ));
    }
    let mut result = CountTotals::default();
    // Callgrind leaves out trailing zeros: a missing value is 0.
    for (name, value) in names
        .iter()
        .zip(values.iter().copied().chain(std::iter::repeat("0")))
    {
        let value: u64 = value.parse().map_err(|_| {
            format!("{path} line {number}: the total of {name} is `{value}`, not a count")
        })?;
        let field = match *name {
            "Ir" => &mut result.instructions,
            "Dr" => &mut result.data_reads,
            "Dw" => &mut result.data_writes,
            "I1mr" => &mut result.i1_misses,
            "D1mr" => &mut result.d1_read_misses,
            "D1mw" => &mut result.d1_write_misses,
            "ILmr" => &mut result.ll_instruction_misses,
            "DLmr" => &mut result.ll_read_misses,
            "DLmw" => &mut result.ll_write_misses,
            "Bc" => &mut result.conditional_branches,
            "Bcm" => &mut result.conditional_mispredicts,
            "Bi" => &mut result.indirect_branches,
            "Bim" => &mut result.indirect_mispredicts,
            // Events of other options (`--collect-systime`, ...): not part of the record.
            _ => continue,
        };
        *field = value;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head and tail of a real out file's shape, with small numbers.
    const OUT: &str = "\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  timerbench cell
part: 1

positions: line
events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim
summary: 1000 300 100 10 30 10 2 5 3 200 20 10 1

fn=(1) timerbench::cell_core::timed::timerbench_counted_replay
0 1000 300 100 10 30 10 2 5 3 200 20 10 1

totals: 1000 300 100 10 30 10 2 5 3 200 20 10 1
";

    #[test]
    fn the_totals_line_fills_every_event_by_its_name() {
        let totals = parse_totals(OUT, "out").unwrap();
        assert_eq!(totals.instructions, 1000);
        assert_eq!(totals.data_writes, 100);
        assert_eq!(totals.ll_read_misses, 5);
        assert_eq!(totals.conditional_mispredicts, 20);
        assert_eq!(totals.indirect_mispredicts, 1);
        assert_eq!(totals.est_cycles(), 1350 + 5 * 40 + 35 * 10);
    }

    #[test]
    fn trailing_zeros_left_out_read_as_zero() {
        let text = "events: Ir Dr Bc Bcm\ntotals: 77 5\n";
        let totals = parse_totals(text, "out").unwrap();
        assert_eq!((totals.instructions, totals.data_reads), (77, 5));
        assert_eq!(totals.conditional_branches, 0);
    }

    #[test]
    fn a_malformed_file_is_refused_naming_the_file_and_line() {
        let no_events = parse_totals("totals: 1 2\n", "a.out").unwrap_err();
        assert_eq!(no_events, "a.out: no `events:` line");
        let no_totals = parse_totals("events: Ir\n", "a.out").unwrap_err();
        assert!(no_totals.contains("no `totals:`"), "{no_totals}");
        let word = parse_totals("events: Ir Dr\n\ntotals: 12 x\n", "a.out").unwrap_err();
        assert_eq!(word, "a.out line 3: the total of Dr is `x`, not a count");
        let many = parse_totals("events: Ir\ntotals: 1 2\n", "a.out").unwrap_err();
        assert!(many.contains("2 totals for 1 events"), "{many}");
    }
}
