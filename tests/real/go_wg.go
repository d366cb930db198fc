// Correct: goroutines, a sync.WaitGroup and channels (issue 8).  Built by
// tests/real/test_real.c when `go` is installed (golang is not installed
// by scripts/setup.sh: 335 MB); the test skips with a message otherwise.
package main

import (
	"fmt"
	"sync"
)

func main() {
	jobs := make(chan int, 4)
	results := make(chan int, 16)
	var wg sync.WaitGroup

	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- j * j
			}
		}()
	}
	for i := 1; i <= 8; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(results)
	sum := 0
	for r := range results {
		sum += r
	}
	fmt.Printf("sum %d\n", sum)
}
