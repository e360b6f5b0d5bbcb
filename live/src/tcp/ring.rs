//! The TCP server over io_uring's registered files: for more connections than the
//! process's descriptor limit allows.
//!
//! **Why.** A descriptor per connection needs `RLIMIT_NOFILE` above the connections, and
//! raising the hard limit needs CAP_SYS_RESOURCE, which a container may withhold (the
//! project's own machine: hard limit 20,000). An io_uring ring keeps a table of
//! registered files ("direct descriptors") outside the process's descriptor table, and the
//! kernel bounds each ring's table by the descriptor limit separately
//! (`io_sqe_files_register` refuses more than `rlimit(RLIMIT_NOFILE)` slots per table). So
//! `rings` rings of `slots` each hold `rings × slots` connections in the one loop thread:
//! five rings of 20,000 hold the seed's 100,000.
//!
//! **How.** The listener is an ordinary descriptor; each accept (`IORING_OP_ACCEPT`) puts
//! its connection straight into a chosen slot of a ring, never in the descriptor table.
//! Each connection has one receive in flight (`IORING_OP_RECV` on its fixed file into its
//! own 64-byte buffer), submitted again after each completion. The loop's epoll watches
//! each ring's descriptor, readable when its completion queue holds entries; the loop's
//! wait strategies are those of the epoll server. A timer that fires: one `io_uring_enter`
//! (which runs the completions the kernel has queued for this thread, as the epoll
//! server's last `read` would see a keepalive already sent), then the ring's completions;
//! a keepalive there re-arms the timer, otherwise the connection's receive is cancelled and
//! its slot closed (`IORING_OP_ASYNC_CANCEL`, `IORING_OP_CLOSE`, one submission).
//!
//! **What differs from the epoll server**, and so from its figures: reads and closes are
//! ring operations, one `io_uring_enter` per batch of completions instead of a `read` per
//! ready connection; the kernel completes a receive as task work on the loop thread (by
//! default it signals the thread, which may cut a wait short: the waits retry EINTR); and
//! the completions of its own cancels and closes make a ring readable too, so the loop
//! wakes more often (docs/evidence/2026-11-27-live.md, *The two servers where both run*).
//! Records say which server ran (`io`).

use super::peer::Peer;
use super::shared::{CONTROL_TOKEN, RECORD_BYTES, Server, TcpIo, TcpOutcome, ramp_too_long};
use crate::event_loop::{Input, Received};
use crate::sys::{self, Epoll};
use io_uring::{IoUring, cqueue, opcode, squeue, types};
use std::collections::HashMap;
use std::io;
use std::net::TcpListener;
use std::os::fd::AsRawFd;

/// A ring's epoll token is this plus its index.
const RING_BASE: u64 = 16;
/// Submission queue entries per ring (a full queue is submitted and refilled).
const SUBMISSION_ENTRIES: u32 = 1024;
/// Completion queue entries per ring; the kernel keeps any overflow and hands it over later.
const COMPLETION_ENTRIES: u32 = 8192;
/// Bytes one receive takes: four records.
const RECEIVE_BYTES: usize = 4 * RECORD_BYTES;
/// Accepts in flight during the ramp.
const ACCEPTS_IN_FLIGHT: u64 = 64;
/// The most completions handled per ring per wakeup, so that a flood of keepalives cannot
/// keep due timers waiting for long (the epoll server's read budget).
const COMPLETION_BUDGET: usize = 256;
/// The most slots per ring asked for, whatever the descriptor limit.
const MAX_SLOTS: u64 = 1 << 15;
/// The most rings a server makes: 640,000 connections at this project's limit of 20,000.
const MAX_RINGS: u64 = 32;
/// How long the end waits for the cancelled receives before giving their buffers up.
const CANCEL_WAIT_NS: u64 = 1_000_000_000;

/// What a completion's `user_data` carries above the connection's handle (the low 32 bits).
const ACCEPT: u64 = 1 << 32;
const RECEIVE: u64 = 2 << 32;
const CANCEL: u64 = 3 << 32;
const CLOSE: u64 = 4 << 32;
const KIND: u64 = 0xff << 32;

/// No handle, or no connection.
const NONE: u32 = u32::MAX;

/// The io_uring server for `connections`, or the epoll one (`--tcp-io`): `Epoll` if the
/// descriptor limit can be raised above the connections, else rings whose tables the limit
/// bounds one by one. The soft limit is raised to the hard one for the rings.
pub fn plan(connections: u64, spare: u64, choice: &str) -> Result<TcpIo, String> {
    let epoll = || crate::knobs::ensure_descriptors(connections + spare).map(|()| TcpIo::Epoll);
    match choice {
        "epoll" => epoll(),
        "io-uring" => rings_for(connections),
        "auto" => epoll().or_else(|refused| {
            rings_for(connections)
                .map_err(|why| format!("{refused}; and the io_uring server cannot: {why}"))
        }),
        other => Err(format!(
            "--tcp-io {other}: the choices are auto, epoll and io-uring"
        )),
    }
}

fn rings_for(connections: u64) -> Result<TcpIo, String> {
    let (_, hard) = sys::descriptor_limit().map_err(|e| format!("getrlimit(NOFILE): {e}"))?;
    let slots = hard.min(MAX_SLOTS).min(connections.max(1));
    let rings = connections.div_ceil(slots).max(1);
    if rings > MAX_RINGS {
        return Err(format!(
            "{connections} connections need {rings} rings of {slots} registered files (each \
             ring's table is bounded by the descriptor limit, {hard}), more than the \
             {MAX_RINGS} it makes; use fewer --timers"
        ));
    }
    crate::knobs::ensure_descriptors(slots)?;
    Ok(TcpIo::Ring {
        rings: rings as u32,
        slots: slots as u32,
    })
}

/// One ring: its queues, its table of `slots` connections and their receive buffers.
struct Ring {
    uring: IoUring,
    buffers: Box<[[u8; RECEIVE_BYTES]]>,
    /// Accepts and receives in flight (their buffers may still be written).
    in_flight: u64,
}

/// The rings, made before the client starts.
pub struct Rings {
    rings: Vec<Ring>,
    slots: u32,
}

impl Rings {
    /// `count` rings of `slots` registered files each, or why the kernel refused.
    pub fn new(count: u32, slots: u32) -> Result<Rings, String> {
        let rings =
            (0..count)
                .map(|r| {
                    let uring = IoUring::builder()
                        .setup_cqsize(COMPLETION_ENTRIES)
                        .build(SUBMISSION_ENTRIES)
                        .map_err(|e| {
                            format!(
                                "io_uring_setup: {e}; --tcp-io io-uring needs io_uring (Linux 6.0 \
                             or later, /proc/sys/kernel/io_uring_disabled 0)"
                            )
                        })?;
                    uring.submitter().register_files_sparse(slots).map_err(|e| {
                    format!(
                        "registering {slots} files on ring {r}: {e} (each ring's table may be \
                         as large as the soft descriptor limit)"
                    )
                })?;
                    Ok(Ring {
                        uring,
                        buffers: vec![[0u8; RECEIVE_BYTES]; slots as usize].into_boxed_slice(),
                        in_flight: 0,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
        Ok(Rings { rings, slots })
    }
}

/// The io_uring server. See the module documentation.
pub struct RingServer {
    peer: Peer,
    listener: TcpListener,
    rings: Vec<Ring>,
    slots: u32,
    /// Per handle (`ring × slots + slot`): its connection's index once its hello came.
    index_of: Vec<u32>,
    /// Per connection: its handle while it is open.
    handle_of: Vec<u32>,
    /// Per handle: open (accepted, not yet closed by either side).
    open: Vec<bool>,
    /// Bytes of an incomplete record, per handle.
    partial: HashMap<u32, Vec<u8>>,
    accepts_issued: u64,
    identified: u64,
    /// Whether [`RingServer::release`] has run.
    released: bool,
}

impl RingServer {
    pub fn new(peer: Peer, listener: TcpListener, rings: Rings) -> RingServer {
        let handles = rings.rings.len() * rings.slots as usize;
        let connections = peer.outcome.connections as usize;
        RingServer {
            peer,
            listener,
            slots: rings.slots,
            rings: rings.rings,
            index_of: vec![NONE; handles],
            handle_of: vec![NONE; connections],
            open: vec![false; handles],
            partial: HashMap::new(),
            accepts_issued: 0,
            identified: 0,
            released: false,
        }
    }

    fn place(&self, handle: u32) -> (usize, u32) {
        ((handle / self.slots) as usize, handle % self.slots)
    }

    /// Queues `entry` on ring `r`, submitting first if its queue is full.
    fn push(&mut self, r: usize, entry: squeue::Entry) -> io::Result<()> {
        let ring = &mut self.rings[r];
        loop {
            // SAFETY: every buffer an entry points to (a receive's) lives in `ring.buffers`,
            // which is kept until its receive has completed or been given up (`drop`).
            if unsafe { ring.uring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            ring.uring.submit()?;
        }
    }

    fn accept_next(&mut self) -> io::Result<()> {
        let handle = self.accepts_issued as u32;
        let (r, slot) = self.place(handle);
        let destination = types::DestinationSlot::try_from_slot_target(slot)
            .map_err(|_| io::Error::other(format!("slot {slot} is out of range")))?;
        let entry = opcode::Accept::new(
            types::Fd(self.listener.as_raw_fd()),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
        .file_index(Some(destination))
        .build()
        .user_data(ACCEPT | u64::from(handle));
        self.push(r, entry)?;
        self.rings[r].in_flight += 1;
        self.accepts_issued += 1;
        Ok(())
    }

    fn receive(&mut self, handle: u32) -> io::Result<()> {
        let (r, slot) = self.place(handle);
        let buffer = self.rings[r].buffers[slot as usize].as_mut_ptr();
        let entry = opcode::Recv::new(types::Fixed(slot), buffer, RECEIVE_BYTES as u32)
            .build()
            .user_data(RECEIVE | u64::from(handle));
        self.push(r, entry)?;
        self.rings[r].in_flight += 1;
        Ok(())
    }

    /// Submits ring `r`'s queue (always: its enter also runs the completions queued for
    /// this thread) and any other ring's that holds entries (an accept whose slot is on
    /// the next ring).
    fn submit_queued(&mut self, r: usize) -> io::Result<()> {
        for (i, ring) in self.rings.iter_mut().enumerate() {
            if i == r || !ring.uring.submission().is_empty() {
                ring.uring.submit()?;
            }
        }
        Ok(())
    }

    /// Cancels `handle`'s receive and closes its slot (the socket closes when the
    /// cancelled receive lets go of it).
    fn close(&mut self, handle: u32) -> io::Result<()> {
        let (r, slot) = self.place(handle);
        self.open[handle as usize] = false;
        self.partial.remove(&handle);
        let cancel = opcode::AsyncCancel::new(RECEIVE | u64::from(handle))
            .build()
            .user_data(CANCEL | u64::from(handle));
        let close = opcode::Close::new(types::Fixed(slot))
            .build()
            .user_data(CLOSE | u64::from(handle));
        self.push(r, cancel)?;
        self.push(r, close)?;
        self.rings[r].uring.submit()?;
        Ok(())
    }

    /// Handles at most `budget` completions of ring `r`: accepts, hellos and keepalives
    /// (to `into`). The keepalives read on `watched`'s connection, or the error that cuts
    /// the run.
    fn complete(
        &mut self,
        r: usize,
        budget: usize,
        watched: u32,
        into: &mut Vec<Received>,
    ) -> Result<u64, String> {
        let completions: Vec<cqueue::Entry> =
            self.rings[r].uring.completion().take(budget).collect();
        let mut on_watched = 0;
        for completion in completions {
            let handle = completion.user_data() as u32;
            let result = completion.result();
            match completion.user_data() & KIND {
                ACCEPT => {
                    self.rings[r].in_flight -= 1;
                    if result < 0 {
                        return Err(format!(
                            "accepting connection {} into ring {r}: {}",
                            handle,
                            io::Error::from_raw_os_error(-result)
                        ));
                    }
                    self.open[handle as usize] = true;
                    self.receive(handle).map_err(|e| format!("io_uring: {e}"))?;
                    if self.accepts_issued < self.peer.outcome.connections {
                        self.accept_next().map_err(|e| format!("io_uring: {e}"))?;
                    }
                }
                RECEIVE => {
                    self.rings[r].in_flight -= 1;
                    let read = self.received(handle, result, into)?;
                    if handle == watched {
                        on_watched += read;
                    }
                }
                // A cancel that found its receive done, a close: nothing to do.
                _ => {}
            }
        }
        self.submit_queued(r)
            .map_err(|e| format!("io_uring_enter: {e}"))?;
        Ok(on_watched)
    }

    /// One receive's completion on `handle`: `result` bytes, 0 at end of stream, or an
    /// error. The keepalives read.
    fn received(
        &mut self,
        handle: u32,
        result: i32,
        into: &mut Vec<Received>,
    ) -> Result<u64, String> {
        if !self.open[handle as usize] {
            // Cancelled by a close, or bytes that came as it closed: as on a closed socket.
            return Ok(0);
        }
        let index = self.index_of[handle as usize];
        if result <= 0 {
            // End of stream or a reset: the client went away.
            if index != NONE {
                self.peer.outcome.closed_by_client += 1;
                self.handle_of[index as usize] = NONE;
            }
            self.close(handle).map_err(|e| format!("io_uring: {e}"))?;
            return Ok(0);
        }
        let (r, slot) = self.place(handle);
        let mut bytes = self.partial.remove(&handle).unwrap_or_default();
        bytes.extend_from_slice(&self.rings[r].buffers[slot as usize][..result as usize]);
        let mut start = 0;
        let index = if index != NONE {
            index
        } else if bytes.len() >= RECORD_BYTES {
            let index = self.peer.hello(&bytes[..RECORD_BYTES])?;
            self.index_of[handle as usize] = index;
            self.handle_of[index as usize] = handle;
            self.identified += 1;
            start = RECORD_BYTES;
            index
        } else {
            self.partial.insert(handle, bytes);
            self.receive(handle).map_err(|e| format!("io_uring: {e}"))?;
            return Ok(0);
        };
        let whole = start + (bytes.len() - start) / RECORD_BYTES * RECORD_BYTES;
        let read = self.peer.keepalives(index, &bytes[start..whole], into)?;
        if whole < bytes.len() {
            self.partial.insert(handle, bytes[whole..].to_vec());
        }
        self.receive(handle).map_err(|e| format!("io_uring: {e}"))?;
        Ok(read)
    }

    /// Every completion of every ring, after one `io_uring_enter` per ring.
    fn complete_all(&mut self, into: &mut Vec<Received>) -> Result<(), String> {
        for r in 0..self.rings.len() {
            self.complete(r, usize::MAX, NONE, into)?;
        }
        Ok(())
    }
}

impl Server for RingServer {
    fn ramp(&mut self, epoll: &Epoll, ramp_ns: u64) -> Result<(), String> {
        let failed = |e: io::Error| format!("the ramp: {e}");
        // Blocking, so that the ring's accepts wait for connections in the kernel.
        self.listener.set_nonblocking(false).map_err(failed)?;
        for (r, ring) in self.rings.iter().enumerate() {
            epoll
                .add(ring.uring.as_raw_fd(), RING_BASE + r as u64)
                .map_err(failed)?;
        }
        let control = self.peer.control_fd().map_err(failed)?;
        epoll.add(control, CONTROL_TOKEN).map_err(failed)?;
        let connections = self.peer.outcome.connections;
        while self.accepts_issued < connections.min(ACCEPTS_IN_FLIGHT) {
            self.accept_next().map_err(failed)?;
        }
        for ring in &mut self.rings {
            ring.uring.submit().map_err(failed)?;
        }
        let started = sys::now_ns();
        let mut events = vec![sys::empty_event(); 64];
        let mut stray = Vec::new();
        while self.identified < connections {
            if sys::now_ns() > started + ramp_ns {
                return Err(ramp_too_long(self.identified, connections, ramp_ns));
            }
            let ready = match epoll.wait_ms(&mut events, 100) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => other.map_err(failed)?,
            };
            let tokens: Vec<u64> = events[..ready].iter().map(|event| event.u64).collect();
            for token in tokens {
                if token == CONTROL_TOKEN {
                    if let Some(Received::Cut(why)) = self.peer.read_control()? {
                        return Err(why);
                    }
                } else if token >= RING_BASE {
                    self.complete((token - RING_BASE) as usize, usize::MAX, NONE, &mut stray)?;
                }
            }
        }
        if !stray.is_empty() {
            return Err("the client sent keepalives before tick 0 (a protocol error)".into());
        }
        self.peer.outcome.ramp_ns = sys::now_ns() - started;
        Ok(())
    }

    fn begin(&mut self, origin_ns: u64, end_tick: u64) -> Result<(), String> {
        self.peer.begin(origin_ns, end_tick)
    }

    fn finish(mut self) -> TcpOutcome {
        self.release();
        self.peer.finish()
    }
}

impl RingServer {
    /// Cancels everything in flight and waits for it, so that no receive may write into a
    /// buffer after it is freed; buffers whose receives do not come back in time are
    /// leaked instead.
    fn release(&mut self) {
        if std::mem::replace(&mut self.released, true) {
            return;
        }
        let cancel = opcode::AsyncCancel2::new(types::CancelBuilder::any())
            .build()
            .user_data(CANCEL | u64::from(NONE));
        for ring in &mut self.rings {
            // A ring whose cancel cannot be queued keeps its receives: the wait below then
            // gives its buffers up.
            // SAFETY: the entry points to no buffer.
            if unsafe { ring.uring.submission().push(&cancel) }.is_ok() {
                let _ = ring.uring.submit();
            }
        }
        let until = sys::now_ns() + CANCEL_WAIT_NS;
        for ring in &mut self.rings {
            while ring.in_flight > 0 && sys::now_ns() < until {
                let _ = ring.uring.submit();
                for completion in ring.uring.completion() {
                    if matches!(completion.user_data() & KIND, ACCEPT | RECEIVE) {
                        ring.in_flight -= 1;
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            if ring.in_flight > 0 {
                std::mem::forget(std::mem::take(&mut ring.buffers));
            }
        }
    }
}

impl Input for RingServer {
    fn watch(&mut self, _epoll: &Epoll) -> io::Result<()> {
        // The rings and the client's output are watched since the ramp.
        Ok(())
    }

    fn read(&mut self, _epoll: &Epoll, ready: &[u64], into: &mut Vec<Received>) -> io::Result<()> {
        for &token in ready.iter().filter(|&&t| t >= RING_BASE) {
            let r = (token - RING_BASE) as usize;
            if let Err(why) = self.complete(r, COMPLETION_BUDGET, NONE, into) {
                into.push(Received::Cut(why));
            }
        }
        if !ready.contains(&CONTROL_TOKEN) {
            return Ok(());
        }
        match self.peer.read_control() {
            Ok(Some(Received::End)) => {
                // The client wrote its last keepalives before `done`: take every one the
                // rings hold, then end.
                if let Err(why) = self.complete_all(into) {
                    into.push(Received::Cut(why));
                }
                into.push(Received::End);
            }
            Ok(line) => into.extend(line),
            Err(why) => into.push(Received::Cut(why)),
        }
        Ok(())
    }

    fn fired(&mut self, slot: u32, deadline_ns: u64, into: &mut Vec<Received>) {
        let handle = self.handle_of[slot as usize];
        if handle == NONE {
            return;
        }
        let (r, _) = self.place(handle);
        // An enter runs the completions the kernel has queued for this thread: a
        // keepalive the client sent before now is among them after it.
        if let Err(e) = self.rings[r].uring.submit() {
            return into.push(Received::Cut(format!("io_uring_enter: {e}")));
        }
        match self.complete(r, usize::MAX, handle, into) {
            Ok(0) => {}
            Ok(_) => {
                self.peer.outcome.rearmed += 1;
                return;
            }
            Err(why) => return into.push(Received::Cut(why)),
        }
        if self.handle_of[slot as usize] == NONE {
            return; // the client closed it meanwhile
        }
        self.handle_of[slot as usize] = NONE;
        if let Err(e) = self.close(handle) {
            return into.push(Received::Cut(format!("io_uring: {e}")));
        }
        self.peer.closed(slot, deadline_ns);
    }

    fn unwatch(&mut self, epoll: &Epoll) -> io::Result<()> {
        for handle in &mut self.handle_of {
            if *handle != NONE {
                *handle = NONE;
                self.peer.outcome.open_at_end += 1;
            }
        }
        self.peer.stop_unless_done();
        for ring in &self.rings {
            epoll.delete(ring.uring.as_raw_fd())?;
        }
        epoll.delete(self.peer.control_fd()?)
    }
}

impl Drop for RingServer {
    /// A run that failed half-way frees no buffer a receive may still write into.
    fn drop(&mut self) {
        self.release();
    }
}
