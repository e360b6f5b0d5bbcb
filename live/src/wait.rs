//! The wait strategies: how the loop sleeps until its next deadline or the next I/O.
//!
//! | name | sleep | timeout |
//! | --- | --- | --- |
//! | `pwait2` | `epoll_pwait2` | the deadline minus now, in nanoseconds |
//! | `wait` | `epoll_wait` | in milliseconds, rounded up (as mio does since #1615: truncating spins) |
//! | `timerfd` | `epoll_wait(-1)` on a timerfd armed at the deadline (absolute) | none |
//! | `tick` | `epoll_wait(-1)` on a periodic timerfd (absolute, from the loop's start) | none |
//!
//! The first three are deadline-driven: they sleep to the structure's next deadline and
//! not at all while no timer is pending. `tick` wakes every period whatever is pending, as
//! a walking structure's worker does. A wait interrupted by a signal (EINTR) is retried
//! towards the same absolute end, never with its whole timeout again.

use crate::sys::{self, Epoll, Event, Pwait2, TimerFd};
use std::fmt;
use std::io;
use std::os::fd::RawFd;

/// The epoll token of the loop's timerfd.
pub const TIMER_TOKEN: u64 = u64::MAX;

/// How the loop sleeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// `epoll_pwait2`, nanosecond timeout to the next deadline.
    Pwait2,
    /// `epoll_wait`, millisecond timeout rounded up.
    Wait,
    /// A timerfd armed at the next deadline, absolute.
    Timerfd,
    /// A periodic timerfd every `period_ns`, whatever is pending.
    Tick {
        /// The period, in nanoseconds.
        period_ns: u64,
    },
}

impl Strategy {
    /// Its name on the command line and in records: `pwait2`, `wait`, `timerfd`, `tick`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Pwait2 => "pwait2",
            Strategy::Wait => "wait",
            Strategy::Timerfd => "timerfd",
            Strategy::Tick { .. } => "tick",
        }
    }

    /// Whether it sleeps to the next deadline (rather than every period).
    pub fn is_deadline_driven(self) -> bool {
        !matches!(self, Strategy::Tick { .. })
    }

    /// The period of `tick`, else `None`.
    pub fn period_ns(self) -> Option<u64> {
        match self {
            Strategy::Tick { period_ns } => Some(period_ns),
            _ => None,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Tick { period_ns } => write!(f, "tick/{}us", period_ns / 1000),
            other => f.write_str(other.name()),
        }
    }
}

/// What one wait returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Woken {
    /// CLOCK_MONOTONIC when the wait returned.
    pub returned_ns: u64,
    /// Whether a descriptor other than the timerfd was readable.
    pub io: bool,
    /// The timerfd's expirations read (a periodic one's missed ticks show as more than 1).
    pub expirations: u64,
}

/// The message for a kernel without `epoll_pwait2`.
pub const NO_PWAIT2: &str = "epoll_pwait2 is not available on this kernel (ENOSYS: it needs \
     Linux 5.11 or later); choose another wait strategy with --wait wait,timerfd,tick";

/// A strategy bound to the loop's epoll instance.
pub struct Waiter {
    strategy: Strategy,
    timerfd: Option<TimerFd>,
    /// The absolute time the one-shot timerfd is armed at, to re-arm only on a change.
    armed_ns: Option<u64>,
    /// Re-arms of the timerfd (a syscall each).
    pub rearms: u64,
    events: Vec<Event>,
    /// How many of `events` the last wait filled.
    ready: usize,
    pwait2: Pwait2,
}

impl Waiter {
    /// Binds `strategy` to `epoll`; `origin_ns` is the loop's time 0, from which a `tick`
    /// timerfd counts its periods. `pwait2` is the call to use ([`sys::epoll_pwait2`]
    /// outside tests); a kernel without it is refused here with [`NO_PWAIT2`], before any
    /// run.
    pub fn new(
        strategy: Strategy,
        epoll: &Epoll,
        origin_ns: u64,
        pwait2: Pwait2,
    ) -> Result<Waiter, String> {
        let mut events = vec![sys::empty_event(); 64];
        if strategy == Strategy::Pwait2 {
            probe_pwait2(pwait2, epoll.raw(), &mut events)?;
        }
        let timerfd = match strategy {
            Strategy::Timerfd | Strategy::Tick { .. } => {
                let timerfd = TimerFd::new().map_err(|e| format!("timerfd_create: {e}"))?;
                epoll
                    .add(timerfd.raw(), TIMER_TOKEN)
                    .map_err(|e| format!("epoll_ctl(timerfd): {e}"))?;
                if let Strategy::Tick { period_ns } = strategy {
                    timerfd
                        .arm(origin_ns + period_ns, period_ns)
                        .map_err(|e| format!("timerfd_settime: {e}"))?;
                }
                Some(timerfd)
            }
            Strategy::Pwait2 | Strategy::Wait => None,
        };
        Ok(Waiter {
            strategy,
            timerfd,
            armed_ns: None,
            rearms: 0,
            events,
            ready: 0,
            pwait2,
        })
    }

    /// The tokens of the descriptors other than the timerfd that the last wait found ready.
    pub fn ready_tokens(&self) -> impl Iterator<Item = u64> + '_ {
        self.events[..self.ready]
            .iter()
            .map(|event| event.u64)
            .filter(|&token| token != TIMER_TOKEN)
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Sleeps until `until_ns` (absolute; `None`: until I/O, or for `tick` the next period)
    /// or until a watched descriptor is readable.
    pub fn wait(&mut self, epoll: &Epoll, until_ns: Option<u64>) -> io::Result<Woken> {
        if self.strategy == Strategy::Timerfd && self.armed_ns != until_ns {
            let timerfd = self.timerfd.as_ref().expect("timerfd strategy has one");
            // 0 disarms; a deadline is never at time 0 of CLOCK_MONOTONIC.
            timerfd.arm(until_ns.unwrap_or(0), 0)?;
            self.armed_ns = until_ns;
            self.rearms += 1;
        }
        let ready = loop {
            let result = match self.strategy {
                Strategy::Pwait2 => {
                    let timeout = until_ns.map(|end| end.saturating_sub(sys::now_ns()));
                    (self.pwait2)(epoll.raw(), &mut self.events, timeout)
                }
                Strategy::Wait => {
                    let timeout = until_ns.map_or(-1, |end| {
                        milliseconds_rounded_up(end.saturating_sub(sys::now_ns()))
                    });
                    epoll.wait_ms(&mut self.events, timeout)
                }
                Strategy::Timerfd | Strategy::Tick { .. } => epoll.wait_ms(&mut self.events, -1),
            };
            match result {
                Ok(ready) => break ready,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
        };
        let returned_ns = sys::now_ns();
        self.ready = ready;
        let mut woken = Woken {
            returned_ns,
            ..Woken::default()
        };
        for event in &self.events[..ready] {
            if event.u64 == TIMER_TOKEN {
                let timerfd = self.timerfd.as_ref().expect("a timer token has a timerfd");
                woken.expirations += timerfd.expirations();
                if self.strategy == Strategy::Timerfd {
                    // A one-shot that expired is disarmed: the next wait must re-arm it.
                    self.armed_ns = None;
                }
            } else {
                woken.io = true;
            }
        }
        Ok(woken)
    }
}

/// A timeout in milliseconds for `epoll_wait`, rounded up so that the wait never ends
/// before the deadline (truncating makes a sub-millisecond wait return at once and spin),
/// capped at what an `int` holds.
pub fn milliseconds_rounded_up(ns: u64) -> libc::c_int {
    ns.div_ceil(1_000_000).min(libc::c_int::MAX as u64) as libc::c_int
}

/// Calls `pwait2` once with a zero timeout: ENOSYS (a kernel before 5.11, or a seccomp
/// filter that refuses it) becomes [`NO_PWAIT2`].
fn probe_pwait2(pwait2: Pwait2, epfd: RawFd, events: &mut [Event]) -> Result<(), String> {
    match pwait2(epfd, events, Some(0)) {
        Ok(_) => Ok(()),
        Err(error) if error.raw_os_error() == Some(libc::ENOSYS) => Err(NO_PWAIT2.to_string()),
        Err(error) => Err(format!("epoll_pwait2: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(_: RawFd, _: &mut [Event], _: Option<u64>) -> io::Result<usize> {
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }

    #[test]
    fn a_kernel_without_epoll_pwait2_is_refused_with_the_message() {
        let epoll = Epoll::new().unwrap();
        let error = Waiter::new(Strategy::Pwait2, &epoll, sys::now_ns(), missing)
            .err()
            .expect("ENOSYS must refuse the strategy");
        assert_eq!(error, NO_PWAIT2);
        // The other strategies do not need it.
        assert!(Waiter::new(Strategy::Wait, &epoll, sys::now_ns(), missing).is_ok());
    }

    #[test]
    fn milliseconds_round_up_and_cap() {
        assert_eq!(milliseconds_rounded_up(0), 0);
        assert_eq!(milliseconds_rounded_up(1), 1);
        assert_eq!(milliseconds_rounded_up(1_000_000), 1);
        assert_eq!(milliseconds_rounded_up(1_000_001), 2);
        assert_eq!(milliseconds_rounded_up(u64::MAX), libc::c_int::MAX);
    }
}
