"""Runs a command; fails unless it exits as expected and prints a pattern.

usage: expect-exit.py CODE [--output REGEX] -- COMMAND [ARGS...]

CODE is an exit code, or "nonzero" for any failure that is not a crash
(a signal). With --output, the command's stdout+stderr must match REGEX.
"""
import re
import subprocess
import sys

args = sys.argv[1:]
code = args.pop(0)
pattern = None
if args and args[0] == "--output":
    pattern = args[1]
    args = args[2:]
if args and args[0] == "--":
    args = args[1:]

result = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL)
output = result.stdout.decode(errors="replace")
rc = result.returncode
ok = (rc > 0) if code == "nonzero" else (rc == int(code))
if not ok:
    sys.stdout.write(output)
    sys.exit(f"{args[0]} exited with {rc}, expected {code}")
if pattern and not re.search(pattern, output):
    sys.stdout.write(output)
    sys.exit(f"{args[0]}: output does not match {pattern!r}")
