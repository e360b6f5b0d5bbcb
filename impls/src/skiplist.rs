//! `skiplist`: a skip list of timers ordered by `(deadline, slot)`, its nodes in the arena
//! and its upper links in per-height pools.
//!
//! # The idea
//!
//! William Pugh, "Skip Lists: A Probabilistic Alternative to Balanced Trees" (CACM 33(6),
//! 1990): a sorted linked list where each node also joins a random number of express lanes.
//! A node is in level `l` with probability `p^l`; searching walks the top lane until the next
//! step would overshoot, then drops a lane, and takes O(log n) expected steps (section 3's
//! analysis). We use `p = 1/4`, the choice Redis makes for its sorted sets (`ZSKIPLIST_P`):
//! about as fast to search as `p = 1/2` and only 1/3 of an extra link per node instead of 1.
//!
//! For timers the skip list has two properties a heap lacks and a tree pays for: the earliest
//! timer is the first node, so reading it is O(1) and firing it is O(its height), because the
//! minimum is first in every lane it belongs to and can be cut from the head without a search.
//!
//! The order is by the key `(deadline, arena slot)`. No two pending timers share a slot, so
//! keys are unique; `stop` searches for its node's exact key and so meets the node's
//! predecessor in every lane on the way down, which is all the unlinking needs: no back
//! pointers.
//!
//! Levels come from an xorshift64* generator with a fixed seed kept in the structure, so runs
//! are reproducible and nothing reads the clock or the OS.
//!
//! # One timer entry
//!
//! | where | bytes (`u64` value) |
//! | --- | --- |
//! | arena slot: generation (4) and link = level-0 forward pointer (4) | 8 |
//! | payload: deadline (8), value (8), tower index (4), height (1), padding (3) | 24 |
//! | tower: forward pointers of levels `1..height`, 4 each, in a pool per height | 4 × (1/3) ≈ 1.33 expected |
//!
//! About 33.3 bytes per pending timer, plus the pools' and the arena's growth slack (at most
//! what a `Vec` keeps beyond its length: the arena and the pools are
//! [`segmented::Storage`](crate::segmented::Storage), a `Vec` each by default and segments
//! that never copy with the feature `segmented-storage`). A freed tower goes on a free list of its height and the next node of that
//! height takes it, so the pools track the peak number of pending nodes of each height, not
//! the timers started.
//!
//! # Costs (n pending timers)
//!
//! | operation | cost |
//! | --- | --- |
//! | `start` | O(log n) expected: one search, then splice into `height` lanes (1.33 expected); plus a copy of a pool or the arena when it doubles |
//! | `stop` | O(log n) expected: resolve the handle, search for the exact key, unlink |
//! | `advance`, per fired timer | O(height), 1.33 expected: unlink the first node from the head |
//! | `advance`, per tick | nothing: ticks are never visited |
//! | `next_deadline` | O(1): the first node's deadline; exact |
//!
//! # Empty time
//!
//! Nothing to skip: `advance(to)` fires while the first node is due and then sets the clock,
//! whatever the distance. Deadlines at or before `now` are ordinary keys, so past-due timers
//! fire sorted by deadline along with the rest.
//!
//! # Suite limit
//!
//! 100k timers ([`SUITE_LIMIT`](TimerQueue::SUITE_LIMIT)): each lane of a search is a
//! dependent miss once the list outgrows the caches, so its 1M cells took much of the
//! default suite's time (METHODOLOGY.md, *The main job's time*) to show what 100k shows.

use crate::arena::{Arena, NIL};
use crate::contract::{Tick, TimerId, TimerQueue, check_advance};
use crate::declaration::SuiteLimit;

/// Where a tower pool lives: a `Vec`, or segments with `segmented-storage`.
type PoolStore = crate::segmented::Storage<u32>;

/// The most lanes a node joins.
///
/// Pugh sets the maximum level to `log_{1/p} N` for a list of at most `N` elements. The arena
/// addresses fewer than 2^32 slots, and `log_4 2^32 = 16`, so more lanes could never pay for
/// themselves; a node is this tall with probability 4^-15.
const MAX_HEIGHT: usize = 16;

/// In a predecessor position, `NIL` stands for the head: the node before every node.
const HEAD: u32 = NIL;

/// The xorshift64* seed. Any non-zero value works; fixed so that runs are reproducible.
const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// A pending timer. Its level-0 forward pointer is the arena slot's link.
struct Node<V> {
    deadline: Tick,
    value: V,
    /// Which chunk of `Towers::pools[height]` holds the forward pointers of levels
    /// `1..height`. Meaningless when `height == 1`: such a node has no tower.
    tower: u32,
    /// Number of lanes the node is in, `1..=MAX_HEIGHT`.
    height: u8,
}

/// The forward pointers above level 0, for all nodes.
///
/// `pools[h]` (for `2 <= h <= MAX_HEIGHT`) is a sequence of chunks of `h - 1` links, one chunk
/// per node of height `h`; `pools[0]` and `pools[1]` stay empty. A node's forward pointer of
/// level `l >= 1` is link `l - 1` of its chunk. Chunks of stopped or fired nodes are threaded
/// on `free[h]` through their first link, and reused before the pool grows.
struct Towers {
    pools: [PoolStore; MAX_HEIGHT + 1],
    free: [u32; MAX_HEIGHT + 1],
}

impl Towers {
    fn new() -> Self {
        Towers {
            pools: std::array::from_fn(|_| PoolStore::new()),
            free: [NIL; MAX_HEIGHT + 1],
        }
    }

    /// Room for the towers of `capacity` nodes, assuming the expected share of each height
    /// plus four standard deviations (a binomial count `c` has deviation at most `sqrt(c)`).
    /// For empty towers only: it replaces the pools.
    fn reserve(&mut self, capacity: usize) {
        for height in 2..=MAX_HEIGHT {
            let expected = expected_nodes_of_height(capacity as u128, height);
            if expected == 0 {
                break;
            }
            let chunks = expected + 4 * expected.isqrt() + 1;
            let links = chunks.saturating_mul(height as u128 - 1);
            self.pools[height] =
                PoolStore::with_capacity(usize::try_from(links).unwrap_or(usize::MAX));
        }
    }

    /// A chunk for a node of `height >= 2`, reused if one is free.
    fn allocate(&mut self, height: usize) -> u32 {
        let chunk = self.free[height];
        if chunk != NIL {
            self.free[height] = self.pools[height][Self::start(height, chunk)];
            return chunk;
        }
        let pool = &mut self.pools[height];
        let chunk = u32::try_from(pool.len() / (height - 1))
            .ok()
            .filter(|&c| c != NIL)
            .expect("more than u32::MAX - 1 towers of one height");
        pool.resize(pool.len() + height - 1, NIL);
        chunk
    }

    /// Puts the chunk of a removed node of `height >= 2` on its free list.
    fn release(&mut self, height: usize, chunk: u32) {
        let first = Self::start(height, chunk);
        self.pools[height][first] = self.free[height];
        self.free[height] = chunk;
    }

    /// The forward pointer at `level` (`1 <= level < height`) of the node owning `chunk`.
    #[inline]
    fn link(&self, height: usize, chunk: u32, level: usize) -> u32 {
        self.pools[height][Self::start(height, chunk) + level - 1]
    }

    #[inline]
    fn set_link(&mut self, height: usize, chunk: u32, level: usize, target: u32) {
        self.pools[height][Self::start(height, chunk) + level - 1] = target;
    }

    /// Position of the chunk's first link in its pool. Chunks are numbered rather than
    /// addressed by position so that a pool can hold `u32::MAX - 1` chunks of any height.
    #[inline]
    fn start(height: usize, chunk: u32) -> usize {
        chunk as usize * (height - 1)
    }

    fn allocated_bytes(&self) -> usize {
        self.pools.iter().map(|pool| pool.capacity() * 4).sum()
    }
}

/// Expected number among `count` nodes of those exactly `height` tall: `count * (3/4) *
/// (1/4)^(height - 1)`, and everything beyond for the capped top height.
fn expected_nodes_of_height(count: u128, height: usize) -> u128 {
    let at_least = count >> (2 * (height - 1));
    if height == MAX_HEIGHT {
        at_least
    } else {
        at_least - (count >> (2 * height))
    }
}

/// See the module documentation.
///
/// Invariants, between calls:
/// - lane `l` (`head[l]` and the forward pointers of level `l`) links, in increasing
///   `(deadline, slot)` order, exactly the pending nodes of height `> l`, ending in `NIL`;
/// - `height` is the number of non-empty lanes: `head[l] != NIL` exactly for `l < height`;
/// - every node of height `h >= 2` owns chunk `tower` of `towers.pools[h]`, and no free list
///   holds an owned chunk.
pub struct SkipListTimers<V> {
    /// The nodes; a slot's link is the node's level-0 forward pointer.
    nodes: Arena<Node<V>>,
    towers: Towers,
    /// The head node's forward pointers: the first node of every lane.
    head: [u32; MAX_HEIGHT],
    /// Scratch for a search: `update[l]` is the last node of lane `l` ordered before the key
    /// searched for, or `HEAD`. Kept here so that searches do not allocate.
    update: [u32; MAX_HEIGHT],
    /// Number of lanes in use.
    height: usize,
    /// xorshift64* state, never zero.
    rng: u64,
    now: Tick,
    work: u64,
}

impl<V> SkipListTimers<V> {
    /// Bytes allocated for the nodes and their towers (capacity, not length), excluding the
    /// fixed-size head of the structure.
    pub fn allocated_bytes(&self) -> usize {
        self.nodes.allocated_bytes() + self.towers.allocated_bytes()
    }

    /// A height with `P(height > k) = 4^-k`, capped at `MAX_HEIGHT`.
    fn random_height(&mut self) -> usize {
        // xorshift64* (Vigna 2016): three shifts, then a multiply whose high bits are the
        // well-mixed ones. Each pair of leading zero bits of the output occurs with
        // probability 1/4, which is exactly one more lane with p = 1/4.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        let output = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (1 + output.leading_zeros() as usize / 2).min(MAX_HEIGHT)
    }

    #[inline]
    fn key(&self, index: u32) -> (Tick, u32) {
        (self.nodes.get(index).deadline, index)
    }

    /// The node after `node` (or after the head, for `HEAD`) in lane `level`.
    #[inline]
    fn next(&self, node: u32, level: usize) -> u32 {
        if node == HEAD {
            self.head[level]
        } else if level == 0 {
            self.nodes.link(node)
        } else {
            let Node { tower, height, .. } = *self.nodes.get(node);
            self.towers.link(height as usize, tower, level)
        }
    }

    #[inline]
    fn set_next(&mut self, node: u32, level: usize, target: u32) {
        if node == HEAD {
            self.head[level] = target;
        } else if level == 0 {
            self.nodes.set_link(node, target);
        } else {
            let Node { tower, height, .. } = *self.nodes.get(node);
            self.towers.set_link(height as usize, tower, level, target);
        }
    }

    /// Fills `update[l]`, for every lane in use, with the last node ordered before `key`.
    fn find_predecessors(&mut self, key: (Tick, u32)) {
        let mut before = HEAD;
        // The node that ended the walk one lane up is known to be at or after `key`; when the
        // lane below reaches it again, the walk stops without reading its key a second time.
        let mut at_or_after = NIL;
        for level in (0..self.height).rev() {
            loop {
                let next = self.next(before, level);
                if next == at_or_after {
                    break;
                }
                self.work += 1;
                if self.key(next) >= key {
                    at_or_after = next;
                    break;
                }
                before = next;
            }
            self.update[level] = before;
        }
    }

    /// Drops empty top lanes so that searches start at the highest occupied one.
    fn shrink_height(&mut self) {
        while self.height > 0 && self.head[self.height - 1] == NIL {
            self.height -= 1;
        }
    }

    /// Frees the slot and tower of a node already unlinked from every lane.
    fn free_node(&mut self, index: u32) -> Node<V> {
        let (_, node) = self.nodes.remove(index);
        if node.height >= 2 {
            self.towers.release(node.height as usize, node.tower);
        }
        node
    }
}

impl<V> SkipListTimers<V> {
    /// Panics with a message on the first broken invariant of the type documentation:
    /// the lanes, the key order, the towers and their free lists. It walks the whole list
    /// (O(n log n)): for tests, which drive the list through its public API and call this
    /// between operations.
    pub fn check_invariants(&self) {
        assert!(self.height <= MAX_HEIGHT);
        for level in 0..MAX_HEIGHT {
            assert_eq!(self.head[level] != NIL, level < self.height, "lane {level}");
        }
        // Lane 0 holds every node exactly once, in key order.
        let mut lane0 = Vec::new();
        let mut node = self.head[0];
        while node != NIL {
            lane0.push(node);
            node = self.next(node, 0);
        }
        assert_eq!(lane0.len(), self.len());
        assert!(lane0.windows(2).all(|w| self.key(w[0]) < self.key(w[1])));
        // Lane l holds exactly the nodes of height > l, in the same order.
        for level in 1..MAX_HEIGHT {
            let expected: Vec<u32> = lane0
                .iter()
                .copied()
                .filter(|&n| self.nodes.get(n).height as usize > level)
                .collect();
            let mut actual = Vec::new();
            let mut node = self.head[level];
            while node != NIL {
                actual.push(node);
                node = self.next(node, level);
            }
            assert_eq!(actual, expected, "lane {level}");
        }
        // Towers: owned chunks are distinct and disjoint from the free lists.
        for height in 2..=MAX_HEIGHT {
            let mut owned: Vec<u32> = lane0
                .iter()
                .map(|&n| self.nodes.get(n))
                .filter(|n| n.height as usize == height)
                .map(|n| n.tower)
                .collect();
            let mut chunk = self.towers.free[height];
            while chunk != NIL {
                owned.push(chunk);
                chunk = self.towers.pools[height][Towers::start(height, chunk)];
            }
            let total = owned.len();
            owned.sort_unstable();
            owned.dedup();
            assert_eq!(owned.len(), total, "height {height}: a chunk is shared");
            assert_eq!(
                self.towers.pools[height].len(),
                total * (height - 1),
                "height {height}: every chunk is owned or free"
            );
        }
    }

    /// Tower link slots allocated, owned and free: the memory the towers take beyond the
    /// nodes themselves.
    pub fn tower_links(&self) -> usize {
        self.towers.pools.iter().map(PoolStore::len).sum()
    }
}

impl<V> TimerQueue<V> for SkipListTimers<V> {
    /// Measured on the standard workloads (module documentation, "Suite limit").
    const SUITE_LIMIT: Option<SuiteLimit> = Some(SuiteLimit {
        max_timers: 100_000,
        why: "every lane of a search is a dependent cache miss: at 1M a replay takes seconds \
              on most families, to show what its 100k cells already show",
    });

    fn with_capacity(capacity: usize) -> Self {
        let mut towers = Towers::new();
        towers.reserve(capacity);
        SkipListTimers {
            nodes: Arena::with_capacity(capacity),
            towers,
            head: [NIL; MAX_HEIGHT],
            update: [HEAD; MAX_HEIGHT],
            height: 0,
            rng: SEED,
            now: 0,
            work: 0,
        }
    }

    fn start(&mut self, deadline: Tick, value: V) -> TimerId {
        let height = self.random_height();
        let tower = if height >= 2 {
            self.towers.allocate(height)
        } else {
            NIL
        };
        let node = Node {
            deadline,
            value,
            tower,
            height: height as u8,
        };
        // The slot index is half of the key, so the node takes its slot before the search;
        // it is not linked yet, so the search cannot meet it.
        let id = self.nodes.insert(NIL, node);
        let index = id.index();
        self.find_predecessors((deadline, index));
        for level in self.height..height {
            self.update[level] = HEAD;
        }
        self.height = self.height.max(height);
        for level in 0..height {
            let before = self.update[level];
            let after = self.next(before, level);
            self.set_next(index, level, after);
            self.set_next(before, level, index);
        }
        id
    }

    fn stop(&mut self, id: TimerId) -> Option<V> {
        let index = self.nodes.resolve(id)?;
        let key = self.key(index);
        let height = self.nodes.get(index).height as usize;
        self.find_predecessors(key);
        for level in 0..height {
            let before = self.update[level];
            debug_assert_eq!(self.next(before, level), index, "exact key search");
            let after = self.next(index, level);
            self.set_next(before, level, after);
        }
        let node = self.free_node(index);
        self.shrink_height();
        Some(node.value)
    }

    fn advance<F: FnMut(TimerId, V, Tick)>(&mut self, to: Tick, mut on_fire: F) {
        check_advance(self.now, to);
        self.work += 1;
        loop {
            let first = self.head[0];
            if first == NIL || self.nodes.get(first).deadline > to {
                break;
            }
            // The smallest key is first in every lane it is in, so cutting it from the head
            // unlinks it completely.
            let height = self.nodes.get(first).height as usize;
            for level in 0..height {
                self.head[level] = self.next(first, level);
            }
            let id = self.nodes.id(first);
            let node = self.free_node(first);
            self.work += 1;
            on_fire(id, node.value, node.deadline);
        }
        self.shrink_height();
        self.now = to;
    }

    fn next_deadline(&mut self) -> Option<Tick> {
        let first = self.head[0];
        (first != NIL).then(|| self.nodes.get(first).deadline)
    }

    crate::contract::len_now_work!(nodes.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{RngExt, SeedableRng};

    #[test]
    fn entry_fits_the_budget() {
        assert_eq!(std::mem::size_of::<Node<u64>>(), 24);
        assert_eq!(Arena::<Node<u64>>::SLOT_BYTES, 32);
        // Measured: slot plus tower links per pending timer, expected 32 + 4/3.
        let mut queue = SkipListTimers::new();
        let count = 100_000u64;
        for i in 0..count {
            queue.start(i.wrapping_mul(0x9E37_79B9), i);
        }
        let bytes = queue.len() * Arena::<Node<u64>>::SLOT_BYTES + queue.tower_links() * 4;
        let per_timer = bytes as f64 / count as f64;
        assert!(
            (33.0..34.0).contains(&per_timer),
            "{per_timer} bytes per timer"
        );
    }

    #[test]
    fn heights_follow_a_quarter_and_are_reproducible() {
        let mut a = SkipListTimers::<u64>::new();
        let mut b = SkipListTimers::<u64>::new();
        let mut at_least = [0u32; MAX_HEIGHT + 2];
        let draws = 1 << 20;
        for _ in 0..draws {
            let h = a.random_height();
            assert_eq!(h, b.random_height());
            assert!((1..=MAX_HEIGHT).contains(&h));
            for count in &mut at_least[1..=h] {
                *count += 1;
            }
        }
        assert_eq!(at_least[1], draws);
        for k in 2..=5 {
            let ratio = f64::from(at_least[k]) / f64::from(at_least[k - 1]);
            assert!((0.23..0.27).contains(&ratio), "height {k}: ratio {ratio}");
        }
    }

    #[test]
    fn towers_are_reused_over_a_million_start_stop_pairs() {
        const PENDING: usize = 1000;
        let mut queue = SkipListTimers::with_capacity(PENDING);
        let mut rng = SmallRng::seed_from_u64(42);
        let mut live: Vec<TimerId> = (0..PENDING)
            .map(|i| queue.start(rng.random_range(0..1 << 20), i as u64))
            .collect();
        let arena_bytes = queue.nodes.allocated_bytes();
        for round in 0..1_000_000u64 {
            let victim = rng.random_range(0..PENDING as u64) as usize;
            assert!(queue.stop(live[victim]).is_some());
            live[victim] = queue.start(rng.random_range(0..1 << 20), round);
            if round % 250_000 == 0 {
                queue.check_invariants();
            }
        }
        queue.check_invariants();
        assert_eq!(queue.len(), PENDING);
        assert_eq!(queue.nodes.allocated_bytes(), arena_bytes);
        // Each pool holds at most one chunk per node that was ever pending at once with that
        // height; the expected total is PENDING / 3 links, so 2x is far beyond chance.
        let links = queue.tower_links();
        assert!(
            links <= 2 * PENDING / 3,
            "{links} tower links for {PENDING} timers"
        );
        for height in 2..=MAX_HEIGHT {
            assert!(queue.towers.pools[height].len() / (height - 1) <= PENDING);
        }
    }

    #[test]
    fn a_freed_tower_is_taken_by_the_next_node_of_its_height() {
        let mut queue = SkipListTimers::new();
        for i in 0..200u64 {
            queue.start(i, i);
        }
        let rng = queue.rng;
        // Find a draw that gives a tower, so that the test exercises the free list.
        let id = loop {
            let id = queue.start(1000, 0);
            if queue.nodes.get(id.index()).height >= 2 {
                break id;
            }
        };
        let pools = |q: &SkipListTimers<u64>| {
            q.towers
                .pools
                .iter()
                .map(PoolStore::len)
                .collect::<Vec<_>>()
        };
        let grown = pools(&queue);
        let height = queue.nodes.get(id.index()).height as usize;
        let chunk = queue.nodes.get(id.index()).tower;
        queue.stop(id);
        assert_eq!(queue.towers.free[height], chunk);
        assert_eq!(pools(&queue), grown, "a stop never shrinks a pool");
        // Same generator state, same height: the new node takes the freed chunk.
        queue.rng = rng;
        let again = loop {
            let again = queue.start(1000, 0);
            if queue.nodes.get(again.index()).height >= 2 {
                break again;
            }
        };
        assert_eq!(queue.nodes.get(again.index()).tower, chunk);
        assert_eq!(queue.towers.free[height], NIL);
        assert_eq!(pools(&queue), grown);
        queue.check_invariants();
    }

    #[test]
    fn with_capacity_reserves_towers() {
        let queue = SkipListTimers::<u64>::with_capacity(100_000);
        assert!(queue.nodes.allocated_bytes() >= 100_000 * 32);
        // About 33_333 expected links, plus margin.
        let tower_bytes = queue.towers.allocated_bytes();
        assert!(
            (4 * 33_333..4 * 40_000).contains(&tower_bytes),
            "{tower_bytes}"
        );
        let empty = SkipListTimers::<u64>::with_capacity(0);
        assert_eq!(empty.allocated_bytes(), 0);
    }
}
