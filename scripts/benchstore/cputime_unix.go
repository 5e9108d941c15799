//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the process's user plus system time: under a loaded machine
// it says what the work costs, which wall time alone does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
