//go:build race

package prune

const raceEnabled = true
