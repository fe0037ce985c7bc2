"""train_compare.py HISTORY.json METRICS.jsonl: Python's fit history against
dlc train's log: the training losses bit for bit, the validation loss to
1e-12 (NumPy sums pairwise), the accuracy exactly."""
import json
import sys

h = json.load(open(sys.argv[1]))
log = [json.loads(line) for line in open(sys.argv[2])]
assert [r["epoch"] for r in log] == list(range(1, len(h["loss"]) + 1)), log
assert [r["loss"] for r in log] == h["loss"], (log, h)
for r, vl, va in zip(log, h["val_loss"], h["val_accuracy"]):
    assert abs(r["val_loss"] - vl) <= 1e-12 * abs(vl), (r, vl)
    assert r["val_accuracy"] == va, (r, va)
print("same history over", len(log), "epochs")
