//! The experiments of `timerbench reproduce` as data: `harness/experiments.toml` (compiled
//! in), or another file given with `--experiments`. Each experiment names a published claim,
//! the cells that test it (workloads, sizes, implementations), the record field it reads,
//! the figure it computes and the rule that turns the figure into a verdict; nothing here
//! is a verdict or a measured number. The file's fields are documented in
//! `harness/EXPERIMENTS.md`.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use timerbench_impls::Variant;
use timerbench_workloads::import::Moves;
use timerbench_workloads::suite::WorkloadDefinition;

/// The experiments file compiled into the binary.
pub const BUILT_IN: &str = include_str!("../../../experiments.toml");
/// Its name in messages.
pub const BUILT_IN_PATH: &str = "harness/experiments.toml";

/// The file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentsFile {
    #[serde(rename = "experiment")]
    pub experiments: Vec<Experiment>,
}

/// One experiment.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Short, unique, for `--only` and the folder of its run.
    pub id: String,
    pub title: String,
    /// The claim in words.
    pub claim: String,
    /// Where it was published.
    pub source: String,
    /// The published figures, as data.
    #[serde(default)]
    pub published: Vec<timerbench_results::PublishedFigure>,
    /// What is measured, in words.
    pub measured: String,
    /// Standard-suite workload names, or workloads defined here (name, family, params,
    /// ops) as the suite file defines them.
    #[serde(default)]
    pub workloads: Vec<WorkloadRef>,
    /// Recorded traces, imported and measured as workload files (`run --file`) instead of
    /// generated workloads: their size is their own, so `sizes` do not apply.
    #[serde(default)]
    pub traces: Vec<Trace>,
    /// Sizes (`--timers`) of the full reproduction.
    #[serde(default)]
    pub sizes: Vec<u64>,
    /// Sizes of `--quick`.
    #[serde(default)]
    pub quick_sizes: Vec<u64>,
    /// `--impl` strings.
    pub implementations: Vec<String>,
    /// Engines run beside the implementations (`timerbench run --engine`): another
    /// runtime's own timers (docs/engines.md), named by a ratio as an implementation is.
    #[serde(default)]
    pub engines: Vec<String>,
    /// The record field each cell gives: a dotted path into the record, or a derived
    /// field (see [`super::figures::DERIVED_FIELDS`]).
    pub field: String,
    /// Other fields read from each cell and shown in the finding's `measured` text, never
    /// judged: so that a figure the rule leaves aside (the raw lateness beside the one
    /// without Linux's rounding tick) stays in sight.
    #[serde(default)]
    pub shown: Vec<String>,
    pub figure: FigureSpec,
    #[serde(default)]
    pub rule: Rule,
    /// Where its records come from: `timerbench run`'s cells (the default), or a live or
    /// threads run ([`super::sources`]).
    #[serde(default)]
    pub kind: super::sources::SourceKind,
    /// The live runs of a `kind = "live"` experiment.
    pub live: Option<super::live_source::LiveSource>,
    /// The threads runs of a `kind = "threads"` experiment.
    pub threads: Option<super::threads_source::ThreadsSource>,
    /// The timers of a `kind = "lateness"` experiment (an engine beside its port, live).
    pub lateness: Option<super::lateness_source::LatenessSource>,
    /// The servers of a `kind = "runtimes"` experiment (the runtimes beside timerbench's
    /// loop).
    pub runtimes: Option<super::runtimes_source::RuntimesSource>,
}

/// A recorded trace, imported by `timerbench import ftrace PATH --timers TIMERS` into a
/// workload file named `name` (its records' workload).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    pub name: String,
    /// The trace, relative to where `timerbench reproduce` runs (the repository root).
    pub path: String,
    /// `--timers` of the import: `wheel`, `hrtimer` or `all`.
    pub timers: String,
    /// `--moves` of the import: `advance` (the default) or `tick`; see [`Trace::moves`].
    #[serde(default, rename = "moves")]
    pub moves_name: Option<String>,
}

impl Trace {
    /// Its `--moves`, checked when the file was read.
    pub fn moves(&self) -> Moves {
        self.moves_name
            .as_deref()
            .and_then(Moves::named)
            .unwrap_or_default()
    }
}

/// A workload of an experiment.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum WorkloadRef {
    /// A workload of `workloads/suites/standard.toml`, by name.
    Suite(String),
    /// A workload defined in the experiment.
    Defined(WorkloadDefinition),
}

/// The figure computed from the cells' values.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FigureSpec {
    /// Each cell's value as it is.
    Value,
    /// Per workload and size, the numerator implementation's value over the
    /// denominator's.
    Ratio {
        numerator: String,
        denominator: String,
    },
    /// Per workload and implementation, the least-squares slope of ln(value) over
    /// ln(size): 0 for a constant cost, 1 for a linear one.
    Slope,
    /// Per workload and size, the minuend implementation's value minus the subtrahend's:
    /// what one adds to the other (a lateness on top of another's).
    Difference { minuend: String, subtrahend: String },
    /// Per size, the implementations ordered by value in each workload (lowest first).
    Ordering {
        /// Values within this fraction of each other are a tie, not an order.
        tolerance: f64,
    },
}

/// A band of values: `at_least ≤ value ≤ at_most`, either side open when absent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Band {
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
}

impl Band {
    pub fn contains(&self, value: f64) -> bool {
        self.at_least.is_none_or(|lo| value >= lo) && self.at_most.is_none_or(|hi| value <= hi)
    }

    /// `from 0.63 to 0.83`, `at most 0.15`, ...
    pub fn words(&self) -> String {
        match (self.at_least, self.at_most) {
            (Some(lo), Some(hi)) => format!("from {lo} to {hi}"),
            (Some(lo), None) => format!("at least {lo}"),
            (None, Some(hi)) => format!("at most {hi}"),
            (None, None) => "any value".to_string(),
        }
    }
}

/// The rule that decides the verdict. For numeric figures: every figure in `holds` →
/// holds; every figure in `holds` or `caveat`, some in `caveat` → holds with a caveat;
/// else does not hold. `implementation` gives a rule of its own to the figures of one
/// implementation (slopes); `reported` names implementations whose figures are shown and
/// judged by nothing. For an ordering: `expect_lowest` or `expect_fastest_changes`.
///
/// A band has at least one bound: a band without either holds for every value, a check
/// that cannot fail, so the file is refused ([`super::verdict::check_rule`]); a figure
/// that is only there to be seen is listed in `reported` instead.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub holds: Option<Band>,
    pub caveat: Option<Band>,
    /// What the caveat means, in words.
    pub caveat_note: Option<String>,
    /// Ordering: this implementation has the lowest value (the least time, memory...) in
    /// every workload at every size (holds), within the tolerance of the lowest (caveat),
    /// or not (does not hold).
    pub expect_lowest: Option<String>,
    /// Ordering: `true` claims that which implementation is fastest changes between
    /// workloads at some size: it holds when, at one size at least, two workloads' sets
    /// of tied-fastest implementations (within the tolerance of the lowest) have none in
    /// common, and does not hold otherwise; a tie is not a change. `false` claims the
    /// opposite, at every size.
    pub expect_fastest_changes: Option<bool>,
    /// Rules of their own for some implementations' figures.
    #[serde(default)]
    pub implementation: BTreeMap<String, Rule>,
    /// Implementations (or series) whose figures are reported, not judged: each keeps its
    /// value with the verdict `reported` and has no part in the experiment's verdict,
    /// unless it cannot be computed (then the experiment is not measured, as for any
    /// figure). Empty (and absent from a finding's `rule_data`) when every figure is
    /// judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported: Vec<String>,
}

impl Experiment {
    /// The sizes to run at.
    pub fn sizes(&self, quick: bool) -> &[u64] {
        if quick {
            &self.quick_sizes
        } else {
            &self.sizes
        }
    }

    /// The workload names, in order.
    /// The labels of the cells it reads: its implementations', then its engines'.
    pub fn cell_labels(&self) -> Vec<String> {
        self.implementations
            .iter()
            .map(|i| super::figures::label(i))
            .chain(self.engines.iter().cloned())
            .collect()
    }

    pub fn workload_names(&self) -> Vec<String> {
        self.workloads
            .iter()
            .map(|w| match w {
                WorkloadRef::Suite(name) => name.clone(),
                WorkloadRef::Defined(d) => d.name.clone(),
            })
            .chain(self.traces.iter().map(|t| t.name.clone()))
            .collect()
    }
}

/// The built-in experiment `id` (tests only: it panics on a missing id).
#[cfg(test)]
pub fn built_in(id: &str) -> Experiment {
    load(None)
        .unwrap()
        .into_iter()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("no experiment {id}"))
}

/// Reads and checks the experiments file at `path`, or the built-in one.
pub fn load(path: Option<&Path>) -> anyhow::Result<Vec<Experiment>> {
    match path {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the experiments file {}", path.display()))?;
            parse(&text, &path.display().to_string())
        }
        None => parse(BUILT_IN, BUILT_IN_PATH),
    }
}

/// Parses and checks experiments from `text`; every message names `origin` (and the line,
/// for a syntax or type error).
pub fn parse(text: &str, origin: &str) -> anyhow::Result<Vec<Experiment>> {
    let file: ExperimentsFile = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|span| text[..span.start.min(text.len())].lines().count().max(1));
        let message = e.message().trim().to_string();
        match line {
            Some(line) => anyhow::anyhow!("{origin}:{line}: {message}"),
            None => anyhow::anyhow!("{origin}: {message}"),
        }
    })?;
    let mut ids = BTreeSet::new();
    for experiment in &file.experiments {
        let id = &experiment.id;
        let fail = |what: String| anyhow::anyhow!("{origin}: experiment {id}: {what}");
        if !ids.insert(id.clone()) {
            return Err(fail("defined twice".to_string()));
        }
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(fail("an id is letters, digits and `-`".to_string()));
        }
        if id == "traces" {
            return Err(fail(
                "`traces` is the folder of the imported traces".to_string(),
            ));
        }
        // A live or threads experiment is checked by its source (its own runs and fields).
        if super::sources::is_source(experiment) {
            super::sources::check(experiment).map_err(fail)?;
            continue;
        }
        if experiment.workloads.is_empty() == experiment.traces.is_empty() {
            return Err(fail("has either workloads or traces".to_string()));
        }
        if experiment.traces.is_empty()
            && (experiment.sizes.is_empty() || experiment.quick_sizes.is_empty())
        {
            return Err(fail("needs sizes and quick_sizes".to_string()));
        }
        for trace in &experiment.traces {
            if !["wheel", "hrtimer", "all"].contains(&trace.timers.as_str()) {
                return Err(fail(format!(
                    "trace {}: timers is wheel, hrtimer or all",
                    trace.name
                )));
            }
            if let Some(moves) = &trace.moves_name
                && Moves::named(moves).is_none()
            {
                return Err(fail(format!(
                    "trace {}: moves is {}, not `{moves}`",
                    trace.name,
                    Moves::ALL.map(|m| format!("`{}`", m.name())).join(" or ")
                )));
            }
            if trace.name.is_empty() || trace.name.contains('/') {
                return Err(fail(
                    "a trace's name is a file stem, without `/`".to_string(),
                ));
            }
        }
        if experiment
            .sizes
            .iter()
            .chain(&experiment.quick_sizes)
            .any(|&s| s == 0)
        {
            return Err(fail("a size is at least 1".to_string()));
        }
        if experiment.implementations.is_empty() {
            return Err(fail("needs at least one implementation".to_string()));
        }
        if matches!(experiment.figure, FigureSpec::Slope)
            && experiment.traces.is_empty()
            && (experiment.sizes.len() < 2 || experiment.quick_sizes.len() < 2)
        {
            return Err(fail(
                "a slope needs at least two sizes in sizes and in quick_sizes".to_string(),
            ));
        }
        for implementation in &experiment.implementations {
            Variant::parse(implementation)
                .map_err(|why| fail(format!("implementations: {why}")))?;
        }
        crate::engines::select(&experiment.engines)
            .map_err(|why| fail(format!("engines: {why:#}")))?;
        for field in std::iter::once(&experiment.field).chain(&experiment.shown) {
            super::figures::check_field(field).map_err(fail)?;
        }
        super::verdict::check_rule(experiment).map_err(fail)?;
        experiment
            .suite(&experiment.sizes)
            .map_err(|e| fail(format!("{e:#}")))?;
    }
    Ok(file.experiments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_experiments_parse_and_check() {
        let experiments = load(None).unwrap();
        assert!(experiments.len() >= 8);
        let quad = experiments.iter().find(|e| e.id == "go-quad-heap").unwrap();
        assert_eq!(quad.workload_names(), ["start-stop"]);
        assert!(matches!(quad.figure, FigureSpec::Ratio { .. }));
        let suite = quad.suite(quad.sizes(true)).unwrap();
        assert_eq!(suite.cases("full").unwrap().len(), quad.quick_sizes.len());
        let trace = experiments
            .iter()
            .find(|e| e.id == "linux-trace-lateness")
            .unwrap();
        assert_eq!(trace.traces[0].moves(), Moves::Tick);
        // The memory of keepalive-100k's own cells.
        let find = |id: &str| experiments.iter().find(|e| e.id == id).unwrap();
        let (cpu, memory) = (find("keepalive-100k"), find("keepalive-100k-memory"));
        assert_eq!(memory.workload_names(), cpu.workload_names());
        assert_eq!(
            (&memory.sizes, &memory.quick_sizes),
            (&cpu.sizes, &cpu.quick_sizes)
        );
        assert_eq!(memory.implementations, cpu.implementations);
        assert_eq!(memory.rule.expect_lowest.as_deref(), Some("ring-buckets"));
        assert_eq!(memory.field, "memory.peak_live_bytes");
        assert_eq!(trace.shown, ["lateness.largest_fraction_of_delay"]);
    }

    #[test]
    fn a_syntax_or_type_error_names_the_file_and_line() {
        let text = "[[experiment]]\nid = \"a\"\nsizes = [1, 2\n";
        let error = parse(text, "x.toml").unwrap_err().to_string();
        assert!(error.starts_with("x.toml:3:"), "{error}");
        let text = "[[experiment]]\nid = \"a\"\ntitle = 3\n";
        let error = parse(text, "x.toml").unwrap_err().to_string();
        assert!(error.starts_with("x.toml:3: invalid type"), "{error}");
    }

    /// One experiment as the file writes it, with `extra` lines appended to its table.
    fn one(extra: &str) -> String {
        format!(
            "[[experiment]]\nid = \"a\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"s\"\n\
             measured = \"m\"\nworkloads = [\"start-stop\"]\nsizes = [1000, 2000]\n\
             quick_sizes = [100, 200]\nimplementations = [\"binary-heap\", \"quad-heap\"]\n{extra}"
        )
    }

    #[test]
    fn a_ratio_may_name_an_engine_the_experiment_runs() {
        let ratio = "field = \"throughput.ns_per_unit_after_fill.median\"\n\
                     figure = { kind = \"ratio\", numerator = \"quad-heap\", \
                     denominator = \"go-runtime\" }\nrule.holds = { at_most = 1.0 }\n";
        let error = parse(&one(ratio), "x.toml").unwrap_err().to_string();
        assert!(error.contains("the ratio names `go-runtime`"), "{error}");
        let with = one(&format!("engines = [\"go-runtime\"]\n{ratio}"));
        let parsed = parse(&with, "x.toml").unwrap();
        assert_eq!(
            parsed[0].cell_labels(),
            ["binary-heap", "quad-heap", "go-runtime"]
        );
        let unknown = one(&format!("engines = [\"go-runtimes\"]\n{ratio}"));
        let error = parse(&unknown, "x.toml").unwrap_err().to_string();
        assert!(
            error.contains("experiment a: engines: --engine go-runtimes: no such engine"),
            "{error}"
        );
        let go = load(None).unwrap();
        let timingwheel = go.iter().find(|e| e.id == "go-timingwheel").unwrap();
        assert_eq!(timingwheel.engines, ["go-runtime"]);
    }

    #[test]
    fn an_empty_band_is_refused_naming_the_experiment_and_the_rule() {
        let slope = "field = \"throughput.ns_per_op.median\"\nfigure = { kind = \"slope\" }\n";
        for (rule, place) in [
            ("rule.holds = {}\n", "rule.holds"),
            (
                "rule.holds = { at_most = 0.2 }\nrule.caveat = {}\n",
                "rule.caveat",
            ),
            (
                "rule.holds = { at_most = 0.2 }\n\
                 rule.implementation.\"quad-heap\" = { holds = {} }\n",
                "rule.implementation.\"quad-heap\".holds",
            ),
        ] {
            let error = parse(&one(&format!("{slope}{rule}")), "x.toml")
                .unwrap_err()
                .to_string();
            assert_eq!(
                error,
                format!(
                    "x.toml: experiment a: {place} is an empty band (neither at_least nor \
                     at_most): it holds for every value, a check that cannot fail; give it a \
                     bound, or list a figure that is only shown in rule.reported"
                )
            );
        }
        // The built-in runtimes experiment with the empty band it once had, and a source
        // kind's rule is checked as a cell experiment's is.
        let reported = "rule.reported = [\"CPU over timerbench's loop\"]";
        assert!(BUILT_IN.contains(reported));
        let empty = BUILT_IN.replace(
            reported,
            "rule.implementation.\"CPU over timerbench's loop\" = { holds = {} }",
        );
        let error = parse(&empty, BUILT_IN_PATH).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "harness/experiments.toml: experiment runtimes-idle-timeout: \
                 rule.implementation.\"CPU over timerbench's loop\".holds is an empty band"
            ),
            "{error}"
        );
    }

    #[test]
    fn a_reported_name_is_one_the_experiment_runs_and_not_judged_too() {
        let slope = "field = \"throughput.ns_per_op.median\"\nfigure = { kind = \"slope\" }\n\
                     rule.holds = { at_most = 0.2 }\n";
        let good = one(&format!("{slope}rule.reported = [\"binary-heap\"]\n"));
        assert_eq!(
            parse(&good, "x.toml").unwrap()[0].rule.reported,
            ["binary-heap"]
        );
        for (extra, message) in [
            (
                "rule.reported = [\"btree\"]\n",
                "rule.reported names `btree`",
            ),
            (
                "rule.reported = [\"binary-heap\", \"quad-heap\"]\n",
                "nothing is judged",
            ),
            (
                "rule.reported = [\"binary-heap\"]\n\
                 rule.implementation.\"binary-heap\" = { holds = { at_most = 1.0 } }\n",
                "`binary-heap` is both reported and judged",
            ),
        ] {
            let error = parse(&one(&format!("{slope}{extra}")), "x.toml")
                .unwrap_err()
                .to_string();
            assert!(error.starts_with("x.toml: experiment a: "), "{error}");
            assert!(error.contains(message), "{error}");
        }
    }

    #[test]
    fn an_experiment_that_cannot_be_judged_is_refused_with_its_id() {
        let good = one(
            "field = \"throughput.ns_per_op.median\"\nfigure = { kind = \"slope\" }\n\
             rule.holds = { at_most = 0.2 }\n",
        );
        assert_eq!(parse(&good, "x.toml").unwrap().len(), 1);
        for (extra, message) in [
            (
                "field = \"speed\"\nfigure = { kind = \"slope\" }\nrule.holds = { at_most = 0.2 }\n",
                "field `speed`",
            ),
            (
                "field = \"ns_per_timer\"\nfigure = { kind = \"ratio\", numerator = \"btree\", \
                 denominator = \"quad-heap\" }\nrule.holds = { at_most = 1.0 }\n",
                "the ratio names `btree`",
            ),
            (
                "field = \"ns_per_timer\"\nfigure = { kind = \"slope\" }\n",
                "needs a `holds` band",
            ),
            (
                "field = \"ns_per_timer\"\nfigure = { kind = \"ordering\", tolerance = 0.05 }\n",
                "one of expect_lowest and expect_fastest_changes",
            ),
        ] {
            let error = parse(&one(extra), "x.toml").unwrap_err().to_string();
            assert!(error.starts_with("x.toml: experiment a: "), "{error}");
            assert!(error.contains(message), "{error}");
        }
        let unknown = one("field = \"ns_per_timer\"\nfigure = { kind = \"slope\" }\n\
             rule.holds = { at_most = 0.2 }\n")
        .replace("\"start-stop\"", "\"nope\"");
        let error = parse(&unknown, "x.toml").unwrap_err().to_string();
        assert!(error.contains("no workload `nope`"), "{error}");
        let both = one(
            "traces = [{ name = \"t\", path = \"t.txt\", timers = \"wheel\" }]\n\
             field = \"fraction_stopped\"\nfigure = { kind = \"value\" }\n\
             rule.holds = { at_least = 0.5 }\n",
        );
        let error = parse(&both, "x.toml").unwrap_err().to_string();
        assert!(error.contains("either workloads or traces"), "{error}");
        let shown = good.replace("field =", "shown = [\"speed\"]\nfield =");
        let error = parse(&shown, "x.toml").unwrap_err().to_string();
        assert!(error.contains("field `speed`"), "{error}");
        let moves = one(
            "traces = [{ name = \"t\", path = \"t.txt\", timers = \"wheel\", moves = \"jump\" }]\n\
             field = \"fraction_stopped\"\nfigure = { kind = \"value\" }\n",
        )
        .replace("workloads = [\"start-stop\"]\n", "");
        let error = parse(&moves, "x.toml").unwrap_err().to_string();
        assert_eq!(
            error,
            "x.toml: experiment a: trace t: moves is `advance` or `tick`, not `jump`"
        );
        let one_size = good.replace("quick_sizes = [100, 200]", "quick_sizes = [100]");
        let error = parse(&one_size, "x.toml").unwrap_err().to_string();
        assert!(
            error.contains("a slope needs at least two sizes"),
            "{error}"
        );
    }
}
