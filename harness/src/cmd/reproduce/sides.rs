//! Which side each figure of an experiment with engines comes from: the published source,
//! a runtime's own timers run here as an engine (with the runtime's version, read from
//! the cells' records), or the Rust ports here. Appended to the verdict's reason, so that
//! a ratio of a port to an original is never read as the source's own comparison.

use super::experiments::Experiment;
use super::figures::Records;

/// What a reader of an engine's figures must know about its runtime's history.
fn note(engine: &str) -> Option<&'static str> {
    match engine {
        "go-runtime" => Some(
            "Go 1.23 reworked the runtime's timers (timer channels made synchronous, \
             unstopped timers collectable, the timer code rewritten), so these figures speak \
             for the Go named here, not for 1.23 or later",
        ),
        _ => None,
    }
}

/// ` Sides: ...` for an experiment with engines; empty without.
pub fn words(experiment: &Experiment, records: &Records) -> String {
    if experiment.engines.is_empty() {
        return String::new();
    }
    let engines: Vec<String> = experiment
        .engines
        .iter()
        .map(|name| {
            let runtime = records
                .values()
                .filter(|r| r.key.implementation == *name)
                .find_map(|r| r.engine.as_ref().filter(|e| !e.runtime.is_empty()))
                .map_or(
                    "its runtime not recorded (the cells did not run)".to_string(),
                    |e| format!("{} {}", e.runtime, e.runtime_version),
                );
            let mut words = format!("{name}: the original's own timers here, on {runtime}");
            if let Some(note) = note(name) {
                words.push_str(&format!("; {note}"));
            }
            words
        })
        .collect();
    format!(
        ". Sides: published: the source's own figures (listed with the claim); {}; {}: the \
         Rust ports here",
        engines.join("; "),
        experiment.implementations.join(", ")
    )
}
