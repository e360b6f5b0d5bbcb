//! `timerbench threads`: the subcommand's face. The run itself (plan, measure, verify,
//! table and `threads.jsonl`) lives in `crate::threads_run`, beside `cmd/`, because
//! `reproduce` runs it too and no command imports another.

use std::process::ExitCode;

pub use crate::threads_run::Args;

/// Runs `timerbench threads` with its parsed flags.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    crate::threads_run::run(args)
}
