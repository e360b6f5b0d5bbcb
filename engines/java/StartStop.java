import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The start+stop shape of the `start-stop` workload (docs/engines.md) for a JVM timer that
 * runs on the real clock: N resident timers, timer i due after one hour plus i mod 10,000 ms
 * (`resident-after-ms`, `resident-spread-ms`), then pairs of "schedule after one second,
 * cancel"; the figure is ns per pair. The residents are due long after any run ends, so the
 * queue holds the same N timers in every sample and no worker fires them beside the
 * pairs; each pair's timer is the earliest. Such a timer cannot run on a virtual clock, so
 * these engines answer a replay request "unsupported".
 */
abstract class StartStop {
    /** Resident timers that fired during the run: 0 unless a run outlasts `resident-after-ms`. */
    final AtomicLong residentFired = new AtomicLong();

    abstract void startResident(long delayMs);

    /** One start+stop pair. */
    abstract void pair();

    /** Resident timers started by the fill. */
    long resident;

    /** Untimed, before every iteration: brings the timer to rest and collects the heap. */
    void settle() throws InterruptedException {
        System.gc();
    }

    /** What {@link #settle} does, in words, for the answer's `between_samples`. */
    String settles() {
        return "collects the heap (System.gc())";
    }

    /** Whether samples are sized in whole edens of garbage ({@link Sampling}); Netty's stay short. */
    boolean paced() {
        return true;
    }

    abstract void close();

    /**
     * `micro start-stop resident=N [resident-after-ms=A] [resident-spread-ms=S] SAMPLING`,
     * answered as JSON.
     */
    static String run(String[] args, StartStop timers, Engine.Json answer) throws IOException, InterruptedException {
        if (args.length < 3 || !args[1].equals("micro") || !args[2].equals("start-stop")) {
            timers.close();
            return answer.field("status", "unsupported")
                    .field("reason", args[0] + " runs on the real clock: no virtual-time replay; only `micro start-stop`")
                    .close();
        }
        Map<String, String> params = Engine.parameters(args, 3);
        long resident = Long.parseLong(Engine.required(params, "resident"));
        long after = Long.parseLong(params.getOrDefault("resident-after-ms", "3600000"));
        long spread = Long.parseLong(params.getOrDefault("resident-spread-ms", "10000"));
        if (resident < 0 || after < 0 || spread < 1) {
            throw new IOException("start-stop needs resident >= 0, resident-after-ms >= 0, resident-spread-ms >= 1");
        }
        for (long i = 0; i < resident; i++) {
            timers.startResident(after + i % spread);
        }
        timers.resident = resident;
        Sampling sampling = Sampling.of(params);
        sampling.between = () -> {
            try {
                timers.settle();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        };
        sampling.betweenWords = timers.settles();
        sampling.paced = timers.paced();
        sampling.unitsWord = "pairs";
        sampling.measure(timers::pair, 1000);
        long fired = timers.residentFired.get();
        long heap = Engine.liveHeapBytes();
        timers.close();
        return sampling.into(answer.field("status", "ok").field("unit", "start-stop pair"))
                .field("peak_rss_bytes", Engine.peakRss())
                .field("heap_live_bytes", heap)
                .field("resident_fired", fired)
                .close();
    }

    /**
     * `jdk-scheduled-executor`: ScheduledThreadPoolExecutor with one worker; a pair is
     * schedule + cancel. With `remove-on-cancel=true` (the default here) a cancel removes
     * the task from the queue at once; with `false` (the JDK's default) cancelled tasks stay
     * queued until due, as Kafka's satisfied requests did.
     *
     * The pair's task is due before every resident, so it becomes the queue's head, and a
     * new head signals a parked worker. With `worker=busy` (the default) each iteration
     * runs while the one worker is inside an untimed task that waits for the next
     * iteration: the pairs then pay for the queue under its lock and nothing else, as in a
     * server whose pairs are not its earliest timers. `worker=waiting` leaves the worker
     * parked on the earliest deadline, so every schedule wakes it on the other core and the
     * two threads contend for the lock: the figure then includes that hand-off.
     */
    static final class ScheduledExecutor extends StartStop {
        /** How long the queue may take to drain: a cancelled pair's task is due a second on. */
        private static final long DRAIN_LIMIT_NS = 600_000_000_000L;
        private final ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1);
        private final Runnable residentTask = residentFired::incrementAndGet;
        private final Runnable nothing = () -> { };
        private final boolean busyWorker;
        /** Opened to let the worker out of the task that keeps it busy; null when none runs. */
        private CountDownLatch release;

        ScheduledExecutor(boolean removeOnCancel, boolean busyWorker) {
            executor.setRemoveOnCancelPolicy(removeOnCancel);
            this.busyWorker = busyWorker;
        }

        void startResident(long delayMs) {
            executor.schedule(residentTask, delayMs, TimeUnit.MILLISECONDS);
        }

        void pair() {
            ScheduledFuture<?> future = executor.schedule(nothing, 1, TimeUnit.SECONDS);
            future.cancel(false);
        }

        /**
         * Waits until the queue holds the resident timers alone, then collects the heap: with
         * `remove-on-cancel=false` the cancelled pairs' tasks stay queued until due, a second
         * on, and the worker takes them then; so every iteration starts from the same queue.
         */
        @Override
        void settle() throws InterruptedException {
            releaseWorker();
            long deadline = System.nanoTime() + DRAIN_LIMIT_NS;
            while (executor.getQueue().size() > resident) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the executor's queue did not drain to its resident timers");
                }
                Thread.sleep(1);
            }
            System.gc();
            if (busyWorker) {
                occupyWorker();
            }
        }

        /** Runs a task on the one worker that waits until {@link #releaseWorker}; returns once it runs. */
        private void occupyWorker() throws InterruptedException {
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch gate = new CountDownLatch(1);
            release = gate;
            executor.execute(() -> {
                running.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            running.await();
        }

        private void releaseWorker() {
            if (release != null) {
                release.countDown();
                release = null;
            }
        }

        @Override
        String settles() {
            String drain = "waits until the executor's queue holds the resident timers alone (cancelled pairs' tasks "
                    + "stay queued until due with remove-on-cancel=false), collects the heap (System.gc())";
            return busyWorker
                    ? drain + ", then keeps the one worker inside a task that waits for the next iteration, so "
                            + "the pairs neither wake it nor contend with it for the queue's lock (worker=busy)"
                    : drain + "; the worker stays parked on the earliest deadline, so every pair's schedule signals "
                            + "it (worker=waiting)";
        }

        void close() {
            releaseWorker();
            executor.shutdownNow();
        }
    }
}
