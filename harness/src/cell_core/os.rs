//! What the cell asks of the operating system: glibc's allocator tuned for measuring (by
//! re-executing the process, since glibc reads its tunables only at start-up), and the
//! readers of the process's figures: its page faults (`getrusage`), and from `/proc` its
//! peak RSS, which no portable API gives.
//!
//! The tuning is Linux with glibc only, behind `cfg`; elsewhere the allocator is left as it
//! is. The readers are not behind `cfg`: where they cannot read they say so (0 page
//! faults, or why the peak RSS is unknown) and the cell goes on.

/// The environment variable that marks a process already re-executed by
/// [`tune_allocator`].
const TUNED: &str = "TIMERBENCH_CELL_TUNED";

/// glibc's allocator settings for a measuring process: never `mmap` a block (so that a
/// large block freed by one pass is reused, already faulted in, by the next, instead of
/// being unmapped and faulted in afresh inside a timed replay), and never give the heap's
/// top back to the kernel. Without them a large queue's timed repeats pay minor page
/// faults inside `drive` (its memory fresh each time); with them, none (METHODOLOGY.md,
/// *How a cell is measured*).
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
const GLIBC_TUNABLES: &str =
    "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=18446744073709551615";

/// Huge pages for the allocator's memory, when `TIMERBENCH_CELL_HUGE_PAGES=1`: glibc
/// `madvise`s its heap for transparent huge pages, so that where a queue's arrays land
/// in physical memory matters less (a 2 MiB page is contiguous).
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
const HUGE_PAGES: &str = "glibc.malloc.hugetlb=1";

/// Whether the environment variable `name` is `1`: the switches for studying what makes
/// two processes measure differently (`TIMERBENCH_CELL_HUGE_PAGES`,
/// `TIMERBENCH_CELL_NO_ASLR`).
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
fn switched_on(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| value == "1")
}

/// Re-executes this very binary (`/proc/self/exe`, the same file even if it was replaced
/// on disk since), with the same arguments and standard streams, under
/// [`GLIBC_TUNABLES`], unless this process is that re-execution already. glibc reads its
/// tunables only at start-up. If the re-execution fails, the cell goes on untuned.
///
/// Two more settings, off unless asked for, to study the variance between processes:
/// `TIMERBENCH_CELL_HUGE_PAGES=1` adds [`HUGE_PAGES`], and `TIMERBENCH_CELL_NO_ASLR=1`
/// turns address-space randomisation off for the re-executed process (every process then
/// has the same virtual layout).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn tune_allocator() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(TUNED).is_some() {
        return;
    }
    let mut ours = GLIBC_TUNABLES.to_string();
    if switched_on("TIMERBENCH_CELL_HUGE_PAGES") {
        ours = format!("{ours}:{HUGE_PAGES}");
    }
    if switched_on("TIMERBENCH_CELL_NO_ASLR") {
        // SAFETY: `personality` only sets a flag of this process, read at the next
        // `exec`; it touches no memory of ours.
        unsafe {
            let current = libc::personality(0xffff_ffff);
            if current != -1 {
                libc::personality(
                    (current as libc::c_ulong) | libc::ADDR_NO_RANDOMIZE as libc::c_ulong,
                );
            }
        }
    }
    let tunables = match std::env::var("GLIBC_TUNABLES") {
        Ok(given) if !given.is_empty() => format!("{given}:{ours}"),
        _ => ours,
    };
    let mut arguments = std::env::args_os();
    let name = arguments.next().unwrap_or_else(|| "timerbench".into());
    // `exec` returns only on failure.
    let error = std::process::Command::new("/proc/self/exe")
        .arg0(name)
        .args(arguments)
        .env("GLIBC_TUNABLES", tunables)
        .env(TUNED, "1")
        .exec();
    eprintln!("timerbench: note: running with the default allocator settings: {error}");
}

/// The environment a process started under Valgrind is given so that [`tune_allocator`]
/// does not re-execute it (that `exec` would leave the tool) and it still runs with the
/// allocator settings a re-executed process has.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn tuned_environment() -> Vec<(&'static str, String)> {
    let tunables = match std::env::var("GLIBC_TUNABLES") {
        Ok(given) if !given.is_empty() => format!("{given}:{GLIBC_TUNABLES}"),
        _ => GLIBC_TUNABLES.to_string(),
    };
    vec![(TUNED, "1".to_string()), ("GLIBC_TUNABLES", tunables)]
}

/// Elsewhere nothing is re-executed, so nothing is needed.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn tuned_environment() -> Vec<(&'static str, String)> {
    Vec::new()
}

/// Elsewhere the allocator is left as it is.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn tune_allocator() {}

/// The `GLIBC_TUNABLES` this process runs under when [`tune_allocator`] re-executed it
/// (empty if unset), or `None` when it runs with the allocator's default settings.
pub fn allocator_tunables() -> Option<String> {
    std::env::var(TUNED)
        .ok()
        .map(|_| std::env::var("GLIBC_TUNABLES").unwrap_or_default())
}

/// Minor and major page faults of this process so far, from `getrusage(RUSAGE_SELF)`, or
/// `(0, 0)` where that fails.
pub fn page_faults() -> (u64, u64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `getrusage` writes one `rusage` through the pointer, which points to a
    // zeroed one of ours, and reads nothing else.
    let status = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if status != 0 {
        return (0, 0);
    }
    // SAFETY: zeroed is a valid `rusage` (integers only), and the call succeeded.
    let usage = unsafe { usage.assume_init() };
    (usage.ru_minflt as u64, usage.ru_majflt as u64)
}

/// The process's peak resident set, from `VmHWM` in `/proc/self/status`.
pub fn peak_rss_bytes() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .ok_or("no VmHWM in /proc/self/status")?;
    let kilobytes = line
        .trim()
        .strip_suffix("kB")
        .and_then(|n| n.trim().parse::<u64>().ok())
        .ok_or_else(|| format!("cannot read VmHWM `{}`", line.trim()))?;
    Ok(kilobytes * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_rss_is_read() {
        assert!(peak_rss_bytes().unwrap() > 1 << 20);
    }

    /// Any process has faulted pages in by the time it runs a test: a 0 would be the
    /// reader failing.
    #[test]
    #[cfg(target_os = "linux")]
    fn the_page_faults_are_read() {
        assert!(page_faults().0 > 0);
    }

    /// Touching fresh pages is counted by `getrusage` as minor faults.
    #[test]
    #[cfg(target_os = "linux")]
    fn fresh_pages_are_counted_as_minor_faults() {
        let (before, _) = page_faults();
        let pages = 256;
        let mut block = vec![0u8; pages * 4096];
        for page in block.chunks_mut(4096) {
            page[0] = 1;
        }
        std::hint::black_box(&block);
        let (after, _) = page_faults();
        assert!(after >= before + pages as u64 / 2, "{before} then {after}");
    }
}
