//! The child's side of the protocol with `timerbench run`: the hidden `cell` subcommand's
//! arguments, the [`CellSpec`] read as JSON from standard input, the answer written as one
//! JSON line on standard output (a [`CellRecord`](crate::schema::CellRecord) for a `full`
//! process, a [`SampleSet`](crate::schema::SampleSet) for a `samples` one), and the exit
//! status the parent reads. Either pins itself to one CPU first and notes the conditions
//! it ran under ([`super::conditions`]).
//!
//! The status says who is to blame. 0: a record was written, also for an implementation
//! that did not verify (that is a result). [`BAD_SPEC`] (2): the parent sent a spec that
//! cannot be used, told in one message on standard error. 1: the cell could not run (an
//! unreadable workload, say), told by the caller of [`run`]. A crash, panic or time-out is
//! the parent's to record from the status.

use super::clock::compare_clocks;
use super::counted::measure_counted;
use super::measure::measure;
use super::samples::measure_samples;
use crate::cell_core::os::tune_allocator;
use crate::schema::{CellMode, CellSpec};
use anyhow::Context;
use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Instant;
use timerbench_impls::Variant;

/// Measure one cell: reads a cell spec (JSON) on standard input, writes one result record
/// (one JSON line) on standard output. Run by `timerbench run`, one process per cell.
#[derive(clap::Args)]
pub struct Args {
    /// Also write on standard error what the record has no field for: the allocations and
    /// minor page faults inside each timed replay, the probe's cost, the allocator's
    /// settings and the time of each pass.
    #[arg(long)]
    diagnostics: bool,
    /// Read no spec: measure an empty latency probe with each clock (the TSC through
    /// quanta, and `std::time::Instant`), print the costs and exit.
    #[arg(long)]
    compare_clocks: bool,
}

/// The exit status of a spec that cannot be used.
pub const BAD_SPEC: u8 = 2;

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    tune_allocator();
    if args.compare_clocks {
        compare_clocks();
        return Ok(ExitCode::SUCCESS);
    }
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read the cell spec from standard input")?;
    let spec = match parse_spec(&input) {
        Ok(spec) => spec,
        Err(why) => {
            eprintln!("timerbench cell: bad cell spec on standard input: {why}");
            return Ok(ExitCode::from(BAD_SPEC));
        }
    };
    if spec.mode == CellMode::Counted {
        // Under Callgrind: the counts are in its out file and do not depend on the CPU or
        // the load, so the process is neither pinned (two count at once, one per core) nor
        // calibrated (a kernel that Valgrind would run twenty times slower for nothing).
        write_line(&measure_counted(&spec)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut conditions = super::conditions::begin(spec.mode.name());
    match spec.mode {
        CellMode::Full => {
            let (mut record, diagnostics) = measure(&spec, started)?;
            if args.diagnostics {
                diagnostics.print();
            }
            super::conditions::end(&mut conditions);
            record.conditions = vec![conditions];
            write_line(&record)?;
        }
        CellMode::Samples => {
            let (mut set, diagnostics) = measure_samples(&spec)?;
            if args.diagnostics {
                diagnostics.print();
            }
            super::conditions::end(&mut conditions);
            set.conditions = Some(conditions);
            write_line(&set)?;
        }
        CellMode::Counted => unreachable!("answered above"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The spec in `input`, or why it cannot be used.
pub fn parse_spec(input: &str) -> Result<CellSpec, String> {
    let spec: CellSpec = serde_json::from_str(input).map_err(|e| format!("{e}"))?;
    Variant::parse(&spec.cell.key.implementation)?;
    if spec.repeat == 0 {
        return Err("`repeat` must be at least 1".to_string());
    }
    Ok(spec)
}

/// Writes `answer` on standard output: one JSON line, the only output the parent reads.
fn write_line(answer: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut line = serde_json::to_string(answer).context("cannot encode the answer")?;
    line.push('\n');
    let mut out = std::io::stdout().lock();
    out.write_all(line.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write the record to standard output")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_core::testing::spec_for;

    #[test]
    fn specs_that_cannot_be_used_say_why() {
        assert!(parse_spec("{").unwrap_err().contains("EOF"));
        let dir = tempfile::tempdir().unwrap();
        let mut spec = spec_for(dir.path(), "hold", 10, "btree");
        spec.cell.key.implementation = "linked-list".into();
        let text = serde_json::to_string(&spec).unwrap();
        assert!(
            parse_spec(&text)
                .unwrap_err()
                .contains("unknown implementation")
        );
        spec.cell.key.implementation = "btree".into();
        spec.repeat = 0;
        let text = serde_json::to_string(&spec).unwrap();
        assert!(parse_spec(&text).unwrap_err().contains("repeat"));
        spec.repeat = 1;
        assert_eq!(parse_spec(&serde_json::to_string(&spec).unwrap()), Ok(spec));
    }
}
