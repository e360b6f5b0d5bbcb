//! The `result` line: the same JSON object as the Go server's (live/src/engine_record),
//! written by hand so that the server needs no crate beyond tokio and libc.

use crate::sys::{self, Clock, Window};
use crate::Connection;
use std::fmt::Write;

/// Whose CPU time the phases count.
const CPU_OF: &str = "the whole server process, every thread (getrusage RUSAGE_SELF, user + \
    system), between the phase's ends as the process itself read them";
/// Why the wakeup counts are 0.
const WAKEUPS_OF: &str = "not counted: tokio counts no waits of its driver; the process's \
    voluntary context switches (a thread blocking, then woken) are in voluntary_switches";

fn string(out: &mut String, text: &str) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn window(out: &mut String, name: &str, w: Window) {
    let _ = write!(
        out,
        "\"{name}\":{{\"wall_ns\":{},\"cpu_ns\":{},\"voluntary_switches\":{},\
         \"involuntary_switches\":{}}}",
        w.wall_ns, w.cpu_ns, w.voluntary, w.involuntary
    );
}

/// Every keepalive read (connection, arrival index, sent, read) and every connection's
/// end (connection, how, when, its deadline then), for timerbench to check against the
/// client's send times; and the usage.
pub fn result(
    connections: &[Connection],
    flags: &[String],
    server: &str,
    version: &str,
    workload: Window,
    idle: Window,
    clock: Clock,
) -> String {
    let mut out = String::from("{\"runtime\":\"tokio\",\"runtime_version\":");
    string(&mut out, version);
    out.push_str(",\"runtime_flags\":[");
    for (i, flag) in flags.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(&mut out, flag);
    }
    out.push_str("],\"reads\":[");
    let mut first = true;
    for read in connections.iter().flat_map(|c| &c.reads) {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        let _ = write!(out, "[{},{},{},{}]", read[0], read[1], read[2], read[3]);
    }
    out.push_str("],\"ends\":[");
    for (i, c) in connections.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "[{},{},{},{}]", c.slot, c.how, c.close_ns, c.deadline);
    }
    let rearmed: u64 = connections.iter().map(|c| c.rearmed).sum();
    let _ = write!(out, "],\"rearmed\":{rearmed},\"problems\":[");
    for (i, problem) in connections
        .iter()
        .filter_map(|c| c.problem.as_deref())
        .enumerate()
    {
        if i > 0 {
            out.push(',');
        }
        string(&mut out, problem);
    }
    out.push_str("],");
    window(&mut out, "workload", workload);
    out.push(',');
    window(&mut out, "idle", idle);
    let _ = write!(
        out,
        ",\"gc_cycles\":0,\"gc_pause_ns\":0,\"calibration_ns\":{},\"peak_rss_bytes\":{},",
        clock.gap_ns,
        sys::peak_rss_bytes()
    );
    out.push_str("\"server\":");
    string(&mut out, server);
    out.push_str(",\"cpu_of\":");
    string(&mut out, CPU_OF);
    out.push_str(",\"wakeups_of\":");
    string(&mut out, WAKEUPS_OF);
    out.push('}');
    out
}
