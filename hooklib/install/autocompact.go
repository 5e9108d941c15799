package install

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// AutocompactVar is the client's variable for the fill at which it
// compacts on its own.
const AutocompactVar = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"

// SetEnv sets env.<key> to the string value in a settings document, editing
// only those bytes. created lists what it added ("env" or "env/<key>");
// prev is the raw previous value when the key existed.
func SetEnv(data []byte, key, value string) (out []byte, created []string, prev string, err error) {
	if err := validObject(data); err != nil {
		return nil, nil, "", err
	}
	st := detectStyle(data)
	top, _ := find(data)
	env, ok := top.member("env")
	if ok && data[env.valStart] != '{' {
		return nil, nil, "", fmt.Errorf("%w: \"env\" is not an object", ErrInvalidSettings)
	}
	if !ok {
		ind := childIndent(data, top, st)
		raw := quote("env") + colon(st) + "{" + nlIndent(st, ind+st.unit) + quote(key) + colon(st) + quote(value) + nlIndent(st, ind) + "}"
		return appendItem(data, top, raw, st), []string{"env"}, "", nil
	}
	ec := parseContainer(data, env.valStart)
	if it, ok := ec.member(key); ok {
		old := string(data[it.valStart:it.end])
		if old == quote(value) {
			return data, nil, "", nil
		}
		return splice(data, it.valStart, it.end, quote(value)), nil, old, nil
	}
	raw := quote(key) + colon(st) + quote(value)
	return appendItem(data, ec, raw, st), []string{"env/" + key}, "", nil
}

// UnsetEnv undoes SetEnv: it removes env.<key> when created says SetEnv
// added it (and env when SetEnv added that), or puts prev back.
func UnsetEnv(data []byte, key string, created []string, prev string) ([]byte, bool) {
	top, _ := find(data)
	env, ok := top.member("env")
	if !ok || data[env.valStart] != '{' {
		return data, false
	}
	ec := parseContainer(data, env.valStart)
	k := slices.IndexFunc(ec.items, func(it item) bool { return it.key == key })
	if k < 0 {
		return data, false
	}
	switch {
	case prev != "":
		it := ec.items[k]
		return splice(data, it.valStart, it.end, prev), true
	case contains(created, "env") && len(ec.items) == 1:
		i := slices.IndexFunc(top.items, func(it item) bool { return it.key == "env" })
		return removeItem(data, top, i), true
	case contains(created, "env/"+key) || contains(created, "env"):
		return removeItem(data, ec, k), true
	}
	return data, false
}

// ParsePct checks an --autocompact value: a percentage 1-100.
func ParsePct(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	if err != nil || n < 1 || n > 100 {
		return 0, fmt.Errorf("--autocompact %q is not a percentage from 1 to 100", s)
	}
	return n, nil
}
