package compress

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"ccm/internal/fsutil"
)

// builtinDict is agentihooks' preprocessor's data/abbreviations.json
// (_version 1, 54 entries), unchanged. It is built on first use, not at
// package initialisation, which every `ccm hook` process pays for.
var builtinDict = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"authentication": "auth", "authorization": "authz", "configuration": "cfg",
		"environment": "env", "repository": "repo", "container": "ctr",
		"deployment": "deploy", "infrastructure": "infra", "administrator": "admin",
		"management": "mgmt", "documentation": "docs", "dependency": "dep",
		"dependencies": "deps", "implementation": "impl", "initialization": "init",
		"namespace": "ns", "kubernetes": "k8s", "application": "app",
		"applications": "apps", "services": "svcs", "service": "svc",
		"database": "db", "directory": "dir", "temporary": "tmp",
		"production": "prod", "development": "dev", "staging": "stg",
		"connection": "conn", "permission": "perm", "permissions": "perms",
		"message": "msg", "messages": "msgs", "password": "pwd",
		"timeout": "tmo", "request": "req", "response": "resp",
		"function": "fn", "parameter": "param", "parameters": "params",
		"argument": "arg", "arguments": "args", "variable": "var",
		"variables": "vars", "certificate": "cert", "certificates": "certs",
		"specification": "spec", "specifications": "specs", "operation": "op",
		"operations": "ops", "information": "info", "distributed": "distrib",
		"executable": "exec", "automatic": "auto", "automatically": "auto",
	}
})

// BuiltinDictSize is the number of entries of the built-in dictionary.
const BuiltinDictSize = 54

// Dict is an abbreviation dictionary: lower-case words or phrases mapped to
// their short forms.
type Dict struct {
	entries  map[string]string
	maxWords int    // longest key, in words
	sum      string // fingerprint, part of cache keys
}

// BuiltinDict returns the built-in 54-entry dictionary.
func BuiltinDict() *Dict { return newDict(builtinDict(), "builtin-v1") }

func newDict(m map[string]string, tag string) *Dict {
	d := &Dict{entries: make(map[string]string, len(m)), maxWords: 1}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		k = strings.ToLower(strings.Join(strings.Fields(k), " "))
		if k == "" || v == "" {
			continue
		}
		d.entries[k] = v
		keys = append(keys, k)
		if n := strings.Count(k, " ") + 1; n > d.maxWords {
			d.maxWords = n
		}
	}
	sort.Strings(keys)
	h := sha256.New()
	h.Write([]byte(tag))
	for _, k := range keys {
		fmt.Fprintf(h, "\x00%s\x00%s", k, d.entries[k])
	}
	d.sum = hex.EncodeToString(h.Sum(nil))[:16]
	return d
}

// Len returns the number of entries.
func (d *Dict) Len() int { return len(d.entries) }

// Lookup returns the abbreviation of a lower-case word or phrase.
func (d *Dict) Lookup(key string) (string, bool) {
	v, ok := d.entries[key]
	return v, ok
}

// Fingerprint identifies the dictionary's content, for caches.
func (d *Dict) Fingerprint() string { return d.sum }

// LoadDict returns the built-in dictionary with the entries of a user file
// (CONTEXT_REFRESH_ABBREV_FILE) merged over it; the user's entries win. The
// file is JSON with an "entries" object of string values, as in the earlier
// tool. Unlike agentihooks, a file that cannot be read or is not such
// JSON is an error: the caller decides whether to log it and go on with the
// built-in dictionary.
// maxDictFile bounds an abbreviation file.
const maxDictFile = 16 << 20

func LoadDict(path string) (*Dict, error) {
	if path == "" {
		return BuiltinDict(), nil
	}
	data, err := fsutil.ReadRegular(path, maxDictFile)
	if err != nil {
		return BuiltinDict(), fmt.Errorf("abbreviation file: %w", err)
	}
	if !gjson.ValidBytes(data) {
		return BuiltinDict(), fmt.Errorf("abbreviation file %s: not valid JSON", path)
	}
	entries := gjson.GetBytes(data, "entries")
	if !entries.IsObject() {
		return BuiltinDict(), fmt.Errorf("abbreviation file %s: no \"entries\" object", path)
	}
	m := make(map[string]string, len(builtinDict())+8)
	for k, v := range builtinDict() {
		m[k] = v
	}
	var bad string
	entries.ForEach(func(k, v gjson.Result) bool {
		if v.Type != gjson.String {
			bad = k.String()
			return false
		}
		m[strings.ToLower(k.String())] = v.String()
		return true
	})
	if bad != "" {
		return BuiltinDict(), fmt.Errorf("abbreviation file %s: entry %q is not a string", path, bad)
	}
	return newDict(m, "user-v1"), nil
}
