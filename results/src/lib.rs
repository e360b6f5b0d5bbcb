//! The results format of timerbench: what a run folder holds, in one crate that both the
//! writer (`timerbench run`, the harness) and the reader (`timerbench report`) depend on,
//! so that neither keeps a copy and neither imports the other.
//!
//! A run folder `results/<date>-<host>-<git rev>/` holds:
//!
//! - `results.jsonl`: one [`CellRecord`] per line, appended as each cell finishes;
//! - `environment.json`: the [`Environment`] of the run;
//! - `summary.csv`: one row per cell ([`SummaryRow`]), for spreadsheets;
//! - `report.html`: the report, written by the report crate;
//! - `workloads.json`: the run's workload files ([`workloads`]), when it had any.
//!
//! The pieces:
//!
//! - [`schema`]: the record types, as this build writes them ([`SCHEMA_VERSION`]);
//! - [`version`]: the versions this build reads, checked before anything else;
//! - [`folder`]: reading and writing the folder's files, and finding the newest run;
//! - [`summary`]: one flat row per cell in `summary.csv`;
//! - [`workloads`]: the workload files of a run, their metadata and shape;
//! - [`findings`]: what `timerbench reproduce` concluded (`findings.json`);
//! - [`histogram`]: a latency histogram's percentiles and encoding, as a record holds them.
//! - [`counts`]: a cell's counts under Valgrind (`run --counts`) and the metrics a reader
//!   compares cells by;
//! - [`live`]: the records of `timerbench live` (`live.jsonl`, a folder of their own);
//! - [`load`]: the other processes' CPU share while a command measured;
//! - [`shards`]: the folders of one plan (its shards, its hosts) grouped into runs.
//!
//! `FORMAT.md` beside this crate writes the format down for readers that are not this
//! crate: every field with its type and unit, what "per operation" means, the versions.
//! This crate's folder is also where runs land; only its sources are tracked by git.

pub mod ab;
pub mod counts;
pub mod engine;
pub mod environment;
pub mod findings;
pub mod folder;
pub mod histogram;
pub mod live;
pub mod load;
pub mod schema;
pub mod shards;
pub mod stats;
pub mod summary;
pub mod threads;
pub mod version;
pub mod workloads;

pub use findings::{
    CellReading, CombinedBy, FINDINGS_FILE, FINDINGS_SCHEMA, FigureRuns, FigureValue, Finding,
    FindingRuns, Findings, PublishedFigure, ReusedCells, RunOfFindings, Verdict, read_findings,
    write_findings,
};
pub use folder::{
    Appender, ENVIRONMENT_FILE, REPORT_FILE, RESULTS_FILE, RecordLine, RunFiles, SUMMARY_FILE,
    latest_by_cell, newest_run, read_environment, read_record_lines, read_records, read_run,
    recorded_so_far, write_atomically, write_environment,
};
pub use schema::*;
pub use summary::{SummaryRow, write_summary};
pub use workloads::{
    FILE_FAMILY, FileWorkload, WORKLOADS_FILE, read_workload_files, write_workload_files,
};
