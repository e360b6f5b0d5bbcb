import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * `micro lateness` (docs/engines.md): a JVM timer on the real clock. N timers are scheduled
 * one after another, timer i due `floor(i × spread / N)` ms after its own schedule time;
 * each firing records `callback − (schedule + delay)` on System.nanoTime. The busy phase
 * lasts from the first schedule to the last firing; the idle phase (nothing pending) lasts
 * `idle-ms`. Per phase: the worker thread's voluntary context switches (each sleep that
 * returned is one: Netty's worker sleeps to every tick, the executor's parks to the next
 * deadline) and its CPU time, and the process's CPU time.
 *
 * The worker's Linux thread id comes from /proc/thread-self read by a task the worker
 * itself runs, so no thread name has to survive into /proc.
 */
abstract class Lateness {
    /** The worker's name, as the thread factory gives it. */
    static final String WORKER = "timerbench-worker";

    /** The lateness of a timer that has not fired. */
    private static final long NOT_FIRED = Long.MIN_VALUE;

    /** Schedules `task` after `delayNs` on the timer's worker. */
    abstract void schedule(Runnable task, long delayNs);

    /** The tick in ms, or 0 for a deadline-driven timer. */
    abstract long tickMs();

    abstract void close();

    /** The thread factory both timers get: one named worker, recorded for its CPU clock. */
    static final class Worker implements ThreadFactory {
        volatile Thread thread;

        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, WORKER);
            t.setDaemon(true);
            thread = t;
            return t;
        }
    }

    /** `micro lateness timers=N spread-ms=S idle-ms=I [tick-ms=T]`, answered as JSON. */
    static String run(Map<String, String> params, Lateness timer, Worker worker, Engine.Json answer)
            throws IOException, InterruptedException {
        int timers = Integer.parseInt(params.getOrDefault("timers", "10000"));
        long spreadMs = Long.parseLong(params.getOrDefault("spread-ms", "1000"));
        long idleMs = Long.parseLong(params.getOrDefault("idle-ms", "1000"));
        if (timers < 1 || spreadMs < 0 || idleMs < 1) {
            throw new IOException("lateness needs timers >= 1, spread-ms >= 0, idle-ms >= 1");
        }
        long tid = workerTid(timer);
        Phase busy = Phase.begin(tid, worker.thread);
        long[] late = fire(timer, timers, spreadMs);
        int fired = late.length;
        busy.end();
        Phase idle = Phase.begin(tid, worker.thread);
        Thread.sleep(idleMs);
        idle.end();
        timer.close();
        Arrays.sort(late);
        long early = Arrays.stream(late).filter(l -> l < 0).count();
        return answer.field("status", "ok").field("unit", "lateness")
                .raw("samples_ns", "[]")
                .field("peak_rss_bytes", Engine.peakRss())
                .raw("lateness", new Engine.Json()
                        .field("timers", timers).field("fired", fired).field("early", early)
                        .raw("tick_ms", timer.tickMs() == 0 ? "null" : String.valueOf(timer.tickMs()))
                        .field("spread_ms", spreadMs)
                        .raw("lateness_us", percentiles(late))
                        .raw("busy", busy.json()).raw("idle", idle.json())
                        .field("wakeups_of", "voluntary context switches of the timer's worker thread")
                        .field("cpu_of", "the timer's worker thread (cpu_ms_per_s); the process (process_cpu_ms_per_s)")
                        .close())
                .close();
    }

    /**
     * Schedules the timers and waits for them all, or until the spread plus a bound has
     * passed (then the answer's `fired` says how many did); lateness in ns of those fired.
     */
    private static long[] fire(Lateness timer, int timers, long spreadMs) throws InterruptedException {
        long[] expected = new long[timers];
        long[] late = new long[timers];
        Arrays.fill(late, NOT_FIRED);
        CountDownLatch done = new CountDownLatch(timers);
        for (int i = 0; i < timers; i++) {
            long delayNs = TimeUnit.MILLISECONDS.toNanos(spreadMs * i / timers);
            final int index = i;
            // Written before the timer is handed over, so the worker sees it.
            expected[i] = System.nanoTime() + delayNs;
            timer.schedule(() -> {
                late[index] = System.nanoTime() - expected[index];
                done.countDown();
            }, delayNs);
        }
        long boundMs = spreadMs + 20 * Math.max(timer.tickMs(), 1) + 5000;
        done.await(boundMs, TimeUnit.MILLISECONDS);
        // A timer not fired by the bound keeps its mark and is left out: `fired` says so.
        return Arrays.stream(late).filter(l -> l != NOT_FIRED).toArray();
    }

    /** The worker's Linux thread id, read by a task the worker runs; -1 where there is no /proc. */
    private static long workerTid(Lateness timer) throws InterruptedException {
        long[] tid = {-1};
        CountDownLatch read = new CountDownLatch(1);
        timer.schedule(() -> {
            try {
                tid[0] = Long.parseLong(Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString());
            } catch (IOException | RuntimeException e) {
                tid[0] = -1;
            }
            read.countDown();
        }, 0);
        read.await();
        return tid[0];
    }

    /** `{"p50":..,"p99":..,"p999":..,"max":..}` in µs of sorted ns; nulls when none fired. */
    static String percentiles(long[] sorted) {
        if (sorted.length == 0) {
            return "{\"p50\":null,\"p99\":null,\"p999\":null,\"max\":null}";
        }
        return new Engine.Json().field("p50", rank(sorted, 0.50)).field("p99", rank(sorted, 0.99))
                .field("p999", rank(sorted, 0.999)).field("max", sorted[sorted.length - 1] / 1e3).close();
    }

    /** The nearest-rank percentile, in µs. */
    private static double rank(long[] sorted, double q) {
        int index = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(index, 0)] / 1e3;
    }

    /** One phase's wall time, the worker's switches and CPU, and the process's CPU. */
    static final class Phase {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        private final long tid;
        private final Thread worker;
        private final long wallStart, switchesStart, cpuStart, processStart;
        private long wall, switches, cpu, process;

        private Phase(long tid, Thread worker) {
            this.tid = tid;
            this.worker = worker;
            wallStart = System.nanoTime();
            switchesStart = voluntarySwitches(tid);
            cpuStart = THREADS.getThreadCpuTime(worker.getId());
            processStart = processCpu();
        }

        static Phase begin(long tid, Thread worker) {
            return new Phase(tid, worker);
        }

        void end() {
            wall = System.nanoTime() - wallStart;
            switches = voluntarySwitches(tid) - switchesStart;
            cpu = THREADS.getThreadCpuTime(worker.getId()) - cpuStart;
            process = processCpu() - processStart;
        }

        String json() {
            double seconds = wall / 1e9;
            return new Engine.Json().field("seconds", seconds)
                    .raw("wakeups_per_s", switchesStart < 0 ? "null" : String.valueOf(switches / seconds))
                    .field("cpu_ms_per_s", cpu / 1e6 / seconds)
                    .field("process_cpu_ms_per_s", process / 1e6 / seconds)
                    .close();
        }

        /** `voluntary_ctxt_switches` of the thread; -1 where there is no /proc. */
        private static long voluntarySwitches(long tid) {
            if (tid < 0) {
                return -1;
            }
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/task/" + tid + "/status"))) {
                    if (line.startsWith("voluntary_ctxt_switches:")) {
                        return Long.parseLong(line.replaceAll("[^0-9]", ""));
                    }
                }
            } catch (IOException | NumberFormatException e) {
                return -1;
            }
            return -1;
        }

        private static long processCpu() {
            var os = ManagementFactory.getOperatingSystemMXBean();
            return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : 0;
        }
    }

    /** `jdk-scheduled-executor`: one worker that parks until the next deadline; no tick. */
    static final class ScheduledExecutor extends Lateness {
        private final ScheduledThreadPoolExecutor executor;

        ScheduledExecutor(Worker worker) {
            executor = new ScheduledThreadPoolExecutor(1, worker);
            executor.setRemoveOnCancelPolicy(true);
        }

        void schedule(Runnable task, long delayNs) {
            executor.schedule(task, delayNs, TimeUnit.NANOSECONDS);
        }

        long tickMs() {
            return 0;
        }

        void close() {
            executor.shutdownNow();
        }
    }
}
