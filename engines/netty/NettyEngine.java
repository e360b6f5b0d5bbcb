import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import java.util.concurrent.TimeUnit;

/**
 * `netty-hashed-wheel` (docs/engines.md): Netty's HashedWheelTimer with its defaults (a
 * 100 ms tick, 512 buckets) on the Go article's start+stop shape; a pair is newTimeout +
 * cancel. Built against Debian's libnetty-java (netty-common.jar), beside engines/java/.
 *
 * Netty queues new and cancelled timeouts for its worker thread, which moves at most
 * 100,000 of each into the wheel per tick: what a pair costs the caller is the two queue
 * operations; the wheel's own work happens on the worker, outside the figure.
 */
public final class NettyEngine {
    public static void main(String[] args) {
        Engine.answer(() -> StartStop.run(args, new Wheel(), Engine.opening("netty-hashed-wheel")));
    }

    static final class Wheel extends StartStop {
        private final HashedWheelTimer timer = new HashedWheelTimer();
        private final TimerTask residentTask = timeout -> residentFired.incrementAndGet();
        private final TimerTask nothing = timeout -> { };

        void startResident(long delayMs) {
            timer.newTimeout(residentTask, delayMs, TimeUnit.MILLISECONDS);
        }

        void pair() {
            Timeout timeout = timer.newTimeout(nothing, 1, TimeUnit.SECONDS);
            timeout.cancel();
        }

        void close() {
            timer.stop();
        }
    }
}
