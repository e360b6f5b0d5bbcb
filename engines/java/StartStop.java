import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Go article's benchmark shape for a JVM timer that runs on the real clock: N resident
 * timers, timer i due after i mod 10,000 ms, then pairs of "schedule after one second,
 * cancel"; the figure is ns per pair. Such a timer cannot run on a virtual clock, so these
 * engines answer a replay request "unsupported".
 */
abstract class StartStop {
    /** Resident timers that fired during the run (they fall due, as in the article). */
    final AtomicLong residentFired = new AtomicLong();

    abstract void startResident(long delayMs);

    /** One start+stop pair. */
    abstract void pair();

    abstract void close();

    /** `micro start-stop resident=N [resident-spread-ms=S] SAMPLING`, answered as JSON. */
    static String run(String[] args, StartStop timers, Engine.Json answer) throws IOException {
        if (args.length < 3 || !args[1].equals("micro") || !args[2].equals("start-stop")) {
            timers.close();
            return answer.field("status", "unsupported")
                    .field("reason", args[0] + " runs on the real clock: no virtual-time replay; only `micro start-stop`")
                    .close();
        }
        Map<String, String> params = Engine.parameters(args, 3);
        long resident = Long.parseLong(Engine.required(params, "resident"));
        long spread = Long.parseLong(params.getOrDefault("resident-spread-ms", "10000"));
        for (long i = 0; i < resident; i++) {
            timers.startResident(i % spread);
        }
        Engine.Sampling sampling = Engine.Sampling.of(params);
        sampling.measure(timers::pair, 1000);
        long fired = timers.residentFired.get();
        timers.close();
        return answer.field("status", "ok").field("unit", "start-stop pair")
                .raw("samples_ns", sampling.samplesJson())
                .field("iterations_per_sample", sampling.iterationsPerSample)
                .field("warmup_iterations", sampling.warmupIterations)
                .field("warmup_settled", sampling.settled)
                .field("peak_rss_bytes", Engine.peakRss())
                .field("resident_fired", fired)
                .close();
    }

    /**
     * `jdk-scheduled-executor`: ScheduledThreadPoolExecutor with one worker; a pair is
     * schedule + cancel. With `remove-on-cancel=true` (the default here) a cancel removes
     * the task from the queue at once; with `false` (the JDK's default) cancelled tasks stay
     * queued until due, as Kafka's satisfied requests did.
     */
    static final class ScheduledExecutor extends StartStop {
        private final ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1);
        private final Runnable residentTask = residentFired::incrementAndGet;
        private final Runnable nothing = () -> { };

        ScheduledExecutor(boolean removeOnCancel) {
            executor.setRemoveOnCancelPolicy(removeOnCancel);
        }

        void startResident(long delayMs) {
            executor.schedule(residentTask, delayMs, TimeUnit.MILLISECONDS);
        }

        void pair() {
            ScheduledFuture<?> future = executor.schedule(nothing, 1, TimeUnit.SECONDS);
            future.cancel(false);
        }

        void close() {
            executor.shutdownNow();
        }
    }
}
