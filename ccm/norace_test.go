//go:build !race

package ccm

const raceEnabled = false
