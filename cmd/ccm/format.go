package main

import (
	"fmt"
	"strings"
)

// humanBytes formats a byte count with a binary-prefix-free unit as
// people read sizes in listings: 512 B, 3.4 KB, 12.0 MB, 1.20 GB.
func humanBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.2f GB", float64(n)/1e9)
}

// percent formats part/whole as a percentage.
func percent(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// lineList formats a few line numbers: "12, 40, 41 (+3 more)".
func lineList(lines []int, count int) string {
	var b strings.Builder
	for i, l := range lines {
		if i == 8 {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", l)
	}
	if more := count - min(len(lines), 8); more > 0 {
		fmt.Fprintf(&b, " (+%d more)", more)
	}
	return b.String()
}

// plural is noun for one and noun+"s" for any other count.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
