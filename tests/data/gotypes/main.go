// Writes a heap, a CPU and a mutex contention profile for tests/cli/pprof-types.bats:
// prog heap|cpu|mutex OUT. Work runs under pprof labels (worker=wN, a numeric batch label
// cannot be set from runtime/pprof, so only string labels), so -tags has something to show.
package main

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

var sink [][]byte

//go:noinline
func allocSmall(n int) {
	for i := 0; i < n; i++ {
		sink = append(sink, make([]byte, 64))
	}
}

//go:noinline
func allocLarge(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 4096)
		if i%2 == 0 {
			sink = append(sink, b)
		}
	}
}

//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func labelled(worker string, f func()) {
	pprof.Do(context.Background(), pprof.Labels("worker", worker), func(context.Context) { f() })
}

func heap(out string) {
	runtime.MemProfileRate = 1
	labelled("w1", func() { allocSmall(2000) })
	labelled("w3", func() { allocLarge(300) })
	sink = sink[:len(sink)/2] // some objects die: inuse differs from alloc
	runtime.GC()
	f, _ := os.Create(out)
	pprof.WriteHeapProfile(f)
	f.Close()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpu(out string) {
	f, _ := os.Create(out)
	pprof.StartCPUProfile(f)
	// CPU time, not wall time: a busy machine still gives each label tens of samples
	start, s := cpuTime(), 0
	for cpuTime()-start < 400*time.Millisecond {
		labelled("w3", func() { s += spin(200000) })
		labelled("w1", func() { s += spin(100000) })
	}
	// idle time: the profile's duration is more than its samples
	time.Sleep(200 * time.Millisecond)
	pprof.StopCPUProfile()
	f.Close()
	if s == 42 {
		println(s)
	}
}

func mutex(out string) {
	runtime.SetMutexProfileFraction(1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				mu.Lock()
				spin(2000)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	f, _ := os.Create(out)
	pprof.Lookup("mutex").WriteTo(f, 0)
	f.Close()
}

func main() {
	switch os.Args[1] {
	case "heap":
		heap(os.Args[2])
	case "cpu":
		cpu(os.Args[2])
	case "mutex":
		mutex(os.Args[2])
	}
}
