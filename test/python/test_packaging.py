"""pip installs the package from python/ (no network: the build backend is
Debian's setuptools) and the installed copy finds the libraries through the
environment."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_target(tmp_path: Path) -> None:
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"],
                         capture_output=True)
    if pip.returncode != 0:
        pytest.skip("pip is not installed")
    target = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation",
         "--no-deps", "--no-index", "--target", str(target),
         str(ROOT / "python")], capture_output=True, text=True, timeout=300,
        cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (target / "ggemm" / "compat" / "deep_gemm.py").is_file()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GGEMM_")}
    env["PYTHONPATH"] = str(target)
    env["GGEMM_PREFIX"] = str(tmp_path / "prefix")
    script = ("import ggemm, ggemm.compat.flashinfer, ggemm.catalog\n"
              "from ggemm.runtime import load_library, RuntimeLibraryNotFound\n"
              "print(ggemm.__file__)\n"
              "try:\n    load_library()\n"
              "except RuntimeLibraryNotFound as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", script], env=env,
                         capture_output=True, text=True, timeout=60,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    first, message = out.stdout.splitlines()[:2]
    assert first.startswith(str(target))
    # Nothing installed there: the error lists the install prefix it tried.
    assert str(tmp_path / "prefix" / "lib" / "libggemm_runtime.so") in message
