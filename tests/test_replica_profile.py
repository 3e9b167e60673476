"""Every notebook runs under the replica profile (nli_lib/resources/profiles/replica.yaml): the paper tier's code
paths on tiny random-weight replicas of every model family the papers use (nli_lib.replicas), built here, never downloaded.

Runs `./run_all.sh --profile replica --quick --force` twice in a temporary directory (where the replicas are
built, so the profile's relative folders resolve there), on a cache of its own that starts with nothing of the
paper tier (`_seed_cache`): the cold run must pass every notebook, the warm run must make no model call, and
every replica's predictions must be the label its head's id2label (or the profile's label_order) names. Marked
slow (about 8 minutes on two idle cores).
"""
from __future__ import annotations

import contextlib
import gzip
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pandas as pd
import pytest

from nli_lib.config import LABELS, REPO_ROOT
from nli_lib.profile import PROFILE_DIR
from nli_lib.runner import notebooks

pytestmark = [pytest.mark.slow, pytest.mark.mirror,
              pytest.mark.skipif(not os.environ.get("NLI_DATA_MIRROR"),
                                 reason="NLI_DATA_MIRROR not set: notebooks need the offline data mirror")]

PROFILE = PROFILE_DIR / "replica.yaml"


def _run(work: Path, env: dict) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(REPO_ROOT / "run_all.sh"), "--profile", str(PROFILE), "--quick", "--force",
                           "--runs-dir", str(work / "runs")], cwd=work, env=env, capture_output=True, text=True,
                          timeout=3600)
    sys.stdout.write(proc.stdout[-3000:])
    sys.stderr.write(proc.stderr[-3000:])
    return proc


def _rows_written_since(cache: Path, since: float) -> int:
    """Call-cache rows written since `since` (every row carries the time it was written)."""
    con = sqlite3.connect(cache / "calls.sqlite")
    tables = [name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return sum(con.execute(f"SELECT COUNT(*) FROM {t} WHERE ts >= ?", (since,)).fetchone()[0] for t in tables)


# What the replica run's new cache takes from the offline quick run's (the test session's cache): the offline
# models the quick run trained and fitted, and results that no model of either tier enters: the parsed WordNet
# and data files, FTC's regex tables and counterfactual checks (of the rule-based rewriter, the replica profile's
# too: `llm: null`), and the POS tags (namespace `pos_tags` of calls.sqlite).
SHARED_WITH_THE_OFFLINE_RUN = ("models", "wordnet", "parsed_data", "ftc-ngrams", "ftc_hit_rates", "ftc_gold_comparison",
                               "counterfactual_checks")
SHARED_CALL_NAMESPACES = ("pos_tags",)


def _seed_cache(cache: Path) -> list[str]:
    """Copy into the replica run's new cache what the test session's cache (NLI_CACHE_DIR, conftest) already
    holds of `SHARED_WITH_THE_OFFLINE_RUN` and `SHARED_CALL_NAMESPACES` (tests/test_notebooks.py runs first, on
    the same worker: tests/kit.py WHOLE_RUNS). Their keys hold every input, so the replica run loads them where
    it would compute the same thing again (PhrasIS's offline MiniLM family alone is ~2 of its 7 cold minutes on
    two cores; the rest ~80 s of CPU). Nothing keyed by a replica is among them: every replica-tier model, call
    and derived file is still built cold, and the warm run's checks count only what it writes. Returns what was
    copied (nothing when run alone)."""
    import shutil

    from nli_lib.config import env_path

    source, copied = env_path("NLI_CACHE_DIR"), []
    for name in SHARED_WITH_THE_OFFLINE_RUN:
        if source is not None and (source / name).is_dir() and any((source / name).iterdir()):
            shutil.copytree(source / name, cache / name)
            copied.append(name)
    calls = None if source is None else source / "calls.sqlite"
    if calls is not None and calls.is_file():
        copied += _copy_namespaces(calls, cache / "calls.sqlite", SHARED_CALL_NAMESPACES)
    return copied


def _copy_namespaces(source: Path, target: Path, namespaces) -> list[str]:
    """Copy the tables of call-cache `namespaces` (rows as written, with their times) from the SQLite file
    `source` into `target` (created); returns 'calls.sqlite:<namespace>' for each one copied."""
    from nli_lib.cache import CallCache

    target.parent.mkdir(parents=True, exist_ok=True)
    copied = []
    with contextlib.closing(sqlite3.connect(target)) as con, con:  # closed, after the commit of `with con`
        con.execute("ATTACH DATABASE ? AS source", (str(source),))
        for namespace in namespaces:
            table = CallCache.table_name(namespace)
            ddl = con.execute("SELECT sql FROM source.sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
            if ddl is None:
                continue
            con.execute(ddl[0])
            con.execute(f"INSERT INTO main.{table} SELECT * FROM source.{table}")
            copied.append(f"calls.sqlite:{namespace}")
    return copied


def test_seeding_copies_the_shared_folders_and_call_namespaces_and_nothing_else(tmp_path, monkeypatch):
    from nli_lib.cache import CallCache

    session = tmp_path / "session"
    for name in ("models", "parsed_data", "hidden_states"):
        (session / name).mkdir(parents=True)
        (session / name / "x.json").write_text("{}")
    calls = CallCache(session / "calls.sqlite")
    calls.put_many("pos_tags", [({"words": ["a", "dog"]}, [["a", "DT"], ["dog", "NN"]])])
    calls.put_many("classifier", [({"model": "offline", "premise": "p"}, [0.2, 0.3, 0.5])])
    calls.close()
    monkeypatch.setenv("NLI_CACHE_DIR", str(session))
    copied = _seed_cache(tmp_path / "replica")
    assert copied == ["models", "parsed_data", "calls.sqlite:pos_tags"]
    assert not (tmp_path / "replica" / "hidden_states").exists()
    seeded = CallCache(tmp_path / "replica" / "calls.sqlite")
    assert seeded.get_many("pos_tags", [{"words": ["a", "dog"]}]) == [[["a", "DT"], ["dog", "NN"]]]
    assert seeded.get_many("classifier", [{"model": "offline", "premise": "p"}]) == [None]


@pytest.fixture(scope="module")
def replica_run(tmp_path_factory):
    from nli_lib.replicas import build_replicas

    work = tmp_path_factory.mktemp("replica-run")
    build_replicas(work / ".cache" / "replicas")  # where the replica profile's relative folders point
    env = {**os.environ, "NLI_USER_CWD": str(work), "NLI_CACHE_DIR": str(work / "cache"),
           "OPENAI_API_KEY": "sk-test-SENTINEL-never-printed"}
    env.pop("NLI_OUTPUT_DIR", None)
    # ---- llm: section -------------------------------------------------------------------------------------
    # the replica profile has `llm: null` (the rule-based stand-ins answer every LLM step). The LLM helper's
    # local OpenAI-compatible server (SmolLM2) is started here and the run given a copy of the profile whose
    # llm: section points at it; it is stopped after the warm run.
    # -------------------------------------------------------------------------------------------------------
    seeded = _seed_cache(work / "cache")
    started = time.time()
    cold = _run(work, env)
    cold_s = time.time() - started
    time.sleep(1.1)  # file times have 1 s resolution on some file systems
    warm_start = time.time()
    warm = _run(work, env)
    cache = work / "cache"
    new_files = [p for p in cache.rglob("*") if p.is_file() and not p.name.startswith("calls.sqlite")
                 and p.stat().st_mtime >= warm_start]
    return SimpleNamespace(work=work, cold=cold, warm=warm, cold_s=cold_s, seeded=seeded,
                           root=work / "runs" / "replica-quick",
                           new_rows=_rows_written_since(cache, warm_start), new_files=new_files)


def test_every_notebook_passes_under_the_replica_profile(replica_run):
    assert replica_run.cold.returncode == 0, replica_run.cold.stderr[-3000:]
    for path in notebooks():
        assert (replica_run.root / path.name).is_file(), f"{path.name} was not executed"
    print(f"cold replica run: {replica_run.cold_s:.0f} s (cache seeded with {replica_run.seeded or 'nothing'})")


def _calls_sent(executed: Path) -> dict[str, int]:
    """model -> calls sent, from the call summary the last cell (nb.finish()) prints: columns found by the names
    in its header (kind, requests, cache_hits, calls, ...), counted from the row's end (a source may hold spaces)."""
    text = "".join(o.get("text", "") for o in nbformat.read(executed, as_version=4).cells[-1].get("outputs", []))
    sent, header = {}, None
    for line in text.splitlines():
        if line.startswith("model calls ("):
            header = []
        elif header is not None and ("outputs published" in line or "published under" in line or not line.strip()):
            break
        elif header == [] and "calls" in line.split():
            header = line.split()
        elif header:
            tokens = line.split()
            if len(tokens) > len(header) and tokens[-(len(header) - header.index("calls"))].isdigit():
                sent[" ".join(tokens[:-len(header)])] = int(tokens[-(len(header) - header.index("calls"))])
    return sent


def test_the_call_summary_parser_reads_the_calls_column():
    """`_calls_sent` reads the column named calls whatever columns the summary gains."""
    import pandas as pd

    from nli_lib import calls

    frame = pd.DataFrame([{"kind": "llm", **{c: i for i, c in enumerate(calls.COUNTS)}, "failure_rate": 0.0}],
                         index=pd.Index(["soak @ http://x/v1"], name="source"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("nb.finish()", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="model calls (...):\n" + frame.to_string() + "\n")])])
    path = Path(__file__).parent / "_calls_sent_probe.ipynb"
    try:
        nbformat.write(nb, path)
        assert _calls_sent(path) == {"soak @ http://x/v1": calls.COUNTS.index("calls")}
    finally:
        path.unlink(missing_ok=True)


def test_a_warm_rerun_makes_no_model_call(replica_run):
    assert replica_run.warm.returncode == 0, replica_run.warm.stderr[-3000:]
    assert replica_run.new_rows == 0 and replica_run.new_files == []
    for path in notebooks():
        sent = _calls_sent(replica_run.root / path.name)
        assert not any(sent.values()), f"{path.name}: calls sent on a warm run: {sent}"


def _expected_labels() -> dict[str, str]:
    """Replica name -> the label its head (biased to unit HEAD_UNIT) must give, read from its config's id2label
    or the profile's label_order - the routing under test."""
    from nli_lib.models.hf import map_label_order, read_id2label
    from nli_lib.models.loading import resolve_model
    from nli_lib.profile import load_profile
    from nli_lib.replicas import HEAD_UNIT

    profile = load_profile(PROFILE)
    out = {}
    for ref in profile.refs("nli_model") + profile.refs("extra_models"):
        if ref.label_order:
            out[ref.name] = ref.label_order[HEAD_UNIT]
        else:
            units = read_id2label(resolve_model(ref.id))
            out[ref.name] = LABELS[map_label_order(units, LABELS).index(HEAD_UNIT)]
    return out


def test_replica_predictions_follow_id2label(replica_run, monkeypatch):
    monkeypatch.setenv("NLI_USER_CWD", str(replica_run.work))
    expected = _expected_labels()
    assert len(set(expected.values())) == 3  # the replicas' heads name all three labels, in different units
    with gzip.open(replica_run.root / "outputs" / "tables" / "51_taxinli_error_analysis" / "records" /
                   "predictions.csv.gz", "rt") as fh:
        records = pd.read_csv(fh)
    for name, label in expected.items():
        preds = records[f"pred {name}"]
        assert set(preds[preds != "not scored"]) == {label}, name


def test_outputs_name_models_never_by_a_local_path(replica_run):
    outputs = replica_run.root / "outputs"
    for path in outputs.rglob("*"):
        if path.suffix in (".json", ".csv", ".md", ".jsonl") or path.name.endswith(".csv.gz"):
            text = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
            assert str(replica_run.work) not in text, path
    card = pd.read_csv(outputs / "tables" / "scorecard.csv")
    computed = card[~card["status"].str.startswith("not computed")]
    assert not computed["model"].astype(str).str.contains("/replicas/").any()
    # no replica is declared a paper system (no `as:`): nothing is graded as the paper's model
    assert "paper-model" not in set(computed["basis"])
