// `live-tcp` (docs/live.md, "Another runtime's server"): the keepalive server of
// `timerbench live --tcp --engine go-runtime`, written as a Go programmer writes one: a
// goroutine per connection, blocked in Read, whose idle timeout is a read deadline
// (SetReadDeadline) pushed forward on every keepalive, as net/http's server times out its
// idle connections. All the waiting is Go's own: the goroutine parks in the netpoller, and
// the deadline is a runtime timer of the connection's poll descriptor (in the per-P timer
// heaps) whose expiry wakes the goroutine with os.ErrDeadlineExceeded. A time.Timer per
// connection (AfterFunc closing it) would put the same timers in the same heaps but run
// the close on another goroutine, racing the reader for the connection; the deadline keeps
// each connection in one goroutine, with no lock.
//
// It speaks the TCP mode's records on its connections (live/src/tcp_client.rs: 16 bytes,
// the arrival index, or 1<<63 | connection for the hello, then the client's send time) and
// talks to timerbench (live/src/engine_server.rs) through its standard streams:
//   - stdin, u64 little-endian words: the fill's count, then (connection, delay in ticks)
//     each; the arrivals' count, then (connection, delay in ticks) each, in schedule order
//     (a keepalive names its arrival's index); once `ready`, tick 0 on CLOCK_MONOTONIC;
//     then, at the end of the workload, the word 1.
//   - stdout, lines: `listening PORT`; `ready` once every connection said hello; `result
//     {JSON}` after the idle phase; or `error: WHY`.
//
// Usage: go-runtime live-tcp connections=N tick-ns=T idle-ns=I [port=P]
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	recordBytes = 16
	helloTag    = uint64(1) << 63
	// Sixteen records: a keepalive is one, and 100,000 idle connections keep small buffers.
	connectionBuffer = 16 * recordBytes
	noDeadline       = int64(-1)
	// The most entries a table from timerbench may have: a guard against a garbled count.
	maxTableEntries = 1 << 26
)

// How a connection ended (the `ends` of the result say it with these numbers).
const (
	stillOpen = iota
	closedByTimer
	closedByClient
	closedAtEnd
	closedForProtocol
)

type arrival struct {
	connection int64
	delayTicks int64
}

type connection struct {
	slot     int64
	nc       *net.TCPConn
	raw      syscall.RawConn
	buf      [connectionBuffer]byte
	have     int
	deadline int64      // CLOCK_MONOTONIC ns of the idle timeout, noDeadline if none
	reads    [][4]int64 // connection, arrival index, sent, read (CLOCK_MONOTONIC ns)
	how      int
	closeNs  int64
	rearmed  int64
	problem  string
}

type keepaliveServer struct {
	tickNs     int64
	fillTicks  []int64 // per connection: the fill's delay, or -1
	arrivals   []arrival
	keepalives []int // per connection: its arrivals, to size its log up front
	conns      []*connection
	mu         sync.Mutex
	identified int
	ready      chan struct{}
	failed     chan string
	begin      chan struct{}
	armed      sync.WaitGroup
	served     sync.WaitGroup
	origin     int64
	clock      clock
	ending     int32
}

// serveKeepalive is the whole `live-tcp` mode; its exit status.
func serveKeepalive(args []string) int {
	say := func(format string, values ...interface{}) {
		fmt.Fprintf(os.Stdout, format+"\n", values...)
	}
	stdin := bufio.NewReaderSize(os.Stdin, 1<<16)
	s, port, idle, err := setUp(args, stdin)
	if err != nil {
		say("error: %v", err)
		return 1
	}
	listener, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		say("error: cannot listen on 127.0.0.1:%d (%v); choose another --port, or 0 for any free one", port, err)
		return 1
	}
	say("listening %d", listener.Addr().(*net.TCPAddr).Port)
	go s.accept(listener)
	select {
	case <-s.ready:
	case why := <-s.failed:
		say("error: %s", why)
		return 1
	}
	listener.Close()
	say("ready")
	origin, err := readWord(stdin)
	if err != nil {
		return 0 // timerbench gave up before tick 0: nothing more to do
	}
	s.origin, s.clock = int64(origin), calibrate()
	s.armed.Add(len(s.conns))
	close(s.begin)
	s.armed.Wait()
	sleepUntil(s.origin)
	gcBefore := gcTotals()
	workload := beginWindow()
	// The end word, or end of input (timerbench stopped the run): either ends the phase.
	_, _ = readWord(stdin)
	atomic.StoreInt32(&s.ending, 1)
	// Wakes every reader: each sees `ending`, reads what is left and closes.
	past := time.Unix(1, 0)
	for _, c := range s.conns {
		_ = c.nc.SetReadDeadline(past)
	}
	s.served.Wait()
	workload.end()
	gcAfter := gcTotals()
	idleWindow := beginWindow()
	time.Sleep(time.Duration(idle))
	idleWindow.end()
	text, _ := json.Marshal(s.result(workload, idleWindow, gcBefore, gcAfter))
	say("result %s", text)
	return 0
}

func setUp(args []string, stdin io.Reader) (*keepaliveServer, int, int64, error) {
	params, err := parameters(args)
	if err != nil {
		return nil, 0, 0, err
	}
	connections, err1 := number(params, "connections", -1)
	tickNs, err2 := number(params, "tick-ns", -1)
	idle, err3 := number(params, "idle-ns", -1)
	port, err4 := number(params, "port", 0)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || connections < 1 ||
		tickNs < 1 || idle < 0 || port < 0 || port > 65535 {
		return nil, 0, 0, fmt.Errorf("live-tcp needs connections>=1 tick-ns>=1 idle-ns>=0 [port=0..65535]")
	}
	s := &keepaliveServer{tickNs: tickNs, conns: make([]*connection, connections),
		fillTicks: make([]int64, connections), ready: make(chan struct{}),
		failed: make(chan string, 1), begin: make(chan struct{})}
	for i := range s.fillTicks {
		s.fillTicks[i] = -1
	}
	fill, err := readPairs(stdin, connections, "fill")
	if err != nil {
		return nil, 0, 0, err
	}
	for _, pair := range fill {
		s.fillTicks[pair.connection] = pair.delayTicks
	}
	if s.arrivals, err = readPairs(stdin, connections, "arrivals"); err != nil {
		return nil, 0, 0, err
	}
	s.keepalives = make([]int, connections)
	for _, a := range s.arrivals {
		s.keepalives[a.connection]++
	}
	return s, int(port), idle, nil
}

func readPairs(stdin io.Reader, connections int64, what string) ([]arrival, error) {
	count, err := readWord(stdin)
	if err != nil || count > maxTableEntries {
		return nil, fmt.Errorf("reading the %s from timerbench: count %d, %v", what, count, err)
	}
	pairs := make([]arrival, count)
	for i := range pairs {
		slot, err1 := readWord(stdin)
		delay, err2 := readWord(stdin)
		if err1 != nil || err2 != nil || slot >= uint64(connections) || delay > math.MaxInt32 {
			return nil, fmt.Errorf("reading the %s from timerbench: entry %d is bad or cut", what, i)
		}
		pairs[i] = arrival{connection: int64(slot), delayTicks: int64(delay)}
	}
	return pairs, nil
}

func readWord(r io.Reader) (uint64, error) {
	var bytes [8]byte
	if _, err := io.ReadFull(r, bytes[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(bytes[:]), nil
}

func (s *keepaliveServer) fail(why string) {
	select {
	case s.failed <- why:
	default:
	}
}

func (s *keepaliveServer) accept(listener *net.TCPListener) {
	for {
		nc, err := listener.AcceptTCP()
		if err != nil {
			return // closed once every connection is identified
		}
		go s.greet(nc)
	}
}

// greet reads a connection's hello, files it under its index, and serves it from tick 0.
func (s *keepaliveServer) greet(nc *net.TCPConn) {
	var hello [recordBytes]byte
	if _, err := io.ReadFull(nc, hello[:]); err != nil {
		s.fail(fmt.Sprintf("reading a connection's hello: %v", err))
		nc.Close()
		return
	}
	word := binary.LittleEndian.Uint64(hello[:8])
	index := word &^ helloTag
	raw, err := nc.SyscallConn()
	if word&helloTag == 0 || index >= uint64(len(s.conns)) || err != nil {
		s.fail(fmt.Sprintf("a connection's first record is %#x, not a hello of one of %d connections", word, len(s.conns)))
		nc.Close()
		return
	}
	c := &connection{slot: int64(index), nc: nc, raw: raw, deadline: noDeadline}
	s.mu.Lock()
	duplicate := s.conns[index] != nil
	if !duplicate {
		s.conns[index] = c
		s.identified++
		s.served.Add(1)
		if s.identified == len(s.conns) {
			close(s.ready)
		}
	}
	s.mu.Unlock()
	if duplicate {
		s.fail(fmt.Sprintf("two connections said hello as connection %d", index))
		nc.Close()
		return
	}
	<-s.begin
	s.serve(c)
}

// serve is the connection's life from tick 0: its fill deadline, then keepalives read as
// they come, each pushing the deadline forward, until the deadline passes with nothing
// read (the idle timeout closes it), the client closes it, or the workload ends.
func (s *keepaliveServer) serve(c *connection) {
	defer s.served.Done()
	// Sized up front, so that the workload phase allocates nothing but what Go's runtime does.
	c.reads = make([][4]int64, 0, s.keepalives[c.slot])
	if ticks := s.fillTicks[c.slot]; ticks >= 0 {
		s.arm(c, s.origin+ticks*s.tickNs)
	}
	s.armed.Done()
	for {
		// Checked after every deadline this goroutine set: the end's past deadline, set
		// after `ending`, is then either seen here or set after this goroutine's own.
		if atomic.LoadInt32(&s.ending) == 1 {
			s.closeAtEnd(c)
			return
		}
		n, err := c.nc.Read(c.buf[c.have:])
		if n > 0 {
			if !s.take(c, n, monoNow()) {
				s.closeFor(c, closedForProtocol)
				return
			}
			continue
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			if atomic.LoadInt32(&s.ending) == 1 {
				continue
			}
			if s.timedOut(c) {
				return
			}
		default: // end of stream or reset: the client closed it
			s.closeFor(c, closedByClient)
			return
		}
	}
}

// timedOut handles an expired deadline: as the Rust server, it reads the connection once
// more without waiting, and a keepalive already there (sent before the deadline, not yet
// read) re-arms it instead of the close. Whether the connection is done.
func (s *keepaliveServer) timedOut(c *connection) bool {
	taken, ended := s.readNow(c)
	switch {
	case ended != stillOpen:
		return true
	case taken > 0:
		c.rearmed++
		return false
	}
	s.closeFor(c, closedByTimer)
	return true
}

// closeAtEnd reads what the connection still holds (the client's last keepalives, sent
// before its `done`), then closes it.
func (s *keepaliveServer) closeAtEnd(c *connection) {
	for {
		taken, ended := s.readNow(c)
		if ended != stillOpen {
			return
		}
		if taken == 0 {
			s.closeFor(c, closedAtEnd)
			return
		}
	}
}

// readNow reads once without waiting: the keepalives taken (0 if no whole one was
// there), and how the connection ended if that read ended it (closed by the client, or a
// protocol error), else stillOpen. A read past its deadline fails before it tries, so the
// deadline is cleared first; taking a keepalive sets a new one.
func (s *keepaliveServer) readNow(c *connection) (int, int) {
	_ = c.nc.SetReadDeadline(time.Time{})
	var n int
	var readErr error
	err := c.raw.Read(func(fd uintptr) bool {
		n, readErr = syscall.Read(int(fd), c.buf[c.have:])
		return true // one try: the socket is non-blocking
	})
	switch {
	case err != nil || (readErr != nil && readErr != syscall.EAGAIN) || (readErr == nil && n == 0):
		s.closeFor(c, closedByClient)
		return 0, closedByClient
	case readErr != nil || n <= 0:
		return 0, stillOpen
	}
	before := len(c.reads)
	if !s.take(c, n, monoNow()) {
		s.closeFor(c, closedForProtocol)
		return 0, closedForProtocol
	}
	return len(c.reads) - before, stillOpen
}

// take files the whole records among the n bytes just read at `now`: each keepalive
// moves the connection's deadline to now plus its timeout, as Reset would. False on a
// record that is not one of this connection's keepalives.
func (s *keepaliveServer) take(c *connection, n int, now int64) bool {
	c.have += n
	whole := c.have / recordBytes * recordBytes
	deadline := noDeadline
	for at := 0; at < whole; at += recordBytes {
		index := binary.LittleEndian.Uint64(c.buf[at:])
		sent := int64(binary.LittleEndian.Uint64(c.buf[at+8:]))
		if index >= uint64(len(s.arrivals)) || s.arrivals[index].connection != c.slot {
			c.problem = fmt.Sprintf("connection %d sent a record for operation %d, not one of its keepalives (a protocol error)", c.slot, index)
			return false
		}
		deadline = now + s.arrivals[index].delayTicks*s.tickNs
		c.reads = append(c.reads, [4]int64{c.slot, int64(index), sent, now})
	}
	c.have = copy(c.buf[:], c.buf[whole:c.have])
	if deadline != noDeadline {
		s.arm(c, deadline)
	}
	return true
}

func (s *keepaliveServer) arm(c *connection, deadline int64) {
	c.deadline = deadline
	_ = c.nc.SetReadDeadline(s.clock.at(deadline))
}

func (s *keepaliveServer) closeFor(c *connection, how int) {
	c.nc.Close()
	c.closeNs, c.how = monoNow(), how
}

// clock turns CLOCK_MONOTONIC instants, timerbench's clock, into Go times: Go's own
// monotonic clock is the same one but never shows its absolute value.
type clock struct {
	base     time.Time
	baseMono int64
	gapNs    int64
}

// calibrate pairs time.Now with CLOCK_MONOTONIC read just before it, the closest pair of
// 16: Go's reading is then at or after the one paired with it, so a deadline it is given
// falls at or after the instant asked for (never early), late by at most gapNs.
func calibrate() clock {
	best := clock{gapNs: math.MaxInt64}
	for i := 0; i < 16; i++ {
		before := monoNow()
		now := time.Now()
		if gap := monoNow() - before; gap < best.gapNs {
			best = clock{base: now, baseMono: before, gapNs: gap}
		}
	}
	return best
}

func (c clock) at(mono int64) time.Time {
	return c.base.Add(time.Duration(mono - c.baseMono))
}

// monoNow is CLOCK_MONOTONIC in ns, as timerbench and its client read it.
func monoNow() int64 {
	var ts syscall.Timespec
	const clockMonotonic = 1
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func sleepUntil(mono int64) {
	if wait := mono - monoNow(); wait > 0 {
		time.Sleep(time.Duration(wait))
	}
}

// window is the process's usage over a phase: getrusage(RUSAGE_SELF), every thread's.
type window struct {
	WallNs      int64 `json:"wall_ns"`
	CPUNs       int64 `json:"cpu_ns"`
	Voluntary   int64 `json:"voluntary_switches"`
	Involuntary int64 `json:"involuntary_switches"`
}

func usageNow() window {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return window{WallNs: monoNow(), CPUNs: ru.Utime.Nano() + ru.Stime.Nano(),
		Voluntary: ru.Nvcsw, Involuntary: ru.Nivcsw}
}

func beginWindow() window { return usageNow() }

func (w *window) end() {
	now := usageNow()
	*w = window{WallNs: now.WallNs - w.WallNs, CPUNs: now.CPUNs - w.CPUNs,
		Voluntary: now.Voluntary - w.Voluntary, Involuntary: now.Involuntary - w.Involuntary}
}

type liveResult struct {
	Runtime        string     `json:"runtime"`
	RuntimeVersion string     `json:"runtime_version"`
	RuntimeFlags   []string   `json:"runtime_flags"`
	Reads          [][4]int64 `json:"reads"`
	Ends           [][4]int64 `json:"ends"`
	Rearmed        int64      `json:"rearmed"`
	Problems       []string   `json:"problems"`
	Workload       window     `json:"workload"`
	Idle           window     `json:"idle"`
	GcCycles       int64      `json:"gc_cycles"`
	GcPauseNs      int64      `json:"gc_pause_ns"`
	CalibrationNs  int64      `json:"calibration_ns"`
	PeakRssBytes   uint64     `json:"peak_rss_bytes"`
}

// result is every keepalive read (connection, arrival index, sent, read) and every
// connection's end (connection, how, when, its deadline then), for timerbench to check
// against the client's send times; and the usage.
func (s *keepaliveServer) result(workload, idle window, gcBefore, gcAfter [2]int64) *liveResult {
	r := &liveResult{Runtime: "go", RuntimeVersion: runtime.Version(), RuntimeFlags: runtimeFlags(),
		Reads: [][4]int64{}, Ends: [][4]int64{}, Problems: []string{}, Workload: workload,
		Idle: idle, GcCycles: gcAfter[0] - gcBefore[0], GcPauseNs: gcAfter[1] - gcBefore[1],
		CalibrationNs: s.clock.gapNs, PeakRssBytes: peakRss()}
	for _, c := range s.conns {
		r.Reads = append(r.Reads, c.reads...)
		r.Rearmed += c.rearmed
		r.Ends = append(r.Ends, [4]int64{c.slot, int64(c.how), c.closeNs, c.deadline})
		if c.problem != "" {
			r.Problems = append(r.Problems, c.problem)
		}
	}
	return r
}

// gcTotals is the collections so far and their stop-the-world pauses in ns.
func gcTotals() [2]int64 {
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return [2]int64{int64(stats.NumGC), int64(stats.PauseTotalNs)}
}
