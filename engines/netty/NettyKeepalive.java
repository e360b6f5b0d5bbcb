import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.Version;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The Netty engines' keepalive servers (docs/live.md, "Netty's servers"): `timerbench live
 * --tcp --engine netty-idle-state` and `--engine netty-hashed-wheel-idle`. Both are a
 * ServerBootstrap on one event-loop thread (native epoll when its library loads, else NIO,
 * the transport named in the record) and a handler per connection ({@link Connection}) that
 * reads the keepalives in channelRead; they differ in the idle timer ({@link Timeouts}):
 * Netty's IdleStateHandler on the event loop's scheduled-task queue, or one
 * HashedWheelTimer for every connection.
 *
 * It speaks the protocol of the Go server (engines/go/keepalive.go): on stdin, u64
 * little-endian words: the fill's count and (connection, delay in ticks) pairs, the
 * arrivals' count and pairs, then once `ready` tick 0 on CLOCK_MONOTONIC (HotSpot's
 * System.nanoTime on Linux), then the end word; on stdout, lines `listening PORT`, `ready`,
 * `result {JSON}` or `error: WHY`.
 *
 * Usage: NettyKeepalive ENGINE live-tcp connections=N tick-ns=T idle-ns=I [port=P]
 */
public final class NettyKeepalive {
    /** A record of the TCP mode: two u64 words, the arrival index (or the hello) and the send time. */
    static final int RECORD_BYTES = 16;
    static final long HELLO_TAG = 1L << 63;
    /** The most entries a table from timerbench may have: a guard against a garbled count. */
    private static final long MAX_TABLE_ENTRIES = 1L << 26;

    /** How a connection ended (the result's `ends` say it with these numbers, as Go's do). */
    static final int STILL_OPEN = 0;
    static final int CLOSED_BY_TIMER = 1;
    static final int CLOSED_BY_CLIENT = 2;
    static final int CLOSED_AT_END = 3;
    static final int CLOSED_FOR_PROTOCOL = 4;

    // The run's settings and tables, set before the event loop starts and read-only after.
    static long connections;
    static long tickNs;
    static long[] fillTicks;
    /** Each arrival's connection and its delay in ticks. */
    static int[] arrivalConnection;
    static long[] arrivalDelay;
    /** Keepalives per connection, to size each one's list of reads. */
    static int[] keepalives;

    /** Every connection by its index, set on the event loop as each says hello. */
    static Connection[] byIndex;
    static CountDownLatch identified;

    private NettyKeepalive() { }

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            fail(t.toString());
        }
    }

    /** One `error:` line for timerbench, and exit status 1. */
    static void fail(String why) {
        synchronized (System.out) {
            System.out.println("error: " + why);
            System.out.flush();
        }
        System.exit(1);
    }

    static void say(String line) {
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }

    private static void run(String[] args) throws Exception {
        if (args.length < 2 || !args[1].equals("live-tcp")) {
            fail("the Netty servers have only the `live-tcp` mode (a live keepalive server)");
        }
        long[] settings = settings(args);
        long idleNs = settings[2];
        int port = (int) settings[3];
        DataInputStream stdin = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        readTables(stdin);
        Timeouts timeouts = switch (args[0]) {
            case "netty-idle-state" -> new Timeouts.IdleState(commonTimeoutNs());
            case "netty-hashed-wheel-idle" -> new Timeouts.Wheel();
            default -> throw new IllegalArgumentException(args[0] + ": not a Netty keepalive server");
        };
        // Native epoll when its library loads (Debian's jar carries none), else NIO.
        boolean epoll = Epoll.isAvailable();
        String transport = epoll ? "epoll" : "nio";
        String transportWhy = epoll ? "native epoll" : "NIO (native epoll unavailable: "
                + Epoll.unavailabilityCause() + ")";
        EventLoopGroup loop = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
        Class<? extends ServerChannel> serverClass = epoll ? EpollServerSocketChannel.class
                : NioServerSocketChannel.class;
        byIndex = new Connection[(int) connections];
        identified = new CountDownLatch((int) connections);
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loop)
                .channel(serverClass)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast("keepalive", new Connection(ch, timeouts));
                    }
                });
        Channel server;
        try {
            server = bootstrap.bind(new InetSocketAddress("127.0.0.1", port)).sync().channel();
        } catch (Exception e) {
            fail("cannot listen on 127.0.0.1:" + port + " (" + e.getMessage()
                    + "); choose another --port, or 0 for any free one");
            return;
        }
        say("listening " + ((InetSocketAddress) server.localAddress()).getPort());
        identified.await();
        server.close().sync();
        say("ready");

        long origin;
        try {
            origin = stdin.readLong();
        } catch (EOFException e) {
            System.exit(0); // timerbench gave up before tick 0: nothing more to do
            return;
        }
        origin = Long.reverseBytes(origin);
        long armAt = origin;
        loop.submit(() -> timeouts.begin(byIndex, armAt)).sync();
        sleepUntil(origin);
        KeepaliveResult.Usage workloadStart = KeepaliveResult.Usage.now();
        long gcCycles = KeepaliveResult.gcCycles();
        long gcMs = KeepaliveResult.gcMs();
        try {
            stdin.readLong(); // the end word; the end of input ends the phase as well
        } catch (EOFException e) {
            // timerbench stopped the run: the phase ends here too
        }
        loop.submit(NettyKeepalive::end).sync();
        timeouts.stop();
        KeepaliveResult.Usage workload = workloadStart.until(KeepaliveResult.Usage.now());
        gcCycles = KeepaliveResult.gcCycles() - gcCycles;
        long gcPauseNs = (KeepaliveResult.gcMs() - gcMs) * 1_000_000;
        KeepaliveResult.Usage idleStart = KeepaliveResult.Usage.now();
        TimeUnit.NANOSECONDS.sleep(idleNs);
        KeepaliveResult.Usage idle = idleStart.until(KeepaliveResult.Usage.now());

        List<String> flags = new ArrayList<>(ManagementFactory.getRuntimeMXBean().getInputArguments());
        flags.add("java=" + Runtime.version());
        flags.add("transport=" + transport);
        flags.add("event_loop_threads=1");
        flags.addAll(timeouts.flags());
        KeepaliveResult.print(nettyVersion(), flags, workload, idle, gcCycles, gcPauseNs,
                timeouts.server() + "; " + transportWhy);
        loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        System.exit(0);
    }

    /** connections, tick-ns, idle-ns, port from `key=value` arguments. */
    private static long[] settings(String[] args) {
        long[] values = {-1, -1, -1, 0};
        String[] keys = {"connections", "tick-ns", "idle-ns", "port"};
        String usage = "live-tcp needs connections>=1 tick-ns>=1 idle-ns>=0 [port=0..65535]";
        for (int i = 2; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            int key = eq < 0 ? -1 : List.of(keys).indexOf(args[i].substring(0, eq));
            if (key < 0) {
                fail(args[i] + ": " + usage);
            }
            try {
                values[key] = Long.parseLong(args[i].substring(eq + 1));
            } catch (NumberFormatException e) {
                fail(args[i] + ": " + usage);
            }
        }
        if (values[0] < 1 || values[0] > Integer.MAX_VALUE || values[1] < 1 || values[2] < 0
                || values[3] < 0 || values[3] > 65535) {
            fail(usage);
        }
        connections = values[0];
        tickNs = values[1];
        return values;
    }

    private static void readTables(DataInputStream in) throws IOException {
        fillTicks = new long[(int) connections];
        java.util.Arrays.fill(fillTicks, -1);
        long[][] fill = pairs(in, "fill");
        for (long[] pair : fill) {
            fillTicks[(int) pair[0]] = pair[1];
        }
        long[][] arrivals = pairs(in, "arrivals");
        arrivalConnection = new int[arrivals.length];
        arrivalDelay = new long[arrivals.length];
        keepalives = new int[(int) connections];
        for (int i = 0; i < arrivals.length; i++) {
            arrivalConnection[i] = (int) arrivals[i][0];
            arrivalDelay[i] = arrivals[i][1];
            keepalives[arrivalConnection[i]]++;
        }
    }

    private static long[][] pairs(DataInputStream in, String what) throws IOException {
        long count = word(in, what, "a bad or missing count");
        if (count < 0 || count > MAX_TABLE_ENTRIES) {
            fail("reading the " + what + " from timerbench: a bad or missing count");
        }
        long[][] pairs = new long[(int) count][];
        for (int i = 0; i < count; i++) {
            String cut = "entry " + i + " is bad or cut";
            long slot = word(in, what, cut);
            long delay = word(in, what, cut);
            if (slot < 0 || slot >= connections || delay < 0 || delay > Integer.MAX_VALUE) {
                fail("reading the " + what + " from timerbench: " + cut);
            }
            pairs[i] = new long[] {slot, delay};
        }
        return pairs;
    }

    private static long word(DataInputStream in, String what, String why) throws IOException {
        try {
            return Long.reverseBytes(in.readLong());
        } catch (EOFException e) {
            fail("reading the " + what + " from timerbench: " + why);
            return -1;
        }
    }

    /**
     * The one timeout every keepalive of the schedule sets, in ns (IdleStateHandler takes one
     * reader idle time per handler); with no keepalive, the longest fill delay.
     */
    private static long commonTimeoutNs() {
        long ticks = -1;
        for (long delay : arrivalDelay) {
            if (ticks >= 0 && delay != ticks) {
                fail("netty-idle-state: IdleStateHandler takes one reader idle time, but the "
                        + "schedule's keepalives set timeouts of " + ticks + " and " + delay + " ticks");
            }
            ticks = delay;
        }
        if (arrivalDelay.length == 0) {
            for (long fill : fillTicks) {
                ticks = Math.max(ticks, fill);
            }
        }
        return Math.max(ticks, 1) * tickNs;
    }

    /** The end of the workload, on the event loop: each connection's last keepalives read, then it is closed. */
    private static void end() {
        for (Connection c : byIndex) {
            for (int before = -1; c.how == STILL_OPEN && c.reads != before; ) {
                before = c.reads;
                c.readNow();
            }
            if (c.how == STILL_OPEN) {
                c.close(CLOSED_AT_END);
            }
        }
    }

    private static String nettyVersion() {
        Version transport = Version.identify().get("netty-transport");
        return transport == null ? "unknown" : transport.artifactVersion();
    }

    private static void sleepUntil(long ns) throws InterruptedException {
        long wait = ns - System.nanoTime();
        if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait);
        }
    }
}
