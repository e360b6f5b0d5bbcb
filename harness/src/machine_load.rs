//! The other processes' CPU share while a command measures (`ab`, `run`, `live`), from
//! `/proc`, and the warning when they competed for the cores.
//!
//! The machine's busy time is `/proc/stat`'s first line, every CPU's user, nice, system,
//! irq, softirq and steal jiffies (steal: another virtual machine ran on this one's CPU,
//! which a time pays like any other competition; idle and iowait are not busy). This
//! command's own is `/proc/self/stat`'s utime and stime plus cutime and cstime, the CPU of
//! the children it has waited for (`run`'s and `ab`'s measuring processes). Between two
//! samples taken when every child of the window has been waited for, the difference of the
//! two is what the other processes used: over the wall time it is the cores' worth they
//! took, over the wall time × CPUs their share of the machine. Above
//! [`COMPETED_CORES`], beyond the counters' rounding (a jiffy per CPU and one for this
//! command, so a window of a few jiffies is never marked), the window is marked and the
//! command warns.

use std::time::Instant;
use timerbench_results::load::{COMPETED_CORES, OthersLoad};

/// One reading of the machine's and this command's CPU time.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    at: Instant,
    /// All CPUs' busy jiffies.
    busy: u64,
    /// This process's and its waited-for children's jiffies.
    own: u64,
    cpus: u32,
    load: Option<f64>,
}

/// The busy jiffies of `/proc/stat`'s `cpu` line (user, nice, system, irq, softirq,
/// steal) and the number of `cpuN` lines.
pub fn parse_stat(text: &str) -> Option<(u64, u32)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is
    // already within user.
    let busy = [0, 1, 2, 5, 6, 7]
        .iter()
        .map(|&i| fields.get(i).copied().unwrap_or(0))
        .sum();
    let cpus = text
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count() as u32;
    (fields.len() >= 4).then_some((busy, cpus.max(1)))
}

/// utime + stime + cutime + cstime of a `/proc/PID/stat` text. The fields are counted
/// after the command name's closing parenthesis, since the name may hold spaces.
pub fn parse_own(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (field 3) is index 0, so utime (field 14) is index 11.
    (11..=14)
        .map(|i| fields.get(i)?.parse::<i64>().ok().map(|v| v.max(0) as u64))
        .sum()
}

/// The one-minute load average of a `/proc/loadavg` text.
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// A reading now; `None` where `/proc` cannot be read (not Linux).
pub fn sample() -> Option<Sample> {
    let (busy, cpus) = parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)?;
    let own = parse_own(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| parse_loadavg(&t));
    Some(Sample {
        at: Instant::now(),
        busy,
        own,
        cpus,
        load,
    })
}

/// Jiffies per second (`sysconf(_SC_CLK_TCK)`, 100 where it cannot be read).
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a constant of the system; it has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

/// The others' CPU between `start` and `end`.
pub fn between(start: &Sample, end: &Sample) -> OthersLoad {
    let seconds = end.at.duration_since(start.at).as_secs_f64();
    others(
        seconds,
        end.busy.saturating_sub(start.busy),
        end.own.saturating_sub(start.own),
        ticks_per_second(),
        end.cpus,
        [start.load, end.load],
    )
}

/// The others' CPU from the differences of two samples: `busy` and `own` jiffies over
/// `seconds` of wall time.
pub fn others(
    seconds: f64,
    busy: u64,
    own: u64,
    ticks: f64,
    cpus: u32,
    load: [Option<f64>; 2],
) -> OthersLoad {
    let others = busy.saturating_sub(own) as f64;
    let per_second = |jiffies: f64| {
        if seconds > 0.0 {
            jiffies / ticks / seconds
        } else {
            0.0
        }
    };
    let cores = per_second(others);
    // Every counter read is whole jiffies, so the difference can be off by about one per
    // CPU's counter and one for ours: a window of a few jiffies cannot tell a competitor
    // from rounding, and is marked only beyond that allowance.
    let beyond_rounding = per_second((others - f64::from(cpus.max(1)) - 1.0).max(0.0));
    OthersLoad {
        seconds,
        cpus,
        others_cores: cores,
        others_share: cores / f64::from(cpus.max(1)),
        load_before: load[0],
        load_after: load[1],
        competed: beyond_rounding > COMPETED_CORES,
    }
}

/// Measures the others' CPU over a window: started now, read by [`Window::end`].
pub struct Window(Option<Sample>);

impl Window {
    pub fn start() -> Window {
        Window(sample())
    }

    /// The others' CPU since the start, when `/proc` could be read both times.
    pub fn end(&self) -> Option<OthersLoad> {
        Some(between(self.0.as_ref()?, &sample()?))
    }
}

/// The warning of a competed window, naming what it measured: `None` when it was not.
pub fn warning(load: &OthersLoad, what: &str) -> Option<String> {
    load.competed.then(|| {
        format!(
            "warning: other processes used {:.2} cores ({:.0}% of the {} CPUs) while \
             measuring {what} (load average {}): they competed for its cores, and its times may \
             be theirs as much as the structure's (above {COMPETED_CORES} of a core is \
             marked)",
            load.others_cores,
            load.others_share * 100.0,
            load.cpus,
            match (load.load_before, load.load_after) {
                (Some(a), Some(b)) => format!("{a:.2} to {b:.2}"),
                _ => "unknown".to_string(),
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  1000 50 300 9000 20 5 7 11 0 0\n\
        cpu0 500 25 150 4500 10 2 3 5 0 0\n\
        cpu1 500 25 150 4500 10 3 4 6 0 0\n\
        intr 12345 0 0\n\
        ctxt 999\n";

    #[test]
    fn the_machines_busy_time_is_every_cpus_work_but_idle_and_iowait() {
        // 1000 + 50 + 300 + 5 + 7 + 11; two cpuN lines.
        assert_eq!(parse_stat(STAT), Some((1373, 2)));
        assert_eq!(parse_stat("intr 1\n"), None);
        assert_eq!(parse_stat("cpu  1 x 3 4\n"), None);
    }

    #[test]
    fn this_commands_time_counts_its_waited_children_and_survives_a_name_with_spaces() {
        let text = "4242 (time rbench) R 1 4242 4242 0 -1 4194304 100 0 0 0 \
                    120 30 400 50 20 0 1 0 5000 1000000 200 18446744073709551615";
        assert_eq!(parse_own(text), Some(120 + 30 + 400 + 50));
        assert_eq!(parse_own("4242 (x) R 1"), None);
        assert_eq!(parse_loadavg("0.52 0.40 0.33 2/345 6789\n"), Some(0.52));
    }

    #[test]
    fn the_others_share_is_the_busy_time_not_ours_over_the_wall_time() {
        // 2 s on 2 CPUs at 100 jiffies/s: 300 busy jiffies, 100 ours: 1 core, half.
        let load = others(2.0, 300, 100, 100.0, 2, [Some(1.0), Some(2.0)]);
        assert!((load.others_cores - 1.0).abs() < 1e-12);
        assert!((load.others_share - 0.5).abs() < 1e-12);
        assert!(load.competed);
        let text = warning(&load, "hold at 1,000").unwrap();
        assert!(
            text.contains("1.00 cores") && text.contains("hold at 1,000"),
            "{text}"
        );
        // Our own work is never the others': all busy time ours, nothing competed.
        let alone = others(2.0, 300, 300, 100.0, 2, [None, None]);
        assert_eq!(alone.others_cores, 0.0);
        assert!(!alone.competed && warning(&alone, "x").is_none());
        // Within the rounding of the counters: 10 jiffies over 1 s on 2 CPUs are 0.1 of a
        // core, 0.07 beyond the allowance of 3 jiffies; and a window of 20 ms reads 3
        // jiffies as 1.5 cores, which may be rounding alone.
        assert!(!others(1.0, 10, 0, 100.0, 2, [None, None]).competed);
        assert!(others(1.0, 14, 0, 100.0, 2, [None, None]).competed);
        let short = others(0.02, 3, 0, 100.0, 2, [None, None]);
        assert!(short.others_cores > 1.0 && !short.competed);
    }
}
