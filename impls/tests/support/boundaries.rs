//! Delays that sit on an edge of some structure, shared by the conformance suite and the
//! differential test.

/// Delays around the slot and level edges of 64-slot wheels (tokio, Linux), of 20-slot
/// wheels (Kafka: levels of 20, 400, 8000 ticks) and of the default hashed wheel (4096
/// slots), up to 2^40.
pub const BOUNDARY_DELAYS: &[u64] = &[
    1,
    2,
    19,
    20,
    21,
    62,
    63,
    64,
    65,
    127,
    128,
    399,
    400,
    401,
    4095,
    4096,
    4097,
    (1 << 12) + 63,
    7999,
    8000,
    8001,
    8191,
    8192,
    (1 << 18) - 1,
    1 << 18,
    (1 << 18) + 1,
    (1 << 24) - 1,
    1 << 24,
    (1 << 24) + 1,
    1 << 30,
    (1 << 30) + 1,
    (1 << 36) - 1,
    1 << 36,
    (1 << 36) + 1,
    1 << 40,
];
