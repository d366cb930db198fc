// Buggy: two goroutines withdraw 100 from a balance of 100, each checking
// the balance under a sync.Mutex and then, in a second critical section,
// taking the money: a goroutine preempted between the two lets the other
// withdraw too, and the program exits 1.  While the Go runtime's own
// atomics were points (2,762 stops a run of go_wg), they diluted the
// search: `ptloom run` failed it after 400 runs and 60 s, 88 runs and 8 s
// once they were not.  Built by tests/real/test_real.c when `go` is
// installed.
package main

import (
	"fmt"
	"os"
	"sync"
)

var mu sync.Mutex
var balance = 100

func withdraw(wg *sync.WaitGroup) {
	defer wg.Done()
	mu.Lock()
	ok := balance >= 100
	mu.Unlock()
	if ok {
		mu.Lock()
		balance -= 100
		mu.Unlock()
	}
}

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go withdraw(&wg)
	}
	wg.Wait()
	if balance < 0 {
		fmt.Println("overdrawn", balance)
		os.Exit(1)
	}
	fmt.Println("ok")
}
