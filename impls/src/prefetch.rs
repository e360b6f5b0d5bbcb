//! A software prefetch: asks the cache to start loading the line of a value that will be
//! read soon, without waiting for it.
//!
//! A walk whose next targets are known ahead (the indices in a dense array) can have many
//! cache misses in flight at once instead of one at a time. An ordinary load would do the
//! same only while the processor's reorder window lasts, and a miss to memory outlasts it;
//! a prefetch retires at once and never faults.
//!
//! This is the crate's one use of `unsafe`: on x86-64 the intrinsic is declared with
//! `#[target_feature(enable = "sse")]`, and a call from code not compiled under that
//! attribute must be marked `unsafe` even though SSE is part of every x86-64 target. The
//! call is sound for any address: a prefetch reads nothing the program can observe, and
//! an invalid or unmapped address is ignored, not faulted. Elsewhere it compiles to
//! nothing.

/// Starts loading the cache line of `value` into every level of the cache (a hint; a
/// no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let address = (value as *const T).cast::<i8>();
        // SAFETY: SSE is baseline on x86-64, and a prefetch of any address is harmless
        // (see the module documentation); `address` comes from a live reference anyway.
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(address)
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
