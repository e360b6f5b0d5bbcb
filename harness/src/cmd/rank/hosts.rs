//! `timerbench rank` over runs of one plan from several hosts: each host's environment and
//! rankings, then the pairs whose order flips between two hosts beyond both hosts' noise
//! (the rule is the report crate's, [`timerbench_report::flips`]).

use crate::table::{Format, table};
use std::fmt::Write as _;
use timerbench_report::{HostRankings, HostsView};
use timerbench_results::counts::Metric;
use timerbench_results::stats::{MAD_TO_SIGMA, NOISE_K};

/// Every host's rankings under its environment, then the flips between each pair.
pub(super) fn render(view: &HostsView, format: Format, metric: Metric) -> String {
    let markdown = format == Format::Markdown;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} hosts side by side: each host's run ranked on its own, then the pairs of\n\
         implementations whose order at a size flips between two hosts, beyond both hosts'\n\
         noise (|a − b| > {NOISE_K} × √(σa² + σb²), σ = {MAD_TO_SIGMA} × the MAD of a cell's\n\
         samples, on each host).",
        view.hosts.len()
    );
    for (index, host) in view.hosts.iter().enumerate() {
        let title = format!("host {} ({})", letter(index), host.host);
        if markdown {
            let _ = writeln!(out, "\n## {title}\n");
        } else {
            let _ = writeln!(out, "\n== {title} ==");
        }
        let _ = writeln!(out, "{}", environment(host));
        out.push_str(&super::render(
            &host.folders,
            &host.rankings,
            format,
            metric,
        ));
    }
    for (a, b, flips) in &view.flips {
        let heading = format!(
            "Flips between host {} and host {}: {}",
            letter(*a),
            letter(*b),
            flips.len()
        );
        if markdown {
            let _ = writeln!(out, "\n## {heading}\n");
        } else {
            let _ = writeln!(out, "\n{heading}");
        }
        if flips.is_empty() {
            let _ = writeln!(
                out,
                "No pair's order differs between the two beyond both hosts' noise."
            );
            continue;
        }
        let ahead_a = format!("ahead on {}", letter(*a));
        let ahead_b = format!("ahead on {}", letter(*b));
        let by_a = format!(">by, on {}", letter(*a));
        let by_b = format!(">by, on {}", letter(*b));
        let header = [
            "workload",
            ">timers",
            ahead_a.as_str(),
            ahead_b.as_str(),
            by_a.as_str(),
            by_b.as_str(),
        ];
        let rows = flips
            .iter()
            .map(|flip| {
                vec![
                    flip.workload.clone(),
                    flip.timers.to_string(),
                    flip.ahead_on_first.clone(),
                    flip.ahead_on_second.clone(),
                    format!("{:.2}×", flip.margin_first),
                    format!("{:.2}×", flip.margin_second),
                ]
            })
            .collect();
        out.push_str(&table(&header, rows, format));
    }
    out
}

/// `A`, `B`, ... as the report labels runs.
fn letter(index: usize) -> String {
    let mut label = String::new();
    let mut n = index + 1;
    while n > 0 {
        label.insert(0, char::from(b'A' + ((n - 1) % 26) as u8));
        n = (n - 1) / 26;
    }
    label
}

/// A host's environment in one line: the CPU, cores, memory, system, revision and the
/// memory probe's median (how fast its shared cache and memory answered).
fn environment(host: &HostRankings) -> String {
    let probe = host
        .memory_probe_ns
        .map_or("not recorded".to_string(), |ns| format!("{ns:.1} ns"));
    match &host.environment {
        Some(e) => format!(
            "{}, {} cores, {:.1} GiB, {}, revision {}, memory probe {probe}",
            e.cpu,
            e.cores,
            e.memory_bytes as f64 / (1u64 << 30) as f64,
            e.os,
            e.git_revision
        ),
        None => format!("no environment.json; memory probe {probe}"),
    }
}
