//! Under what conditions a cell's process measures: pinned to one CPU, and the machine's
//! load and CPU frequency governor read before and after, so that a figure taken on a
//! loaded machine is flagged rather than hidden.
//!
//! The process pins itself to the last CPU the system lists: the same CPU for every
//! process of a run, so that no two measurements differ by the core they landed on (and
//! the core's caches are not shared with a migrating parent on a two-CPU machine, whose
//! scheduler tends to start work on CPU 0). Pinning is best effort: where it fails, the
//! record says `cpu: null` and the cell goes on.

use crate::schema::Conditions;

/// Pins this thread to the last CPU and reads the conditions at the start of a process
/// doing `role` (`full` or `samples`).
pub fn begin(role: &str) -> Conditions {
    // Counted before pinning: once pinned, the process sees only its one CPU.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let cpu = cores
        .last()
        .copied()
        .filter(|&core| core_affinity::set_for_current(core))
        .map(|core| core.id as u32);
    Conditions {
        role: role.to_string(),
        cpu,
        load_before: load_average(),
        load_after: None,
        governor: cpu.and_then(governor),
        cpus: cpus as u32,
        calibration_ns: Some(calibration_ns()),
        memory_probe_before_ns: None,
        memory_probe_after_ns: None,
        started_unix_ms: None,
    }
}

/// Nanoseconds of the calibration kernel: 2^18 rounds of a dependent multiply-xorshift
/// chain in registers (no memory, no branch to mispredict), the median of 9 runs. Its
/// time depends on nothing but the core's clock and what else runs on it.
fn calibration_ns() -> f64 {
    const ROUNDS: u32 = 1 << 18;
    let mut times: Vec<f64> = (0..9)
        .map(|seed: u64| {
            let clock = std::time::Instant::now();
            let mut x = std::hint::black_box(seed | 1);
            for _ in 0..ROUNDS {
                x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                x ^= x >> 29;
            }
            std::hint::black_box(x);
            clock.elapsed().as_nanos() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Reads the conditions at the end.
pub fn end(conditions: &mut Conditions) {
    conditions.load_after = load_average();
}

/// The one-minute load average, the first field of `/proc/loadavg`.
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The frequency governor of `cpu`, where the kernel exposes cpufreq (virtual machines
/// often do not).
fn governor(cpu: u32) -> Option<String> {
    let path = format!("/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor");
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn a_process_is_pinned_and_reads_the_load() {
        // On a thread of its own: the pin stays with it.
        let conditions = std::thread::spawn(|| {
            let mut conditions = begin("full");
            end(&mut conditions);
            conditions
        })
        .join()
        .unwrap();
        assert_eq!(conditions.role, "full");
        let machine = std::thread::available_parallelism().unwrap().get() as u32;
        assert_eq!(
            conditions.cpus, machine,
            "the machine's CPUs, not the pinned one"
        );
        let cpu = conditions.cpu.expect("Linux lets a thread pin itself");
        assert!(cpu < conditions.cpus.max(cpu + 1));
        assert!(conditions.load_before.is_some() && conditions.load_after.is_some());
        assert!(conditions.calibration_ns.is_some_and(|ns| ns > 0.0));
    }

    #[test]
    fn a_load_above_the_free_cpus_is_flagged() {
        let mut conditions = Conditions {
            role: "samples".into(),
            cpu: Some(1),
            load_before: Some(1.1),
            load_after: Some(1.9),
            governor: None,
            cpus: 2,
            calibration_ns: None,
            memory_probe_before_ns: None,
            memory_probe_after_ns: None,
            started_unix_ms: None,
        };
        // The measuring process is about 1 of the load: up to 2 on 2 CPUs is quiet.
        assert!(!conditions.under_load());
        conditions.load_after = Some(2.3);
        assert!(conditions.under_load());
    }
}
