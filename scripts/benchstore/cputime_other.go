//go:build !unix

package main

import "time"

// cpuTime is not measured here: the benchmark runs on Linux and macOS.
func cpuTime() time.Duration { return 0 }
