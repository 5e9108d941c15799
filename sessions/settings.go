package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tidwall/gjson"
)

// DefaultCleanupDays is Claude Code's cleanupPeriodDays when no settings
// file sets it.
const DefaultCleanupDays = 30

// Retention is Claude Code's own retention sweep as configured: it deletes
// sessions whose mtime is older than Days days, at the start of a session.
type Retention struct {
	Days   float64 `json:"cleanup_period_days"`
	Source string  `json:"source"` // the settings file that set it, or "default"
	// Paused is set when a settings file cannot be read: Claude Code
	// then skips the sweep.
	Paused string `json:"paused,omitempty"`
}

// Period is the sweep's age limit.
func (r Retention) Period() time.Duration {
	return time.Duration(r.Days * 24 * float64(time.Hour))
}

// SweepAt is when the sweep deletes a session last written at mtime
// (zero when paused).
func (r Retention) SweepAt(mtime time.Time) time.Time {
	if r.Paused != "" {
		return time.Time{}
	}
	return mtime.Add(r.Period())
}

// ManagedSettings is the system-wide settings file, which overrides the
// user's (Linux path).
var ManagedSettings = "/etc/claude-code/managed-settings.json"

// ReadRetention reads cleanupPeriodDays from the user settings of a config
// dir (settings.json, then settings.local.json) and the managed settings,
// later files winning, as Claude Code merges them. Values below 1 are
// invalid there (the setting fails validation) and are ignored.
func ReadRetention(configDir string) Retention {
	r := Retention{Days: DefaultCleanupDays, Source: "default"}
	for _, path := range []string{
		filepath.Join(configDir, "settings.json"),
		filepath.Join(configDir, "settings.local.json"),
		ManagedSettings,
	} {
		data, err := os.ReadFile(path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				r.Paused = fmt.Sprintf("%s: %v", path, err)
			}
			continue
		}
		if !gjson.ValidBytes(data) {
			r.Paused = path + ": not valid JSON"
			continue
		}
		v := gjson.GetBytes(data, "cleanupPeriodDays")
		if v.Type == gjson.Number && v.Float() >= 1 {
			r.Days, r.Source = float64(int64(v.Float())), path
		}
	}
	return r
}
