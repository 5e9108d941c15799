// Stats: this file sums a listing up for ccm cache stats.

package ccm

import (
	"time"
)

// Stats summarizes a listing.
type Stats struct {
	Items             int       `json:"items"`
	DiskBytes         int64     `json:"bytes_on_disk"`
	BytesUncompressed int64     `json:"bytes_uncompressed"`
	Ratio             float64   `json:"ratio"` // uncompressed / on disk
	Unpinned          int       `json:"unpinned"`
	Soft              int       `json:"pinned_soft"`
	Hard              int       `json:"pinned_hard"`
	OldestAccess      time.Time `json:"oldest_access,omitzero"`
	NewestAccess      time.Time `json:"newest_access,omitzero"`
	Accesses          int64     `json:"total_accesses"`
	NoMeta            int       `json:"blobs_without_metadata"`
	Orphans           int       `json:"metadata_without_blob"`
	BadMeta           int       `json:"unreadable_metadata"`
	Temps             int       `json:"leftover_temp_files"`
	Packs             int       `json:"packs"`
	Packed            int       `json:"blobs_in_packs"`
	PackDeadBytes     int64     `json:"pack_bytes_unused"` // a prune repacks packs with many
	MissingPacks      int       `json:"missing_packs"`
	BadIndexLines     int       `json:"unreadable_index_lines"`
}

// Summarize computes Stats over a listing.
func Summarize(l *Listing) Stats {
	var st Stats
	st.Temps = len(l.Temps)
	st.Packs, st.BadIndexLines = len(l.Packs), len(l.IndexErrors)
	for _, p := range l.Packs {
		st.PackDeadBytes += p.Dead()
		if p.Size < 0 {
			st.MissingPacks++
		}
	}
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.Orphan() {
			st.Orphans++
			continue
		}
		st.Items++
		st.DiskBytes += e.DiskBytes()
		if e.Files[0].Packed {
			st.Packed++
		}
		if e.MetaMissing {
			st.NoMeta++
		}
		if e.Meta == nil {
			st.BadMeta++
			continue
		}
		m := e.Meta
		st.BytesUncompressed += m.BytesUncompressed
		st.Accesses += m.AccessCount
		switch m.Pinned.Level {
		case PinHard:
			st.Hard++
		case PinSoft:
			st.Soft++
		default:
			st.Unpinned++
		}
		if t := m.LastAccessAt; !t.IsZero() {
			if st.OldestAccess.IsZero() || t.Before(st.OldestAccess) {
				st.OldestAccess = t
			}
			if t.After(st.NewestAccess) {
				st.NewestAccess = t
			}
		}
	}
	if st.DiskBytes > 0 {
		st.Ratio = float64(st.BytesUncompressed) / float64(st.DiskBytes)
	}
	return st
}
