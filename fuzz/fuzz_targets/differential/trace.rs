//! What the queue was asked, kept for the panic hook to print.

use super::*;

/// What the queue was asked, as the trace of a failure shows it (timers by their index,
/// which is also their value).
#[derive(Debug, Clone, Copy)]
#[allow(
    dead_code,
    reason = "the fields are read through Debug, by the panic hook"
)]
pub(crate) enum Event {
    Start {
        timer: usize,
        deadline: Tick,
    },
    Stop {
        timer: usize,
    },
    StopForged {
        id: TimerId,
    },
    Restart {
        old: Option<usize>,
        timer: usize,
        deadline: Tick,
    },
    Advance {
        to: Tick,
    },
    NextDeadline,
}

/// The implementation being run and what it was asked so far: kept where the panic hook
/// can print it, since libFuzzer's hook aborts before anything unwinds.
pub(crate) struct Trace {
    pub(crate) label: String,
    pub(crate) events: Vec<Event>,
}

thread_local! {
    pub(crate) static TRACE: RefCell<Trace> = const {
        RefCell::new(Trace { label: String::new(), events: Vec::new() })
    };
}

pub(crate) fn log(event: Event) {
    TRACE.with_borrow_mut(|trace| trace.events.push(event));
}

/// Prints the implementation and its last events after any panic (a failed check or a
/// panic inside the queue), then hands over to libFuzzer's hook.
pub(crate) fn install_trace_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        TRACE.with(|trace| {
            if let Ok(trace) = trace.try_borrow() {
                let skipped = trace.events.len().saturating_sub(60);
                let mut text = format!(
                    "\n{}: {} events; the last {}:\n",
                    trace.label,
                    trace.events.len(),
                    trace.events.len() - skipped
                );
                for (n, event) in trace.events.iter().enumerate().skip(skipped) {
                    let _ = writeln!(text, "  #{n}: {event:?}");
                }
                eprintln!("{text}");
            }
        });
        previous(info);
    }));
}
