"""The papermill runner: order, skipping unchanged notebooks (code, data, models, packages, outputs), --force,
failure and interrupt reporting, progress lines, and what kernels are handed (absolute paths, names)."""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from nli_lib import runner
from nli_lib.config import REPO_ROOT
from nli_lib.profile import PROFILE_DIR

from kit import write_notebook

pytest.importorskip("papermill")


def test_runs_in_order_then_skips_unchanged(notebook_dir, tmp_path, capsys, run_notebooks):
    assert run_notebooks(notebook_dir) == 0
    out = capsys.readouterr().out
    assert out.index("00_zero") < out.index("01_first") and out.count("[run ]") == 2
    executed = nbformat.read(tmp_path / "runs/offline-quick/01_first.ipynb", as_version=4)
    assert "quick True" in "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
    stamp = json.loads((tmp_path / "runs/offline-quick/01_first.stamp.json").read_text())
    assert stamp["data_keys"] == ["snli_subset/dev"]  # data the notebook read are part of its inputs

    assert run_notebooks(notebook_dir) == 0
    assert capsys.readouterr().out.count("[skip]") == 2

    write_notebook(notebook_dir / "00_zero.ipynb", "x = 1 + 2")  # code changed -> re-run that one only
    assert run_notebooks(notebook_dir) == 0
    out = capsys.readouterr().out
    assert "[run ] 00_zero" in out and "[skip] 01_first" in out

    assert run_notebooks(notebook_dir, "--force", "01") == 0
    assert "[run ] 01_first" in capsys.readouterr().out


def test_failure_names_notebook_and_cell(notebook_dir, tmp_path, capsys, run_notebooks):
    write_notebook(notebook_dir / "02_broken.ipynb", "raise ValueError('boom here')")
    assert run_notebooks(notebook_dir) == 1
    err = capsys.readouterr().err
    assert "02_broken.ipynb" in err and "cell 2" in err and "boom here" in err


def test_failure_names_the_cell_that_failed_not_an_identical_earlier_one(notebook_dir, tmp_path, capsys, run_notebooks):
    """The cell index comes from papermill's error (not from looking the source text up): of two identical
    cells, the second one fails and is the one named."""
    nb = nbformat.read(notebook_dir / "00_zero.ipynb", as_version=4)
    twice = "n = globals().get('n', 0) + 1\nassert n < 2, 'second run of the same cell'"
    nb.cells += [nbformat.v4.new_code_cell(twice), nbformat.v4.new_code_cell(twice)]
    nbformat.write(nb, notebook_dir / "00_zero.ipynb")
    assert run_notebooks(notebook_dir) == 1
    err = capsys.readouterr().err
    assert "cell 4 (counting from 0;" in err and "second run of the same cell" in err


def test_only_unknown_notebook(notebook_dir, tmp_path, run_notebooks):
    with pytest.raises(SystemExit, match="no notebook"):
        run_notebooks(notebook_dir, "--only", "77_nothing")


def test_a_failed_rerun_is_never_skipped_later(notebook_dir, tmp_path, capsys, monkeypatch, run_notebooks):
    """A notebook that ran once, then failed on a forced re-run (e.g. a broken environment), must run again
    next time even though its inputs are unchanged: the old stamp may not vouch for the failed executed copy."""
    write_notebook(notebook_dir / "00_zero.ipynb", "import os\nassert not os.environ.get('NLI_TEST_BREAK'), 'environment broken'")
    assert run_notebooks(notebook_dir) == 0
    capsys.readouterr()
    monkeypatch.setenv("NLI_TEST_BREAK", "1")
    assert run_notebooks(notebook_dir, "--force", "00") == 1
    assert "environment broken" in capsys.readouterr().err
    monkeypatch.delenv("NLI_TEST_BREAK")
    assert run_notebooks(notebook_dir) == 0  # same inputs as the first, successful run: still must execute
    out = capsys.readouterr().out
    assert "[run ] 00_zero" in out and "[skip] 00_zero" not in out


def test_force_unknown_notebook(notebook_dir, tmp_path, run_notebooks):
    with pytest.raises(SystemExit, match="no such notebook"):
        run_notebooks(notebook_dir, "--force", "77")


def test_timing_table_lists_every_notebook(notebook_dir, tmp_path, capsys, run_notebooks):
    assert run_notebooks(notebook_dir) == 0
    table = capsys.readouterr().out.split("notebook", 1)[-1]
    assert "00_zero" in table and "01_first" in table and "total" in table and "peak memory" in table


def test_timing_table_splits_each_notebook_into_phases(notebook_dir, capsys, run_notebooks):
    write_notebook(notebook_dir / "02_train.ipynb", "import time\nfrom nli_lib.phases import phase\n"
                   "with phase('training'):\n    time.sleep(0.6)")
    assert run_notebooks(notebook_dir, "--only", "02") == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("notebook")).split()
    row = next(line for line in lines if line.startswith("02_train")).split()
    assert header == ["notebook", "status", "seconds", "loading", "training", "scoring", "llm", "plotting", "waiting",
                      "kernel", "other", "peak", "GiB"]
    assert float(row[header.index("training")]) >= 0.6  # a sleep lasts at least its length (no upper bound)
    assert float(row[header.index("kernel")]) > 0  # starting and stopping a kernel takes time
    assert float(row[header.index("scoring")]) == 0.0
    assert 0 < float(row[-1]) < 4  # the kernel's peak memory, GiB


def test_a_library_change_reruns_the_notebooks_that_import_it(notebook_dir, capsys, monkeypatch, run_notebooks):
    """The runner keys each notebook on the library code it imports (`codehash.notebook_lib_hash`): a change in
    01's closure re-runs 01 alone."""
    assert run_notebooks(notebook_dir) == 0
    monkeypatch.setattr(runner, "notebook_lib_hash", lambda path: "edited" if path.stem == "01_first" else
                        "pinned-for-test")
    assert run_notebooks(notebook_dir) == 0
    out = capsys.readouterr().out
    assert out.count("[run ]") == 3 and out.count("[run ] 01_first") == 2 and "[skip] 00_zero" in out


def test_a_fixture_edit_reruns_everything(notebook_dir, capsys, monkeypatch, run_notebooks):
    """A gold set or the fitted FTC verifier under data/fixtures is an input of every notebook's results."""
    assert run_notebooks(notebook_dir) == 0
    assert run_notebooks(notebook_dir) == 0  # unchanged: both skipped
    monkeypatch.setattr(runner, "fixtures_hash", lambda root=None: "a gold judgement changed")
    assert run_notebooks(notebook_dir) == 0
    assert capsys.readouterr().out.count("[run ]") == 4  # first run and after the edit, two notebooks each


# ------------------------------------------------------------------------------- identity of models, packages

def test_changed_model_weights_rerun_the_notebook_that_used_them(notebook_dir, tmp_path, capsys, run_notebooks):
    """A notebook that used a local model folder is skipped while the weights stay the same, and runs again
    (without --force) once the folder holds different weights, e.g. a model re-saved after more training."""
    model = tmp_path / "my-nli"
    model.mkdir()
    (model / "config.json").write_text('{"id2label": {"0": "entailment", "1": "neutral", "2": "contradiction"}}')
    (model / "model.safetensors").write_bytes(bytes(range(256)) * 4)
    write_notebook(notebook_dir / "02_uses_model.ipynb", f"from nli_lib import provenance\nprovenance.note_model({str(model)!r})")
    assert run_notebooks(notebook_dir) == 0
    stamp = json.loads((tmp_path / "runs/offline-quick/02_uses_model.stamp.json").read_text())
    assert stamp["models"] == {str(model): "hf"}
    capsys.readouterr()
    assert run_notebooks(notebook_dir) == 0
    assert "[skip] 02_uses_model" in capsys.readouterr().out
    (model / "model.safetensors").write_bytes(bytes(reversed(range(256))) * 4)  # same size, new weights
    assert run_notebooks(notebook_dir) == 0
    out = capsys.readouterr().out
    assert "[run ] 02_uses_model" in out and "[skip] 00_zero" in out and "[skip] 01_first" in out


def test_package_upgrade_reruns(notebook_dir, tmp_path, capsys, monkeypatch, run_notebooks):
    assert run_notebooks(notebook_dir) == 0
    versions = runner.package_versions()
    assert set(versions) == set(runner.PACKAGES) and versions["numpy"] != "absent"
    monkeypatch.setattr(runner, "package_versions", lambda: {**versions, "transformers": "99.0"})
    capsys.readouterr()
    assert run_notebooks(notebook_dir) == 0
    assert capsys.readouterr().out.count("[run ]") == 2


# ------------------------------------------------------------------------------------------ summary notebooks

def _scoring_nb(value: float) -> str:
    """A paper notebook that records one scorecard entry, like nb.out.score does."""
    return ("import json, os, pathlib\nfolder = pathlib.Path(os.environ['NLI_OUTPUT_DIR']) / 'tables' / '10_paper'\n"
            f"folder.mkdir(parents=True, exist_ok=True)\n(folder / 'scorecard.jsonl').write_text(json.dumps("
            f"{{'ref': 'atoms-table-2', 'ours': {value}}}) + '\\n')")


def test_summary_notebooks_rerun_when_outputs_they_read_change(notebook_dir, tmp_path, capsys, run_notebooks):
    """90 reads every notebook's scorecard.jsonl: it re-runs after another notebook changed its outputs, also
    when that notebook ran alone (--only); it writes its own outputs without making itself stale."""
    write_notebook(notebook_dir / "10_paper.ipynb", _scoring_nb(0.5))
    write_notebook(notebook_dir / "90_summary.ipynb", "import os, pathlib\nfolder = pathlib.Path(os.environ['NLI_OUTPUT_DIR']) "
                   "/ 'tables' / '90_summary'\nfolder.mkdir(parents=True, exist_ok=True)\n"
                   "(folder / 'scorecard.jsonl').write_text('{}\\n')")
    assert run_notebooks(notebook_dir) == 0
    capsys.readouterr()
    assert run_notebooks(notebook_dir) == 0  # nothing changed: everything skipped, the summary too
    assert capsys.readouterr().out.count("[skip]") == 4
    write_notebook(notebook_dir / "10_paper.ipynb", _scoring_nb(0.75))
    assert run_notebooks(notebook_dir, "--only", "10") == 0  # only the paper notebook runs now ...
    assert "[run ] 10_paper" in capsys.readouterr().out
    assert run_notebooks(notebook_dir) == 0  # ... and the next full call re-runs the summary that reads its output
    out = capsys.readouterr().out
    assert "[skip] 10_paper" in out and "[skip] 00_zero" in out and "[run ] 90_summary" in out
    assert run_notebooks(notebook_dir) == 0
    assert "[skip] 90_summary" in capsys.readouterr().out


def test_summary_inputs_ignore_summary_outputs_and_follow_index_rows(tmp_path):
    tables = tmp_path / "tables"
    (tables / "90_scorecard").mkdir(parents=True)
    (tables / "51_x" / "records").mkdir(parents=True)
    (tables / "index.csv").write_text("ref,notebook\ntaxinli-table-3,51_x\ncompanion-table-90,90_scorecard\n")
    before = runner.summary_inputs(tmp_path)
    (tables / "90_scorecard" / "scorecard.jsonl").write_text("{}\n")
    (tables / "index.csv").write_text("ref,notebook\ntaxinli-table-3,51_x\ncompanion-table-91,91_explorer\n")
    assert runner.summary_inputs(tmp_path) == before
    (tables / "51_x" / "records" / "rows.json").write_text('{"n_rows": 3}')
    assert runner.summary_inputs(tmp_path) != before


# ------------------------------------------------------------------------------------------- progress lines

def test_progress_of_a_running_notebook_is_printed(notebook_dir, tmp_path, capsys, monkeypatch, run_notebooks):
    monkeypatch.setattr(runner, "PROGRESS_POLL_S", 0.05)
    monkeypatch.setattr(runner, "PROGRESS_LOG_EVERY_S", 0.0)
    write_notebook(notebook_dir / "02_batch.ipynb", "import time\nfrom nli_lib.progress import progress\n"
                   "bar = progress(total=40, desc='demo-llm', unit='llm call', bar=False)\n"
                   "for _ in range(40):\n    time.sleep(0.05)\n    bar.update()\nbar.close()\ntime.sleep(0.5)")
    assert run_notebooks(notebook_dir, "--only", "02", "--jobs", "1") == 0  # in this process: capsys sees it
    out = capsys.readouterr().out
    assert "[run ] 02_batch… demo-llm: 40/40 llm calls" in out


# ------------------------------------------------------------------------------------------ kernel environment

def test_kernels_get_absolute_paths_their_name_and_the_profile_path(notebook_dir, tmp_path, monkeypatch, run_notebooks):
    """Relative NLI_* paths are resolved where the command was typed, never in the kernel's notebooks/ folder."""
    where = tmp_path / "typed-here"
    (where / "mirror").mkdir(parents=True)
    monkeypatch.chdir(where)
    monkeypatch.delenv("NLI_USER_CWD", raising=False)
    monkeypatch.setenv("NLI_DATA_MIRROR", "mirror")
    monkeypatch.setenv("NLI_CACHE_DIR", "../cache-rel")
    write_notebook(notebook_dir / "02_env.ipynb", "import json, os\nfrom nli_lib.notebook import notebook_name\n"
                   "from nli_lib.config import mirror_dir, cache_dir\n"
                   "keys = ('NLI_DATA_MIRROR', 'NLI_CACHE_DIR', 'NLI_USER_CWD', 'NLI_PROFILE')\n"
                   "seen = {k: os.environ.get(k) for k in keys}\n"
                   "seen.update(name=notebook_name(), profile=profile, cwd=os.getcwd(), mirror=str(mirror_dir()), "
                   "cache=str(cache_dir()))\n"
                   "open(os.environ['NLI_RUN_RECORD'] + '.env', 'w').write(json.dumps(seen))")
    assert run_notebooks(notebook_dir, "--only", "02", runs_dir=Path("../runs")) == 0  # relative: ../runs from typed-here
    seen = json.loads((tmp_path / "runs/offline-quick/02_env.record.json.env").read_text())
    assert seen["NLI_DATA_MIRROR"] == seen["mirror"] == str(where / "mirror")
    assert seen["NLI_CACHE_DIR"] == seen["cache"] == str(tmp_path / "cache-rel")
    assert seen["NLI_USER_CWD"] == str(where) and seen["cwd"] == str(notebook_dir)
    assert seen["name"] == "02_env" and seen["profile"] == seen["NLI_PROFILE"] == str(PROFILE_DIR / "offline.yaml")


# ------------------------------------------------------------------------------------------------ interrupts

def _default_sigint() -> None:
    """In a child before it starts: SIGINT back to its default (terminate; Python then raises KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_reaches_the_interrupt_branch_and_the_next_run_resumes(notebook_dir, tmp_path):
    """SIGINT to the runner while a notebook executes: exit 130 with INTERRUPTED and the timing table, no stamp
    for the interrupted notebook, and the next call skips the finished ones and runs the interrupted one."""
    write_notebook(notebook_dir / "02_slow.ipynb", "import time\nprint('started', flush=True)\ntime.sleep(120)")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "NLI_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "nli_lib.runner", "--quick", "--notebook-dir", str(notebook_dir), "--runs-dir",
           str(tmp_path / "runs")]
    # Ctrl-C's default disposition, as in a terminal: a background job of a non-interactive shell (`cmd &`, or
    # `nohup`) starts with SIGINT ignored, which Python and so this runner inherit; this test then hung twice in
    # CI runs started that way (the runner never saw the signal), and passed whenever it was run in a terminal
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)
    runs = tmp_path / "runs/offline-quick"
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        executing = list(runs.glob(".executing/*/02_slow.ipynb"))  # the run's own copy until the notebook ends
        if executing and "started" in executing[0].read_text():  # the slow cell is executing now
            break
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "INTERRUPTED: notebook 02_slow.ipynb" in err and "02_slow" in out.split("notebook", 1)[-1]
    assert "Traceback" not in err and "ZMQError" not in err and "KeyboardInterrupt caught" not in err, err
    runs = tmp_path / "runs/offline-quick"
    assert (runs / "01_first.stamp.json").is_file() and not (runs / "02_slow.stamp.json").exists()

    write_notebook(notebook_dir / "02_slow.ipynb", "x = 'fixed'")
    done = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "[skip] 00_zero" in done.stdout and "[skip] 01_first" in done.stdout and "[run ] 02_slow" in done.stdout


# ------------------------------------------------------------------------------------------------ --jobs

def _meet(me: str, other: str, folder: Path, wait: float = 30) -> str:
    """Code of a notebook that announces itself and waits (`wait` s at most) for `other` to announce itself: it
    passes only when both notebooks run at the same time."""
    return (f"import os, time\nfrom pathlib import Path\nPath({str(folder)!r}, {me!r}).write_text("
            f"os.environ.get('OMP_NUM_THREADS', 'unset'))\nend = time.time() + {wait}\n"
            f"while not Path({str(folder)!r}, {other!r}).exists() and time.time() < end:\n    time.sleep(0.1)\n"
            f"assert Path({str(folder)!r}, {other!r}).exists(), 'ran alone'")


def test_jobs_run_paper_notebooks_side_by_side_with_a_share_of_the_cores(notebook_dir, tmp_path, monkeypatch,
                                                                         capsys, run_notebooks):
    meet = tmp_path / "meet"
    meet.mkdir()
    write_notebook(notebook_dir / "10_a.ipynb", _meet("a", "b", meet))
    write_notebook(notebook_dir / "20_b.ipynb", _meet("b", "a", meet))
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert run_notebooks(notebook_dir, "--jobs", "2") == 0, capsys.readouterr().err
    assert (meet / "a").read_text() == (meet / "b").read_text() == "2"  # 4 cores // 2 jobs
    for name in ("10_a", "20_b"):
        assert (tmp_path / f"runs/offline-quick/{name}.stamp.json").is_file()
    for f in meet.iterdir():
        f.unlink()
    # one at a time: the first waits in vain (a short wait suffices: the second cannot start while it runs)
    write_notebook(notebook_dir / "10_a.ipynb", _meet("a", "b", meet, wait=5))
    assert run_notebooks(notebook_dir, "--jobs", "1", "--force") == 1
    assert "ran alone" in capsys.readouterr().err


def test_stamp_holds_the_library_as_it_was_when_the_notebook_started(notebook_dir, tmp_path, monkeypatch, capsys,
                                                                     run_notebooks):
    """An edit of nli_lib while a notebook runs must not mark the notebook up to date with the edited library."""
    lib = tmp_path / "lib-version"
    lib.write_text("v1")
    monkeypatch.setattr(runner, "notebook_lib_hash", lambda path: lib.read_text())
    write_notebook(notebook_dir / "00_zero.ipynb", f"from pathlib import Path\nPath({str(lib)!r}).write_text('v2')")
    assert run_notebooks(notebook_dir, "--only", "00") == 0
    capsys.readouterr()
    write_notebook(notebook_dir / "00_zero.ipynb", "x = 1")
    assert run_notebooks(notebook_dir, "--only", "00") == 0  # code changed: runs with v2 throughout
    assert run_notebooks(notebook_dir, "--only", "00") == 0
    out = capsys.readouterr().out
    assert out.count("[run ] 00_zero") == 1 and "[skip] 00_zero" in out
    lib.write_text("v1")
    write_notebook(notebook_dir / "00_zero.ipynb", f"from pathlib import Path\nPath({str(lib)!r}).write_text('v3')")
    assert run_notebooks(notebook_dir, "--only", "00") == 0  # started with v1, the library is v3 after it
    assert run_notebooks(notebook_dir, "--only", "00") == 0
    assert capsys.readouterr().out.count("[run ] 00_zero") == 2  # the stamp says v1: not up to date with v3


def test_a_papers_notebooks_run_one_after_another_in_one_worker(notebook_dir, tmp_path, capsys, run_notebooks):
    """With --jobs 2, the notebooks of one paper (10_, 11_) never overlap (they share models), in order."""
    marks = tmp_path / "marks"
    marks.mkdir()
    write_notebook(notebook_dir / "10_first.ipynb", f"import time\nfrom pathlib import Path\ntime.sleep(2)\n"
                   f"Path({str(marks)!r}, 'first-done').write_text('x')")
    write_notebook(notebook_dir / "11_second.ipynb", f"from pathlib import Path\n"
                   f"assert Path({str(marks)!r}, 'first-done').exists(), 'started before 10_first finished'")
    write_notebook(notebook_dir / "20_other.ipynb", "x = 1")
    assert run_notebooks(notebook_dir, "--jobs", "2") == 0, capsys.readouterr().err


def test_side_by_side_kernels_talk_over_unix_sockets_of_their_own(notebook_dir, tmp_path, capsys, run_notebooks):
    """Kernels started by two workers at once never race for a TCP port (the 'ZMQError: Address already in
    use' that failed a CI run): each talks over Unix sockets under its own random path, removed at shutdown."""
    marks = tmp_path / "marks"
    marks.mkdir()
    code = ("import json\nfrom pathlib import Path\nfrom ipykernel import get_connection_info\n"
            "info = json.loads(get_connection_info())\n"
            f"Path({str(marks)!r}, NAME).write_text(json.dumps([info['transport'], info['ip']]))")
    for name in ("10_a", "20_b", "30_c"):
        write_notebook(notebook_dir / f"{name}.ipynb", f"NAME = {name!r}\n" + code)
    assert run_notebooks(notebook_dir, "--jobs", "2") == 0, capsys.readouterr().err
    seen = [json.loads((marks / name).read_text()) for name in ("10_a", "20_b", "30_c")]
    assert {transport for transport, _ in seen} == {"ipc"}, seen
    paths = [ip for _, ip in seen]
    assert len(set(paths)) == 3 and all(os.path.isabs(ip) and "nli-kernel-" in ip for ip in paths), paths
    left = [f for ip in paths for f in Path(ip).parent.glob(Path(ip).name + "-*")]
    assert left == [], f"socket files left after shutdown: {left}"


def test_summaries_run_side_by_side_after_every_paper_and_the_index_is_mended(notebook_dir, tmp_path, capsys,
                                                                            run_notebooks):
    """With --jobs 2, the summaries (90, 91) start once every paper notebook has finished, and run at the same
    time; the runner then rebuilds tables/index.csv, so a sidecar whose notebook's own index write lost a race
    (here: one written without rebuilding the index at all) is listed."""
    import pandas as pd

    for name in ("00_zero", "01_first"):  # the fixture's: not needed here (two kernels fewer)
        (notebook_dir / f"{name}.ipynb").unlink()
    marks = tmp_path / "marks"
    marks.mkdir()
    side = {"kind": "table", "ref": "atoms-table-2", "notebook": "10_paper", "tier": "offline", "models": []}
    write_notebook(notebook_dir / "10_paper.ipynb",
                   "import json, os, time, pathlib\ntime.sleep(1)\nfolder = pathlib.Path(os.environ['NLI_OUTPUT_DIR'])"
                   " / 'tables' / '10_paper'\nfolder.mkdir(parents=True, exist_ok=True)\n"
                   f"(folder / 'table-2.json').write_text(json.dumps({side!r}))\n"
                   f"pathlib.Path({str(marks)!r}, 'paper-done').write_text('x')")
    for me, other in (("90_summary", "91_explorer"), ("91_explorer", "90_summary")):
        write_notebook(notebook_dir / f"{me}.ipynb", f"from pathlib import Path\nassert Path({str(marks)!r}, "
                       "'paper-done').exists(), 'started before the paper finished'\n" + _meet(me, other, marks))
    assert run_notebooks(notebook_dir, "--jobs", "2") == 0, capsys.readouterr().err
    index = pd.read_csv(tmp_path / "runs/offline-quick/outputs/tables/index.csv")
    assert index["path"].tolist() == ["tables/10_paper/table-2.csv"] and index["notebook"].tolist() == ["10_paper"]


_WORKERS_NOW = ("import os, time\nfrom pathlib import Path\nimport psutil\n"
                "def workers():  # the runner's worker processes: its children started with --worker\n"
                "    found = []\n"
                "    for child in psutil.Process(os.getppid()).children():\n"
                "        try:\n"
                "            if '--worker' in child.cmdline():\n"
                "                found.append(child.pid)\n"
                "        except psutil.Error:  # it ended meanwhile\n"
                "            continue\n"
                "    return found\n")


def test_workers_start_while_the_data_notebook_runs_and_serve_every_stage(notebook_dir, tmp_path, capsys,
                                                                         run_notebooks):
    """With --jobs 2, the worker processes are started before 00 runs (their start-up overlaps it), and the
    summaries run in the same workers as the papers: no worker is started again between the stages."""
    marks = tmp_path / "marks"
    marks.mkdir()
    (notebook_dir / "01_first.ipynb").unlink()
    write_notebook(notebook_dir / "00_zero.ipynb", _WORKERS_NOW + "end = time.time() + 20\n"
                   "while len(workers()) < 2 and time.time() < end:\n    time.sleep(0.1)\n"
                   f"Path({str(marks)!r}, 'during-00').write_text(' '.join(map(str, workers())))")
    for name in ("10_a", "20_b", "90_s", "91_e"):
        write_notebook(notebook_dir / f"{name}.ipynb", "import os\nfrom pathlib import Path\n"
                       f"Path({str(marks)!r}, {name!r}).write_text(str(os.getppid()))")
    assert run_notebooks(notebook_dir, "--jobs", "2") == 0, capsys.readouterr().err
    during_00 = {int(pid) for pid in (marks / "during-00").read_text().split()}
    papers = {int((marks / name).read_text()) for name in ("10_a", "20_b")}
    summaries = {int((marks / name).read_text()) for name in ("90_s", "91_e")}
    assert len(during_00) == 2 and papers == during_00, (during_00, papers)
    assert summaries <= papers, (summaries, papers)


@pytest.mark.parametrize("start", [
    "import runpy\nsys.argv = ['nli_lib.runner', '--worker']\nrunpy.run_module('nli_lib.runner', run_name='__main__')",
    "from nli_lib import cli\ncli.main(['run', '--help'])"], ids=["python -m nli_lib.runner", "nli-companion run"])
def test_runner_processes_skip_the_iri_parsers_jsonschema_would_import(start):
    """The runner's processes (`python -m nli_lib.runner`: the runner and each worker; `nli-companion run`) do not
    import rfc3987-syntax, which builds Lark parsers for a format no notebook schema uses (~1.3 s a process);
    papermill and nbformat work without it."""
    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987-syntax is not installed here: nothing to skip")
    probe = ("import sys\ntry:\n" + "".join(f"    {line}\n" for line in start.splitlines()) +
             "except SystemExit:\n    pass\n"
             "import nbformat, papermill\n"
             "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')])\n"
             "nbformat.validate(nbformat.reads(nbformat.writes(nb), as_version=4))\n"
             "print(repr(sys.modules.get('rfc3987_syntax')))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, input="", capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "None", out.stdout  # after --help's usage


def test_kernels_fall_back_to_tcp_where_a_socket_path_would_not_fit(tmp_path, monkeypatch):
    import tempfile

    assert runner.kernel_manager_class() is not None  # here: Linux, short /tmp
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / ("x" * runner.UNIX_SOCKET_PATH_MAX)))
    assert runner.kernel_manager_class() is None and runner.kernel_manager_kwargs() == {}
    monkeypatch.setattr(os, "name", "nt")
    assert runner.kernel_manager_class() is None


def _start_beside_models(path: Path) -> None:
    """Give the notebook at `path` the metadata that starts its paper beside notebook 01."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata["nli_companion"] = {"start_beside_models": True}
    nbformat.write(nb, path)


def test_shared_models_start_first_beside_the_paper_that_trains_its_own_models(notebook_dir, tmp_path, monkeypatch,
                                                                              capsys, run_notebooks):
    """With --jobs 2, the data notebook (00) runs alone before everything; the shared models (01) start first in
    the pool, with a share of the cores, beside the paper whose first notebook says it trains its own models first
    (metadata nli_companion.start_beside_models), ahead of a paper that would otherwise come first (10 < 20)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    started = f"from pathlib import Path\nwith open({str(marks / 'started')!r}, 'a') as f:\n    f.write(NAME + ' ')\n"
    write_notebook(notebook_dir / "00_zero.ipynb", f"import time\nfrom pathlib import Path\ntime.sleep(1)\n"
                   f"Path({str(marks)!r}, 'data-done').write_text('x')")
    write_notebook(notebook_dir / "01_first.ipynb",
                   f"from pathlib import Path\nassert Path({str(marks)!r}, 'data-done').exists(), 'beside 00'\n"
                   + _meet("models", "phrasis", marks))
    write_notebook(notebook_dir / "10_atoms.ipynb", started.replace("NAME", "'10_atoms'"))
    phrasis = write_notebook(notebook_dir / "20_phrasis.ipynb",
                             started.replace("NAME", "'20_phrasis'") + _meet("phrasis", "models", marks))
    _start_beside_models(phrasis)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert run_notebooks(notebook_dir, "--jobs", "2") == 0, capsys.readouterr().err
    assert (marks / "models").read_text() == "2"  # 4 cores // 2 jobs
    assert (marks / "started").read_text().split() == ["20_phrasis", "10_atoms"]


def test_the_rest_of_a_paper_started_early_waits_for_the_shared_models_while_its_worker_runs_another(
        notebook_dir, tmp_path, capsys, run_notebooks):
    """With --jobs 2: 01 builds the shared models (slowly here); PhrasIS's first notebook starts beside it (it
    trains its own models first). When it ends, its worker does not start the paper's next notebook, which needs
    01's models and would only wait on their lock: it runs another paper (30) and leaves 21 until 01 is done."""
    marks = tmp_path / "marks"
    marks.mkdir()
    started = f"with open({str(marks / 'started')!r}, 'a') as f:\n    f.write(NAME + ' ')\n"
    write_notebook(notebook_dir / "01_first.ipynb", "import time\nfrom pathlib import Path\ntime.sleep(6)\n"
                   f"Path({str(marks)!r}, 'models-done').write_text('x')")
    phrasis = write_notebook(notebook_dir / "20_phrasis.ipynb", started.replace("NAME", "'20_phrasis'"))
    _start_beside_models(phrasis)
    write_notebook(notebook_dir / "21_rest.ipynb", "from pathlib import Path\n"
                   f"assert Path({str(marks)!r}, 'models-done').exists(), 'started before the shared models'\n"
                   + started.replace("NAME", "'21_rest'"))
    write_notebook(notebook_dir / "30_other.ipynb", started.replace("NAME", "'30_other'"))
    assert run_notebooks(notebook_dir, "--jobs", "2") == 0, capsys.readouterr().err
    assert (marks / "started").read_text().split() == ["20_phrasis", "30_other", "21_rest"]


def test_chains_never_run_here_are_ordered_by_the_cold_seconds_their_notebooks_ship(tmp_path):
    """A fresh clone has no stamps: the runner orders the paper chains by the seconds in the notebooks' metadata
    (`notebook_estimate`), longest first, not by how many notebooks they have; a recorded run counts first."""
    def notebook(name, seconds=None, meta=None):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
        nb.metadata["nli_companion"] = meta if meta is not None else {"cold_seconds": seconds}
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(nb, path)
        return path

    papers = [notebook("10_a", 20), notebook("11_b", 30), notebook("12_c", 10), notebook("40_d", 150),
              notebook("41_e", 0)]
    assert [runner.notebook_estimate(p) for p in papers] == [20.0, 30.0, 10.0, 150.0, 0.0]
    assert runner.notebook_estimate(notebook("50_f", meta={"cold_seconds": "long"})) == 0.0
    assert runner.notebook_estimate(notebook("51_g", meta=["not", "a", "dict"])) == 0.0
    run = runner.Run(tmp_path / "out", {}, {}, {}, tmp_path, force=None)
    seconds = {p: run.last_seconds(p) for p in papers}
    assert [[p.stem for p in c] for c in runner.paper_chains(papers, seconds)] == [["40_d", "41_e"],
                                                                                  ["10_a", "11_b", "12_c"]]
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "40_d.stamp.json").write_text(json.dumps({"seconds": 5.0}))  # ran here: 5 s
    assert run.last_seconds(papers[3]) == 5.0
