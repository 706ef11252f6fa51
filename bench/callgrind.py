"""Instructions a command executes, counted by valgrind's callgrind (repeatable where timings are
noisy); shared by the count_*_instructions scripts."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def callgrind_total(cmd: list[str]) -> int:
    """Instructions collected over the whole run of `cmd`, with this checkout's fastomkl."""
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out"]
                             + cmd, capture_output=True, text=True, env=env)
    match = re.search(r"Collected : (\d+)", out.stderr)
    if not match:
        raise RuntimeError(out.stderr[-2000:])
    return int(match.group(1))
