//! A child process with a time limit, as `run`'s cells and the counting child are run: its
//! pipes read on threads of their own (a child that fills a pipe nobody reads would block
//! and look hung), and killed once its limit has passed, so that one hung cell costs its
//! limit and never the run.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a child ended: its exit status (`None` when it was killed at its limit) and what it
/// wrote.
pub struct Ended {
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Starts `command` with its three pipes, writes `input` to its standard input and closes
/// it, reads both outputs and waits for it at most `limit`. An error is the start's only.
pub fn run_with_input(
    command: &mut Command,
    input: &[u8],
    limit: Duration,
) -> std::io::Result<Ended> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that dies at once closes its end; its exit status tells why.
        let _ = stdin.write_all(input);
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait_with_limit(&mut child, limit);
    Ok(Ended {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// Reads `pipe` to its end on a thread of its own; the thread gives the bytes.
fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child`, killing it once `limit` has passed; `None` when it was killed.
fn wait_with_limit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
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
