//! `timerbench`: run the suite (the main job), replay, generate and list timer workloads.
//!
//! The binary is only the entry point and the counting allocator (which must be the
//! binary's global allocator for the memory pass to see the queues' allocations); every
//! subcommand lives in the library.

use std::process::ExitCode;

#[global_allocator]
static GLOBAL: timerbench::alloc::Counting = timerbench::alloc::Counting;

fn main() -> ExitCode {
    timerbench::main()
}
