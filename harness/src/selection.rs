//! Which implementations a command runs: `--impl NAME`... and `--peers`, shared by `run`
//! and `replay`.

use timerbench_impls::registry::{self, IMPLEMENTATIONS, PEERS};

/// The implementations to run.
#[derive(clap::Args)]
pub struct Selection {
    /// Only this implementation or peer (repeatable; default: the project's seven, plus
    /// the peers with --peers).
    #[arg(long = "impl", value_name = "NAME", value_parser = implementation_names())]
    implementations: Vec<String>,
    /// Also the peers: outside crates behind adapters (see `timerbench list`).
    #[arg(long)]
    peers: bool,
}

impl Selection {
    /// The chosen names, in registry order when none were named.
    pub fn names(&self) -> Vec<&str> {
        if self.implementations.is_empty() {
            let peers = if self.peers { PEERS } else { &[] };
            IMPLEMENTATIONS
                .iter()
                .chain(peers)
                .map(|i| i.name)
                .collect()
        } else {
            self.implementations.iter().map(String::as_str).collect()
        }
    }
}

fn implementation_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(registry::all().map(|i| i.name))
}
