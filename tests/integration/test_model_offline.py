"""The bundled all-MiniLM-L6-v2 loads from the installed package and embeds with no network: a fresh interpreter with
sockets refused, an empty environment and no HOME, so no cache or download can stand in. A real process, since a
clean start is the point."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.model

NO_NETWORK = r"""
import socket
def refuse(*a, **k):
    raise OSError("network access attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
import numpy as np
from suzent_cli.index.embed import load_embedder
e = load_embedder("all-MiniLM-L6-v2")
v = e.encode(["I drink green tea every morning", "Each morning I have a cup of green tea", "The invoice is overdue"])
assert v.shape == (3, 384) and e.dim == 384 and e.name == "all-MiniLM-L6-v2"
assert abs(float(np.linalg.norm(v[0])) - 1) < 1e-4
close, far = float(v[0] @ v[1]), float(v[0] @ v[2])
assert close > 0.7 and far < 0.3, (close, far)
print("ok", round(close, 3), round(far, 3))
"""


def test_bundled_model_loads_and_embeds_with_no_network():
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    r = subprocess.run([sys.executable, "-c", NO_NETWORK], capture_output=True, text=True, cwd=REPO, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok")
