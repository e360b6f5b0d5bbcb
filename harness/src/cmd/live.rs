//! `timerbench live` and its hidden TCP client: the subcommands' face. The run itself
//! (flags, plans, the event loop through the `timerbench-live` crate, tables, records)
//! lives in `crate::live_run`, beside `cmd/`, because `engine --micro lateness` and
//! `reproduce` run it too and no command imports another.

use std::process::ExitCode;

pub use crate::live_run::{Args, live_tcp};

/// Runs `timerbench live` with its parsed flags.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    crate::live_run::run(args)
}
