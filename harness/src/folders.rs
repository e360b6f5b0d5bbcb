//! Where a command writes when no `--out` is given: a results folder of its own.

use crate::environment;
use std::path::{Path, PathBuf};

/// `results/<prefix><date>-<host>-<git rev>`, or with `-2`, `-3`... when that exists: a
/// results folder no earlier run holds (`timerbench reproduce` uses the prefix
/// `reproduce-`).
pub fn free_folder(prefix: &str) -> PathBuf {
    free_folder_with(prefix, "")
}

/// [`free_folder`] with `suffix` after the revision: `-counts` for a counts run.
pub fn free_folder_with(prefix: &str, suffix: &str) -> PathBuf {
    let date = chrono::Utc::now().format("%Y-%m-%d");
    let base = format!(
        "{prefix}{date}-{}-{}{suffix}",
        environment::host(),
        environment::git_revision()
    );
    let root = Path::new("results");
    let mut folder = root.join(&base);
    let mut n = 2;
    while folder.exists() {
        folder = root.join(format!("{base}-{n}"));
        n += 1;
    }
    folder
}
