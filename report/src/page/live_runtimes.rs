//! The Live section's table of the idle-timeout servers side by side: the deployed
//! runtimes' own (`timerbench live --tcp --engine`) beside timerbench's loop around its
//! best exact structure and the ring, from one `live.jsonl`'s records. The rows are
//! [`crate::runtimes`]'s, the same that `timerbench live --tcp` prints.

use crate::figures::thousands;
use crate::live::{micros, per_second};
use crate::runtimes::{self, RuntimeRow};
use maud::{Markup, html};
use timerbench_results::live::LiveRecord;

/// The table and its notes, when an engine's server is among `records`.
pub(super) fn table(records: &[LiveRecord]) -> Option<Markup> {
    let rows = runtimes::rows(records);
    if rows.is_empty() {
        return None;
    }
    let notes = runtimes::footnotes(&rows, records);
    Some(html! {
        h4 { "The idle timeout: deployed runtimes beside timerbench's loop" }
        p.note {
            "Each runtime's idiomatic keepalive server and timerbench's loop on the same \
             client, the same schedule of keepalives and the same checks (docs/live.md, "
            em { "Another runtime's server" } "), one row per server and connection count, \
             each figure the median over its runs."
        }
        div.scroll {
            table.cells.live.runtimes {
                tr.group {
                    th colspan="8" {}
                    th.sep colspan="3" { "close lateness, µs" }
                    th.sep colspan="2" {}
                    th.sep colspan="3" { "bare loop, µs" }
                }
                tr {
                    th { "Server" }
                    th { "side" }
                    th { "runtime" }
                    th { "io" }
                    th.num title="connections, and why that many" { "connections" }
                    th { "status" }
                    th.num title="CPU milliseconds per wall second, workload phase" { "CPU ms/s" }
                    th.num title="waits that returned per second; – where the runtime counts none (below)" {
                        "wake-ups/s"
                    }
                    th.num.sep { "p50" } th.num { "p99" } th.num { "max" }
                    th.num.sep title="closed although a keepalive came within the timeout" {
                        "closed wrongly"
                    }
                    th.num title="the server's peak resident set over its connections" {
                        "RSS KiB/conn"
                    }
                    th.num.sep { "p50" } th.num { "p99" } th.num { "max" }
                }
                @for row in &rows { (row_cells(row)) }
            }
        }
        ul.note { @for note in &notes { li { (note) } } }
    })
}

fn row_cells(row: &RuntimeRow) -> Markup {
    let dash = || "–".to_string();
    let three =
        |spread: Option<[u64; 3]>| spread.map_or([dash(), dash(), dash()], |s| s.map(micros));
    let [l50, l99, lmax] = three(row.close_lateness);
    let [b50, b99, bmax] = three(row.baseline);
    let ran = row.cpu_ms_per_second.is_some();
    html! {
        tr data-structure=(row.server) {
            td { span.impl { (row.server) } }
            td { (row.side.words()) }
            td { (row.runtime) }
            td { (row.io) }
            td.num { @if ran { (runtimes::size_words(row)) } @else { (dash()) } }
            td { span.badge.(row.status) { (row.status) } " " (row.verified) "/" (row.runs) }
            td.num { (row.cpu_ms_per_second.map_or_else(dash, |c| format!("{c:.2}"))) }
            td.num { (row.wakeups_per_second.map_or_else(dash, per_second)) }
            td.num.sep { (l50) } td.num { (l99) } td.num { (lmax) }
            td.num.sep { @if ran { (thousands(row.closed_wrongly)) } @else { (dash()) } }
            td.num {
                (row.rss_per_connection.map_or_else(dash, |b| format!("{:.1}", b / 1024.0)))
            }
            td.num.sep { (b50) } td.num { (b99) } td.num { (bmax) }
        }
    }
}
