//! The clock and the process's usage, as timerbench reads them: CLOCK_MONOTONIC and
//! getrusage(RUSAGE_SELF).

use std::time::{Duration, Instant};

/// CLOCK_MONOTONIC in ns, as timerbench and its client read it.
pub fn mono_now() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Turns CLOCK_MONOTONIC instants, timerbench's clock, into tokio's instants: Rust's
/// `Instant` reads the same clock on Linux but never shows its absolute value.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    base: Instant,
    base_mono: i64,
    /// The closest pair's gap: how late a deadline set through it may fall, at most.
    pub gap_ns: i64,
}

impl Clock {
    /// Pairs `Instant::now` with CLOCK_MONOTONIC read just before it, the closest pair of
    /// 16: the `Instant` is then at or after the one paired with it, so a deadline given
    /// through it falls at or after the instant asked for, never early.
    pub fn calibrate() -> Clock {
        let mut best: Option<Clock> = None;
        for _ in 0..16 {
            let before = mono_now();
            let now = Instant::now();
            let gap_ns = mono_now() - before;
            if best.is_none_or(|b| gap_ns < b.gap_ns) {
                best = Some(Clock {
                    base: now,
                    base_mono: before,
                    gap_ns,
                });
            }
        }
        best.expect("sixteen tries")
    }

    /// The tokio instant of CLOCK_MONOTONIC `mono` ns.
    pub fn at(&self, mono: i64) -> tokio::time::Instant {
        let offset = Duration::from_nanos(mono.abs_diff(self.base_mono));
        let at = if mono >= self.base_mono {
            self.base + offset
        } else {
            self.base.checked_sub(offset).unwrap_or(self.base)
        };
        tokio::time::Instant::from_std(at)
    }
}

/// The process's usage over a phase: every thread's.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub wall_ns: i64,
    pub cpu_ns: i64,
    pub voluntary: i64,
    pub involuntary: i64,
}

fn rusage() -> libc::rusage {
    // SAFETY: rusage is plain data, zero is a valid value, and getrusage fills it.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    }
}

impl Window {
    /// The usage so far, to subtract at the phase's end.
    pub fn begin() -> Window {
        let ru = rusage();
        let ns = |t: libc::timeval| t.tv_sec * 1_000_000_000 + t.tv_usec * 1_000;
        Window {
            wall_ns: mono_now(),
            cpu_ns: ns(ru.ru_utime) + ns(ru.ru_stime),
            voluntary: ru.ru_nvcsw,
            involuntary: ru.ru_nivcsw,
        }
    }

    /// The usage since `self` began.
    pub fn end(self) -> Window {
        let now = Window::begin();
        Window {
            wall_ns: now.wall_ns - self.wall_ns,
            cpu_ns: now.cpu_ns - self.cpu_ns,
            voluntary: now.voluntary - self.voluntary,
            involuntary: now.involuntary - self.involuntary,
        }
    }
}

/// The process's peak resident set, bytes (getrusage's `ru_maxrss` is in KiB).
pub fn peak_rss_bytes() -> u64 {
    rusage().ru_maxrss as u64 * 1024
}
