//! The README's table of implementations is `timerbench list --format markdown`'s output,
//! so that it cannot drift from the registry.

use std::process::Command;

const BEGIN: &str = "<!-- BEGIN timerbench list --format markdown -->\n";
const END: &str = "<!-- END timerbench list --format markdown -->";

#[test]
fn the_readme_lists_the_implementations_as_the_command_does() {
    let readme_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let readme = std::fs::read_to_string(readme_path).expect("the workspace's README.md");
    let start = readme
        .find(BEGIN)
        .unwrap_or_else(|| panic!("README.md has no line {BEGIN:?}"))
        + BEGIN.len();
    let end = start
        + readme[start..]
            .find(END)
            .unwrap_or_else(|| panic!("README.md has no line {END:?} after {BEGIN:?}"));
    let output = Command::new(env!("CARGO_BIN_EXE_timerbench"))
        .args(["list", "--format", "markdown"])
        .output()
        .expect("timerbench runs");
    assert!(
        output.status.success(),
        "timerbench list --format markdown failed"
    );
    let generated = String::from_utf8(output.stdout).expect("UTF-8 output");
    assert!(
        readme[start..end] == generated,
        "README.md's implementations table is out of date: replace the lines between \
         {BEGIN:?} and {END:?} with the output of \
         `cargo run --release -p timerbench -- list --format markdown`"
    );
}
