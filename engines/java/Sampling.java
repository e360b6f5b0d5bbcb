import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The sampling rule of docs/engines.md, as JMH warms a JVM up with iterations as long as the
 * measured ones: at least `warmup` iterations, then more until the last three lie within 5%
 * of their median and the JIT compiled nothing during them (CompilationMXBean's total time
 * unchanged), at most `max-warmup`; the answer says whether it settled.
 *
 * Every iteration also records the collections that ran during it (count and time, summed
 * over the GarbageCollectorMXBeans) and the JIT's compilation time, read outside the timed
 * span, so that a sample slowed by a collection or a compilation can be seen as such.
 */
final class Sampling {
    private static final double SETTLED_WITHIN = 0.05;
    /** Warm-up iterations that must agree (and compile nothing) for the warm-up to end. */
    private static final int SETTLED_OVER = 3;

    int samples, warmup, maxWarmup;
    long minSampleNs;
    long iterationsPerSample;
    int warmupIterations;
    boolean settled;
    final List<Double> measured = new ArrayList<>();
    final List<Long> gcCounts = new ArrayList<>();
    final List<Long> gcMs = new ArrayList<>();
    final List<Long> jitMs = new ArrayList<>();

    /** What runs between iterations, untimed: nothing unless an engine needs to settle. */
    Runnable between = () -> { };

    static Sampling of(Map<String, String> params) {
        Sampling s = new Sampling();
        s.samples = Integer.parseInt(params.getOrDefault("samples", "10"));
        s.warmup = Integer.parseInt(params.getOrDefault("warmup", "5"));
        s.maxWarmup = Integer.parseInt(params.getOrDefault("max-warmup", "50"));
        s.minSampleNs = 1_000_000L * Long.parseLong(params.getOrDefault("min-sample-ms", "100"));
        return s;
    }

    /** One iteration's time per unit and what the runtime did during it. */
    private record Iteration(double nsPerUnit, long gcCount, long gcMs, long jitMs) { }

    /**
     * One iteration: the unit repeated in batches of `batch` (so that reading the clock does
     * not weigh on a short unit) until the minimum sample time; ns per unit.
     */
    private Iteration iteration(Runnable unit, int batch) {
        between.run();
        long gcCountBefore = gcCount(), gcMsBefore = gcMs(), jitBefore = jitMs();
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
        return new Iteration((double) elapsed / count, gcCount() - gcCountBefore,
                gcMs() - gcMsBefore, jitMs() - jitBefore);
    }

    void measure(Runnable unit, int batch) {
        List<Iteration> warm = new ArrayList<>();
        while (warmupIterations < maxWarmup) {
            warm.add(iteration(unit, batch));
            warmupIterations++;
            if (warmupIterations >= warmup && settled(warm)) {
                settled = true;
                break;
            }
        }
        for (int i = 0; i < samples; i++) {
            Iteration it = iteration(unit, batch);
            measured.add(it.nsPerUnit);
            gcCounts.add(it.gcCount);
            gcMs.add(it.gcMs);
            jitMs.add(it.jitMs);
        }
    }

    /** The last three iterations within 5% of their median, and no compilation during them. */
    private static boolean settled(List<Iteration> warm) {
        if (warm.size() < SETTLED_OVER) {
            return false;
        }
        List<Iteration> lastThree = warm.subList(warm.size() - SETTLED_OVER, warm.size());
        if (lastThree.stream().anyMatch(it -> it.jitMs != 0)) {
            return false;
        }
        List<Double> last = new ArrayList<>(lastThree.stream().map(Iteration::nsPerUnit).toList());
        last.sort(null);
        double median = last.get(1);
        return last.get(0) >= median * (1 - SETTLED_WITHIN) && last.get(2) <= median * (1 + SETTLED_WITHIN);
    }

    /** The answer's sampling fields: samples, per-sample collections and compilation, warm-up. */
    Engine.Json into(Engine.Json answer) {
        return answer.raw("samples_ns", json(measured))
                .raw("samples_gc_count", json(gcCounts))
                .raw("samples_gc_ms", json(gcMs))
                .raw("samples_jit_ms", json(jitMs))
                .field("iterations_per_sample", iterationsPerSample)
                .field("warmup_iterations", warmupIterations)
                .field("warmup_settled", settled);
    }

    private static String json(List<? extends Number> values) {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < values.size(); i++) {
            out.append(i == 0 ? "" : ",").append(values.get(i));
        }
        return out.append("]").toString();
    }

    /** Collections so far, over every collector (-1 counts as none where one cannot tell). */
    private static long gcCount() {
        long sum = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sum += Math.max(0, gc.getCollectionCount());
        }
        return sum;
    }

    /** Milliseconds spent collecting so far, over every collector. */
    private static long gcMs() {
        long sum = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sum += Math.max(0, gc.getCollectionTime());
        }
        return sum;
    }

    /** The JIT's total compilation time so far, ms; 0 where the JVM does not say. */
    private static long jitMs() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }
}
