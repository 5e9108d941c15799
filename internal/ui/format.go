// Format: this file writes byte counts, numbers and durations for people,
// one way for every command. Output meant for programs (pipes, --json)
// keeps exact integers and does not go through these functions.

package ui

import (
	"fmt"
	"strconv"
	"time"
)

// Bytes formats a byte count in decimal (SI) units, as sizes are read in
// listings and as macOS Finder shows them: 1 KB is 1,000 bytes, 1 MB is
// 1,000,000 bytes. Counts under 1,000 are exact ("512 B"); kilobytes and
// megabytes get one decimal ("3.4 KB", "12.0 MB"); gigabytes and terabytes
// two ("1.20 GB", "3.05 TB"). Negative counts keep their sign.
func Bytes(n int64) string {
	if n < 0 {
		if n == -n { // math.MinInt64 has no positive twin
			return strconv.FormatInt(n, 10) + " B"
		}
		return "-" + Bytes(-n)
	}
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1e6:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	case n < 1e9:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n < 1e12:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.2f TB", float64(n)/1e12)
}

// Count formats a count (tokens, records, lines) exactly, with a comma
// between each group of three digits: 51205 is "51,205", -1000 is
// "-1,000". It is the one form numbers take in output meant for people.
func Count[T ~int | ~int64 | ~int32 | ~uint32 | ~uint64](n T) string {
	s := strconv.FormatInt(int64(n), 10)
	if u, ok := any(n).(uint64); ok {
		s = strconv.FormatUint(u, 10)
	}
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	if len(s) <= 3 {
		return sign + s
	}
	b := make([]byte, 0, len(sign)+len(s)+len(s)/3)
	b = append(b, sign...)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// Percent formats part/whole as a percentage with one decimal, "0%" when
// whole is zero.
func Percent(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// Age formats a duration in the largest unit that keeps it short, rounded
// down: seconds under a minute ("45s"), minutes under an hour ("12m"),
// hours under two days ("36h"), days beyond ("9d"). These are the units
// --older-than takes, so an age shown can be typed back. A negative
// duration keeps its sign.
func Age(d time.Duration) string {
	if d < 0 {
		return "-" + Age(-d)
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}
