import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;

/**
 * A `.tw` workload (docs/workload-format.md) compiled to arrays: one entry per operation,
 * timer names mapped to dense slots, so the replay touches no map and boxes nothing.
 *
 * The harness has already loaded the file with the reference model, which refuses every
 * malformed file; this reader still names the line of anything it does not understand.
 */
final class Workload {
    static final byte START = 's', STOP = 'x', RESTART = 'r', ADVANCE = 'a', TICK = 't', NEXT = 'n';

    byte[] kinds = new byte[1024];
    int[] slots = new int[1024];
    long[] amounts = new long[1024];
    /** The timer name of each slot, as unsigned 64-bit values. */
    long[] keys = new long[1024];
    int operations;
    int slotCount;

    static Workload read(Path path) throws IOException {
        Workload workload = new Workload();
        HashMap<Long, Integer> slotOf = new HashMap<>();
        boolean header = false;
        int lineNumber = 0;
        try (BufferedReader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String line;
            while ((line = reader.readLine()) != null) {
                lineNumber++;
                String text = line.strip();
                if (text.isEmpty() || text.startsWith("#")) {
                    continue;
                }
                if (!header) {
                    if (!text.equals("timer-workload v1")) {
                        throw new IOException(path + ":" + lineNumber + ": not a timer-workload v1 header: " + text);
                    }
                    header = true;
                    continue;
                }
                if (text.startsWith("@")) {
                    continue;
                }
                workload.add(path, lineNumber, text.split("[ \t]+"), slotOf);
            }
        }
        if (!header) {
            throw new IOException(path + ": no timer-workload v1 header");
        }
        return workload;
    }

    private void add(Path path, int lineNumber, String[] fields, HashMap<Long, Integer> slotOf) throws IOException {
        String op = fields[0];
        int expected = op.equals("n") ? 1 : (op.equals("s") || op.equals("r")) ? 3 : 2;
        if (op.length() != 1 || "sxratn".indexOf(op.charAt(0)) < 0 || fields.length != expected) {
            throw new IOException(path + ":" + lineNumber + ": cannot read `" + String.join(" ", fields) + "`");
        }
        grow();
        byte kind = (byte) op.charAt(0);
        kinds[operations] = kind;
        try {
            if (kind == START || kind == STOP || kind == RESTART) {
                slots[operations] = slotOf(Long.parseUnsignedLong(fields[1]), slotOf);
            }
            if (kind == START || kind == RESTART) {
                amounts[operations] = Long.parseLong(fields[2]);
            } else if (kind == ADVANCE || kind == TICK) {
                amounts[operations] = Long.parseLong(fields[1]);
            }
        } catch (NumberFormatException e) {
            throw new IOException(path + ":" + lineNumber + ": not a number in `" + String.join(" ", fields) + "`");
        }
        operations++;
    }

    private int slotOf(long key, HashMap<Long, Integer> slotOf) {
        Integer slot = slotOf.get(key);
        if (slot != null) {
            return slot;
        }
        if (slotCount == keys.length) {
            keys = java.util.Arrays.copyOf(keys, keys.length * 2);
        }
        keys[slotCount] = key;
        slotOf.put(key, slotCount);
        return slotCount++;
    }

    private void grow() {
        if (operations == kinds.length) {
            int length = kinds.length * 2;
            kinds = java.util.Arrays.copyOf(kinds, length);
            slots = java.util.Arrays.copyOf(slots, length);
            amounts = java.util.Arrays.copyOf(amounts, length);
        }
    }
}
