"""Call cache, outputs/index and paper-value registry."""
from __future__ import annotations

import json
import sqlite3

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from nli_lib.cache import CallCache, key_hash  # noqa: E402
from nli_lib.outputs import Outputs, rebuild_index  # noqa: E402
from nli_lib.paper_values import beside_paper, paper_value  # noqa: E402


def test_cache_roundtrip_persists_and_counts(tmp_path):
    path = tmp_path / "c.sqlite"
    c = CallCache(path)
    assert c.get("llm", {"m": "x", "msg": [1]}) is None
    c.put("llm", {"m": "x", "msg": [1]}, {"text": "hi"})
    again = CallCache(path)  # a new process sees what the first stored
    assert again.get("llm", {"msg": [1], "m": "x"}) == {"text": "hi"}  # key order does not matter
    assert again.get_many("llm", [{"m": "x", "msg": [1]}, {"m": "y"}]) == [{"text": "hi"}, None]
    assert again.stats()["llm"] == {"hits": 2, "misses": 1, "writes": 0}
    assert c.stats()["llm"] == {"hits": 0, "misses": 1, "writes": 1}


def test_corrupt_cache_entry_is_reported(tmp_path):
    path = tmp_path / "c.sqlite"
    c = CallCache(path)
    c.put("nli", {"a": 1}, [0.1, 0.9])
    con = sqlite3.connect(path)
    con.execute("UPDATE ns_nli SET value='{not json' WHERE k=?", (key_hash({"a": 1}),))
    con.commit()
    again = CallCache(path)
    with pytest.warns(RuntimeWarning, match=r"1 invalid cache entry in .*c\.sqlite \(nli/[0-9a-f]{12}: not JSON"):
        assert again.get("nli", {"a": 1}) is None  # never used: the caller recomputes it
    assert again.stats()["nli"] == {"hits": 0, "misses": 1, "writes": 0, "invalid": 1}


def test_outputs_write_sidecars_and_index(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    out = Outputs("99_demo", params={"quick": True}, tier="offline", seed=3)
    out.table(pd.DataFrame({"a": [1, 2]}), "t1", ref="taxinli-table-2", models=["m1"], caption="demo")
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    out.figure(fig, "f1", ref="taxinli-fig-5", models=["m1"])
    side = json.loads((tmp_path / "tables/99_demo/t1.json").read_text())
    assert side["tier"] == "offline" and side["seed"] == 3 and side["models"] == ["m1"] and "nli_lib_hash" in side
    assert (tmp_path / "tables/99_demo/t1.md").read_text().startswith("**taxinli-table-2**")
    assert (tmp_path / "figures/99_demo/f1.pdf").is_file()
    index = pd.read_csv(tmp_path / "tables/index.csv")
    assert set(index["ref"]) == {"taxinli-table-2", "taxinli-fig-5"} and set(index["tier"]) == {"offline"}
    assert len(rebuild_index(tmp_path)) == 2
    with pytest.raises(ValueError, match="paper reference"):
        out.table(pd.DataFrame(), "bad", ref="table-2")


def test_paper_values_lookup():
    assert paper_value("taxinli-table-2", "total datapoints") == 10071
    with pytest.raises(KeyError, match="known"):
        paper_value("taxinli-table-2", "nope")
    df = beside_paper({"total datapoints": 10070}, "taxinli-table-2", tier="offline")
    assert df.loc[0, "difference"] == -1


def test_secrets_never_reach_sidecars(tmp_path, monkeypatch):
    """A key in the parameters (nested, or as a value copied from the environment) is not written anywhere."""
    from nli_lib.notebook import start

    secret = "sk-live-SENTINEL-0123456789"
    monkeypatch.setenv("NLI_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("MY_SERVICE_API_KEY", secret)
    params = {"tier": "paper", "seed": 1, "quick": True,
              "llm": {"base_url": f"http://x/v1?k={secret}", "model": "m", "api_key": secret,
                      "api_key_env": "MY_SERVICE_API_KEY", "max_tokens": 64}}
    nb = start("99_secret_demo", params)
    nb.out.table(pd.DataFrame({"a": [1]}), "t", ref="atoms-table-2")
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert secret not in written and secret not in repr(nb.params)
    side = json.loads((tmp_path / "tables/99_secret_demo/t.json").read_text())
    assert side["params"]["llm"] == {"base_url": "http://x/v1?k=***", "model": "m",
                                     "api_key_env": "MY_SERVICE_API_KEY", "max_tokens": 64}


def test_runner_refuses_a_profile_holding_a_key(tmp_path):
    from nli_lib import runner

    profile = tmp_path / "leaky.yaml"
    profile.write_text("tier: paper\nllm:\n  base_url: http://localhost:8000/v1\n  model: m\n  api_key: sk-abc\n")
    with pytest.raises(SystemExit, match="api_key_env"):
        runner.main(["--profile", str(profile), "--notebook-dir", str(tmp_path), "--runs-dir", str(tmp_path / "runs")])
