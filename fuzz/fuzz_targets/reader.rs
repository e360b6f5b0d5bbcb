//! The v1 workload reader (`docs/workload-format.md`) on arbitrary bytes.
//!
//! The input is the file, byte for byte (not UTF-8 is one of the format's errors), read
//! twice: by the streaming reader alone (`reader::Reader`, syntax only) and by the loader
//! (`program::load_from`, the reader plus the reference model, what `timerbench replay`
//! and `run --file` use). An error is a result; a panic, a hang or memory beyond the input's
//! size is the bug. Checked:
//!
//! - the two agree: an input the reader rejects the loader rejects with the same error,
//!   unless the model stopped it first, on an earlier line, for a semantic reason (`s` of a
//!   pending timer, a sum reaching 2^63); an input the reader accepts the loader rejects only
//!   for such a reason;
//! - for an accepted workload, everything `common::check_accepted` checks: the program
//!   holds the file's operations and metadata, the model's summary adds up and its log is
//!   in order, `compile` in memory agrees, the writer's text reads back to the same workload
//!   and outcome (a round trip), and, when the replay costs at most `REPLAY_WORK`
//!   pending-timer visits (a `t N` is N calls, so a big N is skipped), the impls crate's
//!   reference queue replays it and verifies exactly.

#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use timerbench_workloads::program::load_from;

/// An error the model finds, not the reader.
fn semantic(message: &str) -> bool {
    message.contains("is already pending") || message.contains("reaches 2^63")
}

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.tw");
    let read = common::read_workload(data, path);
    let loaded = load_from(data, path);
    match (read, loaded) {
        (Err(syntax), Err(e)) => assert!(
            e == syntax || (semantic(&e.message) && e.line < syntax.line),
            "the loader's error is not the reader's: loader `{e}`, reader `{syntax}`"
        ),
        (Err(syntax), Ok(_)) => panic!("the loader accepted what the reader rejects: {syntax}"),
        (Ok(_), Err(e)) => assert!(
            semantic(&e.message) && e.line.is_some(),
            "the loader rejected a well-formed workload for a reason not the model's: {e}"
        ),
        (Ok(workload), Ok(program)) => common::check_accepted(&workload, &program, path),
    }
});
