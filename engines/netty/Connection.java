import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.nio.AbstractNioChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.unix.UnixChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.Timeout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;

/**
 * One connection of a Netty keepalive server ({@link NettyKeepalive}), the last handler of
 * its pipeline: its hello, then its keepalives, read in channelRead. Each keepalive moves
 * the connection's deadline to the read time plus its timeout and tells the idle timer
 * ({@link Timeouts}); when the timer says the deadline has passed ({@link #expire}), the
 * connection is read once more without waiting, as the other servers do: a keepalive
 * already there re-arms it (counted), else it is closed. Everything here runs on the
 * connection's event-loop thread.
 */
final class Connection extends ChannelInboundHandlerAdapter {
    final SocketChannel ch;
    private final Timeouts timeouts;
    /** The connection's index, from its hello; -1 until then. */
    int slot = -1;
    /** Sixteen records: a keepalive is one, and many idle connections keep small buffers. */
    private final byte[] buf = new byte[16 * NettyKeepalive.RECORD_BYTES];
    private int have;
    /** CLOCK_MONOTONIC ns of the idle timeout: the fill's, or the last read plus the timeout; -1 if none. */
    long deadline = -1;
    /** Four longs per keepalive read: connection, arrival index, sent ns, read ns. */
    long[] log = new long[0];
    int reads;
    int how = NettyKeepalive.STILL_OPEN;
    long closeNs;
    long rearmed;
    String problem;
    /** The IdleStateHandler server's one-shot task at the fill's deadline. */
    ScheduledFuture<?> fillTask;
    /** The wheel server's pending timeout. */
    Timeout timeout;

    Connection(SocketChannel ch, Timeouts timeouts) {
        this.ch = ch;
        this.timeouts = timeouts;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        long now = System.nanoTime();
        try {
            while (in.isReadable() && how == NettyKeepalive.STILL_OPEN) {
                int n = Math.min(in.readableBytes(), buf.length - have);
                in.readBytes(buf, have, n);
                have += n;
                if (!take(now)) {
                    close(NettyKeepalive.CLOSED_FOR_PROTOCOL);
                }
            }
        } finally {
            in.release();
        }
    }

    /** Files the whole records in the buffer, read at `now`; false on one that is not one of its keepalives. */
    private boolean take(long now) {
        int at = 0;
        if (slot < 0) {
            if (have < NettyKeepalive.RECORD_BYTES) {
                return true;
            }
            hello(le64(0));
            at = NettyKeepalive.RECORD_BYTES;
        }
        long moved = -1;
        for (; at + NettyKeepalive.RECORD_BYTES <= have; at += NettyKeepalive.RECORD_BYTES) {
            long index = le64(at);
            long sent = le64(at + 8);
            if (index < 0 || index >= NettyKeepalive.arrivalConnection.length
                    || NettyKeepalive.arrivalConnection[(int) index] != slot) {
                problem = "connection " + slot + " sent a record for operation "
                        + Long.toUnsignedString(index) + ", not one of its keepalives (a protocol error)";
                return false;
            }
            moved = now + NettyKeepalive.arrivalDelay[(int) index] * NettyKeepalive.tickNs;
            if (reads * 4 == log.length) {
                log = java.util.Arrays.copyOf(log, Math.max(8, log.length * 2));
            }
            log[reads * 4] = slot;
            log[reads * 4 + 1] = index;
            log[reads * 4 + 2] = sent;
            log[reads * 4 + 3] = now;
            reads++;
        }
        System.arraycopy(buf, at, buf, 0, have - at);
        have -= at;
        if (moved >= 0) {
            deadline = moved;
            timeouts.renewed(this);
        }
        return true;
    }

    /** The connection's hello: its index, once; when every connection has said it, the ramp is over. */
    private void hello(long word) {
        long index = word & ~NettyKeepalive.HELLO_TAG;
        if ((word & NettyKeepalive.HELLO_TAG) == 0 || index >= NettyKeepalive.connections) {
            NettyKeepalive.fail(String.format("a connection's first record is %#x, not a hello of one of %d "
                    + "connections", word, NettyKeepalive.connections));
        }
        if (NettyKeepalive.byIndex[(int) index] != null) {
            NettyKeepalive.fail("two connections said hello as connection " + index);
        }
        slot = (int) index;
        NettyKeepalive.byIndex[slot] = this;
        log = new long[4 * Math.max(1, NettyKeepalive.keepalives[slot])];
        NettyKeepalive.identified.countDown();
    }

    private long le64(int at) {
        long word = 0;
        for (int i = 7; i >= 0; i--) {
            word = word << 8 | (buf[at + i] & 0xff);
        }
        return word;
    }

    /** Netty's IdleStateHandler, ahead in the pipeline, says the reader has been idle. */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent idle && idle.state() == IdleState.READER_IDLE) {
            expire();
        } else {
            super.userEventTriggered(ctx, evt);
        }
    }

    /**
     * The idle timer says the deadline has passed: the last read, then the close unless it
     * found a keepalive. A timer whose deadline a keepalive has moved since does nothing.
     */
    void expire() {
        if (how != NettyKeepalive.STILL_OPEN || System.nanoTime() < deadline) {
            return;
        }
        int before = reads;
        readNow();
        if (how != NettyKeepalive.STILL_OPEN) {
            return; // the read found the client gone, or a record that is not a keepalive
        }
        if (reads > before) {
            rearmed++; // the read's keepalive moved the deadline and re-armed the timer
            return;
        }
        close(NettyKeepalive.CLOSED_BY_TIMER);
    }

    /**
     * Reads what the socket holds now, without waiting, through the pipeline (so that
     * IdleStateHandler sees the read as it sees any other): NIO's own read of the channel,
     * or, under native epoll, a read of the descriptor whose bytes are passed down the
     * pipeline as Netty's read passes them.
     */
    void readNow() {
        if (how != NettyKeepalive.STILL_OPEN || !ch.isActive()) {
            return;
        }
        if (ch.unsafe() instanceof AbstractNioChannel.NioUnsafe nio) {
            nio.read();
            return;
        }
        ByteBuffer bytes = ByteBuffer.allocateDirect(buf.length);
        int n;
        try {
            n = ((UnixChannel) ch).fd().read(bytes, 0, bytes.capacity());
        } catch (IOException e) {
            n = -1;
        }
        if (n > 0) {
            bytes.limit(n);
            ch.pipeline().fireChannelRead(Unpooled.wrappedBuffer(bytes));
            ch.pipeline().fireChannelReadComplete();
        } else if (n < 0) {
            ch.close(); // the client closed it: channelInactive says so
        }
    }

    /** Ends the connection `how` and closes its channel. */
    void close(int how) {
        this.how = how;
        timeouts.ended(this);
        ch.close();
        closeNs = System.nanoTime();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (slot < 0) {
            NettyKeepalive.fail("a connection closed before it said hello");
        }
        if (how == NettyKeepalive.STILL_OPEN) {
            how = NettyKeepalive.CLOSED_BY_CLIENT;
            closeNs = System.nanoTime();
            timeouts.ended(this);
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            ctx.close(); // a reset by the client: channelInactive says so
            return;
        }
        problem = "connection " + slot + ": " + cause;
        close(NettyKeepalive.CLOSED_FOR_PROTOCOL);
    }
}
