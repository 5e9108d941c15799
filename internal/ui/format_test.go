package ui

import (
	"math"
	"testing"
	"time"
)

// TestBytes: decimal units, the boundaries on both sides of each unit.
func TestBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{999, "999 B"},
		{1000, "1.0 KB"},
		{1024, "1.0 KB"},
		{3_449, "3.4 KB"},
		{999_949, "999.9 KB"},
		{1_000_000, "1.0 MB"},
		{1_048_576, "1.0 MB"},
		{12_000_000, "12.0 MB"},
		{999_949_999, "999.9 MB"},
		{1_000_000_000, "1.00 GB"},
		{1_204_000_000, "1.20 GB"},
		{1_000_000_000_000, "1.00 TB"},
		{3_050_000_000_000, "3.05 TB"},
		{-1500, "-1.5 KB"},
		{math.MinInt64, "-9223372036854775808 B"},
	} {
		if got := Bytes(c.n); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestCount: commas between groups of three, signs kept, every integer
// type the callers hold.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{7, "7"},
		{999, "999"},
		{1000, "1,000"},
		{51205, "51,205"},
		{204894, "204,894"},
		{1234567, "1,234,567"},
		{-100, "-100"},
		{-1000, "-1,000"},
		{-123456, "-123,456"},
		{math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := Count(c.n); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := Count(24095); got != "24,095" {
		t.Errorf("Count(int) = %q", got)
	}
	if got := Count(uint64(math.MaxUint64)); got != "18,446,744,073,709,551,615" {
		t.Errorf("Count(MaxUint64) = %q", got)
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		part, whole int64
		want        string
	}{
		{0, 0, "0%"},
		{1, 3, "33.3%"},
		{5, 5, "100.0%"},
	} {
		if got := Percent(c.part, c.whole); got != c.want {
			t.Errorf("Percent(%d, %d) = %q, want %q", c.part, c.whole, got, c.want)
		}
	}
}

// TestAge: the largest unit that keeps it short, rounded down, in the
// units --older-than takes.
func TestAge(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{59 * time.Second, "59s"},
		{time.Minute, "1m"},
		{59*time.Minute + 59*time.Second, "59m"},
		{time.Hour, "1h"},
		{47*time.Hour + 59*time.Minute, "47h"},
		{48 * time.Hour, "2d"},
		{9*24*time.Hour + 23*time.Hour, "9d"},
		{-90 * time.Minute, "-1h"},
	} {
		if got := Age(c.d); got != c.want {
			t.Errorf("Age(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
