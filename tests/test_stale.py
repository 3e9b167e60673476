"""Staleness of committed outputs: a hand-made sidecar is current until its library, code, data or parameters change."""
from __future__ import annotations

import json
import subprocess

import nbformat
import pytest

from nli_lib import stale
from nli_lib.config import REPO_ROOT
from nli_lib.data.fetch import load_manifest
from nli_lib.outputs import Outputs, notebook_lib_hash
from nli_lib.profile import load_profile
from nli_lib.provenance import code_hash, fixtures_hash

NOTEBOOK = "00_data_and_statistics"  # a real notebook of the checkout


def write_nb(path, code: str) -> None:
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), path)


def current_sidecar() -> dict:
    """A sidecar exactly as a full offline run of NOTEBOOK would write it from the sources now."""
    offline = load_profile("offline")
    key = "taxinli/taxinli10k"
    return {"kind": "table", "name": "t", "ref": "companion-table-1", "notebook": NOTEBOOK,
            "params": {**offline.params(), "quick": False, "seed": offline.seed, "profile_name": "offline"},
            "git_commit": "uncommitted", "nli_lib_hash": notebook_lib_hash(NOTEBOOK),
            "fixtures_sha256": fixtures_hash(),
            "code_sha256": code_hash(REPO_ROOT / "notebooks" / f"{NOTEBOOK}.ipynb"),
            "data_sha256": {key: load_manifest()[key].sha256}, "models": [], "seed": offline.seed, "tier": "offline"}


def write_outputs(root, *sidecars: dict) -> None:
    for i, meta in enumerate(sidecars):
        folder = root / ("tables" if meta["kind"] == "table" else "figures") / meta["notebook"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"out-{i}.json").write_text(json.dumps(meta))


@pytest.fixture
def small(tmp_path):
    """Sources of a toy checkout: one notebook, a two-file manifest, one profile."""
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    write_nb(notebooks / "00_x.ipynb", "x = 1")
    now = stale.Sources(lib="L1", fixtures="F1", manifest={"snli/dev": "s1", "online/big": ""}, notebooks=notebooks,
                        repo=tmp_path, profiles={"offline": {"seed": 0, "quick": False, "profile_name": "offline"}})
    meta = {"kind": "table", "notebook": "00_x", "nli_lib_hash": "L1", "fixtures_sha256": "F1",
            "code_sha256": code_hash(notebooks / "00_x.ipynb"),
            "data_sha256": {"snli/dev": "s1", "online/big": "pinned"}, "git_commit": "uncommitted",
            "params": {"seed": 0, "quick": False, "profile_name": "offline"}}
    return now, meta


def test_a_current_sidecar_is_not_stale(small):
    now, meta = small
    assert stale.reasons(meta, now) == ()  # an online-only file (no sha256 in the manifest) is not compared


@pytest.mark.parametrize("change, expected", [
    (lambda m, n: m.update(nli_lib_hash="L0"), "nli_lib L0 → L1"),
    (lambda m, n: m.update(fixtures_sha256="F0"), "fixtures F0 → F1"),  # a gold set or the verifier changed
    (lambda m, n: m.pop("fixtures_sha256"), "fixtures unknown"),
    (lambda m, n: write_nb(n.notebooks / "00_x.ipynb", "x = 2"), "code changed (recorded)"),
    (lambda m, n: n.manifest.update({"snli/dev": "s2"}), "data snli/dev changed"),
    (lambda m, n: n.manifest.pop("snli/dev"), "data snli/dev left the manifest"),
    (lambda m, n: n.profiles["offline"].update(seed=1), "params seed 0 → 1"),
    (lambda m, n: m["params"].update(profile_name="mine"), "params unknown (profile 'mine' is not a shipped profile)"),
    (lambda m, n: (n.notebooks / "00_x.ipynb").unlink(), "notebook 00_x is gone"),
    (lambda m, n: m.update(code_sha256=None, git_commit="ab" * 20 + "-dirty"), "code unknown"),
])
def test_each_changed_input_makes_it_stale(small, change, expected):
    now, meta = small
    change(meta, now)
    found = stale.reasons(meta, now)
    assert len(found) == 1 and found[0].startswith(expected), found


def test_a_sidecar_without_code_hash_is_compared_at_its_commit(tmp_path):
    """Sidecars written before `code_sha256` existed: the notebook at their (clean) git commit."""
    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True,
                                           text=True).stdout.strip()
    git("init", "-q")
    (tmp_path / "notebooks").mkdir()
    write_nb(tmp_path / "notebooks" / "00_x.ipynb", "x = 1")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "nb")
    meta = {"notebook": "00_x", "nli_lib_hash": "L", "fixtures_sha256": "F", "git_commit": git("rev-parse", "HEAD"),
            "data_sha256": {},
            "params": {"profile_name": "offline", "quick": False}}
    def now():
        return stale.Sources(lib="L", fixtures="F", manifest={}, notebooks=tmp_path / "notebooks", repo=tmp_path,
                                    profiles={"offline": {"profile_name": "offline", "quick": False}})
    assert stale.reasons(meta, now()) == ()
    write_nb(tmp_path / "notebooks" / "00_x.ipynb", "x = 2")
    assert stale.reasons(meta, now()) == (f"code changed (at {meta['git_commit']})",)


def test_check_mode_fails_only_when_something_is_stale(tmp_path, capsys):
    """Against the real checkout: a hand-made current sidecar passes --check; one changed input fails it, and
    the report mode lists it without failing."""
    write_outputs(tmp_path, current_sidecar())
    assert stale.main(["--check", "--root", str(tmp_path)]) == 0
    assert "all 1 outputs" in capsys.readouterr().out

    old = {**current_sidecar(), "kind": "figure", "nli_lib_hash": "000000000000"}
    write_outputs(tmp_path, current_sidecar(), old)
    assert stale.main(["--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"figures/{NOTEBOOK}/out-1.png" in out and "nli_lib 000000000000 →" in out and "1 of 2 outputs" in out
    assert "report only" in out
    assert stale.main(["--check", "--root", str(tmp_path)]) == 1


def test_nothing_to_check_is_not_a_pass(tmp_path, capsys):
    assert stale.main(["--root", str(tmp_path)]) == 0
    assert stale.main(["--check", "--root", str(tmp_path)]) == 1
    assert "nothing to compare" in capsys.readouterr().err


def test_report_on_the_committed_outputs_never_fails(capsys):
    """What CI runs (.ci/run): the committed tables and figures, report only."""
    assert stale.main([]) == 0
    out = capsys.readouterr().out
    assert "outputs under" in out
    assert "python -m nli_lib.stale" in (REPO_ROOT / ".ci" / "run").read_text()


def test_sidecars_record_the_notebook_code(tmp_path, monkeypatch):
    nb_path = tmp_path / "07_demo.ipynb"
    write_nb(nb_path, "y = 3")
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb_path))
    import matplotlib.pyplot as plt
    import pandas as pd

    out = Outputs("07_demo", params={"quick": True})
    out.table(pd.DataFrame({"a": [1]}), "t", ref="companion-table-7")
    fig = plt.figure()
    out.figure(fig, "f", ref="companion-fig-7")
    plt.close(fig)
    out.publish()
    for kind, name in (("tables", "t"), ("figures", "f")):
        side = tmp_path / "out" / kind / "07_demo" / f"{name}.json"
        assert json.loads(side.read_text())["code_sha256"] == code_hash(nb_path)
