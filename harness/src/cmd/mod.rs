//! The subcommands of `timerbench`, one module each (`cell` is the hidden measuring child
//! that `run` starts); the support they share lives beside this folder in `src/`.

pub mod cell;
pub mod compare;
pub mod generate;
pub mod import;
pub mod list;
pub mod rank;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod threads;
