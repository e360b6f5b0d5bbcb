//! `timerbench reproduce` of a runtimes experiment end to end: one small `live --tcp` with
//! timerbench's loop and Go's server, read back into the runtimes table's rows and judged
//! by the experiment's rule (no wrong close; Go's CPU over the loop's, computed and
//! reported, not judged).

mod support;

use support::{assert_succeeded, text, timerbench_in as timerbench};

#[test]
fn a_runtimes_experiment_runs_the_servers_and_computes_its_rule() {
    if !timerbench::engines::build::on_path("go") {
        eprintln!("skipped: no `go` here (apt-get install golang-go)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let file = root.path().join("experiments.toml");
    std::fs::write(
        &file,
        "[[experiment]]\nid = \"idle\"\nkind = \"runtimes\"\ntitle = \"t\"\nclaim = \"c\"\n\
         source = \"s\"\nmeasured = \"m\"\n\
         implementations = [\"binary-heap\", \"ring-buckets\"]\nengines = [\"go-runtime\"]\n\
         sizes = [60]\nquick_sizes = [60]\nfield = \"workload_phase.cpu_ms_per_second\"\n\
         figure = { kind = \"value\" }\n\
         rule.implementation.\"closed wrongly\" = { holds = { at_most = 0 } }\n\
         rule.reported = [\"CPU over timerbench's loop\"]\n\
         [experiment.runtimes]\nparams = { timeout = 300, rate = 100, idle = 0.2 }\n\
         duration = \"1500ms\"\nidle = \"100ms\"\n",
    )
    .unwrap();
    let out = root.path().join("findings");
    let args = [
        "reproduce",
        "--quick",
        "--experiments",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let output = timerbench(&args, root.path());
    assert_succeeded(&output);
    let findings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("findings.json")).unwrap()).unwrap();
    let idle = &findings["experiments"][0];
    assert_eq!(idle["verdict"], "holds", "{}", idle["reason"]);
    assert_eq!(idle["records"], "idle/live.jsonl");
    let values = idle["values"].as_array().unwrap();
    let value = |label: &str| {
        values
            .iter()
            .find(|v| v["label"] == label)
            .unwrap_or_else(|| panic!("no {label} in {values:?}"))["value"]
            .as_f64()
    };
    for server in ["binary-heap", "ring-buckets", "go-runtime"] {
        assert_eq!(
            value(&format!("{server} at 60 connections: closed wrongly")),
            Some(0.0)
        );
    }
    let ratio = value("go-runtime at 60 connections: CPU over timerbench's best exact structure");
    assert!(ratio.is_some_and(|r| r > 0.0), "{values:?}");
    // The ratios are reported, never judged.
    for v in values
        .iter()
        .filter(|v| v["implementation"] == "CPU over timerbench's loop")
    {
        assert_eq!(v["verdict"], "reported", "{v}");
    }
    let measured = idle["measured"].as_str().unwrap();
    assert!(
        measured.contains("best exact at 60 connections: binary-heap"),
        "{measured}"
    );
    // The run printed the side-by-side table as `live --tcp` does.
    assert!(
        text(&output.stdout).contains("the runtimes' servers beside timerbench's loop"),
        "{}",
        text(&output.stdout)
    );
}
