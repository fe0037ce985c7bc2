"""examples/python/train_digits.py: scikit-learn's digits trained with fit
reaches 95% validation accuracy (and the same as PyTorch's loop, where
PyTorch is installed)."""
import os
import subprocess
import sys

import pytest

from conftest import EXAMPLES


def test_train_digits():
    pytest.importorskip("sklearn", reason="the digits come with scikit-learn")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(os.path.dirname(__file__), "..")] +
        [p for p in [env.get("PYTHONPATH")] if p])
    p = subprocess.run([sys.executable,
                        os.path.join(EXAMPLES, "python", "train_digits.py"),
                        "--quiet", "--device", "cpu"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    assert p.returncode == 0, p.stdout
    def is_number(text):
        try:
            float(text.replace(",", ""))
            return True
        except ValueError:
            return False
    # The result table's rows ("dlc 0.97 ..."), not the example's other
    # lines ("PyTorch is not installed: no comparison").
    rows = {line.split()[0]: line.split() for line in p.stdout.splitlines()
            if line.startswith(("dlc ", "PyTorch "))
            and is_number(line.split()[1])}
    assert float(rows["dlc"][1]) >= 0.95, p.stdout
    if "PyTorch" in rows:
        # Float rounding may flip a borderline image or two of the 359.
        assert abs(float(rows["PyTorch"][1]) - float(rows["dlc"][1])) \
            <= 2 / 359 + 1e-9, p.stdout
