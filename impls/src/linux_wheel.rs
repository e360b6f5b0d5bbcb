//! `linux-wheel`: the non-cascading timer wheel of Linux 4.8 and later
//! (`kernel/time/timer.c`), approximate by design.
//!
//! # The idea
//!
//! Until 4.8 Linux ran a cascading wheel, exact to the jiffy: when a coarse slot came due
//! its timers were re-filed one level down, and a crowded slot made one tick very slow.
//! Thomas Gleixner's rework (2016) observed that almost every kernel timer is a timeout
//! that is cancelled long before it fires, so moving it between levels is work thrown
//! away. The new wheel files a timer once, at the level its delay selects, rounds its
//! expiry *up* to that level's granularity, and never moves it: a timer far away is
//! allowed to fire late by up to about 12.5% of its delay, and no tick ever cascades.
//!
//! The granularity table of `timer.c`'s header comment, in our words: there are 8 or 9
//! levels (9 when `HZ > 100`) of 64 buckets each; level `n` has granularity `8^n` ticks
//! (`LVL_CLK_SHIFT = 3`), and takes the delays from `63 * 8^(n-1)` (`LVL_START(n)`) up to
//! the next level's start. At `HZ = 1000`, level 0 covers 0 to 63 ms at 1 ms, level 1 up to
//! 504 ms at 8 ms, level 2 up to about 4 s at 64 ms, and so on to level 8, which reaches
//! about 12 days at about 4.7 hours. Beyond the last level's range (`WHEEL_TIMEOUT_CUTOFF`)
//! a deadline is clamped to the largest one the wheel can hold (`WHEEL_TIMEOUT_MAX`): such
//! a timer fires *early*, the wheel's one documented exception, which replay counts apart.
//!
//! What is Linux here and what is not:
//!
//! - as in Linux: `calc_wheel_index` (level choice, the round-up `(expires >> shift) + 1`,
//!   the past-deadline case, the cut-off clamp); `collect_expired_timers` (at clock `c`,
//!   level `n`'s bucket is due when the low `3n` bits of `c` are zero); the expiry of the
//!   collected levels from the highest down, each bucket from its head (timers are added at
//!   the head, so last in, first out); `__next_timer_interrupt` with its per-level `+1`
//!   adjustment; `mod_timer`'s shortcut that only rewrites the expiry when the new one maps
//!   to the same bucket; a pending bitmap per level (one `u64`: 64 buckets).
//! - the clock: the wheel's clock `clk` is the next tick to process, so between calls it is
//!   `now + 1`, as Linux's `base->clk` is `jiffies + 1` right after the timer softirq ran
//!   for `jiffies`. Deadlines are `u64` ticks, so none of `time_after`'s wrap-around.
//! - one base: no per-CPU bases, no deferrable base, no migration, no locking.
//!
//! # One timer entry
//!
//! | field | bytes (`u64` value) |
//! | --- | --- |
//! | deadline as requested (`expires`) | 8 |
//! | value | 8 |
//! | `prev` link | 4 |
//! | bucket (`level * 64 + index`) | 4 |
//! | arena generation and `next` link | 8 |
//! | total | 32 |
//!
//! Fixed: 64 × 9 bucket heads of 4 bytes (2,304 bytes) and 9 bitmap words.
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(1): a level from a comparison chain, push on the bucket's list, set its bit |
//! | `stop` | O(1): unlink; clear the bucket's bit when it empties |
//! | `restart` | O(1): only the expiry changes if the new deadline maps to the same bucket, else unlink and push |
//! | `advance`, per fired timer | O(1): never moved before it fires |
//! | `advance`, per due bucket | O(levels) for the next expiry (a rotate and a `trailing_zeros` per level) |
//! | `advance`, per tick | nothing: empty ticks are jumped over by the next-expiry search |
//! | `next_deadline` | O(levels); the tick the next bucket fires, which is not before its timers' deadlines |
//!
//! # Empty time
//!
//! `advance` asks the pending bitmaps for the next expiring bucket and jumps to it, so a
//! jump of 2^40 ticks over an empty wheel costs one search.
//!
//! # Precision
//!
//! Approximate. A timer with delay `d` (deadline minus `now`) at level `n` fires at the
//! first multiple of `8^n` above its deadline: late by at least 1 and at most `8^n` ticks
//! (the level is chosen on `d - 1`, the distance from `clk`), which is at most 8/63 of
//! its delay at levels above 0. A deadline already passed fires at `now + 1`. A deadline
//! beyond the cut-off fires early, at `now + 1 + WHEEL_TIMEOUT_MAX`.

use crate::arena::{Arena, NIL};
use crate::arena_list;
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::{NaturalPeriod, Parameter, Parameters, Precision, Window};

/// `LVL_CLK_SHIFT`: each level's clock runs 8 times slower than the one below.
const CLOCK_SHIFT: u32 = 3;
/// `LVL_BITS`: 64 buckets per level, one bit each in a `u64`.
const BUCKET_BITS: u32 = 6;
const BUCKETS: usize = 1 << BUCKET_BITS;
/// The most levels Linux builds (`LVL_DEPTH` with `HZ > 100`).
pub const MAX_LEVELS: usize = 9;

/// `LVL_START(n)`: the smallest delay (from `clk`) filed at level `n >= 1`.
const fn level_start(level: usize) -> Tick {
    ((BUCKETS as Tick) - 1) << ((level as u32 - 1) * CLOCK_SHIFT)
}

/// `LVL_GRAN(n)`: ticks per bucket at level `n`.
pub const fn granularity(level: usize) -> Tick {
    1 << (level as u32 * CLOCK_SHIFT)
}

/// One pending timer. The arena link is the `next` pointer of its bucket's list.
struct Entry<V> {
    deadline: Tick,
    value: V,
    prev: u32,
    bucket: u32,
}

crate::impl_linked!(Entry);

/// Linux's timer wheel. See the module documentation.
///
/// # Invariant
///
/// Between calls `clk == now + 1`. Every pending timer sits in exactly one bucket, whose
/// bit is set exactly while the bucket is non-empty; a bucket of level `n` at index `i`
/// holds timers whose rounded-up expiry `b` satisfies `(b >> 3n) & 63 == i` and
/// `clk <= b < clk + 64 * 8^n` (one turn of that level, the bound that
/// `calc_wheel_index`'s level ranges guarantee), so the next-expiry search finds `b`.
pub struct LinuxWheel<V> {
    entries: Arena<Entry<V>>,
    heads: Box<[u32; MAX_LEVELS * BUCKETS]>,
    /// Per level, bit `i` set exactly when bucket `i` is non-empty (`pending_map`).
    pending: [u64; MAX_LEVELS],
    /// `LVL_DEPTH`: 8 or 9.
    levels: usize,
    /// The next tick to process (`base->clk`).
    clk: Tick,
    now: Tick,
    /// Timers whose deadline was clamped to the wheel's range (they fire early).
    clamped: u64,
    work: u64,
}

impl<V> LinuxWheel<V> {
    /// A wheel of `levels` levels (8, as Linux has for `HZ <= 100`, or 9).
    ///
    /// # Panics
    ///
    /// If `levels` is not 8 or 9.
    pub fn with_levels(capacity: usize, levels: usize) -> Self {
        assert!(
            levels == 8 || levels == 9,
            "linux-wheel has 8 or 9 levels (LVL_DEPTH), not {levels}"
        );
        LinuxWheel {
            entries: Arena::with_capacity(capacity),
            heads: Box::new([NIL; MAX_LEVELS * BUCKETS]),
            pending: [0; MAX_LEVELS],
            levels,
            clk: 1,
            now: 0,
            clamped: 0,
            work: 0,
        }
    }

    /// `WHEEL_TIMEOUT_CUTOFF`: delays (from `clk`) at or beyond it are clamped.
    pub fn cutoff(&self) -> Tick {
        level_start(self.levels)
    }

    /// `WHEEL_TIMEOUT_MAX`: the delay (from `clk`) a clamped timer is given.
    pub fn timeout_max(&self) -> Tick {
        self.cutoff() - granularity(self.levels - 1)
    }

    /// Timers whose deadline lay beyond the wheel's range and was clamped to it.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// The level a deadline `delay` ticks after `clk` is filed at, or `None` when it is
    /// already past (`calc_wheel_index`'s comparison chain).
    fn level_for(&self, delay_from_clk: Tick) -> usize {
        (1..self.levels)
            .find(|&level| delay_from_clk < level_start(level))
            .map_or(self.levels - 1, |level| level - 1)
    }

    /// `calc_wheel_index`: the bucket for `deadline` and the tick it expires, seen from
    /// `clk`, and whether the deadline had to be clamped.
    fn bucket_for(&self, deadline: Tick) -> (u32, Tick, bool) {
        if deadline < self.clk {
            // Already past: the bucket the clock is on, due at once.
            let index = (self.clk & (BUCKETS as Tick - 1)) as u32;
            return (index, self.clk, false);
        }
        let mut expires = deadline;
        let delay = deadline - self.clk;
        let clamped = delay >= self.cutoff();
        if clamped {
            expires = self.clk + self.timeout_max();
        }
        let level = self.level_for(expires - self.clk);
        // Round up to the level's granularity, strictly above `expires`: never early.
        let shift = level as u32 * CLOCK_SHIFT;
        let rounded = u128::from(expires >> shift) + 1;
        let index = (rounded & (BUCKETS as u128 - 1)) as usize;
        (
            (level * BUCKETS + index) as u32,
            end_of_time(rounded, shift),
            clamped,
        )
    }

    /// Puts the live entry `index` at the head of `bucket` (`hlist_add_head`).
    fn push_front(&mut self, bucket: u32, index: u32) {
        self.entries.get_mut(index).bucket = bucket;
        arena_list::push_front(&mut self.entries, &mut self.heads[bucket as usize], index);
        let (level, slot) = (bucket as usize / BUCKETS, bucket as usize % BUCKETS);
        self.pending[level] |= 1 << slot;
    }

    /// Takes the live entry `index` off its bucket (`detach_if_pending`), clearing the
    /// bucket's bit when it empties.
    fn unlink(&mut self, index: u32) {
        let bucket = self.entries.get(index).bucket;
        let head = &mut self.heads[bucket as usize];
        if arena_list::unlink(&mut self.entries, head, index) {
            let (level, slot) = (bucket as usize / BUCKETS, bucket as usize % BUCKETS);
            self.pending[level] &= !(1 << slot);
        }
    }

    /// Files the live entry `index` by its deadline (`internal_add_timer`).
    fn file(&mut self, index: u32) {
        let (bucket, _, clamped) = self.bucket_for(self.entries.get(index).deadline);
        self.clamped += u64::from(clamped);
        self.push_front(bucket, index);
    }

    /// `__next_timer_interrupt`: the earliest tick at which a non-empty bucket expires.
    ///
    /// At each level the search starts at the level's clock. When the clock of the level
    /// below had bits set under this level's granularity, this level's current bucket has
    /// already gone by (it expired at a multiple of the coarser granularity behind `clk`),
    /// so the search starts one bucket further: the `+1` of Linux's `adj`. A set bit found
    /// `pos` buckets ahead (modulo 64) expires at `(level_clock + pos) << 3n`.
    fn next_expiry(&mut self) -> Option<Tick> {
        let mut next: Option<Tick> = None;
        let mut level_clock = self.clk;
        for level in 0..self.levels {
            self.work += 1;
            let position = (level_clock & (BUCKETS as Tick - 1)) as u32;
            let bits = self.pending[level];
            if bits != 0 {
                // Buckets ahead of `position`, wrapping: rotate it to bit 0.
                let ahead = Tick::from(bits.rotate_right(position).trailing_zeros());
                let expiry = end_of_time(
                    u128::from(level_clock) + u128::from(ahead),
                    level as u32 * CLOCK_SHIFT,
                );
                next = Some(next.map_or(expiry, |n: Tick| n.min(expiry)));
                // Linux stops when this bucket comes before the next level's clock moves.
                let level_low_bits = level_clock & ((1 << CLOCK_SHIFT) - 1);
                if ahead <= ((1 << CLOCK_SHIFT) - level_low_bits) & ((1 << CLOCK_SHIFT) - 1) {
                    break;
                }
            }
            let carry = Tick::from(level_clock & ((1 << CLOCK_SHIFT) - 1) != 0);
            level_clock = (level_clock >> CLOCK_SHIFT) + carry;
        }
        next
    }

    /// At the end of time: fires every pending timer, each level's buckets in order.
    fn expire_everything<F: FnMut(TimerId, V, Tick)>(&mut self, on_fire: &mut F) {
        for bucket in 0..self.levels * BUCKETS {
            let mut index = arena_list::take(&mut self.heads[bucket]);
            while index != NIL {
                let next = self.entries.link(index);
                let id = self.entries.id(index);
                let (_, entry) = self.entries.remove(index);
                self.work += 1;
                on_fire(id, entry.value, entry.deadline);
                index = next;
            }
        }
        self.pending = [0; MAX_LEVELS];
    }

    /// `collect_expired_timers` then `expire_timers` at clock `clk`: the due buckets of
    /// every level whose lower clock bits are zero, fired from the highest level down, each
    /// bucket from its head.
    fn expire_at<F: FnMut(TimerId, V, Tick)>(&mut self, clk: Tick, on_fire: &mut F) {
        let mut due = [NIL; MAX_LEVELS];
        let mut level_clock = clk;
        for (level, head) in due.iter_mut().enumerate().take(self.levels) {
            let slot = (level_clock & (BUCKETS as Tick - 1)) as usize;
            if self.pending[level] & (1 << slot) != 0 {
                self.pending[level] &= !(1 << slot);
                *head = arena_list::take(&mut self.heads[level * BUCKETS + slot]);
            }
            if level_clock & ((1 << CLOCK_SHIFT) - 1) != 0 {
                break;
            }
            level_clock >>= CLOCK_SHIFT;
        }
        for &head in due.iter().rev() {
            let mut index = head;
            while index != NIL {
                let next = self.entries.link(index);
                let id = self.entries.id(index);
                let (_, entry) = self.entries.remove(index);
                self.work += 1;
                on_fire(id, entry.value, entry.deadline);
                index = next;
            }
        }
    }
}

impl<V> TimerQueue<V> for LinuxWheel<V> {
    /// `levels`: `LVL_DEPTH`, which `HZ` decides in Linux.
    const PARAMETERS: &'static [Parameter] = &[Parameter {
        name: "levels",
        default: MAX_LEVELS as u64,
        about: "levels of 64 buckets (LVL_DEPTH: 9 when HZ > 100, else 8); sets the cut-off",
        accepts: "8 or 9",
        valid: |levels| levels == 8 || levels == 9,
    }];

    /// Nine levels, as Linux has at `HZ = 1000`.
    fn with_capacity(capacity: usize) -> Self {
        Self::with_levels(capacity, MAX_LEVELS)
    }

    fn with_parameters(capacity: usize, parameters: &Parameters) -> Self {
        Self::with_levels(capacity, parameters.get("levels") as usize)
    }

    /// Linux's jiffy at HZ=250: 4 ms, whatever a tick is.
    fn natural_period(&self) -> NaturalPeriod {
        NaturalPeriod::Nanos(4_000_000)
    }

    fn precision(&self) -> Precision {
        Precision::Approximate(
            "late by at most the granularity of the level its delay selects (8^level ticks: \
             at most 8/63 of the delay above level 0, 1 tick at level 0); a delay at or \
             beyond the cut-off (63 x 8^(levels-1) ticks) is clamped and fires early",
        )
    }

    /// The granularity of the timer's level, as [`lateness_bound`]; early (clamped) when
    /// its delay from `clk` reaches the cut-off, as `bucket_for`
    /// decides.
    fn window(&self, deadline: Tick) -> Window {
        if deadline >= self.clk && deadline - self.clk >= self.cutoff() {
            return Window {
                late: 0,
                early: true,
            };
        }
        Window {
            late: lateness_bound(self.levels, deadline.saturating_sub(self.now)),
            early: false,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let id = self.entries.insert(
            NIL,
            Entry {
                deadline,
                value,
                prev: NIL,
                bucket: 0,
            },
        );
        self.file(id.index());
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.entries.resolve(id)?;
        self.unlink(index);
        Some(self.entries.remove(index).1.value)
    }

    /// `mod_timer` on a pending timer: when the new deadline maps to the bucket the timer
    /// is in, only its deadline changes and it keeps the bucket's expiry (Linux accepts
    /// the coarser expiry to skip the dequeue and enqueue); otherwise it moves.
    fn restart(&mut self, id: TimerId, deadline: Tick, value: V) -> (TimerId, Option<V>) {
        let Some(index) = self.entries.resolve(id) else {
            return (self.start(deadline, value), None);
        };
        let (bucket, _, clamped) = self.bucket_for(deadline);
        self.clamped += u64::from(clamped);
        let same_bucket = bucket == self.entries.get(index).bucket;
        let (id, old) = self.entries.reissue(index, {
            let entry = self.entries.get(index);
            Entry {
                deadline,
                value,
                prev: entry.prev,
                bucket: entry.bucket,
            }
        });
        if !same_bucket {
            self.unlink(index);
            self.push_front(bucket, index);
        }
        (id, Some(old.value))
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        while let Some(expiry) = self.next_expiry().filter(|&expiry| expiry <= to) {
            if expiry == Tick::MAX {
                // Every deadline is at most u64::MAX, so all are due; a bucket whose
                // rounded expiry lies past the end of time is only reached here.
                self.expire_everything(&mut on_fire);
                break;
            }
            self.expire_at(expiry, &mut on_fire);
            // At the end of time there is no next tick: `clk` stays at u64::MAX, and a
            // timer started then is due at once, so the next `advance(u64::MAX)` fires it
            // (found by the fuzz target: `to + 1` overflowed).
            self.clk = expiry.saturating_add(1);
        }
        // Nothing expires up to `to`: forward the clock (`forward_timer_base`).
        self.clk = to.saturating_add(1);
        self.now = to;
    }

    /// The tick the next bucket fires, not before any of its timers' deadlines; at most
    /// one `advance` to it fires something.
    fn next_deadline(&mut self) -> Option<Tick> {
        self.next_expiry()
    }

    crate::contract::len_now_work!(entries.len());
}

/// `clock << shift`, the tick a bucket of a level expires, or u64::MAX when that lies past
/// the end of time: Linux's jiffies wrap, our ticks do not, and near u64::MAX the round-up
/// can reach 2^64 (found by the fuzz target); `clock` is wide enough to hold that. Such a bucket fires at
/// u64::MAX, which is never early (no deadline is later) and no later than its rounding.
fn end_of_time(clock: u128, shift: u32) -> Tick {
    let expiry = clock << shift;
    Tick::try_from(expiry).unwrap_or(Tick::MAX)
}

/// The declared lateness bound of a timer started `delay` ticks ahead of `now` (its
/// deadline minus `now`; 0 or less for a deadline already due): the granularity of the
/// level its delay from the wheel's clock (`now + 1`) selects. A deadline beyond the
/// cut-off is not bounded this way: it fires early instead.
pub fn lateness_bound(levels: usize, delay: Tick) -> Tick {
    let wheel = LinuxWheel::<()>::with_levels(0, levels);
    if delay <= 1 {
        return 1;
    }
    granularity(wheel.level_for(delay - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_32_bytes() {
        assert_eq!(Arena::<Entry<u64>>::SLOT_BYTES, 32);
    }

    /// `timer.c`'s granularity table at `HZ = 1000`: level ranges and granularities.
    #[test]
    fn levels_follow_the_granularity_table() {
        let wheel = LinuxWheel::<u64>::with_levels(0, 9);
        let table = [
            (0, 62, 1),
            (63, 503, 8),
            (504, 4_031, 64),
            (4_032, 32_255, 512),
        ];
        for (level, &(first, last, gran)) in table.iter().enumerate() {
            assert_eq!(wheel.level_for(first), level);
            assert_eq!(wheel.level_for(last), level);
            assert_eq!(granularity(level), gran);
        }
        assert_eq!(wheel.cutoff(), 63 << 24);
        assert_eq!(wheel.level_for(wheel.cutoff() - 1), 8);
        let eight = LinuxWheel::<u64>::with_levels(0, 8);
        assert_eq!(eight.cutoff(), 63 << 21);
        assert_eq!(eight.level_for(eight.cutoff() - 1), 7);
    }

    #[test]
    fn a_timer_fires_at_its_bucket_expiry_and_never_moves() {
        let mut wheel = LinuxWheel::with_capacity(0);
        // 1,000 ticks ahead: level 2 (64-tick buckets), expiry rounded up to 1,024.
        wheel.start(1_000, 7u64);
        let bucket = wheel.entries.get(0).bucket;
        let mut fired = Vec::new();
        for tick in 1..=1_024 {
            wheel.advance(tick, |_, value, deadline| {
                fired.push((tick, value, deadline))
            });
            if tick < 1_024 {
                assert_eq!(
                    wheel.entries.get(0).bucket,
                    bucket,
                    "filed once, never moved"
                );
            }
        }
        assert_eq!(fired, [(1_024, 7, 1_000)]);
    }

    #[test]
    fn the_same_bucket_restart_only_rewrites_the_deadline() {
        let mut wheel = LinuxWheel::with_capacity(0);
        let id = wheel.start(1_000, 1u64);
        let bucket = wheel.entries.get(id.index()).bucket;
        let (id, old) = wheel.restart(id, 1_010, 2);
        assert_eq!(old, Some(1));
        assert_eq!(wheel.entries.get(id.index()).bucket, bucket);
        let mut fired = Vec::new();
        wheel.advance(1_024, |_, value, deadline| fired.push((value, deadline)));
        assert_eq!(fired, [(2, 1_010)]);
    }

    #[test]
    fn collected_levels_fire_highest_first_and_each_bucket_last_in_first_out() {
        let mut wheel = LinuxWheel::with_capacity(0);
        // From clk 1: delays 99 and 102 go to level 1 (8-tick buckets), both due at 104.
        wheel.start(100, 1u64);
        wheel.start(103, 2u64);
        // From clk 51: delay 52 goes to level 0, due at 104 too.
        wheel.advance(50, |_, _, _| panic!("nothing is due"));
        wheel.start(103, 3u64);
        let mut fired = Vec::new();
        wheel.advance(104, |_, value, _| fired.push(value));
        assert_eq!(fired, [2, 1, 3]);
    }

    #[test]
    fn a_deadline_beyond_the_cutoff_is_clamped_and_counted() {
        let mut wheel = LinuxWheel::with_levels(0, 8);
        let far = wheel.cutoff() * 4;
        wheel.start(far, 1u64);
        assert_eq!(wheel.clamped(), 1);
        let expiry = wheel.next_deadline().unwrap();
        assert!(expiry < far, "a clamped timer fires early");
        assert!(expiry <= 1 + wheel.timeout_max() + granularity(7));
        let mut fired = Vec::new();
        wheel.advance(expiry, |_, value, _| fired.push(value));
        assert_eq!(fired, [1]);
    }

    /// Near u64::MAX a coarse level's round-up passes the end of time; such timers fire at
    /// u64::MAX, never early, and `advance(u64::MAX)` leaves nothing behind.
    #[test]
    fn the_end_of_time_fires_everything_and_never_overflows() {
        let mut wheel = LinuxWheel::<u64>::with_levels(0, 9);
        wheel.advance(Tick::MAX - 5_000, |_, _, _| {});
        for (value, deadline) in [
            Tick::MAX,
            Tick::MAX - 100,
            Tick::MAX - 4_096,
            Tick::MAX - 4_990,
        ]
        .into_iter()
        .enumerate()
        {
            wheel.start(deadline, value as u64);
        }
        let mut fired = Vec::new();
        let mut early = false;
        wheel.advance(Tick::MAX - 4_200, |_, value, deadline| {
            early |= deadline > Tick::MAX - 4_200;
            fired.push(value);
        });
        wheel.advance(Tick::MAX - 1, |_, value, deadline| {
            early |= deadline > Tick::MAX - 1;
            fired.push(value);
        });
        assert!(!early, "nothing fires before its deadline");
        assert_eq!(wheel.next_deadline(), Some(Tick::MAX));
        wheel.advance(Tick::MAX, |_, value, _| fired.push(value));
        fired.sort_unstable();
        assert_eq!(fired, [0, 1, 2, 3]);
        assert!(wheel.is_empty());
        let late = wheel.start(Tick::MAX, 9);
        let mut again = Vec::new();
        wheel.advance(Tick::MAX, |id, value, _| again.push((id, value)));
        assert_eq!(again, [(late, 9)]);
    }
}
