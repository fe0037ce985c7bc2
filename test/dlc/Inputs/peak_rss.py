"""Runs a command and prints its exit status and whether its peak resident
memory stayed under a limit: peak_rss.py LIMIT_MB CMD ARGS...

Memory, not time: the kernel's count of the child's peak resident set
(getrusage RUSAGE_CHILDREN), the same on a quiet and a busy machine."""
import resource
import subprocess
import sys

limit_mb = float(sys.argv[1])
rc = subprocess.run(sys.argv[2:]).returncode
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"exit {rc}, peak resident memory "
      + ("under" if peak_mb < limit_mb else f"{peak_mb:.0f} MB, over")
      + f" {limit_mb:.0f} MB")
