//! The Linux calls the live driver makes, each behind a small safe function: the clocks,
//! epoll (with `epoll_pwait2` through `syscall`, which libc does not wrap), timerfd, the
//! per-thread knobs (timer slack, scheduling policy, affinity) and the descriptor limit.
//!
//! Every `unsafe` block of the crate is here, each a single call whose pointers come from
//! live Rust values of the right type.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Nanoseconds in a second.
pub const NANOS_PER_SECOND: u64 = 1_000_000_000;

fn read_clock(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both clocks exist on every Linux.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime({clock}) failed");
    ts.tv_sec as u64 * NANOS_PER_SECOND + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC, in nanoseconds: the clock every live deadline is on.
#[inline]
pub fn now_ns() -> u64 {
    read_clock(libc::CLOCK_MONOTONIC)
}

/// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The calling thread's voluntary and involuntary context switches (RUSAGE_THREAD).
pub fn thread_context_switches() -> (u64, u64) {
    // SAFETY: rusage is plain data; zero is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    if rc != 0 {
        return (0, 0);
    }
    (usage.ru_nvcsw as u64, usage.ru_nivcsw as u64)
}

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / NANOS_PER_SECOND) as libc::time_t,
        tv_nsec: (ns % NANOS_PER_SECOND) as libc::c_long,
    }
}

/// Sleeps until `deadline_ns` on CLOCK_MONOTONIC (absolute, so a signal or a late start
/// does not stretch the schedule).
pub fn sleep_until(deadline_ns: u64) {
    let ts = timespec(deadline_ns);
    loop {
        // SAFETY: `ts` is a valid timespec; the remainder is unused with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// An epoll instance.
pub struct Epoll {
    fd: OwnedFd,
}

/// The event record epoll fills; `u64` is the token given at registration.
pub type Event = libc::epoll_event;

/// An empty event record, for the buffer a wait fills.
pub fn empty_event() -> Event {
    libc::epoll_event { events: 0, u64: 0 }
}

/// The `epoll_pwait2` call: epoll fd, buffer, timeout in ns (`None`: block). Injected, so
/// that a test can stand in for a kernel without it.
pub type Pwait2 = fn(RawFd, &mut [Event], Option<u64>) -> io::Result<usize>;

/// The real `epoll_pwait2(2)` (Linux 5.11), by syscall number.
pub fn epoll_pwait2(
    epfd: RawFd,
    events: &mut [Event],
    timeout_ns: Option<u64>,
) -> io::Result<usize> {
    let ts = timeout_ns.map(timespec);
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `events` is a writable buffer of `len` records; `ts_ptr` is null or points
    // at a live timespec; a null sigmask leaves the mask alone (the size is then unused).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_epoll_pwait2,
            epfd,
            events.as_mut_ptr(),
            events.len() as libc::c_int,
            ts_ptr,
            std::ptr::null::<libc::sigset_t>(),
            0usize,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

impl Epoll {
    /// A new epoll instance (close-on-exec).
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: no pointers; a returned descriptor is ours to own.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` was just returned open and is owned by nobody else.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// The raw descriptor, for [`Pwait2`].
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Watches `fd` for input (level-triggered), reporting `token`.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: `event` is a valid epoll_event for the duration of the call.
        check(unsafe { libc::epoll_ctl(self.raw(), libc::EPOLL_CTL_ADD, fd, &mut event) })?;
        Ok(())
    }

    /// Stops watching `fd`.
    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        // SAFETY: a null event is allowed for EPOLL_CTL_DEL since Linux 2.6.9.
        check(unsafe {
            libc::epoll_ctl(self.raw(), libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut())
        })?;
        Ok(())
    }

    /// `epoll_wait(2)` with a timeout in milliseconds (-1: block).
    pub fn wait_ms(&self, events: &mut [Event], timeout_ms: libc::c_int) -> io::Result<usize> {
        // SAFETY: `events` is a writable buffer of `len` records.
        let rc = unsafe {
            libc::epoll_wait(
                self.raw(),
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                timeout_ms,
            )
        };
        check(rc).map(|n| n as usize)
    }
}

/// A timerfd on CLOCK_MONOTONIC (non-blocking, close-on-exec).
pub struct TimerFd {
    fd: OwnedFd,
}

impl TimerFd {
    /// A new, disarmed timerfd.
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: no pointers; a returned descriptor is ours to own.
        let fd = check(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        // SAFETY: `fd` was just returned open and is owned by nobody else.
        Ok(TimerFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// The raw descriptor, for epoll.
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Arms it to expire at `first_ns` (absolute, CLOCK_MONOTONIC), then every
    /// `period_ns` (0: once); `first_ns == 0` disarms it.
    pub fn arm(&self, first_ns: u64, period_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: timespec(period_ns),
            it_value: timespec(first_ns),
        };
        // SAFETY: `spec` is a valid itimerspec; the old value is not asked for.
        check(unsafe {
            libc::timerfd_settime(
                self.raw(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    /// The expirations since the last read (0 if none: the descriptor is non-blocking).
    pub fn expirations(&self) -> u64 {
        let mut count = [0u8; 8];
        // SAFETY: `count` is 8 writable bytes, what a timerfd read fills.
        let rc = unsafe { libc::read(self.raw(), count.as_mut_ptr().cast(), 8) };
        if rc == 8 {
            u64::from_ne_bytes(count)
        } else {
            0
        }
    }
}

/// Makes `fd` non-blocking (`O_NONBLOCK`), keeping its other status flags.
pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: F_GETFL takes no pointer.
    let flags = check(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    // SAFETY: F_SETFL takes an integer.
    check(unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
    Ok(())
}

/// Sets the calling thread's timer slack (`PR_SET_TIMERSLACK`), in nanoseconds (0 means
/// "the default" to the kernel, so the least settable is 1).
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// The calling thread's timer slack (`PR_GET_TIMERSLACK`), in nanoseconds.
pub fn timer_slack() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer and returns the value.
    let rc = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    rc.max(0) as u64
}

/// Puts the calling thread under `policy` (`SCHED_FIFO`, `SCHED_RR`, `SCHED_OTHER`) at
/// `priority` (0 for `SCHED_OTHER`).
pub fn set_scheduler(policy: libc::c_int, priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    check(unsafe { libc::sched_setscheduler(0, policy, &param) })?;
    Ok(())
}

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: usize) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes inside `set`; `cpu` is checked against its size first.
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size given; pid 0 is the calling thread.
    check(unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) })?;
    Ok(())
}

/// The open-descriptor limit, `(soft, hard)`.
pub fn descriptor_limit() -> io::Result<(u64, u64)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit.
    check(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) })?;
    Ok((limit.rlim_cur, limit.rlim_max))
}

/// Sets the soft open-descriptor limit to `soft`, keeping the hard one.
pub fn set_descriptor_limit(soft: u64, hard: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: `limit` is a valid rlimit.
    check(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) })?;
    Ok(())
}

/// The CPUs this process may run on.
pub fn available_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size given.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, inside `set`.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}
