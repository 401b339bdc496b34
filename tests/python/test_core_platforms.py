"""JAX's CUDA plugin kept quiet on a machine without GPUs."""

import os
import subprocess
import sys

import pytest

from kerasmesh.core import platforms

SHIM = os.path.join(os.path.dirname(__file__), "..", "..", "inst", "python")


def run(code, env):
    return subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=120)


def test_without_gpus_jax_starts_on_the_cpu_and_says_nothing():
    if not platforms._plugin_installed():
        pytest.skip("JAX's CUDA plugin not installed")
    if platforms.has_nvidia_driver():
        pytest.skip("this machine has an NVIDIA driver")
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    env["PYTHONPATH"] = SHIM
    code = ("from kerasmesh.core.platforms import cpu_without_gpus\n"
            "print(cpu_without_gpus())\n"
            "import jax\n"
            "print(jax.default_backend())\n")
    out = run(code, env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "cpu"]
    assert "plugin configuration error" not in out.stderr
    # Without it, JAX prints the plugin's traceback (what this prevents).
    plain = run("import jax\nprint(jax.default_backend())\n", env)
    assert "plugin configuration error" in plain.stderr


def test_a_platform_the_user_chose_is_kept(monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu,cuda")
    assert not platforms.cpu_without_gpus()
    assert os.environ["JAX_PLATFORMS"] == "cpu,cuda"


def test_with_an_nvidia_driver_nothing_is_chosen(monkeypatch):
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    monkeypatch.setattr(platforms, "has_nvidia_driver", lambda: True)
    monkeypatch.setattr(platforms, "jax_backend_started", lambda: False)
    monkeypatch.setattr(platforms, "_plugin_installed", lambda: True)
    assert not platforms.cpu_without_gpus()
    assert "JAX_PLATFORMS" not in os.environ
