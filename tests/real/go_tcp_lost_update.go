// A lost update over loopback TCP on Go's netpoller: a server and two
// clients in one program; the second client starts 2 ms after the first;
// each asks for the count, then sends back one more, so when both ask
// before either sets, one update is lost and the program exits 1.  With
// "fixed" the server increments itself: no update can be lost.  Built by
// tests/real/test_real.c when `go` is installed.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	mu    sync.Mutex
	count int
)

func handle(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSpace(line)
		mu.Lock()
		switch {
		case line == "get":
			fmt.Fprintf(c, "%d\n", count)
		case line == "inc":
			count++
			fmt.Fprintf(c, "ok\n")
		default:
			n, _ := strconv.Atoi(strings.TrimPrefix(line, "set "))
			count = n
			fmt.Fprintf(c, "ok\n")
		}
		mu.Unlock()
	}
}

func client(addr string, delay time.Duration, fixed bool, wg *sync.WaitGroup) {
	defer wg.Done()
	time.Sleep(delay)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if fixed {
		fmt.Fprintf(c, "inc\n")
	} else {
		fmt.Fprintf(c, "get\n")
		line, err := r.ReadString('\n')
		if err != nil {
			panic(err)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line))
		fmt.Fprintf(c, "set %d\n", n+1)
	}
	if _, err := r.ReadString('\n'); err != nil {
		panic(err)
	}
}

func main() {
	fixed := len(os.Args) > 1 && os.Args[1] == "fixed"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	var wg sync.WaitGroup
	wg.Add(2)
	go client(ln.Addr().String(), 0, fixed, &wg)
	go client(ln.Addr().String(), 2*time.Millisecond, fixed, &wg)
	wg.Wait()
	ln.Close()
	fmt.Println("count", count)
	if count != 2 {
		os.Exit(1)
	}
}
