// A Go test binary (`go test -c`): the testing package runs its tests in
// one process (test-suite mode splits them,
// tests/integration/test_suite_mode.c).  Correct: TestLocked (goroutines
// add under a Mutex) and TestChannel.  Racy: TestRacyWithdraw, a lost
// update across two goroutines (a load, a yield, then a store, of an
// atomic).
package gotests

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestLocked(t *testing.T) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	n := 0
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			n++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if n != 2 {
		t.Fatalf("n = %d", n)
	}
}

func TestChannel(t *testing.T) {
	c := make(chan int)
	go func() { c <- 1 }()
	if v := <-c; v != 1 {
		t.Fatalf("got %d", v)
	}
}

func TestRacyWithdraw(t *testing.T) {
	var balance int32
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := atomic.LoadInt32(&balance)
			runtime.Gosched()
			atomic.StoreInt32(&balance, v+1)
		}()
	}
	wg.Wait()
	if b := atomic.LoadInt32(&balance); b != 2 {
		t.Fatalf("lost update: balance %d", b)
	}
}
