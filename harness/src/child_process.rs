//! A child process with a time limit, as `run`'s cells and the counting child are run: its
//! pipes read on threads of their own (a child that fills a pipe nobody reads would block
//! and look hung), and killed once its limit has passed, so that one hung cell costs its
//! limit and never the run.

use std::io::Read;
use std::process::{Child, ExitStatus};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Reads `pipe` to its end on a thread of its own; the thread gives the bytes.
pub fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child`, killing it once `limit` has passed; `None` when it was killed.
pub fn wait_with_limit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            // Polled: a child's exit has no portable wait with a timeout.
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => return child.wait().ok(),
        }
    }
}
