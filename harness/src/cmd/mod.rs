//! The subcommands of `timerbench`, one module each (`cell` is the hidden measuring child
//! that `run` starts); the support they share lives beside this folder in `src/`.

pub mod ab;
pub mod cell;
pub mod combine;
pub mod compare;
pub mod correlate;
pub mod engine;
pub mod generate;
pub mod import;
pub mod layouts;
pub mod list;
pub mod live;
pub mod rank;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod suite_costs;
pub mod threads;
