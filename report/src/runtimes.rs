//! The idle-timeout servers side by side (issue 46, item 2): the deployed runtimes' own
//! servers (`timerbench live --tcp --engine NAME`) beside timerbench's loop around its
//! best exact structure and around the ring of buckets, on the same client, the same
//! schedule and the same checks, one row per server and connection count.
//!
//! The rows are computed here, from `live.jsonl` records alone, so that `timerbench live
//! --tcp`'s table, the report's Live section and `timerbench reproduce`'s experiment read
//! the same rows and can never disagree.
//!
//! **Which loop rows.** timerbench's loop runs any structure; the table keeps two of those
//! run at each connection count: the *best exact* one (of the exact structures whose every
//! run verified, the one with the least median CPU per second: what an exact timer costs
//! in that loop at best) and the *ring* (`ring-buckets`, the seed's one-second buckets,
//! the least CPU of its runs if it ran with several waits). A structure that did not run
//! at a size has no row there.
//!
//! **Repeats.** A server run several times (`--repeat`) is one row: each figure the median
//! over its runs, its wrong closes summed (each one is a failure, not a sample).

use timerbench_results::live::{LiveRecord, Spread};
use timerbench_results::stats::median;

/// The `wait` of an engine server's record: the runtime's own poller.
const ENGINE_WAIT: &str = "runtime";

/// What a row is: a runtime's server, or timerbench's loop around one structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    /// timerbench's loop around its exact structure with the least CPU per second.
    BestExact,
    /// timerbench's loop around the ring of buckets.
    Ring,
    /// Another runtime's idiomatic server (an engine).
    Runtime,
}

impl Side {
    /// The side in words, as the tables show it.
    pub fn words(self) -> &'static str {
        match self {
            Side::BestExact => "timerbench, best exact",
            Side::Ring => "timerbench, ring",
            Side::Runtime => "runtime",
        }
    }
}

/// One server at one connection count, over its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeRow {
    /// The record's `implementation`: the engine's name or the structure's variant.
    pub server: String,
    pub side: Side,
    /// The runtime and its version and flags (`go go1.19.8`), or timerbench's loop with
    /// its wait (`timerbench loop, pwait2`).
    pub runtime: String,
    /// How the server held its connections (`epoll`, `io_uring x5`); empty when it did
    /// not run.
    pub io: String,
    /// Connections of the run.
    pub connections: u64,
    /// Why that many (the record's `tcp.connections_why`); empty in older records.
    pub connections_why: String,
    /// Its runs, and of those the verified ones.
    pub runs: usize,
    pub verified: usize,
    /// `verified` when every run verified, else the first other status (`unsupported`,
    /// `failed`, `unverified`).
    pub status: String,
    /// Why not verified, from the first such run's reasons.
    pub why: String,
    /// Median CPU milliseconds per wall second over the workload phase (an engine's whole
    /// process, the loop's one thread); `None` when it did not run.
    pub cpu_ms_per_second: Option<f64>,
    /// Median wake-ups per second; `None` where the runtime counts none.
    pub wakeups_per_second: Option<f64>,
    /// Median close lateness, p50, p99 and max, ns.
    pub close_lateness: Option<[u64; 3]>,
    /// Connections closed wrongly, summed over the runs: must be 0.
    pub closed_wrongly: u64,
    /// Median server peak RSS over the connections, bytes per connection.
    pub rss_per_connection: Option<f64>,
    /// The bare loop of the same runs, p50, p99 and max, ns (median over the runs).
    pub baseline: Option<[u64; 3]>,
}

/// Whether `record` is an engine's keepalive server's (run or not), not a structure's run
/// or an engine's `micro lateness` answer.
pub fn is_engine_server(record: &LiveRecord) -> bool {
    record.engine.is_some() && (record.tcp.is_some() || record.wait == ENGINE_WAIT)
}

/// The rows of `records`: none unless an engine's server is among them. Ordered by
/// connections, then the loop's best exact, its ring, then the runtimes in the order of
/// their first record.
pub fn rows(records: &[LiveRecord]) -> Vec<RuntimeRow> {
    if !records.iter().any(is_engine_server) {
        return Vec::new();
    }
    let groups = groups(records);
    let mut sizes: Vec<u64> = groups.iter().filter_map(|g| g.connections()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut out = Vec::new();
    for size in sizes {
        let at: Vec<&Group> = groups
            .iter()
            .filter(|g| g.connections() == Some(size))
            .collect();
        let loop_runs = |keep: &dyn Fn(&Group) -> bool| {
            at.iter()
                .filter(|g| !g.engine() && keep(g) && g.cpu().is_some())
                .min_by(|a, b| a.cpu().unwrap_or(0.0).total_cmp(&b.cpu().unwrap_or(0.0)))
                .copied()
        };
        let exact = |g: &Group| {
            g.runs
                .iter()
                .all(|r| r.precision == "exact" && r.status == "verified")
        };
        let ring = |g: &Group| base(&g.runs[0].implementation) == "ring-buckets";
        if let Some(best) = loop_runs(&exact) {
            out.push(best.row(Side::BestExact));
        }
        if let Some(ring) = loop_runs(&ring) {
            out.push(ring.row(Side::Ring));
        }
        for group in at.iter().filter(|g| g.engine()) {
            out.push(group.row(Side::Runtime));
        }
    }
    // An engine that did not run has no connection count of its own: at the end.
    for group in groups.iter().filter(|g| g.connections().is_none()) {
        out.push(group.row(Side::Runtime));
    }
    out
}

/// What the dashes and the columns of the table mean, from the rows and their records:
/// each runtime's own words for its CPU and its uncounted wake-ups.
pub fn footnotes(rows: &[RuntimeRow], records: &[LiveRecord]) -> Vec<String> {
    let mut notes = vec![
        "CPU ms/s: a runtime's whole process (every thread), timerbench's loop its one \
         thread (the loop has no other busy thread); close lateness: each close after its \
         deadline; wrongly: closed although a keepalive came within the timeout (must be 0); \
         RSS per connection: the server's peak resident set over its connections; baseline: \
         the bare loop of the same runs, sleeping to the same deadlines"
            .to_string(),
        "best exact: of timerbench's exact structures run at that size with every run \
         verified, the one with the least CPU per second; ring: ring-buckets"
            .to_string(),
    ];
    let mut seen: Vec<&str> = Vec::new();
    for row in rows.iter().filter(|r| r.wakeups_per_second.is_none()) {
        let said = records
            .iter()
            .filter(|r| r.implementation == row.server)
            .find_map(|r| r.engine.as_ref().map(|e| e.wakeups_of.as_str()))
            .filter(|w| !w.is_empty());
        if let Some(said) = said
            && !seen.contains(&said)
        {
            seen.push(said);
            notes.push(format!("wake-ups – for {}: {said}", row.server));
        }
    }
    for row in rows.iter().filter(|r| r.status != "verified") {
        notes.push(format!("{}: {} ({})", row.server, row.status, row.why));
    }
    notes
}

/// The connections cell: `19,000` and why, `19,000: the hard descriptor limit is 20,000`.
pub fn size_words(row: &RuntimeRow) -> String {
    let count = crate::figures::thousands(row.connections);
    match row.connections_why.as_str() {
        "" => count,
        why => format!("{count}: {why}"),
    }
}

/// The runs of one server at one connection count.
struct Group<'a> {
    runs: Vec<&'a LiveRecord>,
}

/// A variant's base name: `ring-buckets` of `ring-buckets:width=500`.
fn base(implementation: &str) -> &str {
    implementation.split(':').next().unwrap_or(implementation)
}

/// The TCP records of a server, by (implementation, wait, connections), in the order of
/// their first record; an engine server that did not run (no TCP figures) is a group too.
fn groups(records: &[LiveRecord]) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for record in records
        .iter()
        .filter(|r| r.tcp.is_some() || is_engine_server(r))
    {
        let key = |r: &LiveRecord| {
            (
                r.implementation.clone(),
                r.wait.clone(),
                r.period_ns,
                r.tcp.as_ref().map(|t| t.connections),
            )
        };
        match out.iter_mut().find(|g| key(g.runs[0]) == key(record)) {
            Some(group) => group.runs.push(record),
            None => out.push(Group { runs: vec![record] }),
        }
    }
    out
}

impl Group<'_> {
    fn engine(&self) -> bool {
        self.runs[0].engine.is_some()
    }

    fn connections(&self) -> Option<u64> {
        self.runs[0].tcp.as_ref().map(|t| t.connections)
    }

    /// The runs that measured something: those with TCP figures.
    fn measured(&self) -> Vec<&LiveRecord> {
        self.runs
            .iter()
            .copied()
            .filter(|r| r.tcp.is_some())
            .collect()
    }

    /// The median of `of` over the runs that measured something; `None` without one.
    fn over_runs(&self, of: impl Fn(&LiveRecord) -> f64) -> Option<f64> {
        let values: Vec<f64> = self.measured().into_iter().map(of).collect();
        (!values.is_empty()).then(|| median(&values))
    }

    fn cpu(&self) -> Option<f64> {
        self.over_runs(|r| r.workload_phase.cpu_ms_per_second)
    }

    fn spread(&self, of: impl Fn(&LiveRecord) -> &Spread) -> Option<[u64; 3]> {
        let measured = self.measured();
        if measured.iter().any(|r| of(r).count == 0) {
            return None;
        }
        let at = |pick: fn(&Spread) -> u64| {
            let values: Vec<f64> = measured.iter().map(|r| pick(of(r)) as f64).collect();
            (!values.is_empty()).then(|| median(&values).round() as u64)
        };
        Some([at(|s| s.p50_ns)?, at(|s| s.p99_ns)?, at(|s| s.max_ns)?])
    }

    fn row(&self, side: Side) -> RuntimeRow {
        let first = self.runs[0];
        let tcp = first.tcp.clone().unwrap_or_default();
        let verified = self.runs.iter().filter(|r| r.status == "verified").count();
        let other = self.runs.iter().find(|r| r.status != "verified");
        let runtime = match &first.engine {
            Some(engine) => {
                let mut words = vec![engine.runtime.clone(), engine.runtime_version.clone()];
                words.extend(engine.runtime_flags.iter().cloned());
                words.retain(|w| !w.is_empty());
                words.join(" ")
            }
            None => format!("timerbench loop, {}", first.wait),
        };
        RuntimeRow {
            server: first.implementation.clone(),
            side,
            runtime,
            io: match (first.tcp.is_some(), tcp.io.as_str()) {
                (false, _) => String::new(),
                (true, "") => "epoll".to_string(),
                (true, io) => io.to_string(),
            },
            connections: tcp.connections,
            connections_why: tcp.connections_why.clone(),
            runs: self.runs.len(),
            verified,
            status: other.map_or("verified".to_string(), |r| r.status.clone()),
            why: other.map_or(String::new(), |r| r.reasons.join("; ")),
            cpu_ms_per_second: self.cpu(),
            wakeups_per_second: match first.engine {
                Some(_) => None,
                None => self.over_runs(|r| r.workload_phase.wakeups_per_second),
            },
            close_lateness: self.spread(|r| &r.tcp.as_ref().expect("measured").close_lateness),
            closed_wrongly: self
                .measured()
                .iter()
                .filter_map(|r| r.tcp.as_ref())
                .map(|t| t.closed_wrongly)
                .sum(),
            rss_per_connection: self.over_runs(|r| {
                let tcp = r.tcp.as_ref().expect("measured");
                tcp.server_peak_rss_bytes as f64 / tcp.connections.max(1) as f64
            }),
            baseline: self.spread(|r| &r.baseline),
        }
    }
}

#[cfg(test)]
#[path = "runtimes_tests.rs"]
mod tests;
