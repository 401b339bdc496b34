"""Small made-up source trees, for the tests that show a rule about the
repository's files failing (test_imports.py, test_docs.py)."""

import os


def write_tree(root, files):
    """Write `files` ({path below `root`: text}) under `root`."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
