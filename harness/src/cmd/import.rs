//! `timerbench import ftrace|csv`: converts recorded timer activity into a v1 workload
//! (the conversion itself lives in `timerbench_workloads::import`). The result is checked
//! by the reference model before anything is written, and written atomically, so a failed
//! import leaves no output file.

use anyhow::{Context, anyhow};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use timerbench_workloads::import::{self, Imported, Moves, ftrace};
use timerbench_workloads::{compile, writer};

/// Import recorded timer events as a workload.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    format: Format,
}

#[derive(clap::Subcommand)]
enum Format {
    /// Linux timer tracepoints: tracefs `trace` text or `trace-cmd report` (`.gz` read too).
    Ftrace(FtraceArgs),
    /// A CSV of `time,event,id[,deadline]` rows, times in nanoseconds (see the README).
    Csv(CsvArgs),
}

#[derive(clap::Args)]
struct FtraceArgs {
    /// The trace files; several are merged by timestamp.
    #[arg(value_name = "TRACE", required = true)]
    traces: Vec<PathBuf>,
    /// Which timers: wheel (`timer_*`), hrtimer (`hrtimer_*`) or all.
    #[arg(long, value_enum, default_value = "all")]
    timers: TimersArg,
    /// One tick of the workload: a whole number and ns, us, ms or s.
    #[arg(long, default_value = "1ms")]
    tick: String,
    #[command(flatten)]
    moves: MovesArg,
    /// The kernel's HZ, to convert jiffies (default: inferred from the trace, else 250).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    hz: Option<u64>,
    /// The workload file to write.
    #[arg(short = 'o', long = "output", value_name = "OUT.tw")]
    output: PathBuf,
}

#[derive(clap::Args)]
struct CsvArgs {
    /// The CSV file (`.gz` read too).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// One tick of the workload: a whole number and ns, us, ms or s.
    #[arg(long, default_value = "1ms")]
    tick: String,
    #[command(flatten)]
    moves: MovesArg,
    /// The workload file to write.
    #[arg(short = 'o', long = "output", value_name = "OUT.tw")]
    output: PathBuf,
}

/// `--moves`, shared by the importers.
#[derive(clap::Args)]
struct MovesArg {
    /// How the time between events moves the clock: `advance` (`a N`, one move per gap)
    /// or `tick` (`t N`, every tick its own move, so that an approximate structure's
    /// lateness is its own, not the gap to the next event; one call per tick in replay).
    #[arg(
        long = "moves",
        value_name = "MOVES",
        value_enum,
        default_value = "advance"
    )]
    value: MovesValue,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum MovesValue {
    Advance,
    Tick,
}

impl MovesArg {
    fn get(&self) -> Moves {
        match self.value {
            MovesValue::Advance => Moves::Advance,
            MovesValue::Tick => Moves::Tick,
        }
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum TimersArg {
    Wheel,
    Hrtimer,
    All,
}

/// The command line as typed, for `@generator`.
fn command_line() -> String {
    let mut words: Vec<String> = std::env::args().skip(1).collect();
    words.insert(0, "timerbench".into());
    words.join(" ")
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let generator = command_line();
    let (imported, output) = match &args.format {
        Format::Ftrace(a) => {
            let options = ftrace::Options {
                timers: match a.timers {
                    TimersArg::Wheel => ftrace::Timers::Wheel,
                    TimersArg::Hrtimer => ftrace::Timers::Hrtimer,
                    TimersArg::All => ftrace::Timers::All,
                },
                tick_ns: import::parse_tick(&a.tick)?,
                tick_text: a.tick.clone(),
                moves: a.moves.get(),
                hz: a.hz,
                generator: Some(generator),
            };
            let (imported, _) = ftrace::import(&a.traces, &options)?;
            (imported, &a.output)
        }
        Format::Csv(a) => {
            let tick = import::parse_tick(&a.tick)?;
            let imported =
                import::csv::import(&a.file, tick, &a.tick, a.moves.get(), Some(&generator))?;
            (imported, &a.output)
        }
    };
    write(&imported, output)?;
    eprintln!("{}: {}", output.display(), imported.summary);
    Ok(ExitCode::SUCCESS)
}

fn write(imported: &Imported, output: &Path) -> anyhow::Result<()> {
    // An importer bug must not reach a file: the reference model checks it first.
    compile(&imported.workload, output)
        .map_err(|e| anyhow!("the imported workload is invalid (a bug in the importer): {e}"))?;
    writer::write_file(output, &imported.workload)
        .with_context(|| format!("cannot write {}", output.display()))
}
