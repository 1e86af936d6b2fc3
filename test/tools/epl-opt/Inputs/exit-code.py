"""Runs a command and fails unless it exits with the expected code.

usage: exit-code.py EXPECTED COMMAND [ARGS...]
"""
import subprocess
import sys

expected = int(sys.argv[1])
result = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
if result.returncode != expected:
    sys.exit(f"{sys.argv[2]} exited with {result.returncode}, expected {expected}")
