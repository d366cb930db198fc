// Correct: a goroutine sleeps 1 ms and then reports; main waits for it
// with a 2 s guard (`select` on `time.After`), the way Go tests guard
// against a hang.  Natively the guard never fires: it could only if the
// goroutine, able to run, were starved for two seconds.  Go's sysmon
// sleeps 20 us to 10 ms at a time beside it; each of its wake-ups taken
// early ("the machine was slow") once moved the clock on while the
// goroutine waited, and a round-robin sample starved it past the guard.
package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	done := make(chan bool)
	go func() {
		time.Sleep(time.Millisecond)
		done <- true
	}()
	select {
	case <-done:
		fmt.Println("ok")
	case <-time.After(2 * time.Second):
		fmt.Println("timeout")
		os.Exit(1)
	}
}
