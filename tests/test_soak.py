"""Soak: an LLM notebook run by the runner against a misbehaving endpoint (`nli_lib.llm.faults`) with a mix of
faults. It must end with the failures counted and named, nothing published, no process left behind, an intact
call cache and no API key stored."""
from __future__ import annotations

import os
import sqlite3
import uuid
from pathlib import Path

import psutil
import pytest

from kit import skip_or_fail

pytestmark = pytest.mark.slow

MIX = {"ok": 0.5, "500": 0.15, "429": 0.1, "bad_json": 0.1, "empty_choices": 0.1, "huge": 0.05}
KEY = "sk-soak-0123456789abcdef"


def marked(mark: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.pid != os.getpid() and proc.environ().get("NLI_SOAK_MARK") == mark:
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def test_an_llm_notebook_against_a_fault_mix_fails_cleanly(tmp_path, monkeypatch, capsys):
    pytest.importorskip("papermill")
    if not os.environ.get("NLI_DATA_MIRROR"):
        skip_or_fail("NLI_DATA_MIRROR not set: the soak runs notebook 10 on the offline data mirror")
    from nli_lib import runner
    from nli_lib.config import cache_dir
    from nli_lib.llm.faults import FaultyEndpoint

    mark = uuid.uuid4().hex
    monkeypatch.setenv("NLI_SOAK_MARK", mark)  # inherited by the runner's workers and kernels
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    runs = tmp_path / "runs"
    with FaultyEndpoint(mix=MIX, seed=3, lifetime_s=900) as endpoint:
        profile = tmp_path / "soak.yaml"
        profile.write_text(
            "tier: offline\nseed: 0\nmax_failure_rate: 0.02\nllm:\n"
            f"  base_url: {endpoint.url}\n  model: soak\n  max_tokens: 64\n  timeout_s: 5\n  max_retries: 2\n"
            "  retry_base_s: 0.01\n  retry_max_s: 0.05\n  concurrency: 4\n")
        rc = runner.main(["--quick", "--only", "10", "--profile", str(profile), "--runs-dir", str(runs)])
        sent = endpoint.count()
    out = capsys.readouterr()
    printed = out.out + out.err
    assert rc != 0 and "FAILED: notebook 10_atoms_decomposition" in printed
    assert sent > 0 and "soak @ " in printed and "requests failed" in printed  # the failures counted and named
    assert not (runs / "offline-quick" / "outputs" / "tables" / "10_atoms_decomposition").exists()  # unpublished
    assert not marked(mark), "processes left behind"
    db = cache_dir() / "calls.sqlite"
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert KEY.encode() not in Path(db).read_bytes()
