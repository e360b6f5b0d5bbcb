//! The layering of the harness: a subcommand (`src/cmd/<a>.rs` and `src/cmd/<a>/`) stands
//! on the shared modules beside `cmd/` (`stats`, `table`, `runs`, `catalog`, `engines`,
//! ...), never on another subcommand. When two commands need the same code, it moves
//! beside `cmd/`: a command can then change its face without breaking another, and no
//! import cycle runs through the commands.
//!
//! And one median: every numeric median in the workspace is `timerbench_results::stats::
//! median`, so a "median" means the same thing in every record and table.

use std::path::{Path, PathBuf};

/// The harness's `src/cmd`.
fn cmd_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd")
}

/// Every `.rs` file under `folder`.
fn rust_files(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The subcommands: the modules `cmd/mod.rs` declares.
fn commands() -> Vec<String> {
    let text = std::fs::read_to_string(cmd_folder().join("mod.rs")).unwrap();
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').to_string())
        .collect()
}

/// The command a file belongs to: `cmd/<a>.rs` or anything under `cmd/<a>/`.
fn command_of(file: &Path) -> String {
    let relative = file.strip_prefix(cmd_folder()).unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_string()
}

/// The code of a line: what comes before a `//` comment (doc links name modules too, and
/// only code can import).
fn code(line: &str) -> &str {
    line.find("//").map_or(line, |at| &line[..at])
}

/// The leading identifier of `text`: `b::x` gives `b`, ` c }` gives `c`.
fn identifier(text: &str) -> String {
    text.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The names a path continues with at `rest`: `b::x` gives `b`, `{b, c}` gives `b` and `c`.
fn names_at(rest: &str) -> Vec<String> {
    let names = match rest.strip_prefix('{') {
        Some(inside) => inside[..inside.find('}').unwrap_or(inside.len())]
            .split(',')
            .map(identifier)
            .collect(),
        None => vec![identifier(rest)],
    };
    names.into_iter().filter(|name| !name.is_empty()).collect()
}

/// The module names a line reaches through `crate::cmd::`: `crate::cmd::b::x` gives `b`,
/// `crate::cmd::{b, c}` gives `b` and `c`.
fn through_crate_cmd(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::cmd::") {
        rest = &rest[at + "crate::cmd::".len()..];
        names.extend(names_at(rest));
    }
    names
}

/// The first module a line names after a chain of `super::` (`super::super::b::x` gives
/// `b`, `super::{b, c}` gives `b` and `c`), with the number of `super`s.
fn through_super(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("super::") {
        let before = &rest[..at];
        rest = &rest[at..];
        if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            rest = &rest["super::".len()..];
            continue;
        }
        let mut depth = 0;
        while let Some(after) = rest.strip_prefix("super::") {
            depth += 1;
            rest = after;
        }
        found.extend(names_at(rest).into_iter().map(|name| (depth, name)));
    }
    found
}

/// The uses of one command by another that are still to move beside `cmd/`, as (file
/// under `src/cmd`, the command it reaches). The list only shrinks: an entry that no
/// longer occurs fails the test as well, so that it is struck when its code moves.
const NOT_YET_MOVED: &[(&str, &str)] = &[];

#[test]
fn no_subcommand_imports_another() {
    let commands = commands();
    assert!(
        commands.iter().any(|c| c == "run") && commands.iter().any(|c| c == "cell"),
        "cmd/mod.rs declares the commands: {commands:?}"
    );
    let mut files = Vec::new();
    rust_files(&cmd_folder(), &mut files);
    files.sort();
    let mut crossings = Vec::new();
    let mut known = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("cmd/mod.rs")) {
        let own = command_of(file);
        let at_top = file.parent() == Some(cmd_folder().as_path());
        let relative = file
            .strip_prefix(cmd_folder())
            .unwrap()
            .display()
            .to_string();
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = code(line);
            let mut reached: Vec<String> = through_crate_cmd(code)
                .into_iter()
                .filter(|b| *b != own)
                .collect();
            // From `cmd/<a>.rs`, `super::` is `cmd` itself: any command named there is
            // another one. From deeper, a `super::` chain that ends on a command's name
            // has climbed out of its own folder.
            reached.extend(
                through_super(code)
                    .into_iter()
                    .filter(|(depth, b)| {
                        *b != own && commands.contains(b) && (at_top || *depth >= 2)
                    })
                    .map(|(_, b)| b),
            );
            for b in reached {
                if NOT_YET_MOVED.contains(&(relative.as_str(), b.as_str())) {
                    known.push((relative.clone(), b));
                } else {
                    crossings.push(format!(
                        "src/cmd/{relative}:{}: command `{own}` uses command `{b}`: {}",
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        crossings.is_empty(),
        "move what commands share beside src/cmd (stats, table, runs, catalog, engines, \
         ...):\n{}",
        crossings.join("\n")
    );
    let stale: Vec<_> = NOT_YET_MOVED
        .iter()
        .filter(|(file, b)| !known.iter().any(|(f, k)| f == file && k == b))
        .collect();
    assert!(
        stale.is_empty(),
        "these no longer occur; strike them from NOT_YET_MOVED: {stale:?}"
    );
}

#[test]
fn the_scanner_sees_every_form_of_crossing() {
    assert_eq!(
        through_crate_cmd("use crate::cmd::{live_tables, live_tcp};"),
        ["live_tables", "live_tcp"]
    );
    assert_eq!(through_crate_cmd("x = crate::cmd::run::free(1);"), ["run"]);
    assert_eq!(
        through_super("use super::super::experiments::{self, x};"),
        [(2, "experiments".to_string())]
    );
    assert_eq!(
        through_super("use super::{live, ab};"),
        [(1, "live".to_string()), (1, "ab".to_string())]
    );
    assert!(through_super("use super::*;").is_empty());
    assert_eq!(code("let a = 1; // crate::cmd::run"), "let a = 1; ");
}

/// The workspace's crates' library and binary sources, outside test files.
fn workspace_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.join("lib.rs").is_file() || src.join("main.rs").is_file() {
            rust_files(&src, &mut files);
        }
    }
    files
        .into_iter()
        .filter(|f| {
            let name = f.file_name().unwrap().to_string_lossy();
            !(name == "tests.rs"
                || name.ends_with("_tests.rs")
                || f.components().any(|c| c.as_os_str() == "tests"))
        })
        .collect()
}

#[test]
fn one_numeric_median_in_the_workspace() {
    let mut medians = Vec::new();
    for file in workspace_sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        // A crate's unit tests sit at a file's end, after `#[cfg(test)]`.
        let code_part = text.split("#[cfg(test)]").next().unwrap();
        for (number, line) in code_part.lines().enumerate() {
            let code = code(line);
            if let Some(at) = code.find("fn median") {
                let rest = &code[at + "fn median".len()..];
                if rest.starts_with('(') || rest.starts_with('<') || rest.starts_with("_of") {
                    medians.push(format!("{}:{}", file.display(), number + 1));
                }
            }
        }
    }
    assert_eq!(medians.len(), 1, "numeric medians: {medians:?}");
    assert!(
        medians[0].contains("results/src/stats.rs"),
        "the median lives in results/src/stats.rs: {medians:?}"
    );
}

/// The harness reaches the live crate through its face only, `timerbench_live::api`
/// (settings of plain values, the runs, their records): the loop, the waits, the servers
/// and the client behind it may change shape without a harness file changing with them.
#[test]
fn the_harness_uses_only_the_live_crate_s_face() {
    const CRATE: &str = "timerbench_live::";
    /// The modules of the live crate a line names past its face.
    fn past_the_face(code: &str) -> Vec<String> {
        code.match_indices(CRATE)
            .flat_map(|(at, _)| names_at(&code[at + CRATE.len()..]))
            .filter(|name| name != "api")
            .collect()
    }
    assert_eq!(
        past_the_face("use timerbench_live::api::{self, Config};"),
        [""; 0]
    );
    assert_eq!(past_the_face("use timerbench_live::{api, sys};"), ["sys"]);
    assert_eq!(
        past_the_face("x(timerbench_live::wait::NO_PWAIT2)"),
        ["wait"]
    );
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&manifest.join("src"), &mut files);
    rust_files(&manifest.join("tests"), &mut files);
    let mut crossings = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("tests/layering.rs")) {
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in text.lines().enumerate() {
            for name in past_the_face(code(line)) {
                crossings.push(format!("{}:{}: {name}", file.display(), number + 1));
            }
        }
    }
    assert!(
        crossings.is_empty(),
        "harness files that name the live crate past `timerbench_live::api`: {crossings:#?}"
    );
}
