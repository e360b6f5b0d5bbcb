import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
 * Warm-up, as JMH warms a JVM up with iterations of the same length as the measured ones:
 * at least `warmup` iterations, then more until the last three lie within 5% of their
 * median (the JIT has settled), at most `max-warmup`; the answer says whether it settled.
 */
public final class Engine {
    private static final int PROTOCOL = 1;
    private static final double SETTLED_WITHIN = 0.05;

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
                .field("runtime_version", Runtime.version().toString());
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
            boolean removeOnCancel = Boolean.parseBoolean(params.getOrDefault("remove-on-cancel", "true"));
            return StartStop.run(args, new StartStop.ScheduledExecutor(removeOnCancel), answer);
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
        Purgatory[] last = new Purgatory[1];
        Runnable replay = () -> {
            Purgatory.Heap heap = delayQueue ? new Purgatory.DelayHeap() : new Purgatory.PriorityHeap();
            Purgatory purgatory = new Purgatory(heap, purgeInterval, workload.slotCount, log[0]);
            purgatory.replay(workload);
            log[0] = purgatory.log;
            last[0] = purgatory;
        };
        Sampling sampling = Sampling.of(params);
        sampling.measure(replay, 1);
        Purgatory done = last[0];
        writeLog(Path.of(required(params, "log")), workload, done);
        return answer.field("status", "ok").field("unit", "replay")
                .raw("samples_ns", sampling.samplesJson())
                .field("iterations_per_sample", sampling.iterationsPerSample)
                .field("warmup_iterations", sampling.warmupIterations)
                .field("warmup_settled", sampling.settled)
                .field("peak_rss_bytes", peakRss())
                .raw("replay", new Json().field("operations", workload.operations)
                        .field("started", done.started).field("fired", done.fired)
                        .field("stopped", done.stopped).field("misses", done.misses)
                        .field("pending", done.pendingCount()).field("final_clock", Purgatory.now)
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
    private static void writeLog(Path path, Workload workload, Purgatory purgatory) throws IOException {
        try (BufferedWriter out = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
            long[] log = purgatory.log;
            for (int i = 0; i < purgatory.logLength; i += 3) {
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

    /** The sampling rule: see the class comment. */
    static final class Sampling {
        int samples, warmup, maxWarmup;
        long minSampleNs;
        long iterationsPerSample;
        int warmupIterations;
        boolean settled;
        final List<Double> measured = new ArrayList<>();

        static Sampling of(Map<String, String> params) {
            Sampling s = new Sampling();
            s.samples = Integer.parseInt(params.getOrDefault("samples", "10"));
            s.warmup = Integer.parseInt(params.getOrDefault("warmup", "5"));
            s.maxWarmup = Integer.parseInt(params.getOrDefault("max-warmup", "50"));
            s.minSampleNs = 1_000_000L * Long.parseLong(params.getOrDefault("min-sample-ms", "100"));
            return s;
        }

        /**
         * One iteration: the unit repeated in batches of `batch` (so that reading the clock
         * does not weigh on a short unit) until the minimum sample time; ns per unit.
         */
        private double iteration(Runnable unit, int batch) {
            long count = 0;
            long start = System.nanoTime();
            long elapsed;
            do {
                for (int i = 0; i < batch; i++) {
                    unit.run();
                }
                count += batch;
                elapsed = System.nanoTime() - start;
            } while (elapsed < minSampleNs);
            iterationsPerSample = count;
            return (double) elapsed / count;
        }

        void measure(Runnable unit, int batch) {
            List<Double> warm = new ArrayList<>();
            while (warmupIterations < maxWarmup) {
                warm.add(iteration(unit, batch));
                warmupIterations++;
                if (warmupIterations >= warmup && settled(warm)) {
                    settled = true;
                    break;
                }
            }
            for (int i = 0; i < samples; i++) {
                measured.add(iteration(unit, batch));
            }
        }

        private static boolean settled(List<Double> warm) {
            if (warm.size() < 3) {
                return false;
            }
            List<Double> last = new ArrayList<>(warm.subList(warm.size() - 3, warm.size()));
            last.sort(null);
            double median = last.get(1);
            return last.get(0) >= median * (1 - SETTLED_WITHIN) && last.get(2) <= median * (1 + SETTLED_WITHIN);
        }

        String samplesJson() {
            StringBuilder out = new StringBuilder("[");
            for (int i = 0; i < measured.size(); i++) {
                out.append(i == 0 ? "" : ",").append(measured.get(i));
            }
            return out.append("]").toString();
        }
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
