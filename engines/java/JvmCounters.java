import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.ThreadMXBean;
import java.util.List;

/**
 * What the JVM has done so far, read through its management beans outside every timed
 * span: collections (count and time, over every collector), the JIT's compilation time,
 * the bytes every thread has allocated, and the eden's size and fill.
 */
final class JvmCounters {
    /** The young generation's eden (`Eden Space` under the serial collector); null where none. */
    private static final MemoryPoolMXBean EDEN = eden();
    /*
     * The beans are looked up once. ManagementFactory's lookups run stream code on every
     * call, which the JIT kept compiling one tier after another for dozens of iterations:
     * compilations queued just before a sample, running beside it on the other core.
     */
    private static final List<GarbageCollectorMXBean> COLLECTORS = ManagementFactory.getGarbageCollectorMXBeans();
    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private JvmCounters() { }

    /** Collections so far, over every collector (-1 counts as none where one cannot tell). */
    static long gcCount() {
        long sum = 0;
        for (GarbageCollectorMXBean gc : COLLECTORS) {
            sum += Math.max(0, gc.getCollectionCount());
        }
        return sum;
    }

    /** Milliseconds spent collecting so far, over every collector. */
    static long gcMs() {
        long sum = 0;
        for (GarbageCollectorMXBean gc : COLLECTORS) {
            sum += Math.max(0, gc.getCollectionTime());
        }
        return sum;
    }

    /** The JIT's total compilation time so far, ms; 0 where the JVM does not say. */
    static long jitMs() {
        return JIT != null && JIT.isCompilationTimeMonitoringSupported() ? JIT.getTotalCompilationTime() : 0;
    }

    /**
     * Bytes allocated so far by every live thread (the timer's worker allocates too); -1
     * where the JVM does not count them (HotSpot does, through its own ThreadMXBean).
     */
    static long allocatedBytes() {
        if (!(THREADS instanceof com.sun.management.ThreadMXBean hotspot)
                || !hotspot.isThreadAllocatedMemorySupported() || !hotspot.isThreadAllocatedMemoryEnabled()) {
            return -1;
        }
        long sum = 0;
        for (long bytes : hotspot.getThreadAllocatedBytes(hotspot.getAllThreadIds())) {
            sum += Math.max(0, bytes);
        }
        return sum;
    }

    /** The eden's size in bytes (fixed by `-Xmn` and a fixed heap); 0 where there is none. */
    static long edenBytes() {
        return EDEN == null ? 0 : EDEN.getUsage().getCommitted();
    }

    /** Bytes of the eden in use now (handed-out allocation buffers included). */
    static long edenUsed() {
        return EDEN == null ? 0 : EDEN.getUsage().getUsed();
    }

    private static MemoryPoolMXBean eden() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getName().contains("Eden")) {
                return pool;
            }
        }
        return null;
    }
}
