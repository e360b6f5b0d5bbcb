//! A lateness experiment of `timerbench reproduce` end to end: Netty's own wheel (an
//! engine) and netty-wheel (live) on the same few timers into one `live.jsonl`, judged;
//! without a JDK or Netty's jar, not measured as unsupported and not a failed run.

mod support;

use support::{assert_succeeded, text, timerbench_in as timerbench};
use timerbench_results::live::read_live;

#[test]
fn netty_and_its_port_run_on_the_same_timers_into_one_live_file() {
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("experiments.toml");
    // 20 timers over 50 ms at a 10 ms tick: every one fires on both sides, so the rule
    // (exactly 20 firings each) decides whatever the machine's load.
    std::fs::write(
        &file,
        "[[experiment]]\nid = \"few\"\nkind = \"lateness\"\ntitle = \"t\"\nclaim = \"c\"\n\
         source = \"s\"\nmeasured = \"m\"\nimplementations = [\"netty-wheel\"]\n\
         engines = [\"netty-hashed-wheel\"]\nsizes = [10]\nquick_sizes = [10]\n\
         field = \"firings\"\nshown = [\"lateness.total.p50_ns\"]\n\
         figure = { kind = \"value\" }\nrule.holds = { at_least = 20.0, at_most = 20.0 }\n\
         [experiment.lateness]\ntimers = 20\nquick_timers = 20\nspread_ms = 50\n\
         idle_ms = 100\n",
    )
    .unwrap();
    let experiments = file.to_str().unwrap();
    let list = timerbench(
        &["reproduce", "--list", "--experiments", experiments],
        root.path(),
    );
    assert_succeeded(&list);
    let listed = text(&list.stdout);
    assert!(
        listed.contains("netty-wheel, netty-hashed-wheel on lateness, 20 timers over 50 ms"),
        "{listed}"
    );
    let out = root.path().join("findings");
    let args = [
        "reproduce",
        "--quick",
        "--experiments",
        experiments,
        "--out",
        out.to_str().unwrap(),
    ];
    let output = timerbench(&args, root.path());
    // A missing toolchain is this machine's limit: the run still succeeds.
    assert_succeeded(&output);
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let found = &findings["experiments"][0];
    assert_eq!(found["records"], "few/live.jsonl");
    let reason = found["reason"].as_str().unwrap();
    if found["cells"][0]["status"] == "unsupported" {
        eprintln!("skipped: netty-hashed-wheel: {reason}");
        assert_eq!(found["verdict"], "not_measured");
        assert!(reason.contains("apt-get install"), "{reason}");
        return;
    }
    assert_eq!(found["verdict"], "holds", "{reason}");
    assert!(
        reason.contains("the original's own timers here"),
        "{reason}"
    );
    let records = read_live(&out.join("few").join("live.jsonl")).unwrap();
    assert_eq!(records.len(), 2);
    let (netty, port) = (&records[0], &records[1]);
    assert!(netty.is_engine() && !port.is_engine());
    assert_eq!(netty.implementation, "netty-hashed-wheel");
    assert_eq!(port.implementation, "netty-wheel:tick=10");
    assert_eq!(netty.workload, port.workload, "the same timers");
    assert_eq!(netty.period_ns, port.period_ns, "the same tick");
    assert_eq!(netty.lateness.early, 0);
}
