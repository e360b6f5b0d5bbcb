import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A Netty keepalive server's `result` line ({@link NettyKeepalive}): every keepalive read
 * and every connection's end, for timerbench to check, and the process's usage per phase,
 * in the fields the other servers' results have (live/src/engine_record).
 */
final class KeepaliveResult {
    private static final String CPU_OF = "the whole JVM process, every thread "
            + "(OperatingSystemMXBean.getProcessCpuTime: user + system), between the phase's ends as "
            + "the process itself read them";
    private static final String WAKEUPS_OF = "not counted: Netty counts no waits of its event loop "
            + "(nor of a wheel's worker); voluntary_switches sums the voluntary context switches of the "
            + "process's threads alive at each end of the phase (/proc/self/task/*/status)";

    private KeepaliveResult() { }

    /** The process's wall clock, CPU time and context switches at one instant, or over a phase. */
    record Usage(long wallNs, long cpuNs, long voluntary, long involuntary) {
        static Usage now() {
            var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            long[] switches = switches();
            return new Usage(System.nanoTime(), os.getProcessCpuTime(), switches[0], switches[1]);
        }

        /** From this instant to `end`. */
        Usage until(Usage end) {
            return new Usage(end.wallNs - wallNs, end.cpuNs - cpuNs, end.voluntary - voluntary,
                    end.involuntary - involuntary);
        }

        String json(String name) {
            return "\"" + name + "\":{\"wall_ns\":" + wallNs + ",\"cpu_ns\":" + cpuNs
                    + ",\"voluntary_switches\":" + Math.max(0, voluntary)
                    + ",\"involuntary_switches\":" + Math.max(0, involuntary) + "}";
        }

        /** Voluntary and involuntary context switches summed over the process's live threads. */
        private static long[] switches() {
            long[] sum = new long[2];
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
                for (Path task : tasks) {
                    try {
                        for (String line : Files.readAllLines(task.resolve("status"))) {
                            if (line.startsWith("voluntary_ctxt_switches:")) {
                                sum[0] += Long.parseLong(line.substring(24).trim());
                            } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                                sum[1] += Long.parseLong(line.substring(27).trim());
                            }
                        }
                    } catch (IOException e) {
                        // a thread that ended meanwhile
                    }
                }
            } catch (IOException e) {
                // no /proc: no counts
            }
            return sum;
        }
    }

    /** Collections so far, over every collector. */
    static long gcCycles() {
        long sum = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sum += Math.max(0, gc.getCollectionCount());
        }
        return sum;
    }

    /** Milliseconds spent collecting so far, over every collector. */
    static long gcMs() {
        long sum = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sum += Math.max(0, gc.getCollectionTime());
        }
        return sum;
    }

    /** The process's peak resident set (VmHWM), in bytes; 0 where /proc does not say. */
    static long peakRssBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.substring(6).replace("kB", "").trim()) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            // no figure
        }
        return 0;
    }

    /** Prints the `result {JSON}` line, after the idle phase: the connections are all ended. */
    static void print(String version, List<String> flags, Usage workload, Usage idle, long gcCycles,
            long gcPauseNs, String server) {
        StringBuilder out = new StringBuilder(1 << 20);
        out.append("result {\"runtime\":\"netty\",\"runtime_version\":").append(string(version));
        out.append(",\"runtime_flags\":[");
        for (int i = 0; i < flags.size(); i++) {
            out.append(i > 0 ? "," : "").append(string(flags.get(i)));
        }
        out.append("],\"reads\":[");
        String comma = "";
        for (Connection c : NettyKeepalive.byIndex) {
            for (int r = 0; r < c.reads; r++, comma = ",") {
                out.append(comma).append('[').append(c.log[r * 4]).append(',').append(c.log[r * 4 + 1])
                        .append(',').append(c.log[r * 4 + 2]).append(',').append(c.log[r * 4 + 3]).append(']');
            }
        }
        out.append("],\"ends\":[");
        long rearmed = 0;
        comma = "";
        for (Connection c : NettyKeepalive.byIndex) {
            rearmed += c.rearmed;
            out.append(comma).append('[').append(c.slot).append(',').append(c.how).append(',')
                    .append(c.closeNs).append(',').append(c.deadline).append(']');
            comma = ",";
        }
        out.append("],\"rearmed\":").append(rearmed).append(",\"problems\":[");
        comma = "";
        for (Connection c : NettyKeepalive.byIndex) {
            if (c.problem != null) {
                out.append(comma).append(string(c.problem));
                comma = ",";
            }
        }
        out.append("],").append(workload.json("workload")).append(',').append(idle.json("idle"));
        out.append(",\"gc_cycles\":").append(gcCycles).append(",\"gc_pause_ns\":").append(gcPauseNs);
        out.append(",\"peak_rss_bytes\":").append(peakRssBytes());
        out.append(",\"server\":").append(string(server));
        out.append(",\"cpu_of\":").append(string(CPU_OF));
        out.append(",\"wakeups_of\":").append(string(WAKEUPS_OF)).append('}');
        NettyKeepalive.say(out.toString());
    }

    /** A JSON string. */
    private static String string(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
