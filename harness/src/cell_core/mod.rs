//! The cell's core that more than one command runs: the verification replay before timing
//! ([`verify`]), the timed replay ([`timed`]) and glibc's allocator tuning with the `/proc`
//! readers ([`os`]). `cell` measures with them, an `ab` side replays through them and
//! `cargo bench` shares them, so they live beside `cmd/`: no command imports another.

pub mod os;
#[cfg(test)]
pub(crate) mod testing;
pub mod timed;
pub mod verify;

pub use os::tune_allocator;
