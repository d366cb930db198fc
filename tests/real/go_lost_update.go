// Buggy: two goroutines add to a counter with a read, a log line and a
// write, no lock; a goroutine preempted between its read and its write
// loses the other's updates and the program exits 1 (issue 10: Go's
// runtime observed once by race discovery must still let this be found).
// Built by tests/real/test_real.c when `go` is installed.
package main

import (
	"fmt"
	"os"
	"sync"
)

var counter int

func main() {
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 3; j++ {
				v := counter
				fmt.Fprint(os.Stderr, ".")
				counter = v + 1
			}
		}()
	}
	wg.Wait()
	if counter != 6 {
		fmt.Println("lost update:", counter)
		os.Exit(1)
	}
	fmt.Println("ok")
}
