"""Kills (SIGKILL) or stops (SIGSTOP: a rank that hangs) rank 1 of a 2-rank
data-parallel training job once it trains and checks that the job ends with
a non-zero exit status within 60 s: mpirun ends a job whose rank died;
a rank that hangs makes rank 0's all-reduce time out (DLC_COMM_TIMEOUT=5)
with an error naming it, and rank 0 ends the job.

usage: kill_rank.py kill|stop WORKDIR "MPIRUN..." DLC MODEL DATA_DIR
"""
import os
import shlex
import subprocess
import sys
import time

signal, work, mpirun, dlc, model, data = sys.argv[1:7]
os.makedirs(work, exist_ok=True)
step = (f"{dlc} run {model} --train --data-parallel --seed 0 "
        f"--input x={data}/x.npy --input y={data}/y.npy --steps 100000000")
# Rank 1 runs the step in the background and kills or stops it a second
# after rank 0 has compiled the step (rank 0's "using device" line, which
# it also writes to a file; a fixed delay from the start raced the JIT on a
# busy machine), or after 50 s.
sig = "-KILL" if signal == "kill" else "-STOP"
ready = os.path.join(work, "rank0.log")
if os.path.exists(ready):
    os.remove(ready)
wait = (f'i=0; until grep -q "using device" {shlex.quote(ready)} 2>/dev/null '
        f'|| [ $i -ge 500 ]; do sleep 0.1; i=$((i+1)); done; sleep 1')
script = (f'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then {step} & {wait}; '
          f'kill {sig} $!; wait; exit 9; '
          f'else {{ {step} 2>&1; echo $? > rank0.status; }} '
          f'| tee {shlex.quote(ready)}; exit $(cat rank0.status); fi')
cmd = shlex.split(mpirun) + ["-np", "2", "sh", "-c", script]
env = dict(os.environ, DLC_COMM_TIMEOUT="5")
start = time.monotonic()
try:
    proc = subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=60)
except subprocess.TimeoutExpired:
    sys.exit("FAIL: the job still ran 60 s after rank 1 was killed")
elapsed = time.monotonic() - start
out = proc.stdout.decode(errors="replace")
if proc.returncode == 0:
    sys.exit("FAIL: the job exited 0 although rank 1 was killed\n" + out)
# Both ranks were training when rank 1 died (not a job that never ran).
if elapsed < 1 or "not found" in out or "using device" not in out:
    sys.exit("FAIL: the job did not train before rank 1 was killed\n" + out)
if signal == "stop" and "an all-reduce waited 5 s for the other ranks" not in out:
    sys.exit("FAIL: rank 0 did not time out\n" + out)
print(f"job ended with status {proc.returncode} after {elapsed:.1f} s")
