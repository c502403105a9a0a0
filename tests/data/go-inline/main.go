// A CPU-bound program whose hot path goes through small functions the Go compiler
// inlines, profiled with runtime/pprof until the profile holds enough samples.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"syscall"
	"time"
)

func mix(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

func step(x uint64) uint64 { return mix(x) ^ (x >> 7) }

//go:noinline
func churn(n int, seed uint64) uint64 {
	for i := 0; i < n; i++ {
		seed = step(seed)
	}
	return seed
}

//go:noinline
func sortSome(v []int, seed uint64) {
	for i := range v {
		seed = mix(seed)
		v[i] = int(seed >> 33)
	}
	sort.Ints(v)
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	// Run until about 1.5 s of CPU time has passed: the profiler samples CPU time, so a
	// loaded machine makes the run longer, not the profile smaller.
	var acc uint64
	v := make([]int, 4096)
	start := cpuTime()
	for cpuTime()-start < 1500*time.Millisecond {
		acc += churn(200000, acc)
		sortSome(v, acc)
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println(acc != 1)
}

// The process's CPU time (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
