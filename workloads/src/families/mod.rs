//! The standard workload families: generators that write a workload of a known shape,
//! deterministic for a given seed.
//!
//! A family is one file implementing [`Family`] and one line in [`FAMILIES`]. Everything a
//! family needs from the command line arrives in a [`GenSpec`]: the number of timers, an
//! optional number of operations (each family says what it counts), the seed, and
//! `KEY=VALUE` parameters checked against the family's declared [`Param`]s.

use crate::Workload;
use crate::metadata::Metadata;
use crate::op::Op;

mod common;
pub mod increments;

pub mod burst;
pub mod cron;
pub mod hold;
pub mod keepalive;
pub mod purgatory;
pub mod retransmit;
pub mod sparse;
pub mod start_stop;
pub mod up_down;

#[cfg(test)]
mod tests;

/// A parameter a family accepts, with its default.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The key of `--param KEY=VALUE`.
    pub name: &'static str,
    /// The value used when the parameter is not given.
    pub default: &'static str,
    /// What it means, with its unit.
    pub help: &'static str,
}

/// What `timerbench list` says about a family.
#[derive(Debug, Clone, Copy)]
pub struct FamilyInfo {
    /// The family's name on the command line.
    pub name: &'static str,
    /// The real system or classic benchmark it models.
    pub models: &'static str,
    /// Its shape, in a sentence or two.
    pub shape: &'static str,
    /// What `--ops N` counts for this family, and its default.
    pub ops: &'static str,
    /// What one tick means (`@tick`), e.g. `1ms`.
    pub tick: &'static str,
    /// The parameters.
    pub params: &'static [Param],
}

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenSpec {
    /// The family's main size: the number of timers (resident, connections, ...).
    pub timers: u64,
    /// The number of operations or steps, as the family defines it; `None` for its default.
    pub ops: Option<u64>,
    /// The seed of the generator's random numbers.
    pub seed: u64,
    /// `KEY=VALUE` parameters, in command-line order.
    pub params: Vec<(String, String)>,
}

/// Why a workload could not be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenError {
    /// No family has that name.
    #[error("unknown family `{0}` (see `timerbench list`)")]
    UnknownFamily(String),
    /// The family declares no such parameter.
    #[error("family `{family}` has no parameter `{key}` (it has: {known})")]
    UnknownParam {
        /// The family.
        family: &'static str,
        /// The key given.
        key: String,
        /// The keys it has, comma-separated.
        known: String,
    },
    /// A parameter's value does not parse or is out of range.
    #[error("family `{family}`: --param {key}={value}: {why}")]
    BadParam {
        /// The family.
        family: &'static str,
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// The combination of sizes and parameters cannot make a valid workload.
    #[error("family `{family}`: {why}")]
    Invalid {
        /// The family.
        family: &'static str,
        /// What is wrong.
        why: String,
    },
}

/// The parameters of one generation, resolved against the family's declarations.
pub struct Params<'a> {
    info: &'static FamilyInfo,
    given: &'a [(String, String)],
}

impl Params<'_> {
    /// The raw text of `name`: as given, else the default.
    ///
    /// # Panics
    ///
    /// If the family does not declare `name` (a bug in the family, not in the input).
    pub fn text(&self, name: &str) -> &str {
        let declared = self
            .info
            .params
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| {
                panic!(
                    "family {} reads undeclared parameter {name}",
                    self.info.name
                )
            });
        self.given
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map_or(declared.default, |(_, v)| v.as_str())
    }

    /// `name` as a value of type `T`, with a clear error when it does not parse.
    pub fn parse<T: std::str::FromStr>(&self, name: &str) -> Result<T, GenError>
    where
        T::Err: std::fmt::Display,
    {
        let text = self.text(name);
        text.parse()
            .map_err(|e: T::Err| self.bad(name, e.to_string()))
    }

    /// The error for parameter `name` with the reason `why`.
    pub fn bad(&self, name: &str, why: impl Into<String>) -> GenError {
        GenError::BadParam {
            family: self.info.name,
            key: name.to_string(),
            value: self.text(name).to_string(),
            why: why.into(),
        }
    }

    /// The error for an impossible combination.
    pub fn invalid(&self, why: impl Into<String>) -> GenError {
        GenError::Invalid {
            family: self.info.name,
            why: why.into(),
        }
    }
}

/// A workload family.
pub trait Family: Sync {
    /// Its name, what it models, its parameters.
    fn info(&self) -> &'static FamilyInfo;

    /// The operations and any family-specific metadata (`@description` at least). The
    /// common metadata (`@name`, `@tick`, `@seed`, `@generator`) is added by [`generate`].
    fn generate(&self, spec: &GenSpec, params: &Params<'_>) -> Result<Workload, GenError>;
}

/// Bumped whenever a change to any family changes what it generates for a given spec, or
/// a change of the reference model changes a workload's outcome, so that caches of
/// generated workloads and their reference summaries, keyed by the generator command, are
/// invalidated. Revision 2: `t N` logs each firing at the tick that fired it. Revision 3:
/// the digest is of the whole log sorted by `(NOW, DEADLINE, ID)`, also across operations.
pub const GENERATORS_REVISION: u32 = 3;

/// Every family, in `timerbench list` order.
pub const FAMILIES: &[&dyn Family] = &[
    &hold::Hold,
    &up_down::UpDown,
    &keepalive::Keepalive,
    &purgatory::Purgatory,
    &start_stop::StartStop,
    &retransmit::Retransmit,
    &cron::Cron,
    &burst::Burst,
    &sparse::Sparse,
];

/// The family called `name`.
pub fn find(name: &str) -> Option<&'static dyn Family> {
    FAMILIES.iter().copied().find(|f| f.info().name == name)
}

/// Generates a workload of family `name`, with the common metadata filled in.
pub fn generate(name: &str, spec: &GenSpec) -> Result<Workload, GenError> {
    let family = find(name).ok_or_else(|| GenError::UnknownFamily(name.to_string()))?;
    let info = family.info();
    for (key, _) in &spec.params {
        if !info.params.iter().any(|p| p.name == key) {
            return Err(GenError::UnknownParam {
                family: info.name,
                key: key.clone(),
                known: info
                    .params
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    if spec.timers == 0 {
        return Err(GenError::Invalid {
            family: info.name,
            why: "--timers must be at least 1".into(),
        });
    }
    let params = Params {
        info,
        given: &spec.params,
    };
    let generated = family.generate(spec, &params)?;
    let mut metadata = Metadata::new();
    metadata.push("name", workload_name(name, spec));
    for (key, value) in generated.metadata.entries() {
        metadata.push(key, value);
    }
    metadata.set("tick", info.tick);
    metadata.set("seed", spec.seed.to_string());
    metadata.set("generator", command_line(name, spec));
    Ok(Workload {
        metadata,
        ops: generated.ops,
    })
}

/// A name for the workload: the family, its size and its parameters.
pub fn workload_name(family: &str, spec: &GenSpec) -> String {
    let mut name = format!("{family}-{}", spec.timers);
    for (key, value) in &spec.params {
        name.push_str(&format!("-{key}={value}"));
    }
    name
}

/// The `timerbench gen` command that makes this workload again (without `-o`).
pub fn command_line(family: &str, spec: &GenSpec) -> String {
    let mut command = format!("timerbench gen {family} --timers {}", spec.timers);
    if let Some(ops) = spec.ops {
        command.push_str(&format!(" --ops {ops}"));
    }
    command.push_str(&format!(" --seed {}", spec.seed));
    for (key, value) in &spec.params {
        command.push_str(&format!(" --param {key}={value}"));
    }
    command
}

/// Appends operations, keeping the clock the way the model will, so that a family can
/// compute deadlines as absolute ticks and emit relative delays.
pub struct Emitter {
    ops: Vec<Op>,
    now: u64,
}

impl Emitter {
    /// An empty workload at clock 0, with room for `capacity` operations.
    pub fn with_capacity(capacity: usize) -> Self {
        Emitter {
            ops: Vec::with_capacity(capacity),
            now: 0,
        }
    }

    /// The clock after the operations so far, for families that only move it with `a`/`t`
    /// or track `n` themselves (see [`Emitter::next_to`]).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// `s id (deadline - now)`; `deadline` must not be before `now`.
    pub fn start_at(&mut self, id: u64, deadline: u64) {
        self.ops.push(Op::Start {
            id,
            delay: deadline - self.now,
        });
    }

    /// `r id (deadline - now)`.
    pub fn restart_at(&mut self, id: u64, deadline: u64) {
        self.ops.push(Op::Restart {
            id,
            delay: deadline - self.now,
        });
    }

    /// `x id`.
    pub fn stop(&mut self, id: u64) {
        self.ops.push(Op::Stop { id });
    }

    /// `a (to - now)` if `to > now`.
    pub fn advance_to(&mut self, to: u64) {
        if to > self.now {
            self.ops.push(Op::Advance {
                ticks: to - self.now,
            });
            self.now = to;
        }
    }

    /// `t (to - now)` if `to > now`.
    pub fn tick_to(&mut self, to: u64) {
        if to > self.now {
            self.ops.push(Op::Tick {
                ticks: to - self.now,
            });
            self.now = to;
        }
    }

    /// `n`, when the family knows the earliest pending deadline is `deadline`: the clock
    /// moves to it unless it is in the past.
    pub fn next_to(&mut self, deadline: u64) {
        self.ops.push(Op::Next);
        self.now = self.now.max(deadline);
    }

    /// Any operation, verbatim; the family keeps the clock right itself.
    pub fn push(&mut self, op: Op) {
        self.ops.push(op);
    }

    /// The operations.
    pub fn into_ops(self) -> Vec<Op> {
        self.ops
    }
}
