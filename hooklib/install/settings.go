package install

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// ErrInvalidSettings marks a settings file ccm refuses to edit.
var ErrInvalidSettings = errors.New("not valid JSON")

// group renders a matcher group holding ccm's handler for r.
func group(r Registration, exe string, indent string, st style) string {
	h := obj{{"type", "command"}, {"command", HookCommand(exe, r.Event)}, {"timeout", r.Timeout}}
	g := obj{}
	if r.Matcher != "" {
		g = append(g, kv{"matcher", r.Matcher})
	}
	g = append(g, kv{"hooks", []any{h}})
	return render(g, indent, st)
}

// Merge adds ccm's registrations to a settings document and returns the
// result, what changed, and the keys it created ("hooks" or "hooks/<Event>",
// for Unmerge). Everything else, the user's own hooks included, keeps its
// bytes. A second Merge changes nothing. An existing ccm handler with
// another path (the binary moved) gets its command updated in place with
// sjson.
func Merge(data []byte, exe string) (out []byte, changes, created []string, err error) {
	return MergeWith(data, exe, Registrations())
}

// MergeWith is Merge for a chosen set of registrations. ccm handlers of
// events not in regs (a feature left out by this install) are removed, and
// a matcher that differs from regs' is updated in place.
func MergeWith(data []byte, exe string, regs []Registration) (out []byte, changes, created []string, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	}
	if err := validObject(data); err != nil {
		return nil, nil, nil, err
	}
	st := detectStyle(data)
	self := strings.Trim(filepath.Base(exe), `"`)
	data, changes, err = dropUnwanted(data, regs, self)
	if err != nil {
		return nil, nil, nil, err
	}
	top, _ := find(data)
	hooks, ok := top.member("hooks")
	if ok && data[hooks.valStart] != '{' {
		return nil, nil, nil, fmt.Errorf("%w: \"hooks\" is not an object", ErrInvalidSettings)
	}
	if !ok {
		ind := childIndent(data, top, st)
		var members []string
		for _, r := range regs {
			members = append(members, quote(r.Event)+colon(st)+"["+nlIndent(st, ind+st.unit+st.unit)+
				group(r, exe, ind+st.unit+st.unit, st)+nlIndent(st, ind+st.unit)+"]")
			created = append(created, "hooks/"+r.Event)
			changes = append(changes, "add "+r.Event+" hook")
		}
		raw := quote("hooks") + colon(st) + "{" + nlIndent(st, ind+st.unit) +
			strings.Join(members, ","+nlIndent(st, ind+st.unit)) + nlIndent(st, ind) + "}"
		return appendItem(data, top, raw, st), changes, append([]string{"hooks"}, created...), nil
	}
	for _, r := range regs {
		hc, _ := find(data, "hooks")
		ev, ok := hc.member(r.Event)
		if ok && data[ev.valStart] != '[' {
			return nil, nil, nil, fmt.Errorf("%w: \"hooks.%s\" is not an array", ErrInvalidSettings, r.Event)
		}
		if !ok {
			ind := childIndent(data, hc, st)
			raw := quote(r.Event) + colon(st) + "[" + nlIndent(st, ind+st.unit) + group(r, exe, ind+st.unit, st) + nlIndent(st, ind) + "]"
			data = appendItem(data, hc, raw, st)
			created = append(created, "hooks/"+r.Event)
			changes = append(changes, "add "+r.Event+" hook")
			continue
		}
		arr := parseContainer(data, ev.valStart)
		want := HookCommand(exe, r.Event)
		gi, hi, cmd := findHandler(data, arr, r.Event, self)
		switch {
		case gi < 0:
			data = appendItem(data, arr, group(r, exe, childIndent(data, arr, st), st), st)
			changes = append(changes, "add "+r.Event+" hook")
		case cmd != want:
			path := "hooks." + r.Event + "." + strconv.Itoa(gi) + ".hooks." + strconv.Itoa(hi) + ".command"
			if data, err = sjson.SetBytes(data, path, want); err != nil {
				return nil, nil, nil, err
			}
			changes = append(changes, "update "+r.Event+" hook command")
		}
		if gi >= 0 && r.Matcher != "" && allCCM(data, arr.items[gi], self) {
			mpath := "hooks." + r.Event + "." + strconv.Itoa(gi) + ".matcher"
			if m := gjson.GetBytes(data, mpath); m.Exists() && m.String() != r.Matcher {
				if data, err = sjson.SetBytes(data, mpath, r.Matcher); err != nil {
					return nil, nil, nil, err
				}
				changes = append(changes, "update "+r.Event+" hook matcher")
			}
		}
	}
	return data, changes, created, nil
}

// dropUnwanted removes ccm's handlers of the events ccm may register but
// regs leaves out, and the event arrays that removal empties.
func dropUnwanted(data []byte, regs []Registration, self string) ([]byte, []string, error) {
	want := map[string]bool{}
	for _, r := range regs {
		want[r.Event] = true
	}
	var changes []string
	for _, ev := range Events {
		if want[ev] {
			continue
		}
		for {
			arr, ok := find(data, "hooks", ev)
			if !ok {
				break
			}
			gi, hi, _ := findHandler(data, arr, ev, self)
			if gi < 0 {
				break
			}
			g := arr.items[gi]
			if allCCM(data, g, self) {
				data = removeItem(data, arr, gi)
			} else {
				inner, _ := findIn(data, g.valStart, "hooks")
				data = removeItem(data, inner, hi)
			}
			changes = append(changes, "remove "+ev+" hook")
			if arr, _ := find(data, "hooks", ev); len(arr.items) == 0 {
				hc, _ := find(data, "hooks")
				for k, it := range hc.items {
					if it.key == ev {
						data = removeItem(data, hc, k)
						break
					}
				}
			}
		}
	}
	return data, changes, nil
}

// findHandler returns the group and handler index of ccm's handler for
// event in arr, and its command; gi < 0 if there is none.
func findHandler(d []byte, arr container, event, self string) (gi, hi int, cmd string) {
	for g, it := range arr.items {
		for h, c := range handlers(d, it) {
			if ev, ok := ccmEvent(c, self); ok && ev == event {
				return g, h, c
			}
		}
	}
	return -1, -1, ""
}

// handlers returns the command of each handler of a matcher group ("" for
// handlers without one).
func handlers(d []byte, g item) []string {
	if d[g.valStart] != '{' {
		return nil
	}
	var out []string
	gjson.GetBytes(d[g.valStart:g.end], "hooks").ForEach(func(_, h gjson.Result) bool {
		out = append(out, h.Get("command").String())
		return true
	})
	return out
}

// Unmerge removes every ccm handler from a settings document: whole groups
// that hold only ccm handlers, single handlers from mixed groups. An event
// array left empty is removed if created lists it (or, when created is nil
// because install's record is lost, if ccm's removal emptied it); the same
// for "hooks". Applied to Merge's output it returns Merge's input.
func Unmerge(data []byte, created []string, exe string) (out []byte, changes []string, err error) {
	if err := validObject(data); err != nil {
		return nil, nil, err
	}
	self := strings.Trim(filepath.Base(exe), `"`)
	made := map[string]bool{}
	for _, k := range created {
		made[k] = true
	}
	known := created != nil
	top, _ := find(data)
	hooks, ok := top.member("hooks")
	if !ok || data[hooks.valStart] != '{' {
		return data, nil, nil
	}
	hc := parseContainer(data, hooks.valStart)
	removedAny := false
	for ki := len(hc.items) - 1; ki >= 0; ki-- {
		ev := hc.items[ki].key
		if data[hc.items[ki].valStart] != '[' {
			continue
		}
		removed := false
		for {
			arr, _ := find(data, "hooks", ev)
			gi, hi := -1, -1
			for g := len(arr.items) - 1; g >= 0 && gi < 0; g-- {
				for h, c := range handlers(data, arr.items[g]) {
					if _, ok := ccmEvent(c, self); ok {
						gi, hi = g, h
					}
				}
			}
			if gi < 0 {
				break
			}
			g := arr.items[gi]
			inner, _ := findIn(data, g.valStart, "hooks")
			if allCCM(data, g, self) {
				data = removeItem(data, arr, gi)
			} else {
				data = removeItem(data, inner, hi)
			}
			removed = true
			changes = append(changes, "remove "+ev+" hook")
		}
		removedAny = removedAny || removed
		arr, _ := find(data, "hooks", ev)
		if len(arr.items) == 0 && (made["hooks/"+ev] || !known && removed) {
			hc2, _ := find(data, "hooks")
			for k, it := range hc2.items {
				if it.key == ev {
					data = removeItem(data, hc2, k)
					break
				}
			}
		}
	}
	hc, _ = find(data, "hooks")
	if len(hc.items) == 0 && (made["hooks"] || !known && removedAny) {
		top, _ = find(data)
		for k, it := range top.items {
			if it.key == "hooks" {
				data = removeItem(data, top, k)
				break
			}
		}
	}
	return data, changes, nil
}

// findIn returns the container under key of the object at open.
func findIn(d []byte, open int, key string) (container, bool) {
	c := parseContainer(d, open)
	it, ok := c.member(key)
	if !ok || (d[it.valStart] != '[' && d[it.valStart] != '{') {
		return container{}, false
	}
	return parseContainer(d, it.valStart), true
}

func allCCM(d []byte, g item, self string) bool {
	hs := handlers(d, g)
	for _, c := range hs {
		if _, ok := ccmEvent(c, self); !ok {
			return false
		}
	}
	return len(hs) > 0
}

func validObject(d []byte) error {
	t := bytes.TrimSpace(d)
	if len(t) == 0 || t[0] != '{' || !gjson.ValidBytes(t) {
		return ErrInvalidSettings
	}
	return nil
}
