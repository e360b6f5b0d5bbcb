//! `timerbench list`: the implementations and the workload families, in lines of at most
//! [`WIDTH`] characters; `--format markdown`: the implementations as the README's tables.

use crate::compare::Format;
use crate::table::{Table, wrap};
use std::process::ExitCode;
use timerbench_impls::registry::{IMPLEMENTATIONS, PEERS};
use timerbench_impls::{EmptyTime, Implementation, Precision, Release, Variant};
use timerbench_workloads::families::FAMILIES;

/// The widest line of the text form: descriptions wrap to fit it.
const WIDTH: usize = 100;

/// List the implementations and the workload families with their parameters.
#[derive(clap::Args)]
pub struct Args {
    /// `text` (everything, wrapped to 100 columns) or `markdown` (the implementations'
    /// tables, as the README holds them between its `timerbench list --format markdown`
    /// markers).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// One line of details: `  name: text`, wrapped to [`WIDTH`] with a hanging indent.
fn detail(text: &str) -> String {
    wrap(text, WIDTH - 4)
        .iter()
        .enumerate()
        .map(|(index, line)| format!("{}{line}", if index == 0 { "  " } else { "    " }))
        .collect::<Vec<_>>()
        .join("\n")
}

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
            details.push(detail(&format!(
                "{}: empty time is {}",
                implementation.name,
                declared.empty_time.describe()
            )));
        }
        if let Release::Later(when) = declared.release {
            details.push(detail(&format!(
                "{}: a stop returns at once, but its entry is freed {when}",
                implementation.name
            )));
        }
        if let Some(limit) = implementation.suite_limit {
            details.push(detail(&format!(
                "{}: suites run it up to {} timers ({}); --timers runs it at any size",
                implementation.name, limit.max_timers, limit.why
            )));
        }
        if let Precision::Approximate(bound) = precision {
            details.push(detail(&format!("{}: {bound}", implementation.name)));
        }
        if !range.is_all() {
            details.push(detail(&format!(
                "{}: range: delays up to {} ticks, ticks up to {}, the clock up to {} ({})",
                implementation.name,
                range.max_delay,
                range.max_tick,
                range.clock_limit(),
                range.why
            )));
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
                parameters.render_within("    ", WIDTH)
            ));
        }
    }
    let mut text = table.render_within("  ", WIDTH);
    for detail in details {
        text.push_str("\n\n");
        text.push_str(&detail);
    }
    text
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    if args.format == Format::Markdown {
        print!("{}", markdown());
        return Ok(ExitCode::SUCCESS);
    }
    println!("Implementations (--impl NAME, or NAME:KEY=VALUE,... with parameters):\n");
    println!("{}\n", implementations(IMPLEMENTATIONS));
    println!("Peers, outside crates behind adapters (--peers, or --impl NAME):\n");
    println!("{}\n", implementations(PEERS));
    println!("Workload families (timerbench gen FAMILY):");
    for family in FAMILIES {
        let info = family.info();
        println!("\n{}", detail(&format!("{}: {}", info.name, info.models)));
        for line in [
            info.shape.to_string(),
            format!("--ops: {}; one tick is {}", info.ops, info.tick),
        ] {
            for wrapped in wrap(&line, WIDTH - 4) {
                println!("    {wrapped}");
            }
        }
        let mut params = Table::new(&["parameter", "default", "meaning"]);
        for param in info.params {
            params.row(vec![
                param.name.into(),
                param.default.into(),
                param.help.into(),
            ]);
        }
        if !info.params.is_empty() {
            println!("{}", params.render_within("    ", WIDTH));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The implementations' tables in Markdown, generated from the registry: the project's,
/// then the peers'; each row its name, its precision (with an approximate one's bound),
/// what it is, its parameters with their defaults, and its suite limit.
pub fn markdown() -> String {
    let mut out = String::from("Implementations (`--impl NAME`):\n\n");
    out.push_str(&markdown_table(IMPLEMENTATIONS));
    out.push_str("\nPeers, outside crates behind adapters (`--peers`, or `--impl NAME`):\n\n");
    out.push_str(&markdown_table(PEERS));
    out
}

fn markdown_table(list: &'static [Implementation]) -> String {
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|implementation| {
            let precision = match Variant::of(implementation).declarations().precision {
                Precision::Approximate(bound) => format!("approximate: {bound}"),
                _ => "exact".to_string(),
            };
            let parameters: Vec<String> = implementation
                .parameters
                .iter()
                .map(|p| format!("`{}={}`", p.name, p.default))
                .collect();
            let limit = implementation.suite_limit.map_or(String::new(), |limit| {
                format!(
                    "{} timers ({})",
                    timerbench_report::thousands(limit.max_timers),
                    limit.why
                )
            });
            vec![
                format!("`{}`", implementation.name),
                precision,
                implementation.summary.to_string(),
                parameters.join(", "),
                limit,
            ]
        })
        .collect();
    crate::compare::markdown_table(
        &[
            "name",
            "precision",
            "what it is",
            "parameters",
            "suite limit",
        ],
        &rows,
    )
}
