//! The engine protocol of docs/engines.md and one exchange with an engine (`run_engine`,
//! its `Outcome`), the lateness microbenchmark's request, answer and records: beside
//! `cmd/` because `engine`, `run --engine` and `reproduce` all speak to engines through
//! them, and no command imports another.

pub mod lateness;
pub mod lateness_record;
pub mod protocol;
pub mod verify;

use crate::engines::Engine;
use protocol::{Answer, Exchange, Failure, Request, Sampling};
use std::path::Path;
use std::time::Duration;
use timerbench_workloads::Program;

/// What became of one engine.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// It answered; a verified replay's digest when it replayed and is verified.
    Answered {
        /// The answer.
        answer: Box<Answer>,
        /// The verified digest, if any.
        digest: Option<String>,
        /// The harness's wall time around the exchange.
        wall: Duration,
    },
    /// Its toolchain is missing, or it does not run this request: why.
    Unsupported(String),
    /// It failed: how, and its stderr's last lines.
    Failed {
        /// How.
        failure: String,
        /// Its stderr's last lines.
        stderr_tail: String,
    },
}

impl Outcome {
    /// Whether it counts as a failure of the command.
    pub fn failed(&self) -> bool {
        matches!(self, Outcome::Failed { .. })
    }
}

/// One exchange with a built engine, its replay verified against `program` when it has one.
pub fn run_engine(
    engine: &Engine,
    argv: &[String],
    request: &Request,
    program: Option<&Program>,
    sampling: &Sampling,
    limit: Duration,
    scratch: &Path,
) -> Outcome {
    let Exchange {
        answer,
        stderr_tail,
        wall,
    } = protocol::exchange(argv, request, sampling, limit, scratch);
    let failed = |failure: Failure| Outcome::Failed {
        failure: failure.to_string(),
        stderr_tail: stderr_tail.clone(),
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(failure) => return failed(failure),
    };
    if answer.status == "unsupported" {
        return Outcome::Unsupported(answer.reason.unwrap_or_default());
    }
    let digest = match (program, &answer.replay) {
        (Some(_), None) => {
            return failed(Failure::Malformed(
                "a replay answer without `replay`".into(),
            ));
        }
        (Some(program), Some(replay)) if engine.verifies => match verify::verify(program, replay) {
            Ok(summary) => Some(summary.digest),
            Err(why) => return failed(Failure::WrongLog(why)),
        },
        _ => None,
    };
    Outcome::Answered {
        answer: Box::new(answer),
        digest,
        wall,
    }
}
