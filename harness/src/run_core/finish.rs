//! Step 4 of a run: the summary and the report from every record of its folder, and what
//! they say on the terminal (the counts by status, the cells that competed for the cores,
//! each cell that did not verify).

use super::cell_name;
use crate::schema::{CellRecord, Status};
use std::path::Path;
use std::process::ExitCode;
use timerbench_results::{Appender, REPORT_FILE, read_records, write_summary};

/// Step 4: the summary and the report from every record of `folder`, and what they say;
/// success when no cell failed. A shard's folder gets no report of its own: its cells are
/// a part of each group (a workload at a size) and would rank as if they were all of it,
/// so the report waits for every shard (`timerbench report` of all N folders).
pub(super) fn finish(
    folder: &Path,
    results: &Appender,
    not_ok: usize,
    shard: Option<timerbench_results::shards::Shard>,
) -> anyhow::Result<ExitCode> {
    let records = read_records(results.path())?;
    write_summary(folder, &records)?;
    match shard {
        Some(shard) if shard.count > 1 => println!(
            "shard {shard}: no report of a part; once every shard is in, `timerbench report` \
             of all {} folders writes the run's (docs/scale-out.md)",
            shard.count
        ),
        _ => {
            let report = folder.join(REPORT_FILE);
            crate::catalog::write_report(&[folder.to_path_buf()], &report, None)?;
            println!("report: {}", report.display());
        }
    }
    let failed: Vec<&CellRecord> = records.iter().filter(|r| r.status != Status::Ok).collect();
    let left_out = failed.iter().filter(|r| r.status.left_out()).count();
    let count = |status| failed.iter().filter(|r| r.status == status).count();
    // Cells left out on purpose are no failure: the count says them apart, each under the
    // word its records and the list below use (`unsupported`: beyond the structure's range
    // or without the engine's toolchain; `skipped`: above a suite limit), as the report does.
    println!(
        "{} cells recorded in {}: {} ok, {} failed, {} unsupported, {} skipped",
        records.len(),
        results.path().display(),
        records.len() - failed.len(),
        failed.len() - left_out,
        count(Status::Unsupported),
        count(Status::Skipped)
    );
    let competed = records
        .iter()
        .filter(|r| r.others_load.as_ref().is_some_and(|l| l.competed))
        .count();
    if competed > 0 {
        println!(
            "warning: {competed} of the cells were measured while other processes competed \
             for the cores (each record's `others_load`): their times may be inflated"
        );
    }
    for record in &failed {
        println!(
            "  {}: {}: {}",
            cell_name(&record.key),
            record.status.as_str(),
            record.reason.as_deref().unwrap_or("")
        );
    }
    Ok(if not_ok == 0 && failed.len() == left_out {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
