package main

import (
	"fmt"
	"strings"
)

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
