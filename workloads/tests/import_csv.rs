//! The CSV importer: the documented form converted as its module says, and every way a row
//! can be wrong reported as one error naming the file and line.

use std::path::{Path, PathBuf};
use timerbench_workloads::compile;
use timerbench_workloads::import::csv;

fn write(text: &str) -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("events.csv");
    std::fs::write(&path, text).unwrap();
    (folder, path)
}

const MS: u64 = 1_000_000;

#[test]
fn rows_become_operations() {
    let (_folder, path) = write(
        "time,event,id,deadline\n\
         # a comment\n\
         0,start,conn-a,10000000\n\
         0, start, conn-b, 4500000\n\
         2000000,start,conn-a,12000000\n\
         5000000,fire,conn-b\n\
         6000000,stop,conn-a\n\
         7000000,start,conn-a,6000000\n",
    );
    let imported = csv::import(&path, MS, "1ms", None).unwrap();
    let ops: String = imported
        .workload
        .ops
        .iter()
        .map(|op| format!("{op}\n"))
        .collect();
    // conn-b's deadline 4.5 ms rounds up to 5; conn-a's re-arm is a restart; the last
    // start's deadline is past: delay 0.
    assert_eq!(
        ops,
        "s 0 10\ns 1 5\na 2\nr 0 10\na 3\na 1\nx 0\na 1\ns 0 0\n"
    );
    let metadata = &imported.workload.metadata;
    assert_eq!(metadata.get("firings-reproduced"), Some("1 (csv 1)"));
    assert_eq!(metadata.get("past-deadlines"), Some("1 (csv 1)"));
    assert_eq!(metadata.get("rows"), Some("6"));
    compile(&imported.workload, Path::new("events.tw")).unwrap();
}

#[test]
fn a_bad_row_is_one_error_naming_the_line() {
    for (text, line, what) in [
        ("0,start,a\n", 1, "needs a deadline"),
        ("0,start,a,5\n1,bogus,a\n", 2, "start, stop or fire"),
        ("5,start,a,9\n4,stop,a\n", 2, "time goes back"),
        ("x,stop,a\n", 1, "whole number"),
        ("0,stop,a,5\n", 1, "only a start"),
        ("0,stop\n", 1, "expected time,event,id"),
        ("0,stop,,\n", 1, "empty"),
        ("0,fire,a b\n", 1, "spaces"),
    ] {
        let (_folder, path) = write(text);
        let error = csv::import(&path, MS, "1ms", None).unwrap_err().to_string();
        let prefix = format!("{}:{line}: ", path.display());
        assert!(error.starts_with(&prefix), "{text:?}: {error}");
        assert!(error.contains(what), "{text:?}: {error}");
    }
    let (_folder, path) = write("# nothing\n");
    let error = csv::import(&path, MS, "1ms", None).unwrap_err().to_string();
    assert!(
        error.contains("events.csv") && error.contains("no events"),
        "{error}"
    );
}
