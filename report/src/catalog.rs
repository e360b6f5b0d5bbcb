//! What the report says beyond the records: what each implementation is, what each
//! workload family models, and the orders to show them in.
//!
//! The records name implementations and families but do not describe them; the
//! descriptions live in the registries of the implementations and workloads crates. The
//! harness reads those registries and hands them over as a [`Catalog`], so that this crate
//! depends on the results format only, and a folder from another revision still renders
//! (a name the catalog does not know is shown without a description).

/// The descriptions and orders the report uses, from the registries of this build.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The project's own implementations, in registry order: the report's order and
    /// colours.
    pub implementations: Vec<Described>,
    /// The outside peers (crates behind adapters), in registry order.
    pub peers: Vec<Described>,
    /// The workload families.
    pub families: Vec<FamilyInfo>,
    /// The standard suite's workloads, in suite order: the order of the report's workload
    /// sections (others follow by name).
    pub suite_order: Vec<String>,
}

/// An implementation or peer: its registry name and one line on what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// The name used in results.
    pub name: String,
    /// What it is.
    pub summary: String,
}

/// A workload family, as `timerbench list` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyInfo {
    /// The family's name, as records carry it.
    pub name: String,
    /// The real system or classic benchmark it models.
    pub models: String,
    /// Its shape, in a sentence or two.
    pub shape: String,
    /// What one tick means, e.g. `1ms`.
    pub tick: String,
    /// Its parameters, in declaration order.
    pub params: Vec<ParamInfo>,
}

/// A family parameter with its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key of `--param KEY=VALUE`.
    pub name: String,
    /// The value used when the parameter is not given.
    pub default: String,
    /// What it means, with its unit.
    pub help: String,
}

impl Catalog {
    /// The family called `name`.
    pub fn family(&self, name: &str) -> Option<&FamilyInfo> {
        self.families.iter().find(|f| f.name == name)
    }

    /// The position of a peer in its registry.
    pub fn peer_index(&self, name: &str) -> Option<usize> {
        self.peers.iter().position(|p| p.name == name)
    }
}
