//! An owner: one thread owns the queue; producers send it start, restart and stop over a
//! multi-producer queue, and it applies them in arrival order and moves the clock. This is
//! Netty's `HashedWheelTimer` (`newTimeout` and `cancel` push onto MPSC queues drained by
//! the worker each tick) and tokio's per-worker wheel (cancels sent to the owner).
//!
//! No producer takes a lock, and a call returns once the command is queued: a stop is
//! acknowledged only when the owner applies it, so its latency is send to apply, and the
//! commands waiting in the queue are memory the structure does not see.

use crate::log::Key;
use crate::shard::{
    Finished, Handle, Ids, Scheme, Shard, StopCall, latency_histogram, record_since,
};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded, unbounded};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use timerbench_impls::{Tick, TimerQueue};

/// What a producer sends the owner.
enum Command {
    Start {
        key: Key,
        delay: Tick,
    },
    Restart {
        key: Key,
        delay: Tick,
    },
    Stop {
        key: Key,
        sent: Instant,
    },
    /// Answer on the channel once everything before it is applied.
    Settle(Sender<()>),
}

/// What the owner thread returns when its queue closes.
struct OwnerEnd {
    finished: Finished,
}

/// The owner scheme.
pub struct Owner {
    sender: Sender<Command>,
    clock: Arc<AtomicU64>,
    thread: JoinHandle<OwnerEnd>,
}

/// How long the owner waits for a command before it looks at the clock again.
const IDLE_WAIT: Duration = Duration::from_micros(100);

impl Owner {
    /// Starts the owner thread with the queue `build` makes, for keys `0..keys`.
    pub fn new<Q, B>(keys: usize, build: B) -> Self
    where
        Q: TimerQueue<u64>,
        B: FnOnce() -> Q + Send + 'static,
    {
        let (sender, receiver) = unbounded();
        let clock = Arc::new(AtomicU64::new(0));
        let owner_clock = Arc::clone(&clock);
        let thread = std::thread::Builder::new()
            .name("timer-owner".into())
            .spawn(move || {
                run_owner(
                    Shard::new(0, build()),
                    Ids::new(keys),
                    receiver,
                    owner_clock,
                )
            })
            .expect("spawn the owner thread");
        Owner {
            sender,
            clock,
            thread,
        }
    }

    fn send(&self, command: Command) {
        // The owner only stops when every sender is gone, so a send cannot fail while the
        // scheme is alive.
        let _ = self.sender.send(command);
    }
}

fn run_owner<Q: TimerQueue<u64>>(
    mut shard: Shard<Q>,
    ids: Ids,
    commands: Receiver<Command>,
    clock: Arc<AtomicU64>,
) -> OwnerEnd {
    let mut queued_stops = latency_histogram();
    let mut peak = 0u64;
    // CPU time is counted from the last settle: the resident timers are applied before it,
    // outside the measured part.
    let mut cpu_at_settle = 0u64;
    let mut apply = |shard: &mut Shard<Q>, command: Command| match command {
        Command::Start { key, delay } => shard.start(&ids, key, delay),
        Command::Restart { key, delay } => shard.restart(&ids, key, delay),
        Command::Stop { key, sent } => {
            shard.stop(&ids, key);
            record_since(&mut queued_stops, sent);
        }
        Command::Settle(answer) => {
            cpu_at_settle = thread_cpu_ns();
            let _ = answer.send(());
        }
    };
    loop {
        peak = peak.max(commands.len() as u64);
        match commands.recv_timeout(IDLE_WAIT) {
            Ok(command) => {
                apply(&mut shard, command);
                for command in commands.try_iter() {
                    apply(&mut shard, command);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        shard.advance(clock.load(Ordering::Acquire));
    }
    shard.advance(clock.load(Ordering::Acquire));
    OwnerEnd {
        finished: Finished {
            logs: vec![shard.log],
            queued_stops,
            peak_queued: peak,
            peak_queued_bytes: peak * std::mem::size_of::<Command>() as u64,
            owner_cpu_ns: Some(thread_cpu_ns().saturating_sub(cpu_at_settle)),
        },
    }
}

/// This thread's CPU time so far, in ns (CLOCK_THREAD_CPUTIME_ID).
pub fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write into; the clock id is a constant Linux
    // and POSIX define.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        return 0;
    }
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

impl Scheme for Owner {
    fn shard_of(&self, _key: Key, _starter: usize) -> u32 {
        0
    }

    fn start(&self, _thread: usize, key: Key, delay: Tick) -> Handle {
        self.send(Command::Start { key, delay });
        Handle { shard: 0, key }
    }

    fn restart(&self, _thread: usize, handle: Handle, delay: Tick) -> Handle {
        let key = handle.key;
        self.send(Command::Restart { key, delay });
        handle
    }

    fn stop(&self, _thread: usize, handle: Handle) -> StopCall {
        let sent = Instant::now();
        self.send(Command::Stop {
            key: handle.key,
            sent,
        });
        StopCall::Sent
    }

    fn advance(&self, to: Tick) {
        self.clock.fetch_max(to, Ordering::Release);
    }

    fn settle(&self) {
        let (answer, done) = bounded(1);
        self.send(Command::Settle(answer));
        let _ = done.recv();
    }

    fn finish(self, clock: Tick) -> Finished {
        self.advance(clock);
        drop(self.sender);
        let end = self.thread.join().expect("the owner thread does not panic");
        end.finished
    }
}
