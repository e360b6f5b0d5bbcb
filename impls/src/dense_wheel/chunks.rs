//! The slot arrays of [`super::DenseWheel`]: every slot's items (entry indices) in chunks
//! of one cache line, drawn from one pool that grows by blocks and never moves what it
//! holds.
//!
//! # Layout
//!
//! A chunk is 16 `u32` words, 64 bytes: 15 items and, in the last word, a link to the
//! chunk filled before it. A slot is a [`Tail`]: its newest chunk and how many items that
//! chunk holds; every older chunk on the chain is full. An item's address is
//! `chunk * 16 + offset`, and it is what an entry keeps as its back-index.
//!
//! - Append (a `start`, a cascade): write the item at the tail; a full tail first takes a
//!   chunk from the pool and links the old one behind it.
//! - Remove (a `stop`): the tail's last item moves into the hole (its entry's back-index
//!   is the caller's to update); a tail emptied goes back to the pool and the chunk behind
//!   it becomes the tail, full. No tombstones, no compaction.
//! - Walk (firing, a cascade, the due list): a slot taken whole is read a chunk at a time,
//!   newest first ([`Pool::take_batch`]), each chunk returned to the pool as soon as its
//!   items are copied out, and the next chunk's line prefetched, so that the chain, like
//!   the items, is read as a stream.
//!
//! # Growth
//!
//! Chunks live in blocks of 256 (16 KiB), each allocated once, zeroed by the allocator,
//! and never reallocated: the pool grows by pushing one block, so no operation copies an
//! item. Free chunks are a last-in first-out list through their link words (a chunk just
//! emptied by a walk is the next one a tail takes, while its line is still cached), and
//! chunks never handed out are taken from the last block in order. The only thing that
//! ever doubles is the vector of block pointers: 8 bytes per 3,840 items, a copy of 2 KB
//! at a million pending timers.

use super::super::hierarchical_wheel::slots::SlotHead;
use crate::arena::NIL;
use crate::contract::Tick;
use crate::prefetch::prefetch;

/// Words in a chunk: 16 `u32`s, one 64-byte line.
const CHUNK_WORDS: u32 = 16;
/// Items in a chunk; the last word is the link.
pub(crate) const ITEMS: u32 = CHUNK_WORDS - 1;
/// `log2` of the chunks in a block.
const BLOCK_CHUNK_BITS: u32 = 8;
/// `log2` of the words in a block: an address's block is `address >> BLOCK_WORD_BITS`.
const BLOCK_WORD_BITS: u32 = BLOCK_CHUNK_BITS + CHUNK_WORDS.trailing_zeros();
/// Words in a block: 4,096, 16 KiB.
const BLOCK_WORDS: usize = 1 << BLOCK_WORD_BITS;
/// Chunks in a block.
pub(crate) const BLOCK_CHUNKS: u32 = 1 << BLOCK_CHUNK_BITS;
/// The most chunks the pool can hold: every item address must stay below `NIL`.
const MAX_CHUNKS: u32 = NIL / CHUNK_WORDS;

/// One block of chunks.
type Block = Box<[u32; BLOCK_WORDS]>;

/// A slot's array: its newest chunk and the items in it (1 to 15; every older chunk on the
/// chain is full). Empty: no chunk and a fill of 15, so that the first append takes a chunk
/// by the same test as an append to a full tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tail {
    pub(crate) chunk: u32,
    pub(crate) fill: u32,
}

impl SlotHead for Tail {
    const EMPTY: Tail = Tail {
        chunk: NIL,
        fill: ITEMS,
    };
    const AHEAD: Tick = super::drain::DRAIN_AHEAD;
}

impl Tail {
    /// Whether the slot holds no item.
    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self.chunk == NIL
    }
}

/// The items of one chunk, copied out by a walk.
pub(crate) struct Batch {
    pub(crate) items: [u32; ITEMS as usize],
    pub(crate) len: usize,
}

impl Batch {
    /// No items.
    pub(crate) const EMPTY: Batch = Batch {
        items: [0; ITEMS as usize],
        len: 0,
    };

    /// The batch's items.
    #[inline]
    pub(crate) fn items(&self) -> &[u32] {
        &self.items[..self.len]
    }
}

/// The chunks of every slot. See the module documentation.
pub(crate) struct Pool {
    blocks: Vec<Block>,
    /// Head of the free chunks, linked through their link words.
    free: u32,
    /// Chunks below this have been handed out at least once; the rest of the blocks are
    /// untouched.
    fresh: u32,
}

impl Pool {
    /// A pool with blocks for `items` items in full chunks.
    pub(crate) fn with_capacity(items: usize) -> Self {
        let mut pool = Pool {
            blocks: Vec::new(),
            free: NIL,
            fresh: 0,
        };
        let chunks = items.div_ceil(ITEMS as usize);
        while pool.blocks.len() * (BLOCK_CHUNKS as usize) < chunks {
            pool.add_block();
        }
        pool
    }

    /// Allocates one more block (zeroed by the allocator, which hands out fresh pages
    /// without writing them; nothing is copied).
    fn add_block(&mut self) {
        let block: Block = vec![0; BLOCK_WORDS]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("the vector has BLOCK_WORDS words"));
        self.blocks.push(block);
    }

    /// The word at `address`.
    #[inline]
    fn word(&self, address: u32) -> u32 {
        self.blocks[(address >> BLOCK_WORD_BITS) as usize][address as usize & (BLOCK_WORDS - 1)]
    }

    /// The word at `address`, mutably.
    #[inline]
    fn word_mut(&mut self, address: u32) -> &mut u32 {
        &mut self.blocks[(address >> BLOCK_WORD_BITS) as usize]
            [address as usize & (BLOCK_WORDS - 1)]
    }

    /// The address of the link word of `chunk`.
    #[inline]
    fn link_of(chunk: u32) -> u32 {
        chunk * CHUNK_WORDS + ITEMS
    }

    /// A chunk for a tail: the last one freed, else the next never used.
    #[inline(always)]
    fn alloc(&mut self) -> u32 {
        let chunk = self.free;
        if chunk != NIL {
            self.free = self.word(Self::link_of(chunk));
            return chunk;
        }
        self.alloc_fresh()
    }

    /// [`Pool::alloc`] with no free chunk: the next chunk never used, after adding a block
    /// when the last one is used up. Out of line: once a queue has reached its size, chunks
    /// come from the free list.
    #[inline(never)]
    fn alloc_fresh(&mut self) -> u32 {
        assert!(
            self.fresh < MAX_CHUNKS,
            "dense-wheel: more pending timers than its 32-bit item addresses can hold \
             (about {} items)",
            MAX_CHUNKS as u64 * ITEMS as u64
        );
        if self.fresh as usize == self.blocks.len() * BLOCK_CHUNKS as usize {
            self.add_block();
        }
        self.fresh += 1;
        self.fresh - 1
    }

    /// Returns `chunk` to the pool.
    #[inline]
    fn release(&mut self, chunk: u32) {
        let free = self.free;
        *self.word_mut(Self::link_of(chunk)) = free;
        self.free = chunk;
    }

    /// Appends `item` to the slot `tail` and returns its address. Inline always: it is
    /// most of a `start`, and as a call it saved and restored registers that only its
    /// rare path (a new chunk) needs.
    #[inline(always)]
    pub(crate) fn push(&mut self, tail: &mut Tail, item: u32) -> u32 {
        if tail.fill == ITEMS {
            let chunk = self.alloc();
            *self.word_mut(Self::link_of(chunk)) = tail.chunk;
            *tail = Tail { chunk, fill: 0 };
        }
        let address = tail.chunk * CHUNK_WORDS + tail.fill;
        *self.word_mut(address) = item;
        tail.fill += 1;
        address
    }

    /// Removes the item at `address` from the non-empty slot `tail`: the tail's last item
    /// moves into its place, and is returned (`None` when the removed item was the last).
    /// The caller updates the moved item's back-index to `address`.
    #[inline]
    pub(crate) fn remove(&mut self, tail: &mut Tail, address: u32) -> Option<u32> {
        let last = tail.chunk * CHUNK_WORDS + tail.fill - 1;
        let moved = (last != address).then(|| {
            let item = self.word(last);
            *self.word_mut(address) = item;
            item
        });
        tail.fill -= 1;
        if tail.fill == 0 {
            let chunk = tail.chunk;
            *tail = Tail {
                chunk: self.word(Self::link_of(chunk)),
                fill: ITEMS,
            };
            self.release(chunk);
        }
        moved
    }

    /// Takes the newest chunk of the detached slot `tail` (a slot taken out whole), returns
    /// its items and the chunk to the pool, and leaves `tail` at the chunk behind it, whose
    /// line it prefetches. An empty batch when nothing is left.
    #[inline]
    pub(crate) fn take_batch(&mut self, tail: &mut Tail) -> Batch {
        if tail.is_empty() {
            return Batch::EMPTY;
        }
        let chunk = tail.chunk;
        let start = (chunk * CHUNK_WORDS) as usize & (BLOCK_WORDS - 1);
        let block = &self.blocks[(chunk >> BLOCK_CHUNK_BITS) as usize];
        let Ok(items) = block[start..start + ITEMS as usize].try_into() else {
            unreachable!("a chunk holds ITEMS items")
        };
        let batch = Batch {
            items,
            len: tail.fill as usize,
        };
        let next = block[start + ITEMS as usize];
        if next != NIL {
            let next_start = (next * CHUNK_WORDS) as usize & (BLOCK_WORDS - 1);
            prefetch(&self.blocks[(next >> BLOCK_CHUNK_BITS) as usize][next_start]);
        }
        self.release(chunk);
        *tail = Tail {
            chunk: next,
            fill: ITEMS,
        };
        batch
    }

    /// Calls `each` with the address and the value of every item of the slot `tail`, which
    /// stays as it is.
    pub(crate) fn for_each(&self, tail: Tail, mut each: impl FnMut(u32, u32)) {
        let (mut chunk, mut fill) = (tail.chunk, tail.fill);
        while chunk != NIL {
            for offset in 0..fill {
                let address = chunk * CHUNK_WORDS + offset;
                each(address, self.word(address));
            }
            chunk = self.word(Self::link_of(chunk));
            fill = ITEMS;
        }
    }

    /// Chunks handed out at least once (in use or free).
    #[cfg(test)]
    pub(crate) fn chunks_touched(&self) -> u32 {
        self.fresh
    }

    /// Where each block's words lie: a test checks that growth never moves them.
    #[cfg(test)]
    pub(crate) fn block_addresses(&self) -> Vec<usize> {
        self.blocks.iter().map(|b| b.as_ptr() as usize).collect()
    }
}
