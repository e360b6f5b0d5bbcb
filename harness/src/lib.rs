//! The `timerbench` library: every subcommand, the measuring child and its passes, so that
//! the binary (`src/main.rs`) is a thin entry point and `cargo bench` reuses the same code.
//!
//! Every failure is one clear message on standard error and a non-zero exit: a malformed
//! workload names its file and line, a bad flag names the flag.

pub mod alloc;
pub mod catalog;
pub mod cell_core;
pub mod child_process;
pub mod cmd;
pub mod counts_core;
pub mod engine_protocol;
pub mod engines;
pub mod environment;
pub mod flags;
pub mod folders;
pub mod live_run;
pub mod machine_load;
pub mod run_core;
pub mod runs;
pub mod schema;
pub mod selection;
pub mod stats;
pub mod table;
pub mod threads_run;

use clap::{Parser, Subcommand};
use cmd::{
    ab, cell, combine, compare, correlate, engine, generate, import, layouts, list, live, rank,
    replay, report, reproduce, run, suite_costs, threads,
};
use std::process::ExitCode;

/// The timer-queue workbench: replay workloads through every implementation and verify
/// them, generate the standard workload families, list what is available.
#[derive(Parser)]
#[command(name = "timerbench", version = environment::VERSION, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Replay(replay::Args),
    #[command(name = "gen")]
    Generate(generate::Args),
    List(list::Args),
    Run(run::Args),
    #[command(hide = true)]
    Cell(cell::Args),
    Report(report::Args),
    Compare(compare::Args),
    Rank(rank::Args),
    Correlate(correlate::Args),
    Import(import::Args),
    Reproduce(reproduce::Args),
    Engine(engine::Args),
    Live(live::Args),
    #[command(name = "live-tcp-client", hide = true)]
    LiveTcpClient(live::live_tcp::ClientCommand),
    Ab(ab::Args),
    Combine(combine::Args),
    Layouts(layouts::Args),
    #[command(name = "ab-side", hide = true)]
    AbSide(ab::side::Args),
    Threads(threads::Args),
    #[command(name = "suite-costs", hide = true)]
    SuiteCosts(suite_costs::Args),
}

/// Parses the command line and runs the subcommand: the whole of `timerbench`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Replay(args) => replay::run(&args),
        Command::Generate(args) => generate::run(&args),
        Command::List(args) => list::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Cell(args) => cell::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::Rank(args) => rank::run(&args),
        Command::Correlate(args) => correlate::run(&args),
        Command::Import(args) => import::run(&args),
        Command::Reproduce(args) => reproduce::run(&args),
        Command::Engine(args) => engine::run(&args),
        Command::Live(args) => live::run(&args),
        Command::LiveTcpClient(args) => live::live_tcp::run_client(&args),
        Command::Ab(args) => ab::run(&args),
        Command::Combine(args) => combine::run(&args),
        Command::Layouts(args) => layouts::run(&args),
        Command::AbSide(args) => ab::side::run(&args),
        Command::Threads(args) => threads::run(&args),
        Command::SuiteCosts(args) => suite_costs::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("timerbench: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
