import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * `netty-hashed-wheel` (docs/engines.md): Netty's HashedWheelTimer with its defaults (a
 * 100 ms tick, 512 buckets) on the start+stop shape ({@link StartStop}); a pair is
 * newTimeout + cancel. Built against Debian's libnetty-java (netty-common.jar), beside engines/java/.
 *
 * Netty queues new and cancelled timeouts for its worker thread, which moves at most
 * 100,000 of each into the wheel per tick: what a pair costs the caller is the two queue
 * operations; the wheel's own work happens on the worker, outside the figure.
 *
 * A storm of pairs queues far faster than the worker's 1,000,000 a second, so over a run
 * the backlog would grow without bound and the samples would time the collector copying
 * it. So each iteration starts from the state of a quiet server ({@link Wheel#settle}):
 * untimed, the engine waits until the worker has taken in every queued timeout, collects
 * the heap (System.gc()) and waits for the worker's next tick; an iteration shorter than
 * the tick (100 ms) then runs while the worker sleeps. The figure leaves out the
 * collection of the pairs' garbage, which the answer's `between_samples` says.
 *
 * `micro lateness ... tick-ms=T` runs {@link Lateness} on a wheel of tick T (512 buckets):
 * the worker sleeps to the end of every tick and fires the bucket whose tick has passed,
 * so a timer fires between its deadline and a tick after it (later while more than 100,000
 * new timeouts wait to be moved into the wheel), never before.
 */
public final class NettyEngine {
    private static final String NAME = "netty-hashed-wheel";

    public static void main(String[] args) {
        Engine.answer(() -> {
            if (Engine.isLateness(args)) {
                var params = Engine.parameters(args, 3);
                long tickMs = Long.parseLong(params.getOrDefault("tick-ms", "100"));
                Lateness.Worker worker = new Lateness.Worker();
                return Lateness.run(params, new Ticking(worker, tickMs), worker, Engine.opening(NAME));
            }
            return StartStop.run(args, new Wheel(), Engine.opening(NAME));
        });
    }

    static final class Wheel extends StartStop {
        /** How long a fence may wait: 10 M queued timeouts drain in 100 ticks, 10 s. */
        private static final long FENCE_LIMIT_S = 600;
        private final HashedWheelTimer timer = new HashedWheelTimer();
        private final TimerTask residentTask = timeout -> residentFired.incrementAndGet();
        private final TimerTask nothing = timeout -> { };

        @Override
        void settle() throws InterruptedException {
            fence();
            System.gc();
            fence();
        }

        @Override
        String settles() {
            return "waits until Netty's worker has taken in every queued timeout, collects the heap "
                    + "(System.gc()), waits for the worker's next tick";
        }

        /**
         * Not paced: a sample must run within one tick while the worker sleeps, and the
         * untimed half eden of pairs before it would queue a backlog for the worker.
         */
        @Override
        boolean paced() {
            return false;
        }

        /**
         * Waits until a timeout due at once, queued now, has fired: the worker's queue is
         * first in, first out, so it has then taken in every timeout queued before, and it
         * fires that bucket right after taking them in, at the start of a tick.
         */
        private void fence() throws InterruptedException {
            CountDownLatch fired = new CountDownLatch(1);
            timer.newTimeout(timeout -> fired.countDown(), 0, TimeUnit.MILLISECONDS);
            if (!fired.await(FENCE_LIMIT_S, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Netty's worker took in no fence within " + FENCE_LIMIT_S + " s");
            }
        }

        void startResident(long delayMs) {
            timer.newTimeout(residentTask, delayMs, TimeUnit.MILLISECONDS);
        }

        void pair() {
            Timeout timeout = timer.newTimeout(nothing, 1, TimeUnit.SECONDS);
            timeout.cancel();
        }

        void close() {
            timer.stop();
        }
    }

    /** The wheel on the real clock at a chosen tick, its worker named for the lateness run. */
    static final class Ticking extends Lateness {
        private static final int TICKS_PER_WHEEL = 512;
        private final HashedWheelTimer timer;
        private final long tickMs;

        Ticking(Lateness.Worker worker, long tickMs) {
            this.tickMs = tickMs;
            timer = new HashedWheelTimer(worker, tickMs, TimeUnit.MILLISECONDS, TICKS_PER_WHEEL);
        }

        void schedule(Runnable task, long delayNs) {
            timer.newTimeout(timeout -> task.run(), delayNs, TimeUnit.NANOSECONDS);
        }

        long tickMs() {
            return tickMs;
        }

        void close() {
            timer.stop();
        }
    }
}
