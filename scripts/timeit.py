#!/usr/bin/env python3
"""timeit.py RUNS [--prep SHELL] [--fresh VAR=DIR] [--ok CODES] -- CMD...:
best-of-RUNS wall time in seconds and that run's peak RSS in KB, measured
with os.wait4 (exact per child, no 10 ms granularity). --prep runs before
each run, untimed. --fresh sets $VAR to a new directory name under DIR for
each run (nothing is deleted)."""
import os, subprocess, sys, time

args = sys.argv[1:]
runs = int(args.pop(0))
prep, ok, fresh = None, {0}, None
while args and args[0] != "--":
    opt = args.pop(0)
    if opt == "--prep":
        prep = args.pop(0)
    elif opt == "--fresh":
        fresh = args.pop(0).split("=", 1)
    elif opt == "--ok":
        ok = {int(c) for c in args.pop(0).split(",")}
args.pop(0)
best = None
env = dict(os.environ)
for i in range(runs):
    if prep:
        subprocess.run(prep, shell=True, check=True)
    if fresh:
        env[fresh[0]] = os.path.join(fresh[1], "%d-%d" % (time.time_ns(), i))
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    t = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        sys.exit("failed with exit %d: %s" % (code, " ".join(args)))
    if best is None or t < best[0]:
        best = (t, ru.ru_maxrss)
print("%.4f %d" % best)
