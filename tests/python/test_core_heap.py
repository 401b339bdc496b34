"""Freed memory given back to the operating system. The glibc case runs in
a Python of its own, so that the pages it measures are only its own."""

import os
import platform
import subprocess
import sys
import textwrap

import pytest

from kerasmesh.core import heap

SHIM = os.path.join(os.path.dirname(__file__), "..", "..", "inst", "python")

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="malloc_trim() is glibc's")
def test_freed_pages_held_by_malloc_go_back():
    # 200 MB in 1 kB blocks, all freed but the last, which keeps glibc
    # from shrinking its heap by itself: the pages stay resident until
    # give_back().
    code = textwrap.dedent("""
        import ctypes
        from kerasmesh.core import heap
        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.free.argtypes = [ctypes.c_void_p]
        def resident():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        blocks = [libc.malloc(1000) for _ in range(200_000)]
        for b in blocks[:-1]:
            libc.free(b)
        held = resident()
        print(heap.give_back(), held - resident())
    """)
    out = subprocess.run([sys.executable, "-c", code],
                         env={**os.environ, "PYTHONPATH": SHIM},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    done, returned = out.stdout.split()
    assert done == "True"
    assert int(returned) > 100e6


def test_without_malloc_trim_nothing_is_done(monkeypatch):
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.give_back() is False
