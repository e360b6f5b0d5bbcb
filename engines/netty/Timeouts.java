import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.HashedWheelTimer;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Netty keepalive server's idle timer ({@link NettyKeepalive}): what arms it at tick 0,
 * what a keepalive does to it, what stops it. Every method but {@link #stop} runs on the
 * connections' event loop.
 */
abstract class Timeouts {
    /** At the origin word, before tick 0: every connection's fill deadline armed, `origin` being tick 0. */
    abstract void begin(Connection[] all, long origin);

    /** A keepalive moved the connection's deadline. */
    abstract void renewed(Connection c);

    /** The connection ended: its timer is no longer wanted. */
    abstract void ended(Connection c);

    /** The end of the workload phase, off the event loop. */
    void stop() { }

    /** How the server times out its connections, in words, for the record. */
    abstract String server();

    /** The timer's settings, for the record's runtime flags. */
    abstract List<String> flags();

    /** The fill's deadline of `c`, tick 0 being `origin`, or -1 when it has none. */
    static long fillDeadline(Connection c, long origin) {
        long ticks = NettyKeepalive.fillTicks[c.slot];
        return ticks < 0 ? -1 : origin + ticks * NettyKeepalive.tickNs;
    }

    /**
     * `netty-idle-state`: IdleStateHandler(readerIdleTime = the timeout) first in each
     * connection's pipeline, added at tick 0. Netty 4.1's IdleStateHandler keeps one task
     * per connection on the event loop's scheduled-task queue (a binary heap) and does not
     * touch it on a read: the read only stamps lastReadTime (at channelReadComplete); when
     * the task runs it re-checks that stamp, and re-schedules itself for the rest of the
     * timeout if a read came since, or fires READER_IDLE and re-schedules itself a whole
     * timeout ahead. The handlers are added when the server learns tick 0, ahead of it,
     * so that adding them does not hold up the loop at tick 0. A connection's first
     * deadline (the fill's, from a last packet before tick 0) cannot be given to
     * IdleStateHandler, whose idle time counts from when it is added: it is a one-shot task
     * on the same queue, cancelled by the first keepalive; an idle event before it (the
     * handler counting from its addition, before tick 0) finds the deadline ahead and
     * does nothing ({@link Connection#expire}).
     */
    static final class IdleState extends Timeouts {
        private final long timeoutNs;

        IdleState(long timeoutNs) {
            this.timeoutNs = timeoutNs;
        }

        @Override
        void begin(Connection[] all, long origin) {
            for (Connection c : all) {
                c.ch.pipeline().addFirst("idle", new IdleStateHandler(timeoutNs, 0, 0, TimeUnit.NANOSECONDS));
                long fill = fillDeadline(c, origin);
                c.deadline = fill;
                if (fill >= 0) {
                    // Netty's schedule takes a delay, counted from its own later clock
                    // reading: the task runs at the deadline or after, never before.
                    c.fillTask = c.ch.eventLoop().schedule(() -> {
                        if (c.deadline == fill) {
                            c.expire();
                        }
                    }, fill - System.nanoTime(), TimeUnit.NANOSECONDS);
                }
            }
        }

        @Override
        void renewed(Connection c) {
            cancelFill(c); // IdleStateHandler saw the read itself
        }

        @Override
        void ended(Connection c) {
            cancelFill(c);
        }

        private static void cancelFill(Connection c) {
            if (c.fillTask != null) {
                c.fillTask.cancel(false);
                c.fillTask = null;
            }
        }

        @Override
        String server() {
            return "one event-loop thread; IdleStateHandler(readerIdleTime = the timeout) in each "
                    + "connection's pipeline: a task per connection on the event loop's scheduled-task "
                    + "queue (a binary heap), not cancelled on a read but re-checking the last read time "
                    + "when it runs and re-scheduling itself for the rest; the fill's deadline a one-shot "
                    + "task on the same queue; on READER_IDLE a last read of the socket re-arms the "
                    + "connection if a keepalive was there, else closes it";
        }

        @Override
        List<String> flags() {
            return List.of("reader_idle_ns=" + timeoutNs);
        }
    }

    /**
     * `netty-hashed-wheel-idle`: one HashedWheelTimer for every connection, with Netty's
     * default tick and wheel size (stated in the record), its worker thread beside the
     * event loop. Each keepalive cancels the connection's Timeout and makes a new one at the
     * read time plus the timeout (cancel + newTimeout: one live timeout per connection at
     * its exact deadline); the worker queues both for its next tick. An expiry hands the
     * close back to the connection's event loop, where a timeout that a keepalive replaced
     * meanwhile is recognised and dropped.
     */
    static final class Wheel extends Timeouts {
        /** Netty's default tick. */
        private static final long TICK_MS = 100;
        /** Netty's default wheel size. */
        private static final int TICKS_PER_WHEEL = 512;
        private final HashedWheelTimer timer = new HashedWheelTimer(TICK_MS, TimeUnit.MILLISECONDS,
                TICKS_PER_WHEEL);

        @Override
        void begin(Connection[] all, long origin) {
            for (Connection c : all) {
                c.deadline = fillDeadline(c, origin);
                if (c.deadline >= 0) {
                    arm(c);
                }
            }
        }

        /**
         * A new timeout at the connection's deadline, the old one cancelled. The wheel
         * counts the delay from its own later clock reading and fires a timeout at the end
         * of the tick past its deadline: never before it.
         */
        private void arm(Connection c) {
            if (c.timeout != null) {
                c.timeout.cancel();
            }
            c.timeout = timer.newTimeout(t -> c.ch.eventLoop().execute(() -> {
                if (c.timeout == t) {
                    c.expire();
                }
            }), c.deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        void renewed(Connection c) {
            arm(c);
        }

        @Override
        void ended(Connection c) {
            if (c.timeout != null) {
                c.timeout.cancel();
            }
        }

        @Override
        void stop() {
            timer.stop();
        }

        @Override
        String server() {
            return "one event-loop thread reading every connection; one HashedWheelTimer (a " + TICK_MS
                    + " ms tick, " + TICKS_PER_WHEEL + " buckets: Netty's defaults) for every connection, "
                    + "its worker thread waking every tick; each keepalive cancels the connection's "
                    + "Timeout and makes a new one (newTimeout) at the read time plus the timeout; an "
                    + "expiry hands the close to the connection's event loop, where a last read of the "
                    + "socket re-arms the connection if a keepalive was there, else closes it";
        }

        @Override
        List<String> flags() {
            return List.of("tick_ms=" + TICK_MS, "ticks_per_wheel=" + TICKS_PER_WHEEL);
        }
    }
}
