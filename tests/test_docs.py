"""docs/commands.md and docs/flags.md are generated from the binary (tools/gen-docs.py);
this fails when a command or flag changed and the docs were not regenerated."""

import subprocess
import sys

import pytest

from conftest import REPO_ROOT, damselfly_binary


@pytest.mark.damselfly_only
def test_generated_docs_are_current():
    result = subprocess.run(
        [sys.executable, f"{REPO_ROOT}/tools/gen-docs.py", "--check", "--binary", damselfly_binary()],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr + "\nrun: tools/gen-docs.py"
