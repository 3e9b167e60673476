"""The papermill runner: order, skipping unchanged notebooks, --force, failure reporting."""
from __future__ import annotations

import json

import nbformat
import pytest

from nli_lib import runner

pytest.importorskip("papermill")


def write_nb(path, code: str):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('tier = "offline"\nseed = 0\nquick = False\nprofile_name = "offline"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# demo"), params, nbformat.v4.new_code_cell(code)]
    nbformat.write(nb, path)


@pytest.fixture
def nb_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    # pin the library hash: an edit of nli_lib during the test (by a developer) must not look like a change
    monkeypatch.setattr(runner, "nli_lib_hash", lambda: "pinned-for-test")
    folder = tmp_path / "notebooks"
    folder.mkdir()
    write_nb(folder / "01_first.ipynb", "import json, os\nprint('quick', quick)\n"
             "open(os.environ['NLI_RUN_RECORD'], 'w').write(json.dumps({'snli_subset/dev': 'x'}))")
    write_nb(folder / "00_zero.ipynb", "x = 1 + 1")
    return folder


def run(nb_dir, tmp_path, *extra):
    return runner.main(["--quick", "--notebook-dir", str(nb_dir), "--runs-dir", str(tmp_path / "runs"), *extra])


def test_runs_in_order_then_skips_unchanged(nb_dir, tmp_path, capsys):
    assert run(nb_dir, tmp_path) == 0
    out = capsys.readouterr().out
    assert out.index("00_zero") < out.index("01_first") and out.count("[run ]") == 2
    executed = nbformat.read(tmp_path / "runs/offline-quick/01_first.ipynb", as_version=4)
    assert "quick True" in "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
    stamp = json.loads((tmp_path / "runs/offline-quick/01_first.stamp.json").read_text())
    assert stamp["data_keys"] == ["snli_subset/dev"]  # data the notebook read are part of its inputs

    assert run(nb_dir, tmp_path) == 0
    assert capsys.readouterr().out.count("[skip]") == 2

    write_nb(nb_dir / "00_zero.ipynb", "x = 1 + 2")  # code changed -> re-run that one only
    assert run(nb_dir, tmp_path) == 0
    out = capsys.readouterr().out
    assert "[run ] 00_zero" in out and "[skip] 01_first" in out

    assert run(nb_dir, tmp_path, "--force", "01") == 0
    assert "[run ] 01_first" in capsys.readouterr().out


def test_failure_names_notebook_and_cell(nb_dir, tmp_path, capsys):
    write_nb(nb_dir / "02_broken.ipynb", "raise ValueError('boom here')")
    assert run(nb_dir, tmp_path) == 1
    err = capsys.readouterr().err
    assert "02_broken.ipynb" in err and "cell 2" in err and "boom here" in err


def test_only_unknown_notebook(nb_dir, tmp_path):
    with pytest.raises(SystemExit, match="no notebook"):
        run(nb_dir, tmp_path, "--only", "77_nothing")


def test_a_failed_rerun_is_never_skipped_later(nb_dir, tmp_path, capsys, monkeypatch):
    """A notebook that ran once, then failed on a forced re-run (e.g. a broken environment), must run again
    next time even though its inputs are unchanged: the old stamp may not vouch for the failed executed copy."""
    write_nb(nb_dir / "00_zero.ipynb", "import os\nassert not os.environ.get('NLI_TEST_BREAK'), 'environment broken'")
    assert run(nb_dir, tmp_path) == 0
    capsys.readouterr()
    monkeypatch.setenv("NLI_TEST_BREAK", "1")
    assert run(nb_dir, tmp_path, "--force", "00") == 1
    assert "environment broken" in capsys.readouterr().err
    monkeypatch.delenv("NLI_TEST_BREAK")
    assert run(nb_dir, tmp_path) == 0  # same inputs as the first, successful run: still must execute
    out = capsys.readouterr().out
    assert "[run ] 00_zero" in out and "[skip] 00_zero" not in out


def test_force_unknown_notebook(nb_dir, tmp_path):
    with pytest.raises(SystemExit, match="no such notebook"):
        run(nb_dir, tmp_path, "--force", "77")


def test_timing_table_lists_every_notebook(nb_dir, tmp_path, capsys):
    assert run(nb_dir, tmp_path) == 0
    table = capsys.readouterr().out.split("notebook", 1)[-1]
    assert "00_zero" in table and "01_first" in table and "total" in table and "peak memory" in table


def test_library_change_reruns_everything(nb_dir, tmp_path, capsys, monkeypatch):
    assert run(nb_dir, tmp_path) == 0
    monkeypatch.setattr(runner, "nli_lib_hash", lambda: "edited")
    assert run(nb_dir, tmp_path) == 0
    assert capsys.readouterr().out.count("[run ]") == 4  # twice two notebooks
