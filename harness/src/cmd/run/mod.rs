//! `timerbench run`: the subcommand's face. The run itself (the plan of cells, the
//! workload cache, the child processes, the results and the report) lives in
//! `crate::run_core`, beside `cmd/`, because `layouts` and `reproduce` plan and run
//! through it too and no command imports another.

use std::process::ExitCode;

pub use crate::run_core::Args;

/// Runs `timerbench run` with its parsed flags.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    crate::run_core::run(args)
}
