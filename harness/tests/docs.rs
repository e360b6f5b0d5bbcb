//! The documents a clone holds: every relative link resolves to a file of the repository,
//! and nothing points outside it (the first drafts of the specs lived beside the
//! repository, in a `shared/` folder a clone does not have).

use std::path::{Path, PathBuf};

mod support;
use support::repository_root as root;

/// Folders that hold no tracked documents or sources: builds, runs, git's own.
const UNTRACKED: &[&str] = &[
    "target",
    "results",
    ".git",
    "artifacts",
    "corpus",
    "coverage",
];

/// Every file under `folder` whose extension is one of `extensions`.
fn files(folder: &Path, extensions: &[&str], found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !UNTRACKED.contains(&name.as_str()) {
                files(&path, extensions, found);
            }
        } else if extensions.iter().any(|e| name.ends_with(e)) {
            found.push(path);
        }
    }
}

/// The text of a markdown document outside code: fenced blocks and inline code spans are
/// left out, since a `](` inside them is not a link.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let outside_spans: String = line.split('`').step_by(2).collect();
            out.push_str(&outside_spans);
            out.push('\n');
        }
    }
    out
}

/// The targets of the inline links `[text](target)` of a markdown text, without anchors.
fn link_targets(text: &str) -> Vec<String> {
    let text = prose(text);
    let mut targets = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or("").trim();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            targets.push(target.to_string());
        }
        rest = &rest[end..];
    }
    targets
}

#[test]
fn every_relative_link_in_the_documents_resolves() {
    let mut documents = Vec::new();
    files(&root(), &[".md"], &mut documents);
    assert!(documents.len() >= 5, "found {documents:?}");
    let mut broken = Vec::new();
    for document in &documents {
        let text = std::fs::read_to_string(document).unwrap();
        for target in link_targets(&text) {
            let resolved = document.parent().unwrap().join(&target);
            if !resolved.exists() {
                broken.push(format!("{}: {target}", document.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_file_refers_outside_the_repository() {
    let mut sources = Vec::new();
    let kinds = [".md", ".rs", ".toml", ".dict", ".sh", ".html", ".css"];
    files(&root(), &kinds, &mut sources);
    files(&root().join(".ci"), &[""], &mut sources);
    files(&root().join("scripts"), &[""], &mut sources);
    // Built, not written, so that this file does not name what it looks for.
    let outside = [
        ["shared", "spec"].join("/"),
        ["shared", "research"].join("/"),
    ];
    let offenders: Vec<String> = sources
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            outside.iter().any(|o| text.contains(o.as_str()))
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(offenders.is_empty(), "refer to shared/: {offenders:?}");
}

#[test]
fn the_readme_stays_a_front_page() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 150,
        "README.md has {lines} lines; the manual is docs/commands.md"
    );
    for document in [
        "METHODOLOGY.md",
        "docs/commands.md",
        "docs/workload-format.md",
        "docs/timer-contract.md",
        "results/FORMAT.md",
        "CONTRIBUTING.md",
    ] {
        assert!(
            readme.contains(&format!("]({document})")),
            "README.md links {document}"
        );
    }
}

#[test]
fn the_link_reader_finds_relative_targets_only() {
    let text = "see [a](docs/a.md#x), [b](https://example.org), [c](../c.md) and [d](#top)\n\
                `[e](not/a/link)` and\n```\n[f](nor/this)\n```\n";
    assert_eq!(link_targets(text), ["docs/a.md", "../c.md"]);
}
