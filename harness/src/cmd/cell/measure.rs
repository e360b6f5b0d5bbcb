//! One cell measured: the passes run in order on one implementation, and their figures
//! gathered into the record.
//!
//! The workload is loaded without the model ([`load_unchecked`]): the parent checked it
//! and hands over the model's summary, so running the model again would cost the cell
//! time, and its expected log memory, for nothing unless the implementation disagrees. Only
//! then is it loaded again, with the model, to explain the disagreement. A cell that does
//! not verify has a record without figures, `unverified` with the reason: a wrong
//! structure's speed is never reported.

use super::clock::{LatencyClock, ProbeClock};
use super::diagnostics::Diagnostics;
use super::passes::fixed_costs::fixed_costs;
use super::passes::latency::{LatencyFigures, latency, percentiles_and_v2};
use super::passes::memory::memory;
use super::passes::timed::{Recipe, TimedWorkload};
use super::warm_up::{WarmUp, Warmed, sample, split, warm_up};
use crate::cell_core::os::peak_rss_bytes;
use crate::schema::{
    self, AdvanceSeries, CellRecord, CellSpec, Clock, FixedCosts, Latency, Memory, Status,
    Throughput,
};
use std::collections::BTreeMap;
use std::time::Instant;
use timerbench_impls::registry;
use timerbench_impls::{QueueVisitor, TimerQueue, Variant};
use timerbench_workloads::bounded::Lateness;
use timerbench_workloads::{Program, load_unchecked};

/// Measures the cell `spec` and returns its record; `started` is when the cell began, for
/// `elapsed_seconds`. An error is a cell that could not run (an unreadable workload, say),
/// not one that did not verify.
pub fn measure(spec: &CellSpec, started: Instant) -> anyhow::Result<(CellRecord, Diagnostics)> {
    let loading = Instant::now();
    let program = load_unchecked(&spec.workload_path)?;
    let loaded = loading.elapsed().as_secs_f64();
    let variant = Variant::parse(&spec.cell.key.implementation).map_err(anyhow::Error::msg)?;
    let visitor = Measure {
        spec,
        program: &program,
    };
    let outcome = registry::visit(&variant, visitor)?;
    drop(program);
    let mut record = CellRecord::for_spec(spec, Status::Ok, None);
    let mut diagnostics = match outcome {
        Outcome::Measured(figures) => {
            let mut memory = figures.memory;
            memory.peak_rss_bytes = peak_rss_bytes().unwrap_or_else(|why| {
                eprintln!("timerbench cell: note: peak_rss_bytes is 0: {why}");
                0
            });
            record.digest = Some(figures.digest);
            record.throughput = Some(figures.throughput);
            record.fixed_costs = Some(figures.fixed_costs);
            record.latency = figures.latency;
            record.clock = Some(figures.clock);
            record.advance_series = Some(figures.advance_series);
            record.memory = Some(memory);
            record.lateness = figures.lateness;
            record.precision = Some(figures.precision);
            figures.diagnostics
        }
        Outcome::Unverified { reason, digest } => {
            record.status = Status::Unverified;
            record.reason = Some(reason);
            record.digest = digest;
            Diagnostics::default()
        }
    };
    diagnostics.pass_seconds.insert(0, ("load", loaded));
    record.elapsed_seconds = started.elapsed().as_secs_f64();
    Ok((record, diagnostics))
}

/// The figures of a verified cell.
struct Figures {
    /// As the queue itself declares it (the spec's is the parent's reading).
    precision: String,
    digest: String,
    throughput: Throughput,
    fixed_costs: FixedCosts,
    latency: BTreeMap<String, Latency>,
    clock: Clock,
    advance_series: AdvanceSeries,
    /// `peak_rss_bytes` is filled in at the very end.
    memory: Memory,
    /// For an approximate implementation.
    lateness: Option<schema::Lateness>,
    diagnostics: Diagnostics,
}

/// What the passes made of one implementation on one workload.
enum Outcome {
    Measured(Box<Figures>),
    Unverified {
        reason: String,
        digest: Option<String>,
    },
}

/// The passes for the implementation the registry resolves the spec's name to.
struct Measure<'a> {
    spec: &'a CellSpec,
    program: &'a Program,
}

impl QueueVisitor for Measure<'_> {
    type Output = anyhow::Result<Outcome>;

    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output {
        measure_queue::<Q, LatencyClock>(self.spec, variant, self.program, LatencyClock::new())
    }
}

/// Every pass, for the concrete queue type `Q`, timing each pass for the diagnostics.
fn measure_queue<Q: TimerQueue<u64>, C: ProbeClock>(
    spec: &CellSpec,
    variant: &Variant,
    program: &Program,
    clock: C,
) -> anyhow::Result<Outcome> {
    let mut diagnostics = Diagnostics::default();
    let mut pass = Instant::now();
    let mut lap = |name: &'static str, diagnostics: &mut Diagnostics| {
        diagnostics
            .pass_seconds
            .push((name, pass.elapsed().as_secs_f64()));
        pass = Instant::now();
    };
    // Split before the verification, as a samples process does, so that the memory pass's
    // queue is the last thing built before the samples: their first queue then lands on
    // its pages, and the memory pass is the warm-up the samples need.
    let split = split(program)?;
    let (verified, reference, lateness, precision) = match warm_up::<Q>(spec, variant, program)? {
        WarmUp::Verified {
            verified,
            reference,
            lateness,
            precision,
        } => (verified, reference, lateness, precision),
        WarmUp::Unverified { reason, digest } => {
            return Ok(Outcome::Unverified { reason, digest });
        }
    };
    let lateness = lateness.as_deref().map(lateness_record).transpose()?;
    let reference = &reference;
    let recipe = Recipe::verified(variant, &verified)?;
    lap("warm-up", &mut diagnostics);
    let unverified = |message: String| {
        Ok(Outcome::Unverified {
            reason: format!("{message} (after a warm-up replay that verified)"),
            digest: Some(verified.summary.digest.clone()),
        })
    };

    let memory_started = Instant::now();
    let memory = match memory::<Q>(
        program,
        reference,
        verified.peak_pending,
        recipe,
        &mut diagnostics,
    ) {
        Ok(memory) => memory,
        Err(message) => return unverified(message),
    };
    let replay = memory_started.elapsed();
    lap("memory", &mut diagnostics);

    let throughput = match sample::<Q>(
        spec,
        recipe,
        &split,
        reference,
        Warmed::ByMemoryPass { replay },
        &mut diagnostics,
    )? {
        Ok(throughput) => throughput,
        Err(message) => return unverified(message),
    };
    lap("throughput", &mut diagnostics);
    let fixed_costs = fixed_costs::<Q>(variant);
    lap("fixed costs", &mut diagnostics);

    if spec.inject_panic {
        panic!("injected panic: the cell spec asked for one (`inject_panic`)");
    }

    let workload = TimedWorkload::whole(program);
    let LatencyFigures {
        latency,
        advance_series,
        clock: clock_record,
        probe,
    } = match latency::<Q, C>(&workload, recipe, &clock, reference)? {
        Ok(figures) => figures,
        Err(message) => return unverified(message),
    };
    diagnostics.probe = Some(probe);
    lap("latency", &mut diagnostics);

    Ok(Outcome::Measured(Box::new(Figures {
        precision: if crate::schema::is_floor(variant.label()) {
            crate::schema::FLOOR_PRECISION.to_string()
        } else {
            precision.describe()
        },
        digest: verified.summary.digest.clone(),
        lateness,
        throughput,
        fixed_costs,
        latency,
        clock: clock_record,
        advance_series,
        memory,
        diagnostics,
    })))
}

/// The record's form of what the lockstep saw.
fn lateness_record(lateness: &Lateness) -> anyhow::Result<schema::Lateness> {
    let (percentiles, histogram_v2) = percentiles_and_v2(&lateness.histogram)?;
    Ok(schema::Lateness {
        firings: lateness.firings(),
        late: lateness.late,
        early: lateness.early,
        most_early_ticks: lateness.most_early,
        stopped_late: lateness.stopped_late,
        pending_late: lateness.pending_late,
        largest_fraction_of_delay: lateness.largest_fraction,
        largest_fraction_beyond_one_tick: Some(lateness.largest_fraction_beyond_one_tick),
        percentiles,
        histogram_v2,
    })
}

#[cfg(test)]
mod tests;
