//! `timerbench threads` as a user meets it: argument errors, and a small run that writes
//! verified records.

mod support;

use support::{assert_fails_with, assert_succeeded, text, timerbench};
use timerbench_results::threads::{THREADS_FILE, read_threads_records};

#[test]
fn bad_arguments_are_named_and_write_nothing() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("out");
    let out_flag = out.display().to_string();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--scheme", "spinlock"],
            "--scheme: unknown scheme `spinlock`",
        ),
        (
            &["--impl", "no-such-heap"],
            "--impl: unknown implementation",
        ),
        (&["--impl", "hhwt"], "outside peers"),
        (&["--threads", "0"], "--threads 0"),
        (&["--cross", "1.5"], "--cross 1.5"),
        (&["--param", "novalue"], "--param novalue"),
        (&["--family", "no-such-family"], "--family: unknown family"),
    ];
    for (flags, needle) in cases {
        let mut args = vec!["threads", "--out", &out_flag];
        args.extend_from_slice(flags);
        assert_fails_with(&timerbench(&args), needle);
        assert!(!out.exists(), "{flags:?} wrote {}", out.display());
    }
}

#[test]
fn a_small_run_records_every_cell_verified() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().display().to_string();
    let output = timerbench(&[
        "threads",
        "--impl",
        "binary-heap,netty-wheel",
        "--threads",
        "1,2",
        "--timers",
        "200",
        "--ops",
        "2000",
        "--param",
        "far=3",
        "--out",
        &out,
    ]);
    assert_succeeded(&output);
    let records = read_threads_records(&folder.path().join(THREADS_FILE)).unwrap();
    assert_eq!(records.len(), 4 * 2 * 2);
    assert!(records.iter().all(|r| r.verified && r.offence.is_none()));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("verified"), "{stdout}");
    for record in &records {
        assert_eq!(
            record.oversubscribed,
            record.threads + record.helper_threads > record.cores
        );
        assert_eq!(record.latency.len(), record.threads);
    }
}
