// The go-runtime engine of timerbench (docs/engines.md): Go's own runtime timers
// (time.AfterFunc, Timer.Stop) on the Go article's benchmark shape, N resident timers then
// start+stop pairs, ns per pair. It answers one JSON object on stdout.
//
// Usage: go-runtime micro start-stop|restart resident=N [samples=K] [min-sample-ms=M]
// [warmup=W] [max-warmup=X] [resident-after-ms=A] [resident-spread-ms=S]. Resident timer i
// is due after A + (i mod S) ms (one hour plus up to 10 s by default, as the start-stop
// workload's background timers): long after any run, so every sample sees the same N
// timers pending and none fires beside the pairs. `restart` is Timer.Reset of the resident
// timers in turn, a keepalive's refresh. A runtime timer runs on the monotonic clock and
// cannot be driven by a virtual one, so `replay` is answered "unsupported". `micro lateness
// timers=N spread-ms=S idle-ms=I` runs timers on the real clock (lateness.go). `live-tcp`
// is the keepalive server of `timerbench live --tcp --engine go-runtime` (keepalive.go).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const protocol = 2

// settledWithin: warm-up ends when the last three iterations lie within 5% of their median.
const settledWithin = 0.05

type answer struct {
	Protocol            int       `json:"protocol"`
	Engine              string    `json:"engine"`
	Runtime             string    `json:"runtime"`
	RuntimeVersion      string    `json:"runtime_version"`
	RuntimeFlags        []string  `json:"runtime_flags"`
	Status              string    `json:"status"`
	Reason              string    `json:"reason,omitempty"`
	Unit                string    `json:"unit,omitempty"`
	SamplesNs           []float64 `json:"samples_ns,omitempty"`
	SamplesGcCount      []int64   `json:"samples_gc_count,omitempty"`
	SamplesGcMs         []float64 `json:"samples_gc_ms,omitempty"`
	IterationsPerSample int64     `json:"iterations_per_sample,omitempty"`
	WarmupIterations    int       `json:"warmup_iterations"`
	WarmupSettled       bool      `json:"warmup_settled"`
	PeakRssBytes        uint64    `json:"peak_rss_bytes"`
	HeapLiveBytes       uint64    `json:"heap_live_bytes,omitempty"`
	ResidentFired       int64     `json:"resident_fired"`
	withLateness
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "live-tcp" {
		// A live server, with its own protocol of lines (keepalive.go), not one answer.
		os.Exit(serveKeepalive(os.Args[2:]))
	}
	out, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-runtime engine:", err)
		os.Exit(2)
	}
	text, _ := json.Marshal(out)
	fmt.Println(string(text))
}

func run(args []string) (*answer, error) {
	a := &answer{Protocol: protocol, Engine: "go-runtime", Runtime: "go", RuntimeVersion: runtime.Version(),
		RuntimeFlags: runtimeFlags()}
	if len(args) < 1 {
		return nil, fmt.Errorf("usage: go-runtime MODE [BENCH] key=value...")
	}
	if len(args) >= 2 && args[0] == "micro" && args[1] == "lateness" {
		return runLateness(a, args[2:])
	}
	if args[0] != "micro" || len(args) < 2 || (args[1] != "start-stop" && args[1] != "restart") {
		a.Status = "unsupported"
		a.Reason = "Go's runtime timers run on the monotonic clock: no virtual-time replay; only `micro start-stop`, `micro restart` and `micro lateness`"
		return a, nil
	}
	bench := args[1]
	params, err := parameters(args[2:])
	if err != nil {
		return nil, err
	}
	resident, err := number(params, "resident", -1)
	if err != nil || resident < 0 || (bench == "restart" && resident < 1) {
		return nil, fmt.Errorf("missing or bad parameter resident= (restart needs at least 1)")
	}
	spread, err := number(params, "resident-spread-ms", 10000)
	if err != nil || spread < 1 {
		return nil, fmt.Errorf("bad parameter resident-spread-ms=")
	}
	after, err := number(params, "resident-after-ms", 3600000)
	if err != nil || after < 0 {
		return nil, fmt.Errorf("bad parameter resident-after-ms=")
	}
	s, err := samplingOf(params)
	if err != nil {
		return nil, err
	}
	var fired int64
	// Resident timer i is due after A + (i mod S) ms: the article's spread, moved past the run.
	due := func(i int) time.Duration { return time.Duration(after+int64(i)%spread) * time.Millisecond }
	base := make([]*time.Timer, resident)
	for i := range base {
		base[i] = time.AfterFunc(due(i), func() { atomic.AddInt64(&fired, 1) })
	}
	unit, unitName := func() { time.AfterFunc(time.Second, func() {}).Stop() }, "start-stop pair"
	if bench == "restart" {
		next := 0
		unit, unitName = func() {
			base[next].Reset(time.Second + due(next))
			next++
			if next == len(base) {
				next = 0
			}
		}, "restart"
	}
	// As the JVM engines: one collection before the warm-up, so that no sample pays for the fill.
	runtime.GC()
	s.measure(unit)
	a.ResidentFired = atomic.LoadInt64(&fired)
	a.HeapLiveBytes = liveHeapBytes()
	for _, t := range base {
		t.Stop()
	}
	a.Status, a.Unit = "ok", unitName
	a.SamplesNs, a.IterationsPerSample = s.measured, s.iterationsPerSample
	a.SamplesGcCount, a.SamplesGcMs = s.gcCounts, s.gcMs
	a.WarmupIterations, a.WarmupSettled = s.warmupIterations, s.settled
	a.PeakRssBytes = peakRss()
	return a, nil
}

func parameters(args []string) (map[string]string, error) {
	params := map[string]string{}
	for _, arg := range args {
		key, value, ok := strings.Cut(arg, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("parameter `%s` is not key=value", arg)
		}
		params[key] = value
	}
	return params, nil
}

func number(params map[string]string, key string, fallback int64) (int64, error) {
	text, ok := params[key]
	if !ok {
		return fallback, nil
	}
	return strconv.ParseInt(text, 10, 64)
}

// sampling is the rule of docs/engines.md: warm-up iterations until settled, then samples.
type sampling struct {
	samples, warmup, maxWarmup int
	minSample                  time.Duration
	iterationsPerSample        int64
	warmupIterations           int
	settled                    bool
	measured                   []float64
	gcCounts                   []int64
	gcMs                       []float64
}

// gcSoFar is the runtime's collections so far and their stop-the-world pauses, ms.
func gcSoFar() (int64, float64) {
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return int64(stats.NumGC), float64(stats.PauseTotalNs) / 1e6
}

// liveHeapBytes is the heap in use after a collection: the live data.
func liveHeapBytes() uint64 {
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}

// runtimeFlags is what sets the runtime's behaviour: GOMAXPROCS and GOGC as they are.
func runtimeFlags() []string {
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		gogc = "100 (default)"
	}
	return []string{fmt.Sprintf("GOMAXPROCS=%d", runtime.GOMAXPROCS(0)), "GOGC=" + gogc}
}

func samplingOf(params map[string]string) (*sampling, error) {
	samples, err1 := number(params, "samples", 10)
	warmup, err2 := number(params, "warmup", 5)
	maxWarmup, err3 := number(params, "max-warmup", 50)
	ms, err4 := number(params, "min-sample-ms", 100)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			return nil, fmt.Errorf("bad sampling parameter: %v", err)
		}
	}
	return &sampling{samples: int(samples), warmup: int(warmup), maxWarmup: int(maxWarmup),
		minSample: time.Duration(ms) * time.Millisecond}, nil
}

// iteration repeats batches of 1,000 units until the minimum sample time; ns per unit.
func (s *sampling) iteration(unit func()) float64 {
	var count int64
	start := time.Now()
	var elapsed time.Duration
	for elapsed < s.minSample || count == 0 {
		for i := 0; i < 1000; i++ {
			unit()
		}
		count += 1000
		elapsed = time.Since(start)
	}
	s.iterationsPerSample = count
	return float64(elapsed.Nanoseconds()) / float64(count)
}

func (s *sampling) measure(unit func()) {
	var warm []float64
	for s.warmupIterations < s.maxWarmup {
		warm = append(warm, s.iteration(unit))
		s.warmupIterations++
		if s.warmupIterations >= s.warmup && settled(warm) {
			s.settled = true
			break
		}
	}
	for i := 0; i < s.samples; i++ {
		count, pauses := gcSoFar()
		s.measured = append(s.measured, s.iteration(unit))
		countAfter, pausesAfter := gcSoFar()
		s.gcCounts = append(s.gcCounts, countAfter-count)
		s.gcMs = append(s.gcMs, pausesAfter-pauses)
	}
}

func settled(warm []float64) bool {
	if len(warm) < 3 {
		return false
	}
	last := append([]float64(nil), warm[len(warm)-3:]...)
	sort.Float64s(last)
	median := last[1]
	return last[0] >= median*(1-settledWithin) && last[2] <= median*(1+settledWithin)
}

// peakRss is VmHWM from /proc/self/status, in bytes; 0 where there is no /proc.
func peakRss() uint64 {
	file, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		if line := scanner.Text(); strings.HasPrefix(line, "VmHWM:") {
			rest := strings.TrimPrefix(line, "VmHWM:")
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
