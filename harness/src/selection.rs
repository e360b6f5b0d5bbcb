//! Which implementations a command runs: `--impl NAME[:key=value,...]`... and `--peers`,
//! shared by `run` and `replay`.

use timerbench_impls::Variant;
use timerbench_impls::registry::{IMPLEMENTATIONS, PEERS};

/// The implementations to run.
#[derive(clap::Args, Clone, PartialEq)]
pub struct Selection {
    /// Only this implementation or peer, optionally with parameters:
    /// `hashed-wheel:slots=65536` (repeatable, so a sweep is several --impl; default: the
    /// project's implementations, plus the peers with --peers; parameters in `timerbench
    /// list`).
    #[arg(long = "impl", value_name = "NAME[:KEY=VALUE,...]", value_parser = parse_variant)]
    implementations: Vec<Variant>,
    /// Also the peers: outside crates behind adapters (see `timerbench list`).
    #[arg(long)]
    peers: bool,
}

impl Selection {
    /// The chosen variants: those named, else the suite's (`suite`, when it names any;
    /// plus the peers with --peers), else the registry's in order with their defaults.
    pub fn variants_or(&self, suite: Vec<Variant>) -> Vec<Variant> {
        if self.implementations.is_empty() && !suite.is_empty() {
            let peers = if self.peers { PEERS } else { &[] };
            return suite
                .into_iter()
                .chain(peers.iter().map(Variant::of))
                .collect();
        }
        self.variants()
    }

    /// Whether any implementation was named with --impl.
    pub fn names_any(&self) -> bool {
        !self.implementations.is_empty()
    }

    /// Whether `variant` was named with --impl (not only chosen by default).
    pub fn named(&self, variant: &Variant) -> bool {
        self.implementations
            .iter()
            .any(|named| named.label() == variant.label())
    }

    /// The chosen variants, in registry order (with their defaults) when none were named.
    pub fn variants(&self) -> Vec<Variant> {
        if self.implementations.is_empty() {
            let peers = if self.peers { PEERS } else { &[] };
            IMPLEMENTATIONS
                .iter()
                .chain(peers)
                .map(Variant::of)
                .collect()
        } else {
            self.implementations.clone()
        }
    }
}

/// `--impl`'s parser: clap prints the error after `invalid value '...' for '--impl'`.
fn parse_variant(text: &str) -> Result<Variant, String> {
    if timerbench_impls::registry::is_floor(text.split(':').next().unwrap_or(text)) {
        return Err(
            "the floor is not an implementation: it is never verified, so \
                    `timerbench run --floor` adds it beside the others"
                .into(),
        );
    }
    Variant::parse(text)
}
