package fsutil

import "golang.org/x/sys/windows"

// noPOSIXRename tells a Windows without the POSIX-semantics rename:
// Wine (8.0, Debian 12's, runs the Windows tests in CI) answers
// FileRenameInfoEx with ERROR_INVALID_PARAMETER. Wine is told by the
// function only its ntdll exports.
func noPOSIXRename() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
