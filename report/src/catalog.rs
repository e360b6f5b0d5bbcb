//! What the report says beyond the records: what each implementation is, what each
//! workload family models, and the orders to show them in.
//!
//! The records name implementations and families but do not describe them; the
//! descriptions live in the registries of the implementations and workloads crates. The
//! harness reads those registries and hands them over as a [`Catalog`], so that this crate
//! depends on the results format only, and a folder from another revision still renders
//! (a name the catalog does not know is shown without a description).
//!
//! The catalog knows registry names only. A record names a *variant label*
//! (`hashed-wheel:slots=65536`), so every look-up here goes by the record's base name
//! (`CellRecord::base_implementation`), never by its label.

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

/// An implementation or peer: its registry name, one line on what it is, and the
/// parameters a variant of it may set (`hashed-wheel:slots=65536`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// The registry name: a record's `implementation_base`.
    pub name: String,
    /// What it is.
    pub summary: String,
    /// Its parameters, in declaration order (empty when it takes none).
    pub parameters: Vec<ParamInfo>,
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

/// A parameter, of a workload family or of an implementation, with its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key: of `--param KEY=VALUE` for a family, of `--impl NAME:KEY=VALUE` for an
    /// implementation.
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

    /// The position of a peer in its registry, by registry name (not variant label).
    pub fn peer_index(&self, base: &str) -> Option<usize> {
        self.peers.iter().position(|p| p.name == base)
    }

    /// The implementation or peer called `base` (a registry name, not a variant label).
    pub fn described(&self, base: &str) -> Option<&Described> {
        self.implementations
            .iter()
            .chain(&self.peers)
            .find(|d| d.name == base)
    }
}
