package install

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MCPName is the name ccm's MCP server is registered under.
const MCPName = "ccm"

// MCPConfigPath is the file that holds Claude Code's user-scope MCP
// servers (its "mcpServers"). The client reads $CLAUDE_CONFIG_DIR/.claude.json
// when that variable is set, else ~/.claude.json beside ~/.claude; envSet
// says whether it is set (a config dir other than ~/.claude counts as set:
// the client must be run with it).
func MCPConfigPath(claudeDir, home string, envSet bool) string {
	if !envSet && home != "" && filepath.Clean(claudeDir) == filepath.Join(home, ".claude") {
		return filepath.Join(home, ".claude.json")
	}
	return filepath.Join(claudeDir, ".claude.json")
}

// mcpServer is the registration's value, laid out in the file's style.
func mcpServer(exe string, st style, indent string) string {
	in := indent + st.unit
	fields := []string{
		quote("type") + colon(st) + quote("stdio"),
		quote("command") + colon(st) + quote(exe),
		quote("args") + colon(st) + "[" + quote("mcp") + "]",
		quote("env") + colon(st) + "{}",
	}
	sep := ","
	var b strings.Builder
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(nlIndent(st, in))
		b.WriteString(f)
	}
	b.WriteString(nlIndent(st, indent))
	b.WriteString("}")
	return b.String()
}

// SetMCP registers ccm's MCP server (exe mcp) in a user config document,
// editing only those bytes. created lists what it added ("mcpServers" or
// "mcpServers/ccm"); prev is the raw previous value when a server of that
// name was there.
func SetMCP(data []byte, exe string) (out []byte, created []string, prev string, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
		created = append(created, "file")
	}
	if err := validObject(data); err != nil {
		return nil, nil, "", err
	}
	st := detectStyle(data)
	top, _ := find(data)
	servers, ok := top.member("mcpServers")
	if ok && data[servers.valStart] != '{' {
		return nil, nil, "", fmt.Errorf("%w: \"mcpServers\" is not an object", ErrInvalidSettings)
	}
	if !ok {
		ind := childIndent(data, top, st)
		raw := quote("mcpServers") + colon(st) + "{" + nlIndent(st, ind+st.unit) + quote(MCPName) + colon(st) +
			mcpServer(exe, st, ind+st.unit) + nlIndent(st, ind) + "}"
		return appendItem(data, top, raw, st), append(created, "mcpServers"), "", nil
	}
	sc := parseContainer(data, servers.valStart)
	ind := childIndent(data, sc, st)
	val := mcpServer(exe, st, ind)
	if it, ok := sc.member(MCPName); ok {
		old := string(data[it.valStart:it.end])
		if old == val {
			return data, created, "", nil
		}
		return splice(data, it.valStart, it.end, val), created, old, nil
	}
	return appendItem(data, sc, quote(MCPName)+colon(st)+val, st), append(created, "mcpServers/"+MCPName), "", nil
}

// UnsetMCP undoes SetMCP: it removes the registration (and mcpServers when
// SetMCP added that and nothing else is in it), or puts prev back.
func UnsetMCP(data []byte, created []string, prev string) ([]byte, bool) {
	if validObject(data) != nil {
		return data, false
	}
	top, _ := find(data)
	servers, ok := top.member("mcpServers")
	if !ok || data[servers.valStart] != '{' {
		return data, false
	}
	sc := parseContainer(data, servers.valStart)
	k := slices.IndexFunc(sc.items, func(it item) bool { return it.key == MCPName })
	if k < 0 {
		return data, false
	}
	switch {
	case prev != "":
		it := sc.items[k]
		return splice(data, it.valStart, it.end, prev), true
	case contains(created, "mcpServers") && len(sc.items) == 1:
		i := slices.IndexFunc(top.items, func(it item) bool { return it.key == "mcpServers" })
		return removeItem(data, top, i), true
	case contains(created, "mcpServers/"+MCPName) || contains(created, "mcpServers"):
		return removeItem(data, sc, k), true
	}
	return data, false
}

// InstallMCP registers `exe mcp` as the user-scope MCP server "ccm" in
// path (Claude Code's .claude.json), backing the file up first and
// recording what it added, so that UninstallMCP removes exactly that.
func InstallMCP(o Options, path string) (Result, error) {
	data, mode, err := readConfig(path)
	if err != nil {
		return Result{}, err
	}
	out, created, prev, err := SetMCP(data, o.Exe)
	if err != nil {
		return Result{}, settingsError(path, err)
	}
	r := Result{Settings: path, Content: out, Changed: !bytes.Equal(out, data)}
	if r.Changed {
		r.Changes = append(r.Changes, fmt.Sprintf("register the MCP server %q (%s mcp) in %s", MCPName, o.Exe, path))
	}
	if o.DryRun || !r.Changed {
		return r, nil
	}
	if r.Backup, err = backup(o, path, data); err != nil {
		return r, err
	}
	if err := writeSettings(path, out, mode); err != nil {
		return r, err
	}
	err = updateRecord(o.Home, func(rec *record) {
		e := rec.Files[path]
		if prev != "" && e.MCPPrev == "" && !contains(e.Created, "mcpServers") && !contains(e.Created, "mcpServers/"+MCPName) {
			e.MCPPrev = prev // the user's own server of that name, from before ccm
		}
		e.Created = union(e.Created, created)
		rec.Files[path] = e
	})
	return r, err
}

// UninstallMCP removes the registration InstallMCP recorded in path. A
// file ccm never registered the server in is left alone.
func UninstallMCP(o Options, path string) (Result, error) {
	rec, _ := loadRecord(o.Home)
	entry, known := rec.Files[path]
	r := Result{Settings: path}
	if !known {
		return r, nil
	}
	data, mode, err := readConfig(path)
	if err != nil {
		return r, err
	}
	out, ok := UnsetMCP(data, entry.Created, entry.MCPPrev)
	r.Content, r.Changed = out, ok && !bytes.Equal(out, data)
	if r.Changed {
		r.Changes = append(r.Changes, fmt.Sprintf("remove the MCP server %q from %s", MCPName, path))
	}
	if o.DryRun {
		return r, nil
	}
	if r.Changed {
		if r.Backup, err = backup(o, path, data); err != nil {
			return r, err
		}
		if contains(entry.Created, "file") && isEmptyObject(out) {
			if err := os.Remove(path); err != nil {
				return r, err
			}
			r.Changes = append(r.Changes, "remove "+path+" (created by ccm install)")
		} else if err := writeSettings(path, out, mode); err != nil {
			return r, err
		}
	}
	return r, updateRecord(o.Home, func(rec *record) { delete(rec.Files, path) })
}

// readConfig reads a JSON config file as readSettings does (symlinks
// followed by the caller's path; missing is empty; read-only refused).
func readConfig(path string) ([]byte, os.FileMode, error) {
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return nil, 0o600, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if fi.IsDir() {
		return nil, 0, fmt.Errorf("%s is a directory", path)
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return nil, 0, fmt.Errorf("%s is read-only; make it writable to let ccm change it", path)
	}
	data, err := os.ReadFile(path)
	return data, fi.Mode().Perm(), err
}
