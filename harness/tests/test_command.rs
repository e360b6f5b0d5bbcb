//! The README's test command (`scripts/test`) installs nothing and writes its runs under
//! `target/`: a newcomer who runs it gets no toolchain, browser or results folder they did
//! not ask for, and `rank` and `report`, which read the newest folder under `results/`,
//! never pick up a test's run. What installs (Chromium, nightly, cargo-fuzz) runs in CI's
//! `.ci/extra`, which `.ci/run` calls after the test command.

mod support;
use support::read_repository_file as read;

/// The commands of a shell script, a continued line (`\` at its end) joined to the next:
/// comments and blank lines left out.
fn commands(script: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut current = String::new();
    for line in script.lines().map(str::trim) {
        if current.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => current.push_str(head),
            None => {
                current.push_str(line);
                commands.push(std::mem::take(&mut current));
            }
        }
    }
    commands
}

#[test]
fn the_test_command_installs_nothing() {
    let script = read("scripts/test");
    let installers = [
        "apt-get",
        "rustup",
        "cargo install",
        "fuzz-smoke",
        "render-report",
        "chromium",
    ];
    let offending: Vec<String> = commands(&script)
        .into_iter()
        .filter(|line| installers.iter().any(|word| line.contains(word)))
        .collect();
    assert!(
        offending.is_empty(),
        "scripts/test runs what installs tools; move it to .ci/extra: {offending:?}"
    );
}

#[test]
fn the_test_command_writes_its_runs_under_target() {
    let script = read("scripts/test");
    assert!(
        script.contains("runs=target/test-runs"),
        "scripts/test keeps its runs in target/test-runs"
    );
    let lines = commands(&script);
    let outs: Vec<&str> = lines
        .iter()
        .flat_map(|line| line.split("--out ").skip(1))
        .map(|rest| rest.split_whitespace().next().unwrap_or(""))
        .collect();
    assert!(outs.len() >= 4, "scripts/test's runs: {outs:?}");
    let elsewhere: Vec<&&str> = outs
        .iter()
        .filter(|out| !out.starts_with("\"$runs/"))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "scripts/test writes runs outside target/test-runs: {elsewhere:?}"
    );
    // Every command that writes a run names its folder: one without --out would land in
    // results/.
    for line in &lines {
        for writer in [" run ", " live ", " threads ", " reproduce "] {
            if line.starts_with("\"$timerbench\"") && line.contains(writer) {
                assert!(line.contains("--out"), "no --out in scripts/test: {line}");
            }
        }
    }
}

#[test]
fn ci_runs_the_test_command_then_what_it_leaves_out() {
    let ci = commands(&read(".ci/run")).join("\n");
    let test = ci.find("scripts/test").expect(".ci/run runs scripts/test");
    let extra = ci.find(".ci/extra").expect(".ci/run runs .ci/extra");
    assert!(test < extra, ".ci/run runs scripts/test first");
    let extra = read(".ci/extra");
    for check in ["render-report", "fuzz-smoke"] {
        assert!(extra.contains(check), ".ci/extra runs {check}");
    }
}
