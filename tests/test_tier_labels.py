"""One tier label per run: an offline run with an LLM endpoint (whose components call themselves 'paper') writes
tables and records labelled 'offline', like their captions and sidecars; the paper tier keeps each model's own."""
from __future__ import annotations

import gzip
import json

import pandas as pd

from nli_lib.outputs import Outputs

ROWS = pd.DataFrame({"model": ["local-llm", "tfidf-logreg", "GPT-4o (printed)"], "accuracy": [70.0, 60.0, 90.0],
                     "tier": ["paper", "offline", "paper (printed)"]})


def _written(out: Outputs):
    table = pd.read_csv(out.table(ROWS, "t", ref="companion-table-1", caption="c"))
    by_model = pd.read_csv(out.table(ROWS.set_index(["model", "tier"]), "i", ref="companion-table-1", index=True))
    path = out.records(ROWS, "r", ref="companion-table-1")
    with gzip.open(path, "rt") if str(path).endswith(".gz") else open(path) as f:
        records = pd.read_csv(f)
    sidecar = json.loads(path.with_name("r.json").read_text())
    return table["tier"].tolist(), by_model["tier"].tolist(), records["tier"].tolist(), sidecar["tier"]


def test_an_offline_run_labels_every_model_row_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    table, by_model, records, sidecar = _written(Outputs("40_factnli_augment", params={}, tier="offline", seed=0))
    assert table == by_model == records == ["offline", "offline", "paper (printed)"]
    assert sidecar == "offline"
    assert ROWS["tier"].tolist() == ["paper", "offline", "paper (printed)"]  # the caller's frame is untouched


def test_the_paper_tier_keeps_each_models_own_label(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    table, by_model, records, sidecar = _written(Outputs("40_factnli_augment", params={}, tier="paper", seed=0))
    assert table == by_model == records == ["paper", "offline", "paper (printed)"] and sidecar == "paper"
