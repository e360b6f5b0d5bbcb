import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The JDK engines of timerbench (docs/engines.md): `jdk-delay-queue` and `jdk-priority-queue`
 * replay a workload in virtual time through Kafka 0.8's purgatory rule and answer one JSON
 * object on stdout; `jdk-scheduled-executor` runs start+stop pairs ({@link StartStop}) and
 * the real-clock lateness microbenchmark ({@link Lateness}).
 * Usage: `Engine NAME replay workload=PATH log=PATH [samples=N]
 * [min-sample-ms=M] [warmup=W] [max-warmup=X] [purge-interval=P]`.
 *
 * The sampling rule (warm-up until the timings and the JIT settle, the heap collected before
 * every iteration, samples of whole edens of garbage) is {@link Sampling}'s. The first of
 * those collections moves the workload or the resident timers, built untimed, to the old
 * generation, so that no sample pays for copying them; after the samples the engine
 * collects again to report the live heap. The JVM's flags (fixed heap, pre-touched, serial
 * collector) are set by the harness and answered in `runtime_flags` (docs/engines.md,
 * *JVM flags*).
 */
public final class Engine {
    private static final int PROTOCOL = 2;

    public static void main(String[] args) {
        answer(() -> run(args));
    }

    /** Prints the answer, or the error on stderr with exit status 2. */
    static void answer(java.util.concurrent.Callable<String> run) {
        try {
            System.out.println(run.call());
        } catch (Exception e) {
            System.err.println("jdk engine: " + e);
            System.exit(2);
        }
        // Timer threads (the executor's, Netty's) must not keep the JVM alive.
        System.exit(0);
    }

    /** The answer's opening fields, common to every JDK engine. */
    static Json opening(String name) {
        return new Json().field("protocol", PROTOCOL).field("engine", name)
                .field("runtime", System.getProperty("java.vm.name"))
                .field("runtime_version", Runtime.version().toString())
                .raw("runtime_flags", Json.strings(ManagementFactory.getRuntimeMXBean().getInputArguments()));
    }

    /** The heap in use after a full collection once the samples are taken: the live data. */
    static long liveHeapBytes() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Parameter `key`'s value, which must be `first` (its default) or `second`. */
    private static String oneOf(Map<String, String> params, String key, String first, String second)
            throws IOException {
        String value = params.getOrDefault(key, first);
        if (!value.equals(first) && !value.equals(second)) {
            throw new IOException(key + "=" + value + ": expected " + key + "=" + first + " or " + key + "=" + second);
        }
        return value;
    }

    private static String run(String[] args) throws IOException, InterruptedException {
        if (args.length < 2) {
            throw new IOException("usage: Engine NAME MODE key=value...");
        }
        String name = args[0];
        String mode = args[1];
        Json answer = opening(name);
        if (name.equals("jdk-scheduled-executor") && isLateness(args)) {
            Lateness.Worker worker = new Lateness.Worker();
            return Lateness.run(parameters(args, 3), new Lateness.ScheduledExecutor(worker), worker, answer);
        }
        if (name.equals("jdk-scheduled-executor")) {
            Map<String, String> params = mode.equals("micro") ? parameters(args, 3) : Map.of();
            boolean removeOnCancel = oneOf(params, "remove-on-cancel", "true", "false").equals("true");
            boolean busyWorker = oneOf(params, "worker", "busy", "waiting").equals("busy");
            return StartStop.run(args, new StartStop.ScheduledExecutor(removeOnCancel, busyWorker), answer);
        }
        boolean delayQueue = name.equals("jdk-delay-queue");
        if (!delayQueue && !name.equals("jdk-priority-queue")) {
            throw new IOException("unknown engine " + name);
        }
        if (!mode.equals("replay")) {
            return answer.field("status", "unsupported")
                    .field("reason", name + " only replays workloads in virtual time (mode `replay`)").close();
        }
        Map<String, String> params = parameters(args, 2);
        Workload workload = Workload.read(Path.of(required(params, "workload")));
        int purgeInterval = Integer.parseInt(params.getOrDefault("purge-interval", "1000"));
        long[][] log = {new long[3 * 1024]};
        // Only the counts and the log outlive a replay: the last replay's queue, kept, would
        // be live through the next replay's collections, which would copy it each time.
        Purgatory.Counts[] last = new Purgatory.Counts[1];
        Runnable replay = () -> {
            Purgatory.Heap heap = delayQueue ? new Purgatory.DelayHeap() : new Purgatory.PriorityHeap();
            Purgatory purgatory = new Purgatory(heap, purgeInterval, workload.slotCount, log[0]);
            purgatory.replay(workload);
            log[0] = purgatory.log;
            last[0] = purgatory.counts();
        };
        Sampling sampling = Sampling.of(params);
        sampling.unitsWord = "replays";
        sampling.measure(replay, 1);
        Purgatory.Counts done = last[0];
        writeLog(Path.of(required(params, "log")), workload, done);
        return sampling.into(answer.field("status", "ok").field("unit", "replay"))
                .field("peak_rss_bytes", peakRss())
                .field("heap_live_bytes", liveHeapBytes())
                .raw("replay", new Json().field("operations", workload.operations)
                        .field("started", done.started()).field("fired", done.fired())
                        .field("stopped", done.stopped()).field("misses", done.misses())
                        .field("pending", done.pending()).field("final_clock", Purgatory.now)
                        .field("log", required(params, "log")).close())
                .close();
    }

    /** Whether the request is `micro lateness ...`, the real-clock microbenchmark. */
    static boolean isLateness(String[] args) {
        return args.length >= 3 && args[1].equals("micro") && args[2].equals("lateness");
    }

    /** The `key=value` arguments from `args[from]` on. */
    static Map<String, String> parameters(String[] args, int from) throws IOException {
        Map<String, String> params = new HashMap<>();
        for (int i = from; i < args.length; i++) {
            int equals = args[i].indexOf('=');
            if (equals < 1) {
                throw new IOException("parameter `" + args[i] + "` is not key=value");
            }
            params.put(args[i].substring(0, equals), args[i].substring(equals + 1));
        }
        return params;
    }

    static String required(Map<String, String> params, String key) throws IOException {
        String value = params.get(key);
        if (value == null) {
            throw new IOException("missing parameter " + key + "=");
        }
        return value;
    }

    /** The expiry log, `NOW ID DEADLINE` per firing in the order fired; the harness sorts it. */
    private static void writeLog(Path path, Workload workload, Purgatory.Counts replayed) throws IOException {
        try (BufferedWriter out = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
            long[] log = replayed.log();
            for (int i = 0; i < replayed.logLength(); i += 3) {
                out.write(log[i] + " " + Long.toUnsignedString(workload.keys[(int) log[i + 1]]) + " " + log[i + 2] + "\n");
            }
        }
    }

    /** VmHWM from /proc/self/status, in bytes; 0 where there is no /proc. */
    static long peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return 1024 * Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /** A flat JSON object written by hand: no library is needed for numbers and plain strings. */
    static final class Json {
        private final StringBuilder out = new StringBuilder("{");

        Json field(String key, Object value) {
            String text = value instanceof String s ? quote(s) : String.valueOf(value);
            return raw(key, text);
        }

        Json raw(String key, String json) {
            out.append(out.length() > 1 ? "," : "").append(quote(key)).append(':').append(json);
            return this;
        }

        String close() {
            return out.append('}').toString();
        }

        /** A JSON array of strings. */
        static String strings(List<String> values) {
            StringBuilder out = new StringBuilder("[");
            for (int i = 0; i < values.size(); i++) {
                out.append(i == 0 ? "" : ",").append(quote(values.get(i)));
            }
            return out.append("]").toString();
        }

        private static String quote(String s) {
            StringBuilder q = new StringBuilder("\"");
            for (char c : s.toCharArray()) {
                if (c == '"' || c == '\\') q.append('\\').append(c);
                else if (c < 0x20) q.append(String.format("\\u%04x", (int) c));
                else q.append(c);
            }
            return q.append('"').toString();
        }
    }
}
