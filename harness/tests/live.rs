//! `timerbench live` as a user meets it: bad flags and refused knobs are one message and a
//! non-zero exit, before any run and without a results folder.

mod support;

use support::{assert_fails_with, timerbench_in};

fn live_fails_with(args: &[&str], needle: &str) {
    let folder = tempfile::tempdir().unwrap();
    let mut all = vec!["live"];
    all.extend_from_slice(args);
    let output = timerbench_in(&all, folder.path());
    assert_fails_with(&output, needle);
    assert!(
        !folder.path().join("results").exists(),
        "nothing written for {args:?}"
    );
}

#[test]
fn bad_flags_name_the_flag_and_what_it_accepts() {
    live_fails_with(
        &["--wait", "spin"],
        "--wait spin: the strategies are pwait2",
    );
    live_fails_with(&["--tick", "5"], "give a unit: ns, us, ms or s");
    live_fails_with(&["--duration", "0s"], "must be above 0");
    live_fails_with(&["--policy", "fifo:100"], "the priority must be 1 to 99");
    live_fails_with(&["--slack", "0"], "the least slack is 1 ns");
    live_fails_with(
        &["--impl", "no-such-wheel"],
        "unknown implementation `no-such-wheel`",
    );
    live_fails_with(&["--workload", "no-such-family"], "unknown family");
    live_fails_with(&["--file", "/nonexistent/w.tw"], "/nonexistent/w.tw");
    live_fails_with(&["--pin", "100000"], "--pin 100000: cannot pin there");
}
