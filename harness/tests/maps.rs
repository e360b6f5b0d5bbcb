//! The hand-written maps of the repository cannot drift from what they map: CONTRIBUTING's
//! layout table from the tracked folders and the workspace's crates, the table of
//! implementations in `impls/src/lib.rs` from the registry, and `results/README.md` from
//! the results crate's file names and sources.

use std::collections::BTreeSet;
use std::process::Command;

mod support;
use support::read_repository_file as read;
use support::repository_root as root;

/// The first cell of every row of the first markdown table after the line `heading`
/// (the header and its separator left out).
fn first_cells(text: &str, heading: &str) -> Vec<String> {
    let start = text
        .lines()
        .position(|line| line.trim() == heading)
        .unwrap_or_else(|| panic!("no line {heading:?}"));
    text.lines()
        .skip(start + 1)
        .skip_while(|line| !line.trim_start().starts_with('|'))
        .take_while(|line| line.trim_start().starts_with('|'))
        .skip(2)
        .map(|line| line.split('|').nth(1).unwrap_or("").trim().to_string())
        .collect()
}

/// The spans between backticks of `text`: `a` and `b/` in "`a`, `b/`".
fn code_spans(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The top-level folders git tracks (or, without git, the folders present but for the
/// build's, git's and the runs' own).
fn tracked_top_level_folders() -> BTreeSet<String> {
    let listed = Command::new("git")
        .args(["ls-files"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|output| output.status.success() && !output.stdout.is_empty());
    match listed {
        Some(output) => String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|path| path.split_once('/').map(|(top, _)| top.to_string()))
            .collect(),
        None => std::fs::read_dir(root())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_dir())
            .map(|path| path.file_name().unwrap().to_string_lossy().to_string())
            .filter(|name| !matches!(name.as_str(), "target" | ".git"))
            .collect(),
    }
}

/// The workspace's members, from the root `Cargo.toml`'s `members = [...]`.
fn workspace_members() -> Vec<String> {
    let manifest = read("Cargo.toml");
    let line = manifest
        .lines()
        .find(|line| line.trim_start().starts_with("members"))
        .expect("Cargo.toml has a members line");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn contributing_maps_every_top_level_folder_and_crate() {
    let contributing = read("CONTRIBUTING.md");
    let paths: Vec<String> = first_cells(&contributing, "## Layout")
        .iter()
        .flat_map(|cell| code_spans(cell))
        .collect();
    let mapped = |folder: &str| {
        paths
            .iter()
            .any(|path| path == folder || path.starts_with(&format!("{folder}/")))
    };
    let folders = tracked_top_level_folders();
    assert!(folders.contains("impls"), "found {folders:?}");
    let mut missing: Vec<String> = folders
        .iter()
        .chain(&workspace_members())
        .filter(|folder| !mapped(folder))
        .cloned()
        .collect();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "CONTRIBUTING.md's layout table has no row for {missing:?}"
    );
    for path in &paths {
        let top = path.split('/').next().unwrap_or(path);
        assert!(
            root().join(top).exists(),
            "CONTRIBUTING.md's layout table names `{path}`, which is not in the repository"
        );
    }
}

#[test]
fn the_table_in_impls_lib_lists_the_registered_implementations() {
    let lib = read("impls/src/lib.rs");
    let docs: String = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .map(|line| format!("{}\n", line.trim()))
        .collect();
    // The table has no heading of its own: its rows follow its header, `| name |`.
    let rows: Vec<&str> = docs
        .lines()
        .skip_while(|line| !line.starts_with("| name |"))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .collect();
    let mut listed = Vec::new();
    for row in &rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let name = code_spans(cells[1]).first().cloned().unwrap_or_default();
        let module = code_spans(cells[2]).first().cloned().unwrap_or_default();
        assert_eq!(
            module,
            name.replace('-', "_"),
            "impls/src/lib.rs: the row of `{name}` links the module `{module}`"
        );
        listed.push(name);
    }
    let registered: Vec<String> = timerbench_impls::IMPLEMENTATIONS
        .iter()
        .map(|implementation| implementation.name.to_string())
        .collect();
    assert!(registered.len() >= 10, "found {registered:?}");
    let listed_set: BTreeSet<&String> = listed.iter().collect();
    let registered_set: BTreeSet<&String> = registered.iter().collect();
    let unlisted: Vec<_> = registered_set.difference(&listed_set).collect();
    let extra: Vec<_> = listed_set.difference(&registered_set).collect();
    assert!(
        unlisted.is_empty() && extra.is_empty() && listed.len() == listed_set.len(),
        "impls/src/lib.rs's table of implementations: missing {unlisted:?}, not registered \
         {extra:?}, rows {listed:?}"
    );
}

/// The file names the results crate declares: its `pub const *_FILE: &str = "..."`.
fn declared_result_files() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("results/src")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with("pub const ")
                && line.contains("_FILE: &str = \"")
                && let Some(name) = line.split('"').nth(1)
            {
                names.insert(name.to_string());
            }
        }
    }
    names
}

/// The `.rs` files of the results crate, as `src/x.rs` and `tests/x.rs`.
fn result_crate_sources() -> BTreeSet<String> {
    let mut sources = BTreeSet::new();
    for folder in ["src", "tests"] {
        for entry in std::fs::read_dir(root().join("results").join(folder)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().to_string();
            if name.ends_with(".rs") {
                sources.insert(format!("{folder}/{name}"));
            }
        }
    }
    sources
}

#[test]
fn the_results_readme_lists_a_folders_files_and_the_crates_sources() {
    let readme = read("results/README.md");
    let in_table = |heading: &str| -> BTreeSet<String> {
        first_cells(&readme, heading)
            .iter()
            .flat_map(|cell| code_spans(cell))
            .collect()
    };
    let declared = declared_result_files();
    assert!(declared.contains("results.jsonl"), "found {declared:?}");
    assert_eq!(
        in_table("## What a results folder holds"),
        declared,
        "results/README.md's table of a folder's files against the crate's *_FILE constants"
    );
    let sources = result_crate_sources();
    let listed: BTreeSet<String> = in_table("## The crate")
        .into_iter()
        .filter(|path| path.ends_with(".rs"))
        .collect();
    assert_eq!(
        listed, sources,
        "results/README.md's table of the crate's sources against results/src and results/tests"
    );
}

#[test]
fn the_table_reader_takes_the_first_cells_after_the_heading() {
    let text = "# x\n| a |\n| - |\n| `no` |\n## Here\ntext\n\n| h | w |\n| --- | --- |\n\
                | `one/` | x |\n| `two`, `three/` | y |\n\nafter\n| `not` |\n";
    let cells = first_cells(text, "## Here");
    assert_eq!(cells, ["`one/`", "`two`, `three/`"]);
    let spans: Vec<String> = cells.iter().flat_map(|cell| code_spans(cell)).collect();
    assert_eq!(spans, ["one/", "two", "three/"]);
}
