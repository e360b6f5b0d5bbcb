//! No import cycle of more than two files inside a crate: a cycle through three or more
//! modules means none of them can be read, or changed, without the others, and the piece
//! they share belongs in a file of its own that they all import. Two files that use each
//! other (a type and its helper) are one concept split in two, and are allowed.
//!
//! Only `use` lines count (multi-line ones included), outside `#[cfg(test)]` items; a path
//! written out in code (`group::Settings`) is not read as an import.

use std::path::{Path, PathBuf};

/// The code of a line: what comes before a `//` comment (doc links name modules too, and
/// only code can import).
fn code(line: &str) -> &str {
    line.find("//").map_or(line, |at| &line[..at])
}

/// The crates whose `src/` the import-cycle rule reads.
const CRATES: &[&str] = &[
    "impls",
    "workloads",
    "results",
    "harness",
    "report",
    "live",
    "threads",
];

/// A crate's module-level code, by file: each file its module's path (`["run_core",
/// "plan"]`), its lines' code (comments cut, the items under `#[cfg(test)]` left out, as
/// their imports are a test's, not the module's), and the index of each module by path.
struct Crate {
    files: Vec<(PathBuf, Vec<String>, Vec<String>)>,
    index: std::collections::BTreeMap<Vec<String>, usize>,
}

/// The lines of `text` outside the items under `#[cfg(test)]` (a `mod tests { ... }`
/// ends at the `}` that rustfmt puts in the first column; anything else at its `;`),
/// each cut before its comment; blank in their place, so that line numbers hold.
fn outside_tests(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut skipping = None;
    for line in text.lines() {
        let code = code(line).trim_end().to_string();
        match skipping {
            None if code.trim() == "#[cfg(test)]" => skipping = Some(false),
            None => {
                lines.push(code);
                continue;
            }
            Some(false) if code.trim().starts_with("#[") => {}
            Some(false) if code.ends_with('{') => skipping = Some(true),
            Some(false) if code.ends_with(';') => skipping = None,
            Some(false) => {}
            Some(true) if code == "}" => skipping = None,
            Some(true) => {}
        }
        lines.push(String::new());
    }
    lines
}

/// The modules a file declares (`mod NAME;`), each with its file: `#[path = "..."]` on
/// the line before, else `NAME.rs` or `NAME/mod.rs` in the file's module folder.
fn declared(file: &Path, lines: &[String]) -> Vec<(String, PathBuf)> {
    let name = file.file_stem().unwrap().to_string_lossy();
    let dir = file.parent().unwrap();
    let folder = match name.as_ref() {
        "lib" | "main" | "mod" => dir.to_path_buf(),
        _ => dir.join(name.as_ref()),
    };
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(mod_at) = words.iter().position(|w| *w == "mod") else {
            continue;
        };
        let Some(module) = words.get(mod_at + 1).and_then(|w| w.strip_suffix(';')) else {
            continue;
        };
        let path_attribute = at
            .checked_sub(1)
            .and_then(|before| lines[before].trim().strip_prefix("#[path = \""))
            .and_then(|rest| rest.strip_suffix("\"]"));
        let path = match path_attribute {
            Some(relative) => dir.join(relative),
            None if folder.join(format!("{module}.rs")).is_file() => {
                folder.join(format!("{module}.rs"))
            }
            None => folder.join(module).join("mod.rs"),
        };
        found.push((module.to_string(), path));
    }
    found
}

/// The crate whose root is `src/lib.rs`, its modules followed from their declarations.
fn read_crate(src: &Path) -> Crate {
    let mut krate = Crate {
        files: Vec::new(),
        index: Default::default(),
    };
    let mut queue = vec![(src.join("lib.rs"), Vec::new())];
    while let Some((file, path)) = queue.pop() {
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let lines = outside_tests(&text);
        for (module, child) in declared(&file, &lines) {
            let mut child_path = path.clone();
            child_path.push(module);
            queue.push((child, child_path));
        }
        krate.index.insert(path.clone(), krate.files.len());
        krate.files.push((file, path, lines));
    }
    krate
}

/// The `use` statements of a file's lines, each with its first line's number (from 1),
/// joined when they span several lines, the `use` and `;` cut.
fn use_statements(lines: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (at, line) in lines.iter().enumerate() {
        let code = line.trim();
        match open.as_mut() {
            Some((_, text)) => text.push_str(code),
            None => {
                let rest = code
                    .strip_prefix("pub ")
                    .or_else(|| code.strip_prefix("pub(crate) "))
                    .or_else(|| code.strip_prefix("pub(super) "))
                    .unwrap_or(code);
                match rest.strip_prefix("use ") {
                    Some(tree) => open = Some((at + 1, tree.to_string())),
                    None => continue,
                }
            }
        }
        if let Some((number, text)) = open.take_if(|(_, text)| text.ends_with(';')) {
            found.push((number, text.trim_end_matches(';').to_string()));
        }
    }
    found
}

/// The paths a use tree names: `a::{b, c::{d, self}}` gives `a::b`, `a::c::d` and
/// `a::c`; `a::*` gives `a`; `a as b` gives `a`.
fn use_paths(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    if let (Some(open), true) = (tree.find('{'), tree.ends_with('}')) {
        let head: Vec<String> = segments(tree[..open].trim_end_matches("::"));
        let inside = &tree[open + 1..tree.len() - 1];
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0, 0);
        for (at, c) in inside.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&inside[start..at]);
                    start = at + 1;
                }
                _ => {}
            }
        }
        parts.push(&inside[start..]);
        return parts
            .into_iter()
            .filter(|part| !part.trim().is_empty())
            .flat_map(use_paths)
            .map(|tail| head.iter().cloned().chain(tail).collect())
            .collect();
    }
    let path = tree.split(" as ").next().unwrap();
    vec![segments(path)]
}

/// `a::b::self` as `["a", "b"]`, `a::*` as `["a"]`.
fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "self" && *s != "*")
        .map(String::from)
        .collect()
}

/// The module file a path used from the module `from` reaches: its longest prefix that
/// is a module of the crate (`crate::`, `super::`, `self::`, or a child module's name);
/// `None` for another crate's path.
fn resolve(krate: &Crate, from: &[String], path: &[String]) -> Option<usize> {
    let mut module = from.to_vec();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            module.clear();
            rest = &path[1..];
        }
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                module.pop();
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_string());
            if !krate.index.contains_key(&child) {
                return None;
            }
        }
        None => return None,
    }
    for segment in rest {
        module.push(segment.clone());
        if !krate.index.contains_key(&module) {
            module.pop();
            break;
        }
    }
    krate.index.get(&module).copied()
}

/// Each file's imports: the files of its crate it uses, with the line that does.
fn imports(krate: &Crate) -> Vec<std::collections::BTreeMap<usize, usize>> {
    krate
        .files
        .iter()
        .enumerate()
        .map(|(at, (_, path, lines))| {
            let mut uses = std::collections::BTreeMap::new();
            for (number, tree) in use_statements(lines) {
                for used in use_paths(&tree) {
                    if let Some(target) = resolve(krate, path, &used)
                        && target != at
                    {
                        uses.entry(target).or_insert(number);
                    }
                }
            }
            uses
        })
        .collect()
}

/// The import cycles of more than two files, one per set of files: through each file `v`,
/// some `u` that uses `v` and some `w` that `v` uses (`u` not `w`) with a path of uses
/// from `w` back to `u` that avoids `v`. Such a cycle exists when and only when one of
/// more than two files does; each is given as its files in order.
fn long_cycles(uses: &[std::collections::BTreeMap<usize, usize>]) -> Vec<Vec<usize>> {
    let mut found: Vec<Vec<usize>> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for v in 0..uses.len() {
        for &w in uses[v].keys() {
            // Breadth first from `w`, never through `v`: who reached each file first.
            let mut parent = vec![None; uses.len()];
            parent[w] = Some(w);
            let mut queue = std::collections::VecDeque::from([w]);
            while let Some(x) = queue.pop_front() {
                for &y in uses[x].keys() {
                    if y != v && parent[y].is_none() {
                        parent[y] = Some(x);
                        queue.push_back(y);
                    }
                }
            }
            for u in (0..uses.len()).filter(|&u| u != w && u != v && uses[u].contains_key(&v)) {
                if parent[u].is_none() {
                    continue;
                }
                let mut back = vec![u];
                while let Some(&x) = back.last()
                    && x != w
                {
                    back.push(parent[x].unwrap());
                }
                back.reverse();
                let mut cycle = vec![v];
                cycle.extend(back);
                let mut set = cycle.clone();
                set.sort();
                if seen.insert(set) {
                    found.push(cycle);
                }
            }
        }
    }
    found
}

/// No import cycle of more than two files inside a crate: when A uses B, B uses C and C
/// uses A, none of the three can be read or changed without the others, and what they
/// share belongs in a file they all import. Two files that use each other (a module and
/// its parent, one concept split for size) are allowed. Read from the `use` lines
/// (`crate::`, `super::`, `self::` and child-module paths; multi-line trees followed),
/// outside the items under `#[cfg(test)]`; a path written out in code
/// (`crate::x::f(...)`) is not an import here. `a/mod.rs` and `a.rs` are the file that
/// declares `a`.
#[test]
fn no_import_cycle_of_more_than_two_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut reports = Vec::new();
    for name in CRATES {
        let krate = read_crate(&root.join(name).join("src"));
        let uses = imports(&krate);
        let shown = |at: usize| {
            let file = &krate.files[at].0;
            file.strip_prefix(root).unwrap().display().to_string()
        };
        for cycle in long_cycles(&uses) {
            let steps: Vec<String> = cycle
                .iter()
                .zip(cycle.iter().cycle().skip(1))
                .map(|(&a, b)| format!("{} (line {})", shown(a), uses[a][b]))
                .collect();
            reports.push(format!("{} -> back", steps.join(" -> ")));
        }
    }
    assert!(
        reports.is_empty(),
        "import cycles of more than two files (move what they share to a file they all \
         import):\n{}",
        reports.join("\n")
    );
}

#[test]
fn the_cycle_finder_tells_a_long_cycle_from_pairs() {
    let graph = |files: usize, edges: &[(usize, usize)]| {
        let mut uses = vec![std::collections::BTreeMap::new(); files];
        for &(from, to) in edges {
            uses[from].insert(to, 1);
        }
        uses
    };
    // A parent and two children that each use it back: pairs only.
    assert!(long_cycles(&graph(3, &[(0, 1), (1, 0), (0, 2), (2, 0)])).is_empty());
    // A uses B uses C uses A, found once whichever file it is seen from.
    let cycles = long_cycles(&graph(4, &[(0, 1), (1, 2), (2, 0), (2, 3)]));
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let mut files = cycles[0].clone();
    files.sort();
    assert_eq!(files, [0, 1, 2]);
    // Three pairs around a ring hold a cycle of three.
    let ring = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 0), (0, 2)];
    assert_eq!(long_cycles(&graph(3, &ring)).len(), 1);
    let strings = |paths: Vec<Vec<String>>| paths.into_iter().map(|p| p.join("::")).collect();
    let paths: Vec<String> = strings(use_paths("super::{Args, plan::{Cell, self}, x as y}"));
    assert_eq!(
        paths,
        [
            "super::Args",
            "super::plan::Cell",
            "super::plan",
            "super::x"
        ]
    );
    let lines = outside_tests("use a;\n#[cfg(test)]\nmod tests {\n    use b;\n}\nuse c;");
    let statements: Vec<_> = use_statements(&lines);
    assert_eq!(statements, [(1, "a".to_string()), (6, "c".to_string())]);
}
