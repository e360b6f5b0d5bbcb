//! `timerbench list`: the implementations and the workload families.

use crate::table::Table;
use std::process::ExitCode;
use timerbench_impls::registry::{IMPLEMENTATIONS, PEERS};
use timerbench_workloads::families::FAMILIES;

/// List the implementations and the workload families with their parameters.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_: &Args) -> anyhow::Result<ExitCode> {
    println!("Implementations (--impl NAME):\n");
    let mut table = Table::new(&["name", "what it is"]);
    for implementation in IMPLEMENTATIONS {
        table.row(vec![
            implementation.name.into(),
            implementation.summary.into(),
        ]);
    }
    println!("{}\n", table.render("  "));
    println!("Peers, outside crates behind adapters (--peers, or --impl NAME):\n");
    let mut peers = Table::new(&["name", "what it is"]);
    for peer in PEERS {
        peers.row(vec![peer.name.into(), peer.summary.into()]);
    }
    println!("{}\n", peers.render("  "));
    println!("Workload families (timerbench gen FAMILY):");
    for family in FAMILIES {
        let info = family.info();
        println!("\n  {}: {}", info.name, info.models);
        println!("    {}", info.shape);
        println!("    --ops: {}; one tick is {}", info.ops, info.tick);
        let mut params = Table::new(&["parameter", "default", "meaning"]);
        for param in info.params {
            params.row(vec![
                param.name.into(),
                param.default.into(),
                param.help.into(),
            ]);
        }
        if !info.params.is_empty() {
            println!("{}", params.render("    "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
