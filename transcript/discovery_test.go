package transcript

import "testing"

// TestProjectDirName: the folder names Claude Code gives working
// directories. The non-ASCII one is what Claude Code 2.1.330 made for
// /tmp/cafétest😀/project (scripts/realclient, one '-' per UTF-16 code
// unit); the Windows ones follow its code (every non-alphanumeric code
// unit becomes '-', drive colon and backslashes included). A Linux path
// and a Windows path encode the same whichever system ccm runs on.
func TestProjectDirName(t *testing.T) {
	t.Setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "")
	for _, c := range []struct{ cwd, want string }{
		{"/Users/alex/workspace/cli", "-Users-alex-workspace-cli"},
		{"/Users/alex/workspace/cli/.worktrees/1", "-Users-alex-workspace-cli--worktrees-1"},
		{"/tmp/cafétest😀/project", "-tmp-caf-test---project"},
		{`C:\Users\me\proj`, "C--Users-me-proj"},
		{`c:\Users\José\my proj`, "c--Users-Jos--my-proj"},
		{`\\server\share\proj`, "--server-share-proj"},
		{"C:/Users/me/proj", "C--Users-me-proj"},
		{"/tmp/a\xffb", "-tmp-a-b"},
	} {
		if got := ProjectDirName(c.cwd); got != c.want {
			t.Errorf("ProjectDirName(%q) = %q, want %q", c.cwd, got, c.want)
		}
	}
}
