//! The knobs that decide lateness, set on the loop thread and recorded: timer slack, the
//! scheduling policy, CPU pinning; and the descriptor limit a run needs.
//!
//! Each is checked before a run starts, so that a refused knob is one message and a
//! non-zero exit rather than a run measured under other conditions than asked.

use crate::sys;
use std::fmt;
use std::str::FromStr;

/// A scheduling policy for the loop thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// SCHED_OTHER, the default: timer slack applies.
    Other,
    /// SCHED_FIFO at a priority (1 to 99): no slack, no preemption by normal threads.
    Fifo(i32),
    /// SCHED_RR at a priority (1 to 99).
    RoundRobin(i32),
}

impl Policy {
    /// `other`, `fifo` or `rr`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Fifo(_) => "fifo",
            Policy::RoundRobin(_) => "rr",
        }
    }

    /// The real-time priority (0 for `other`).
    pub fn priority(self) -> i32 {
        match self {
            Policy::Other => 0,
            Policy::Fifo(p) | Policy::RoundRobin(p) => p,
        }
    }

    /// Puts the calling thread under this policy, or says why it cannot.
    pub fn apply(self) -> Result<(), String> {
        let (policy, priority) = match self {
            Policy::Other => (libc::SCHED_OTHER, 0),
            Policy::Fifo(p) => (libc::SCHED_FIFO, p),
            Policy::RoundRobin(p) => (libc::SCHED_RR, p),
        };
        sys::set_scheduler(policy, priority).map_err(|error| {
            if error.raw_os_error() == Some(libc::EPERM) {
                format!(
                    "--policy {self}: the kernel refused a real-time policy (EPERM); it needs \
                     root, CAP_SYS_NICE, or an RLIMIT_RTPRIO of at least {priority} (`ulimit -r`). \
                     Run as root, or without --policy (normal scheduling)"
                )
            } else {
                format!("--policy {self}: sched_setscheduler: {error}")
            }
        })
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Other => f.write_str("other"),
            Policy::Fifo(p) => write!(f, "fifo:{p}"),
            Policy::RoundRobin(p) => write!(f, "rr:{p}"),
        }
    }
}

impl FromStr for Policy {
    type Err = String;

    /// `other`, `fifo[:PRIORITY]` or `rr[:PRIORITY]` (priority 1 to 99, default 50).
    fn from_str(text: &str) -> Result<Policy, String> {
        let (name, priority) = match text.split_once(':') {
            Some((name, priority)) => (name, Some(priority)),
            None => (text, None),
        };
        let priority = match priority {
            None => 50,
            Some(p) => p
                .parse::<i32>()
                .ok()
                .filter(|p| (1..=99).contains(p))
                .ok_or_else(|| format!("`{text}`: the priority must be 1 to 99"))?,
        };
        match name {
            "other" if text == "other" => Ok(Policy::Other),
            "fifo" => Ok(Policy::Fifo(priority)),
            "rr" => Ok(Policy::RoundRobin(priority)),
            _ => Err(format!(
                "`{text}`: the policy is other, fifo[:PRIORITY] or rr[:PRIORITY]"
            )),
        }
    }
}

/// Sets the calling thread's timer slack (if asked) and returns the value in force.
pub fn apply_slack(slack_ns: Option<u64>) -> Result<u64, String> {
    if let Some(ns) = slack_ns {
        sys::set_timer_slack(ns)
            .map_err(|e| format!("--slack {ns}: prctl(PR_SET_TIMERSLACK): {e}"))?;
    }
    Ok(sys::timer_slack())
}

/// Pins the calling thread to `cpu`, or says why not.
pub fn pin(cpu: usize, flag: &str) -> Result<(), String> {
    sys::pin_to(cpu).map_err(|e| {
        format!(
            "{flag} {cpu}: cannot pin there ({e}); this process may run on CPUs {:?}",
            sys::available_cpus()
        )
    })
}

/// The `(soft, hard)` descriptor limit to set so that `needed` descriptors may be open,
/// given the current `(soft, hard)`: `None` if it is enough already. Above the hard limit
/// both are raised, which needs root or CAP_SYS_RESOURCE ([`ensure_descriptors`] says so
/// when refused).
pub fn descriptor_plan(needed: u64, soft: u64, hard: u64) -> Option<(u64, u64)> {
    if soft >= needed {
        None
    } else {
        Some((needed, hard.max(needed)))
    }
}

/// The message for a descriptor limit that cannot be raised to `needed`.
fn descriptors_refused(needed: u64, hard: u64, error: &std::io::Error) -> String {
    format!(
        "this run needs {needed} open descriptors, but the hard limit is {hard} and the \
         kernel refused to raise it ({error}): raising it needs root or CAP_SYS_RESOURCE, \
         and at most /proc/sys/fs/nr_open ({}). Raise it (as root: `ulimit -Hn {needed}`, \
         or `nofile` in /etc/security/limits.conf, or LimitNOFILE= for a service) and run \
         again",
        std::fs::read_to_string("/proc/sys/fs/nr_open")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into())
    )
}

/// Makes sure the process may open `needed` descriptors: raises the soft limit, and the
/// hard one too when it is below (allowed to root), or says why it cannot.
pub fn ensure_descriptors(needed: u64) -> Result<(), String> {
    let (soft, hard) = sys::descriptor_limit().map_err(|e| format!("getrlimit(NOFILE): {e}"))?;
    if let Some((new_soft, new_hard)) = descriptor_plan(needed, soft, hard) {
        sys::set_descriptor_limit(new_soft, new_hard)
            .map_err(|e| descriptors_refused(needed, hard, &e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_bad_ones_say_what_is_accepted() {
        assert_eq!("other".parse(), Ok(Policy::Other));
        assert_eq!("fifo".parse(), Ok(Policy::Fifo(50)));
        assert_eq!("rr:10".parse(), Ok(Policy::RoundRobin(10)));
        assert!("fifo:0".parse::<Policy>().unwrap_err().contains("1 to 99"));
        assert!("fifo:x".parse::<Policy>().unwrap_err().contains("1 to 99"));
        assert!(
            "batch"
                .parse::<Policy>()
                .unwrap_err()
                .contains("other, fifo")
        );
        assert!("other:3".parse::<Policy>().is_err());
    }

    #[test]
    fn the_descriptor_limit_is_raised_when_it_can_be_and_refused_when_not() {
        assert_eq!(descriptor_plan(100, 1024, 4096), None);
        assert_eq!(
            descriptor_plan(200_000, 1024, 1_048_576),
            Some((200_000, 1_048_576))
        );
        // Above the hard limit both are raised: the kernel allows it to root only.
        assert_eq!(
            descriptor_plan(200_000, 1024, 4096),
            Some((200_000, 200_000))
        );
        let error = std::io::Error::from_raw_os_error(libc::EPERM);
        let refused = descriptors_refused(200_000, 4096, &error);
        assert!(refused.contains("hard limit is 4096"), "{refused}");
        assert!(refused.contains("ulimit -Hn 200000"), "{refused}");
    }
}
