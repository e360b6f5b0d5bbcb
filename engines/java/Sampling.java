import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The sampling rule of docs/engines.md, as JMH warms a JVM up with iterations as long as the
 * measured ones: at least `warmup` iterations, then more until the last three lie within 5%
 * of their median and the JIT compiled nothing during them (CompilationMXBean's total time
 * unchanged), at most `max-warmup`; the answer says whether it settled.
 *
 * Every iteration starts from the same heap (docs/engines.md, *Between samples*): untimed,
 * {@link #between} brings the engine's timer to rest and collects the heap, so the eden is
 * empty. The first warm-up iteration runs its unit until `min-sample-ms`; every later one
 * runs a fixed number of units, planned from the iteration before ({@link Plan}), and the
 * samples all run the plan of the last warm-up iteration. Where the plan's garbage fills k
 * edens (k ≥ 1, the nearest to what `min-sample-ms` of units makes), untimed units first
 * fill half the eden: the k young collections then fall half an eden from either end of
 * the timed span, at the same units in every sample, so each sample holds exactly k, one
 * per eden of its own garbage, and pays for its garbage in full. Where k is 0 a sample
 * holds no collection and the answer says the figure leaves that cost out.
 *
 * Around every timed span, outside it, the collections (count and time), the JIT's
 * compilation time and the bytes allocated by every thread are read and answered per
 * sample, so that equal collections per sample can be checked and a sample slowed by a
 * compilation seen as such.
 */
final class Sampling {
    private static final double SETTLED_WITHIN = 0.05;
    /** Warm-up iterations that must agree (and compile nothing) for the warm-up to end. */
    private static final int SETTLED_OVER = 3;
    private static final double MIB = 1024.0 * 1024.0;

    int samples, warmup, maxWarmup;
    long minSampleNs;
    long iterationsPerSample;
    int warmupIterations;
    boolean settled;
    final List<Double> measured = new ArrayList<>();
    final List<Long> gcCounts = new ArrayList<>();
    final List<Long> gcMs = new ArrayList<>();
    final List<Long> jitMs = new ArrayList<>();
    final List<Long> allocated = new ArrayList<>();

    /** Untimed, before every iteration: brings the engine's timer to rest and collects the heap. */
    Runnable between = System::gc;
    /** What {@link #between} does, in words, for the answer's `between_samples`. */
    String betweenWords = "collects the heap (System.gc())";
    /** Whether iterations are planned in whole edens of garbage (off where a sample must stay short). */
    boolean paced = true;
    /** The unit in the plural, for `between_samples`: "replays", "pairs". */
    String unitsWord = "units";
    /** The plan the next iteration runs; null until the first iteration has run. */
    private Plan plan;

    static Sampling of(Map<String, String> params) {
        Sampling s = new Sampling();
        s.samples = Integer.parseInt(params.getOrDefault("samples", "10"));
        s.warmup = Integer.parseInt(params.getOrDefault("warmup", "5"));
        s.maxWarmup = Integer.parseInt(params.getOrDefault("max-warmup", "50"));
        s.minSampleNs = 1_000_000L * Long.parseLong(params.getOrDefault("min-sample-ms", "100"));
        return s;
    }

    /** One iteration's time per unit and what the runtime did during its timed span. */
    private record Iteration(double nsPerUnit, long units, long elapsedNs, long gcCount, long gcMs, long jitMs,
                             long allocatedBytes) { }

    /**
     * What every iteration after the first runs: `units` (a whole number of batches) after
     * untimed units have filled half the eden when `edens` > 0; `bytesPerUnit` and
     * `nsPerUnit` as the iteration it was planned from measured them.
     */
    private record Plan(long units, long edens, double bytesPerUnit, double nsPerUnit) { }

    void measure(Runnable unit, int batch) {
        List<Iteration> warm = new ArrayList<>();
        while (warmupIterations < maxWarmup) {
            Iteration it = iteration(unit, batch);
            warm.add(it);
            plan = planAfter(it, batch);
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
            allocated.add(it.allocatedBytes);
        }
    }

    /**
     * One iteration: the engine at rest and the heap collected, untimed; then the plan, or,
     * before there is one, the unit repeated in batches of `batch` (so that reading the
     * clock does not weigh on a short unit) until the minimum sample time. Ns per unit.
     */
    private Iteration iteration(Runnable unit, int batch) {
        between.run();
        if (plan != null && plan.edens > 0) {
            fillHalfTheEden(unit, batch);
        }
        long gcCountBefore = JvmCounters.gcCount(), gcMsBefore = JvmCounters.gcMs();
        long jitBefore = JvmCounters.jitMs(), allocatedBefore = JvmCounters.allocatedBytes();
        long count = 0;
        long start = System.nanoTime();
        long elapsed;
        if (plan == null) {
            do {
                runBatch(unit, batch);
                count += batch;
                elapsed = System.nanoTime() - start;
            } while (elapsed < minSampleNs);
        } else {
            for (; count < plan.units; count += batch) {
                runBatch(unit, batch);
            }
            elapsed = System.nanoTime() - start;
        }
        long allocatedAfter = JvmCounters.allocatedBytes();
        iterationsPerSample = count;
        return new Iteration((double) elapsed / count, count, elapsed, JvmCounters.gcCount() - gcCountBefore,
                JvmCounters.gcMs() - gcMsBefore, JvmCounters.jitMs() - jitBefore,
                allocatedBefore < 0 ? -1 : allocatedAfter - allocatedBefore);
    }

    private static void runBatch(Runnable unit, int batch) {
        for (int i = 0; i < batch; i++) {
            unit.run();
        }
    }

    /**
     * Untimed units until half the eden is in use (or a collection came first, where one
     * batch makes more than half an eden of garbage): the timed span then starts half an
     * eden before its first collection, at the same unit every time.
     */
    private static void fillHalfTheEden(Runnable unit, int batch) {
        long half = JvmCounters.edenBytes() / 2;
        long collections = JvmCounters.gcCount();
        while (JvmCounters.edenUsed() < half && JvmCounters.gcCount() == collections) {
            runBatch(unit, batch);
        }
    }

    /**
     * The next iteration's plan from this one: the units that last `min-sample-ms` at its
     * pace; where their garbage is half an eden or more, rounded to the nearest whole number
     * of edens of garbage at its bytes per unit, so that a sample's collections pay for its
     * garbage exactly. Without an eden, a count of allocation or pacing, or where one batch
     * makes half an eden of garbage or more (too coarse to place the collections): those
     * units alone.
     */
    private Plan planAfter(Iteration it, int batch) {
        double nsPerUnit = Math.max(1, it.elapsedNs) / (double) it.units;
        long byTime = wholeBatches(minSampleNs / nsPerUnit, batch);
        long eden = JvmCounters.edenBytes();
        double bytesPerUnit = it.allocatedBytes / (double) it.units;
        if (!paced || eden <= 0 || bytesPerUnit <= 0 || bytesPerUnit * batch >= eden / 2.0) {
            return new Plan(byTime, 0, Math.max(0, bytesPerUnit), nsPerUnit);
        }
        long edens = Math.round(byTime * bytesPerUnit / eden);
        long units = edens == 0 ? byTime : wholeBatches(edens * eden / bytesPerUnit, batch);
        return new Plan(units, edens, bytesPerUnit, nsPerUnit);
    }

    private static long wholeBatches(double units, int batch) {
        return batch * Math.max(1, Math.round(units / batch));
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

    /** The answer's sampling fields: samples, what the runtime did in each, warm-up, and the rule between. */
    Engine.Json into(Engine.Json answer) {
        return answer.raw("samples_ns", json(measured))
                .raw("samples_gc_count", json(gcCounts))
                .raw("samples_gc_ms", json(gcMs))
                .raw("samples_jit_ms", json(jitMs))
                .raw("samples_allocated_bytes", json(allocated))
                .field("eden_bytes", JvmCounters.edenBytes())
                .field("iterations_per_sample", iterationsPerSample)
                .field("warmup_iterations", warmupIterations)
                .field("warmup_settled", settled)
                .field("between_samples", betweenSamples());
    }

    /** The rule between samples as it ran: what `between` does, then how a sample was sized. */
    private String betweenSamples() {
        String rest = "before every iteration, untimed: " + betweenWords;
        long eden = JvmCounters.edenBytes();
        if (plan == null) {
            return rest + "; with no warm-up iteration to plan from, each sample ran its " + unitsWord
                    + " until min-sample-ms";
        }
        String sample = String.format(Locale.ROOT, "a sample is %d %s, %.1f MiB of garbage as the last warm-up "
                + "iteration allocated, the eden %.1f MiB", plan.units, unitsWord,
                plan.units * plan.bytesPerUnit / MIB, eden / MIB);
        if (plan.edens > 0) {
            return rest + String.format(Locale.ROOT, ", then runs %s until half the eden is in use; %s: %d "
                    + "eden(s) of garbage, so it holds %d young collection(s), at the same point of every sample, "
                    + "half an eden from either end: the collections' cost is in the figure, one collection per "
                    + "eden of the sample's own garbage", unitsWord, sample, plan.edens, plan.edens);
        }
        if (gcCounts.stream().allMatch(n -> n == 0)) {
            String longer = paced && plan.bytesPerUnit > 0
                    ? String.format(Locale.ROOT, " (samples of min-sample-ms %.0f or more would hold one)",
                            Math.ceil(eden / 2.0 / plan.bytesPerUnit * plan.nsPerUnit / 1e6))
                    : "";
            return rest + "; " + sample + ": the samples hold no collection, and the figure leaves out the "
                    + "collection of their garbage" + longer;
        }
        return rest + "; " + sample + ": its collections (samples_gc_count) fall where whole " + unitsWord
                + " put them, from an empty eden in every sample; the garbage after a sample's last collection, "
                + "less than an eden, is collected between samples, untimed";
    }

    private static String json(List<? extends Number> values) {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < values.size(); i++) {
            out.append(i == 0 ? "" : ",").append(values.get(i));
        }
        return out.append("]").toString();
    }
}
