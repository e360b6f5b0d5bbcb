//! `timerbench ab-side`: one side of a duet, the child `timerbench ab` starts for A and
//! for B. It loads the workload with the model, verifies the implementation (exactly, or
//! within its declared bound) with the cell's own verification, and then answers the
//! parent's commands on standard input, one line each:
//!
//! - `arm CORE`: pin to CPU `CORE`, build a fresh queue and replay the fill (untimed);
//!   answers `armed`;
//! - `go`: the timed replay of the armed queue, checked against the reference; answers
//!   `ns ELAPSED`;
//! - `quit` (or end of input): exit 0.
//!
//! The parent arms both sides, waits for both `armed`, then sends `go` to both: the two
//! timed replays start within a pipe's latency of each other, so both time the same
//! interval of the machine. Its first line is `ready DIGEST OPERATIONS DELAY_NS`, or
//! `unverified REASON` (then it exits 0: a wrong structure is a result, not a crash).
//!
//! A study of the method needs a known slowdown: with `TIMERBENCH_AB_SLOWDOWN_PERCENT=X`
//! the side times three replays first, and then spins, inside the clock, X% of their
//! median after every timed replay (per operation, X% of the measured time per operation,
//! summed over the replay's operations; spun at the end so that the structure's own
//! memory behaviour is untouched).

use crate::cell_core::timed::{Operations, Ready, Recipe, TimedWorkload};
use crate::cell_core::verify::{Verified, verify, verify_within_bound};
use anyhow::{Context, bail};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use timerbench_impls::{QueueVisitor, TimerQueue, Variant, registry};
use timerbench_workloads::reference::Summary;
use timerbench_workloads::{Program, load};

/// The environment variable of the injected slowdown, percent of the measured time.
pub const SLOWDOWN_VARIABLE: &str = "TIMERBENCH_AB_SLOWDOWN_PERCENT";

/// One side of a duet (started by `timerbench ab`): commands on standard input.
#[derive(clap::Args)]
pub struct Args {
    /// The workload file (v1 format).
    #[arg(long)]
    workload: PathBuf,
    /// The implementation and its parameters.
    #[arg(long)]
    implementation: String,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    crate::cell_core::tune_allocator();
    let slowdown = slowdown_percent()?;
    let program =
        load(&args.workload).with_context(|| format!("cannot load {}", args.workload.display()))?;
    let variant = Variant::parse(&args.implementation).map_err(anyhow::Error::msg)?;
    registry::visit(
        &variant,
        Side {
            program: &program,
            slowdown,
        },
    )
}

/// The slowdown `SLOWDOWN_VARIABLE` asks for, percent (0 when unset).
fn slowdown_percent() -> anyhow::Result<f64> {
    match std::env::var(SLOWDOWN_VARIABLE) {
        Err(_) => Ok(0.0),
        Ok(text) => match text.parse::<f64>() {
            Ok(value) if value >= 0.0 && value.is_finite() => Ok(value),
            _ => bail!("{SLOWDOWN_VARIABLE}={text}: expected a percentage of 0 or more"),
        },
    }
}

struct Side<'a> {
    program: &'a Program,
    slowdown: f64,
}

impl QueueVisitor for Side<'_> {
    type Output = anyhow::Result<ExitCode>;

    fn visit<Q: TimerQueue<u64>>(self, variant: &Variant) -> Self::Output {
        let program = self.program;
        let mut out = std::io::stdout().lock();
        // Split before the verification, as a cell does, so that the first timed queue
        // reuses the verification queue's pages.
        let split =
            TimedWorkload::after_fill(program, program.fill_steps()).map_err(anyhow::Error::msg)?;
        let (verified, reference) = match verify_side::<Q>(variant, program) {
            Ok(verified) => verified,
            Err(reason) => {
                writeln!(out, "unverified {}", reason.replace('\n', " "))?;
                return Ok(ExitCode::SUCCESS);
            }
        };
        crate::alloc::stop_counting();
        let recipe = Recipe::verified(variant, &verified)?;
        let delay = if self.slowdown > 0.0 {
            calibrate::<Q>(&split, recipe, &reference)?.mul_f64(self.slowdown / 100.0)
        } else {
            Duration::ZERO
        };
        let operations = split.operations(Operations::Lines);
        writeln!(
            out,
            "ready {} {operations} {}",
            verified.summary.digest,
            delay.as_nanos()
        )?;
        out.flush()?;
        serve::<Q>(&split, recipe, &reference, delay, &mut out)
    }
}

/// Verifies as the implementation's precision asks: the model's summary for an exact
/// queue, within its declared bound otherwise. The reference later replays must match.
fn verify_side<Q: TimerQueue<u64>>(
    variant: &Variant,
    program: &Program,
) -> Result<(Verified, Summary), String> {
    if variant.build::<Q>(0).precision().is_exact() {
        let verified = verify::<Q>(variant, program, &program.summary).map_err(|m| m.message)?;
        Ok((verified, program.summary.clone()))
    } else {
        let (verified, _) = verify_within_bound::<Q>(variant, program).map_err(|m| m.message)?;
        let reference = verified.summary.clone();
        Ok((verified, reference))
    }
}

/// The median of [`CALIBRATION_REPLAYS`] timed replays: the time the injected slowdown is
/// a percentage of (a median, so that one replay disturbed by the partner's start-up does
/// not set it).
fn calibrate<Q: TimerQueue<u64>>(
    split: &TimedWorkload,
    recipe: Recipe<'_>,
    reference: &Summary,
) -> anyhow::Result<Duration> {
    let mut times = (0..CALIBRATION_REPLAYS)
        .map(|_| timed_replay::<Q>(split, recipe, reference))
        .collect::<anyhow::Result<Vec<_>>>()?;
    times.sort_unstable();
    Ok(times[times.len() / 2])
}

/// Replays timed to calibrate an injected slowdown.
const CALIBRATION_REPLAYS: usize = 3;

/// One timed replay of a fresh queue, checked: its time.
fn timed_replay<Q: TimerQueue<u64>>(
    split: &TimedWorkload,
    recipe: Recipe<'_>,
    reference: &Summary,
) -> anyhow::Result<Duration> {
    let ready = split.fresh_queue::<Q>(recipe)?;
    finish(ready, reference, Duration::ZERO)
}

/// Times `ready`'s replay, spins `delay` inside the clock, checks the replay.
fn finish<Q: TimerQueue<u64>>(
    ready: Ready<'_, Q>,
    reference: &Summary,
    delay: Duration,
) -> anyhow::Result<Duration> {
    let timed = ready.time();
    let spun = spin(delay);
    timed
        .replayed
        .check(reference)
        .map_err(|why| anyhow::anyhow!("a timed replay after the verified one: {why}"))?;
    Ok(timed.elapsed + spun)
}

/// Busy-waits `delay` (nothing when zero) and returns how long it took.
fn spin(delay: Duration) -> Duration {
    if delay.is_zero() {
        return Duration::ZERO;
    }
    let started = Instant::now();
    while started.elapsed() < delay {
        std::hint::spin_loop();
    }
    started.elapsed()
}

/// Answers the parent's commands until `quit` or the end of input.
fn serve<Q: TimerQueue<u64>>(
    split: &TimedWorkload,
    recipe: Recipe<'_>,
    reference: &Summary,
    delay: Duration,
    out: &mut impl Write,
) -> anyhow::Result<ExitCode> {
    let mut armed: Option<Ready<'_, Q>> = None;
    for line in std::io::stdin().lock().lines() {
        let line = line.context("cannot read the parent's command")?;
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["arm", core] => {
                let core: usize = core.parse().with_context(|| format!("bad core {core:?}"))?;
                if !core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
                    bail!("cannot pin to CPU {core}");
                }
                armed = Some(split.fresh_queue::<Q>(recipe)?);
                writeln!(out, "armed")?;
            }
            ["go"] => {
                let ready = armed.take().context("`go` before `arm`")?;
                let elapsed = finish(ready, reference, delay)?;
                writeln!(out, "ns {}", elapsed.as_nanos())?;
            }
            ["quit"] => break,
            _ => bail!("unknown command {line:?}"),
        }
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
