"""Runs a command; fails unless it exits as expected and prints a pattern.

usage: expect-exit.py CODE [--output REGEX] [--within SECONDS] -- COMMAND [ARGS...]

CODE is an exit code, or "nonzero" for any failure that is not a crash
(a signal). With --output, the command's stdout+stderr must match REGEX.
With --within, the command (and every process it started) must end within
SECONDS; past them, all of them are killed and the check fails.
"""
import os
import re
import signal
import subprocess
import sys
import time

args = sys.argv[1:]
code = args.pop(0)
pattern = None
within = None
if args and args[0] == "--output":
    pattern = args[1]
    args = args[2:]
if args and args[0] == "--within":
    within = float(args[1])
    args = args[2:]
if args and args[0] == "--":
    args = args[1:]

start = time.monotonic()
# A session of its own, so that a hang is ended with all it started
# (an mpirun's ranks, stopped ones included).
proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL, start_new_session=True)
try:
    out, _ = proc.communicate(timeout=within)
except subprocess.TimeoutExpired:
    os.killpg(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate()
    sys.stdout.write(out.decode(errors="replace"))
    sys.exit(f"{args[0]} still ran after {within} s")
output = out.decode(errors="replace")
rc = proc.returncode
if within is not None:
    # Ranks the launcher left behind (a stopped one) count as a hang too.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
# Debian's Open MPI 4.1 mpirun now and then crashes in its own teardown
# (PMIx_server_finalize, after its ranks have exited and it has reported
# them): the ranks' failure is what is checked, not the launcher's.
launcher_crash = (rc < 0 and os.path.basename(args[0]) in ("mpirun", "mpiexec", "orterun") and
                  "Process received signal" in output and
                  ("orte_finalize" in output or "PMIx_server_finalize" in output))
if launcher_crash and code == "nonzero":
    rc = 1
ok = (rc > 0) if code == "nonzero" else (rc == int(code))
if not ok:
    sys.stdout.write(output)
    sys.exit(f"{args[0]} exited with {rc}, expected {code}")
if pattern and not re.search(pattern, output):
    sys.stdout.write(output)
    sys.exit(f"{args[0]}: output does not match {pattern!r}")
