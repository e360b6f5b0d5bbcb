import java.util.Iterator;
import java.util.PriorityQueue;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

/**
 * Kafka 0.8's request purgatory (RequestPurgatory.scala) replayed in virtual time, as
 * impls/src/delay_queue_purge.rs ports it: a stopped (satisfied) request is only marked and
 * stays in the heap; expiry pops the head and drops the marked requests it meets; once the
 * marked requests in the heap reach the purge interval, a purge pass removes them all.
 *
 * The purge walks the queue's iterator and removes through it, as Kafka's purgeSatisfied
 * did: on a DelayQueue the iterator is a snapshot whose remove searches the live queue
 * (O(n) per removal, Kafka's cost); on a PriorityQueue it removes in place (O(log n)).
 */
final class Purgatory {
    /** The virtual clock that every request's getDelay reads: one tick is one "nanosecond". */
    static long now;

    /** One delayed request: a pending timer or, once marked, a completed one awaiting purge. */
    static final class Request implements Delayed {
        final long deadline;
        final int slot;
        boolean completed;

        Request(long deadline, int slot) {
            this.deadline = deadline;
            this.slot = slot;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(deadline - now, TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(deadline, ((Request) other).deadline);
        }
    }

    /** The heap under the purgatory: DelayQueue (Kafka's) or a plain PriorityQueue. */
    interface Heap {
        void add(Request request);

        /** The head if it is due at the clock, removed; else null. */
        Request pollDue();

        Request peek();

        /** Removes the head, which must be `head`. */
        void removeHead(Request head);

        Iterator<Request> iterator();
    }

    static final class DelayHeap implements Heap {
        private final DelayQueue<Request> queue = new DelayQueue<>();

        public void add(Request request) { queue.add(request); }

        public Request pollDue() { return queue.poll(); }

        public Request peek() { return queue.peek(); }

        // DelayQueue.remove searches from the head, so removing the head is O(log n).
        public void removeHead(Request head) { queue.remove(head); }

        public Iterator<Request> iterator() { return queue.iterator(); }
    }

    static final class PriorityHeap implements Heap {
        private final PriorityQueue<Request> queue = new PriorityQueue<>();

        public void add(Request request) { queue.add(request); }

        public Request pollDue() {
            Request head = queue.peek();
            return head != null && head.deadline <= now ? queue.poll() : null;
        }

        public Request peek() { return queue.peek(); }

        public void removeHead(Request head) { queue.poll(); }

        public Iterator<Request> iterator() { return queue.iterator(); }
    }

    private final Heap heap;
    private final int purgeInterval;
    private final Request[] pending;
    private int completedInHeap;
    long started, stopped, misses, fired;
    /** The firings, three longs each (NOW, slot, DEADLINE), in the order they fired. */
    long[] log;
    int logLength;

    Purgatory(Heap heap, int purgeInterval, int slots, long[] log) {
        this.heap = heap;
        this.purgeInterval = purgeInterval;
        this.pending = new Request[slots];
        this.log = log;
    }

    /** Replays the whole workload from clock 0. */
    void replay(Workload w) {
        now = 0;
        for (int i = 0; i < w.operations; i++) {
            int slot = w.slots[i];
            long amount = w.amounts[i];
            switch (w.kinds[i]) {
                case Workload.START -> start(slot, now + amount);
                case Workload.STOP -> {
                    if (complete(slot)) stopped++; else misses++;
                }
                case Workload.RESTART -> {
                    long deadline = now + amount;
                    if (complete(slot)) stopped++;
                    start(slot, deadline);
                }
                case Workload.ADVANCE -> moveTo(now + amount);
                case Workload.TICK -> {
                    long end = now + amount;
                    while (now < end) moveTo(now + 1);
                }
                default -> next();
            }
        }
    }

    long pendingCount() {
        return started - stopped - fired;
    }

    /** What a replay leaves: its counts and its log (three longs per firing, `logLength` used). */
    record Counts(long started, long stopped, long misses, long fired, long pending, long[] log, int logLength) { }

    Counts counts() {
        return new Counts(started, stopped, misses, fired, pendingCount(), log, logLength);
    }

    private void start(int slot, long deadline) {
        Request request = new Request(deadline, slot);
        pending[slot] = request;
        heap.add(request);
        started++;
    }

    /** Marks the slot's pending request completed (Kafka's `satisfied`); whether there was one. */
    private boolean complete(int slot) {
        Request request = pending[slot];
        if (request == null) {
            return false;
        }
        pending[slot] = null;
        request.completed = true;
        if (++completedInHeap >= purgeInterval) {
            purge();
        }
        return true;
    }

    private void purge() {
        for (Iterator<Request> it = heap.iterator(); it.hasNext(); ) {
            if (it.next().completed) {
                it.remove();
                completedInHeap--;
            }
        }
    }

    /** One clock move: everything due at `to` fires, logged with NOW = `to`. */
    private void moveTo(long to) {
        now = to;
        Request request;
        while ((request = heap.pollDue()) != null) {
            if (request.completed) {
                completedInHeap--;
                continue;
            }
            pending[request.slot] = null;
            fired++;
            record(to, request.slot, request.deadline);
        }
    }

    /** `n`: an event loop sleeping until its next live request (completed heads are dropped first). */
    private void next() {
        Request head;
        while ((head = heap.peek()) != null && head.completed) {
            heap.removeHead(head);
            completedInHeap--;
        }
        if (head != null) {
            moveTo(Math.max(head.deadline, now));
        }
    }

    private void record(long at, int slot, long deadline) {
        if (logLength + 3 > log.length) {
            log = java.util.Arrays.copyOf(log, Math.max(log.length * 2, 3 * 1024));
        }
        log[logLength++] = at;
        log[logLength++] = slot;
        log[logLength++] = deadline;
    }
}
