"""`make lab` opens JupyterLab on the checkout with the course's kernel (started headless, then stopped)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""
    except (urllib.error.URLError, ConnectionError):     # not listening yet
        return 0, ""


def test_make_lab_serves_jupyterlab_on_the_checkout_with_the_course_kernel(tmp_path):
    port, token = free_port(), secrets.token_hex(16)
    args = (f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={port} --ServerApp.port_retries=0 "
            f"--IdentityProvider.token={token}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env.update(JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    log = (tmp_path / "lab.log").open("w")
    server = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while get(f"{base}/api/status?token={token}")[0] != 200:
            assert server.poll() is None, "make lab stopped:\n" + (tmp_path / "lab.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "JupyterLab did not answer:\n" + (tmp_path / "lab.log").read_text()
            time.sleep(0.5)

        status, page = get(f"{base}/lab?token={token}")
        assert status == 200 and "JupyterLab" in page

        specs = json.loads(get(f"{base}/api/kernelspecs?token={token}")[1])
        course = specs["kernelspecs"][specs["default"]]["spec"]
        assert specs["default"] == "python3" and course["language"] == "python"
        assert Path(course["argv"][0]) == ROOT / ".venv" / "bin" / "python", course["argv"]

        listing = json.loads(get(f"{base}/api/contents/notebooks?token={token}")[1])
        assert "00_why_order_matters.ipynb" in {item["name"] for item in listing["content"]}
    finally:
        stop(server)
        log.close()


def stop(server: subprocess.Popen) -> None:
    """End make and the JupyterLab it started (their own process group) and wait until both are gone."""
    for sig, seconds in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        deadline = time.monotonic() + seconds
        try:
            os.killpg(server.pid, sig)
            while time.monotonic() < deadline:
                server.poll()                      # reap make
                os.killpg(server.pid, 0)           # raises once no process of the group is left
                time.sleep(0.2)
        except ProcessLookupError:
            break
    server.wait()
