//! `timerbench list`: the implementations and the workload families.

use crate::table::Table;
use std::process::ExitCode;
use timerbench_impls::registry::{IMPLEMENTATIONS, PEERS};
use timerbench_impls::{EmptyTime, Implementation, Precision, Release, Variant};
use timerbench_workloads::families::FAMILIES;

/// List the implementations and the workload families with their parameters.
#[derive(clap::Args)]
pub struct Args {}

/// One table of implementations: name, precision, empty time, what it is; then each
/// one's parameters and, where they apply, its range, its deferred stops and its suite
/// limit.
fn implementations(list: &'static [Implementation]) -> String {
    let mut table = Table::new(&["name", "precision", "empty time", "what it is"]);
    let mut details = Vec::new();
    for implementation in list {
        let declared = Variant::of(implementation).declarations();
        let (precision, range) = (declared.precision, declared.range);
        let empty_time = match declared.empty_time {
            EmptyTime::Skipped => "skipped".to_string(),
            EmptyTime::Walked { step } => format!("walked /{step}"),
            EmptyTime::Scanned => "scanned".to_string(),
        };
        let short = if precision.is_exact() {
            "exact"
        } else {
            "approximate"
        };
        table.row(vec![
            implementation.name.into(),
            short.into(),
            empty_time,
            implementation.summary.into(),
        ]);
        if !matches!(declared.empty_time, EmptyTime::Skipped) {
            details.push(format!(
                "  {}: empty time is {}",
                implementation.name,
                declared.empty_time.describe()
            ));
        }
        if let Release::Later(when) = declared.release {
            details.push(format!(
                "  {}: a stop returns at once, but its entry is freed {when}",
                implementation.name
            ));
        }
        if let Some(limit) = implementation.suite_limit {
            details.push(format!(
                "  {}: suites run it up to {} timers ({}); --timers runs it at any size",
                implementation.name, limit.max_timers, limit.why
            ));
        }
        if let Precision::Approximate(bound) = precision {
            details.push(format!("  {}: {bound}", implementation.name));
        }
        if !range.is_all() {
            details.push(format!(
                "  {}: range: delays up to {} ticks, ticks up to {}, the clock up to {} ({})",
                implementation.name,
                range.max_delay,
                range.max_tick,
                range.clock_limit(),
                range.why
            ));
        }
        if !implementation.parameters.is_empty() {
            let mut parameters = Table::new(&["parameter", ">default", "accepts", "meaning"]);
            for parameter in implementation.parameters {
                parameters.row(vec![
                    parameter.name.into(),
                    parameter.default.to_string(),
                    parameter.accepts.into(),
                    parameter.about.into(),
                ]);
            }
            details.push(format!(
                "  {} (--impl {}:KEY=VALUE,...):\n{}",
                implementation.name,
                implementation.name,
                parameters.render("    ")
            ));
        }
    }
    let mut text = table.render("  ");
    for detail in details {
        text.push_str("\n\n");
        text.push_str(&detail);
    }
    text
}

pub fn run(_: &Args) -> anyhow::Result<ExitCode> {
    println!("Implementations (--impl NAME, or NAME:KEY=VALUE,... with parameters):\n");
    println!("{}\n", implementations(IMPLEMENTATIONS));
    println!("Peers, outside crates behind adapters (--peers, or --impl NAME):\n");
    println!("{}\n", implementations(PEERS));
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
