//! The parent's side of a duet: the two `ab-side` children, their commands, the rounds.

use super::side::SLOWDOWN_VARIABLE;
use anyhow::{Context, bail};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use timerbench_results::ab::AbSide;

/// What one side runs.
pub(super) struct SideSpec {
    pub variant: String,
    pub binary: PathBuf,
    /// The injected slowdown, percent, for studies of the method.
    pub slowdown: Option<f64>,
}

/// One running side.
struct Running {
    name: &'static str,
    variant: String,
    binary: PathBuf,
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    digest: String,
    operations: u64,
    delay_ns: u64,
}

/// Both sides of one cell, verified and waiting for commands.
pub(super) struct Duet {
    sides: [Running; 2],
}

impl Duet {
    /// Starts both children on `workload`, B's first when `b_first`, and waits until both
    /// verified.
    pub fn start(specs: &[SideSpec; 2], workload: &Path, b_first: bool) -> anyhow::Result<Self> {
        let mut sides = if b_first {
            let b = spawn("B", &specs[1], workload)?;
            [spawn("A", &specs[0], workload)?, b]
        } else {
            let a = spawn("A", &specs[0], workload)?;
            [a, spawn("B", &specs[1], workload)?]
        };
        for side in &mut sides {
            side.wait_ready()?;
        }
        Ok(Duet { sides })
    }

    /// Duet rounds: A on `cores[0]` and B on `cores[1]` in even rounds, swapped in odd ones;
    /// both armed before either starts. At least `until.rounds` rounds, then on in pairs (so
    /// each core serves each side equally often) until each side has `until.min_ns` of timed
    /// replay, but never beyond `until.max_rounds`. Each side's times, one per round.
    ///
    /// The parent speaks to one child before the other (arm, go), and which one alternates
    /// every two rounds, so that neither side is always the first to build its queue or to
    /// start: A/A duets with A always first leaned towards "B slower" (METHODOLOGY.md,
    /// *Who goes first* under *Duets*).
    pub fn rounds(
        &mut self,
        until: Until,
        cores: [usize; 2],
    ) -> anyhow::Result<(Vec<u64>, Vec<u64>)> {
        let (mut a_ns, mut b_ns) = (Vec::new(), Vec::new());
        let mut round = 0;
        while !until.reached(round, &a_ns, &b_ns) {
            let swap = round % 2 == 1;
            let core = [cores[usize::from(swap)], cores[usize::from(!swap)]];
            let order = if (round / 2) % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                self.sides[side].send(&format!("arm {}", core[side]))?;
            }
            for side in order {
                self.sides[side].expect_armed()?;
            }
            for side in order {
                self.sides[side].send("go")?;
            }
            let mut ns = [0; 2];
            for side in order {
                ns[side] = self.sides[side].read_ns()?;
            }
            a_ns.push(ns[0]);
            b_ns.push(ns[1]);
            round += 1;
        }
        Ok((a_ns, b_ns))
    }

    /// `rounds` solo rounds on `core`: A alone, then B alone (the other waits on its pipe).
    pub fn solo(&mut self, rounds: u32, core: usize) -> anyhow::Result<(Vec<u64>, Vec<u64>)> {
        let mut times = [Vec::new(), Vec::new()];
        for _ in 0..rounds {
            for (side, times) in self.sides.iter_mut().zip(&mut times) {
                side.send(&format!("arm {core}"))?;
                side.expect_armed()?;
                side.send("go")?;
                times.push(side.read_ns()?);
            }
        }
        let [a, b] = times;
        Ok((a, b))
    }

    /// Ends both children and returns the sides' records with their duet times.
    pub fn finish(self, a_ns: Vec<u64>, b_ns: Vec<u64>) -> anyhow::Result<[AbSide; 2]> {
        let [a, b] = self.sides;
        Ok([a.finish(a_ns)?, b.finish(b_ns)?])
    }
}

/// When a duet has run enough rounds (`--rounds`, `--min-seconds`, `--max-rounds`).
#[derive(Debug, Clone, Copy)]
pub struct Until {
    /// The fewest rounds.
    pub rounds: u32,
    /// The least timed replay per side, in ns (0: `rounds` decides alone).
    pub min_ns: u64,
    /// The most rounds, whatever `min_ns` says.
    pub max_rounds: u32,
}

impl Until {
    /// Whether `round` rounds (with these times) are enough.
    fn reached(&self, round: u32, a_ns: &[u64], b_ns: &[u64]) -> bool {
        if round >= self.max_rounds {
            return true;
        }
        let timed = |ns: &[u64]| ns.iter().sum::<u64>() >= self.min_ns;
        round >= self.rounds && round.is_multiple_of(2) && timed(a_ns) && timed(b_ns)
    }
}

/// Starts the `ab-side` child of `spec`.
fn spawn(name: &'static str, spec: &SideSpec, workload: &Path) -> anyhow::Result<Running> {
    let mut command = Command::new(&spec.binary);
    command
        .arg("ab-side")
        .arg("--workload")
        .arg(workload)
        .arg("--implementation")
        .arg(&spec.variant)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env_remove(SLOWDOWN_VARIABLE);
    if let Some(percent) = spec.slowdown {
        command.env(SLOWDOWN_VARIABLE, percent.to_string());
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start side {name}: {}", spec.binary.display()))?;
    let input = child.stdin.take().context("no standard input")?;
    let output = BufReader::new(child.stdout.take().context("no standard output")?);
    Ok(Running {
        name,
        variant: spec.variant.clone(),
        binary: spec.binary.clone(),
        child,
        input,
        output,
        digest: String::new(),
        operations: 0,
        delay_ns: 0,
    })
}

impl Running {
    /// Who this side is, for messages.
    fn who(&self) -> String {
        format!(
            "side {} ({}, {})",
            self.name,
            self.variant,
            self.binary.display()
        )
    }

    fn send(&mut self, command: &str) -> anyhow::Result<()> {
        writeln!(self.input, "{command}")
            .and_then(|()| self.input.flush())
            .with_context(|| format!("{} stopped taking commands", self.who()))
    }

    /// The child's next line; its end is the child's failure, told with its status (its
    /// own message is on standard error, above).
    fn read_line(&mut self) -> anyhow::Result<String> {
        let mut line = String::new();
        let read = self.output.read_line(&mut line);
        if matches!(read, Ok(0) | Err(_)) {
            let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
            bail!("{} ended ({status}); its message is above", self.who());
        }
        Ok(line.trim_end().to_string())
    }

    fn wait_ready(&mut self) -> anyhow::Result<()> {
        let line = self.read_line()?;
        if let Some(reason) = line.strip_prefix("unverified ") {
            bail!("{} did not verify: {reason}", self.who());
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let ["ready", digest, operations, delay] = words.as_slice() else {
            bail!(
                "{} answered {line:?}, expected `ready ...` (an older binary without `ab-side`?)",
                self.who()
            );
        };
        self.digest = digest.to_string();
        self.operations = operations.parse().context("bad operation count")?;
        self.delay_ns = delay.parse().context("bad delay")?;
        Ok(())
    }

    fn expect_armed(&mut self) -> anyhow::Result<()> {
        match self.read_line()?.as_str() {
            "armed" => Ok(()),
            other => bail!("{} answered {other:?}, expected `armed`", self.who()),
        }
    }

    fn read_ns(&mut self) -> anyhow::Result<u64> {
        let line = self.read_line()?;
        line.strip_prefix("ns ")
            .and_then(|ns| ns.parse().ok())
            .with_context(|| format!("{} answered {line:?}, expected `ns N`", self.who()))
    }

    fn finish(mut self, duet_ns: Vec<u64>) -> anyhow::Result<AbSide> {
        self.send("quit")?;
        let status = self.child.wait()?;
        if !status.success() {
            bail!("{} exited with {status}", self.who());
        }
        Ok(AbSide {
            variant: self.variant,
            binary: self.binary.display().to_string(),
            digest: self.digest,
            operations: self.operations,
            duet_ns,
            injected_delay_ns: (self.delay_ns > 0).then_some(self.delay_ns),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Until;

    #[test]
    fn rounds_go_on_in_pairs_until_each_side_has_its_time_but_stop_at_the_cap() {
        let until = Until {
            rounds: 4,
            min_ns: 100,
            max_rounds: 10,
        };
        // Four rounds of 20 ns: too few rounds, then too little time.
        assert!(!until.reached(3, &[20; 3], &[20; 3]));
        assert!(!until.reached(4, &[20; 4], &[20; 4]));
        // 100 ns on A after 5 rounds, but an odd round count never stops a duet.
        assert!(!until.reached(5, &[20; 5], &[20; 5]));
        // B short of its time keeps the duet going even when A has enough.
        assert!(!until.reached(6, &[20; 6], &[10; 6]));
        assert!(until.reached(6, &[20; 6], &[20; 6]));
        // The cap ends it whatever the time.
        assert!(until.reached(10, &[1; 10], &[1; 10]));
        // With no time asked, --rounds decides alone.
        let plain = Until { min_ns: 0, ..until };
        assert!(until.reached(4, &[100; 4], &[100; 4]));
        assert!(plain.reached(4, &[1; 4], &[1; 4]));
    }
}
