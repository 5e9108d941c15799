package migrate

import (
	"os"
	"strconv"
	"sync"
)

// crashAt is the step of a migration or an undo at which the process
// kills itself as kill -9 would, from CCM_MIGRATE_CRASH_AT: the tests
// kill a run at every step in turn this way. 0 (unset) never.
var crashAt = sync.OnceValue(func() int {
	n, _ := strconv.Atoi(os.Getenv("CCM_MIGRATE_CRASH_AT"))
	return n
})

// crashSteps counts the steps passed.
var crashSteps int

// crashPoint ends a step: the journal says what was done up to here.
func crashPoint() {
	crashSteps++
	if n := crashAt(); n > 0 && crashSteps == n {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill() // SIGKILL: no deferred function runs, as in a real kill
		}
		select {} // the signal is on its way
	}
}
