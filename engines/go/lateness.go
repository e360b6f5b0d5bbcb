// `micro lateness` (docs/engines.md) for Go's runtime timers on the real clock: N timers
// started one after another with time.AfterFunc, timer i due floor(i × spread / N) ms after
// its own start; each callback records time.Now() − (start + delay) on the monotonic clock.
// The busy phase lasts from the first start to the last firing, the idle phase (nothing
// pending) idle-ms. Go's timers have no worker thread: they run from whichever thread's
// scheduler, netpoller or sysmon finds them due, so wake-ups and CPU are the process's
// (getrusage RUSAGE_SELF: voluntary context switches of all threads, user + system time).
package main

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"syscall"
	"time"
)

// withLateness is the answer's `lateness` object, embedded in the answer.
type withLateness struct {
	Lateness *latenessAnswer `json:"lateness,omitempty"`
}

// runLateness answers `micro lateness KEY=VALUE...`.
func runLateness(a *answer, args []string) (*answer, error) {
	params, err := parameters(args)
	if err != nil {
		return nil, err
	}
	if a.Lateness, err = lateness(params); err != nil {
		return nil, err
	}
	a.Status, a.Unit, a.PeakRssBytes = "ok", "lateness", peakRss()
	return a, nil
}

type latenessAnswer struct {
	Timers     int64              `json:"timers"`
	Fired      int64              `json:"fired"`
	Early      int64              `json:"early"`
	TickMs     *int64             `json:"tick_ms"`
	SpreadMs   int64              `json:"spread_ms"`
	LatenessUs map[string]float64 `json:"lateness_us"`
	Busy       phase              `json:"busy"`
	Idle       phase              `json:"idle"`
	WakeupsOf  string             `json:"wakeups_of"`
	CPUOf      string             `json:"cpu_of"`
}

type phase struct {
	Seconds           float64 `json:"seconds"`
	WakeupsPerS       float64 `json:"wakeups_per_s"`
	CPUMsPerS         float64 `json:"cpu_ms_per_s"`
	ProcessCPUMsPerS  float64 `json:"process_cpu_ms_per_s"`
	start             time.Time
	switches, cpuNsec int64
}

// usage is the process's voluntary context switches and CPU time in ns.
func usage() (int64, int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return ru.Nvcsw, ru.Utime.Nano() + ru.Stime.Nano()
}

func beginPhase() phase {
	switches, cpu := usage()
	return phase{start: time.Now(), switches: switches, cpuNsec: cpu}
}

func (p *phase) end() {
	switches, cpu := usage()
	p.Seconds = time.Since(p.start).Seconds()
	p.WakeupsPerS = float64(switches-p.switches) / p.Seconds
	p.CPUMsPerS = float64(cpu-p.cpuNsec) / 1e6 / p.Seconds
	p.ProcessCPUMsPerS = p.CPUMsPerS
}

// lateness runs the microbenchmark; a timer not fired within the spread plus 5 s is left
// out, and `fired` says so.
func lateness(params map[string]string) (*latenessAnswer, error) {
	timers, err1 := number(params, "timers", 10000)
	spread, err2 := number(params, "spread-ms", 1000)
	idleMs, err3 := number(params, "idle-ms", 1000)
	if err1 != nil || err2 != nil || err3 != nil || timers < 1 || spread < 0 || idleMs < 1 {
		return nil, fmt.Errorf("lateness needs timers >= 1, spread-ms >= 0, idle-ms >= 1")
	}
	late := make([]time.Duration, timers)
	firedFlags := make([]bool, timers)
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(int(timers))
	busy := beginPhase()
	for i := int64(0); i < timers; i++ {
		i := i
		delay := time.Duration(spread*i/timers) * time.Millisecond
		expected := time.Now().Add(delay)
		time.AfterFunc(delay, func() {
			l := time.Since(expected)
			mu.Lock()
			late[i], firedFlags[i] = l, true
			mu.Unlock()
			wg.Done()
		})
	}
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(time.Duration(spread)*time.Millisecond + 5*time.Second):
	}
	busy.end()
	mu.Lock()
	var fired []time.Duration
	for i, ok := range firedFlags {
		if ok {
			fired = append(fired, late[i])
		}
	}
	mu.Unlock()
	idle := beginPhase()
	time.Sleep(time.Duration(idleMs) * time.Millisecond)
	idle.end()
	sort.Slice(fired, func(a, b int) bool { return fired[a] < fired[b] })
	var early int64
	for _, l := range fired {
		if l < 0 {
			early++
		}
	}
	return &latenessAnswer{
		Timers: timers, Fired: int64(len(fired)), Early: early, SpreadMs: spread,
		LatenessUs: percentiles(fired), Busy: busy, Idle: idle,
		WakeupsOf: "voluntary context switches of the whole process (Go's timers have no worker thread)",
		CPUOf:     "the whole process (user + system)",
	}, nil
}

// percentiles are nearest-rank p50, p99, p99.9 and the maximum, in µs.
func percentiles(sorted []time.Duration) map[string]float64 {
	if len(sorted) == 0 {
		return map[string]float64{}
	}
	rank := func(q float64) float64 {
		index := int(math.Ceil(q*float64(len(sorted)))) - 1
		if index < 0 {
			index = 0
		}
		return float64(sorted[index].Nanoseconds()) / 1e3
	}
	return map[string]float64{"p50": rank(0.5), "p99": rank(0.99), "p999": rank(0.999),
		"max": float64(sorted[len(sorted)-1].Nanoseconds()) / 1e3}
}
