package hooklib

import (
	"context"
	"strings"
)

// addon is a feature that adds to what an event answers. Addons run after
// the event's handler (if any) and see its response, so they can budget
// what they add within the output cap.
type addon func(ctx context.Context, h *Hook, prev Response) (Response, error)

// also registers fn to run after whatever handles event. Features register
// themselves from init functions, so handlers stays one table that
// several features can extend without editing the same lines.
func also(event string, fn addon) {
	base := handlers[event]
	handlers[event] = func(ctx context.Context, h *Hook) (Response, error) {
		var r Response
		if base != nil {
			var err error
			if r, err = base(ctx, h); err != nil {
				h.Log.Printf("%v", err) // one feature failing leaves the others their say
				r = Response{}
			}
		}
		add, err := fn(ctx, h, r)
		if err != nil {
			// The addon failing must not cost the handler its answer (a
			// capture's replaced output, above all).
			h.Log.Printf("%v", err)
			return r, nil
		}
		return joinResponses(r, add), nil
	}
}

// joinResponses puts two features' answers into one.
func joinResponses(a, b Response) Response {
	join := func(x, y string) string {
		switch {
		case x == "":
			return y
		case y == "":
			return x
		}
		return x + "\n\n" + y
	}
	out := a.ToolOutput // one replacement of a tool's output: the first feature's
	if out == nil {
		out = b.ToolOutput
	}
	return Response{Context: join(a.Context, b.Context), SystemMessage: join(a.SystemMessage, b.SystemMessage),
		ToolOutput: out, Continue: a.Continue || b.Continue}
}

// room is how much additionalContext an addon may still add to prev.
func room(event string, prev Response) int {
	n := ContextBudget(event) - 2 // the separator joinResponses adds
	if prev.Context != "" {
		n -= Size(prev.Context)
	}
	if prev.SystemMessage != "" {
		n -= Size(prev.SystemMessage) + len(`,"systemMessage":""`)
	}
	return max(n, 0)
}

// fitText cuts s to at most n characters as Size counts them.
func fitText(s string, n int) string {
	if Size(s) <= n {
		return s
	}
	return strings.TrimRight(cutToFit(s, n-Size(cutMarker)), "\n") + cutMarker
}
