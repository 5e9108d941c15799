//go:build race

package ccm

const raceEnabled = true
