"""Dropout masks drawn by numpy (models.dropout) and the TrainSpec field that asks for them."""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import json

import numpy as np
import pytest

from nli_lib.models import training as ft

from kit import tiny_bert, tiny_train_frame

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from nli_lib.models.dropout import (  # noqa: E402  (imports torch)
    ATTENTION,
    NumpyDropout,
    NumpyMasks,
    numpy_dropout,
)

PAIRS = [("a man is sleeping outside .", "a person is sleeping ."),
         ("the cat is sleeping in the dog on a man outside , the person is running", "a dog"),
         ("no", "a man")]


def test_numpy_masks_zero_a_share_p_and_scale_the_rest_as_torch_does():
    x = torch.ones(400, 500, requires_grad=True)
    y = NumpyMasks(np.random.default_rng(3)).apply(x, 0.25)
    assert abs(float((y == 0).float().mean()) - 0.25) < 0.005
    assert torch.unique(y).tolist() == [0.0, pytest.approx(1 / 0.75)]
    y.sum().backward()  # the gradient goes through the same mask
    assert torch.equal(x.grad, y.detach())
    again = NumpyMasks(np.random.default_rng(3)).apply(torch.ones(400, 500), 0.25)
    assert torch.equal(again, y.detach())  # a seeded generator repeats its masks
    other = NumpyMasks(np.random.default_rng(4)).apply(torch.ones(400, 500), 0.25)
    assert not torch.equal(other, again)
    half = NumpyMasks(np.random.default_rng(3)).apply(torch.ones(8, 8, dtype=torch.bfloat16), 0.25)
    assert half.dtype == torch.bfloat16  # scaled in the input's dtype, as torch.nn.functional.dropout does
    assert set(torch.unique(half).tolist()) == {0.0, torch.tensor(1 / 0.75, dtype=torch.bfloat16).item()}
    masks = NumpyMasks(np.random.default_rng(0))
    z = torch.randn(3, 4)
    assert masks.apply(z, 0.0) is z and masks.elements == 0


def test_numpy_dropout_acts_in_training_only():
    drop = NumpyDropout(0.5, NumpyMasks(np.random.default_rng(0)))
    x = torch.ones(100, 100)
    assert (drop(x) == 0).any()
    drop.eval()
    assert drop(x) is x


def tiny_model(tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = tiny_bert(tmp_path / "m")
    return AutoTokenizer.from_pretrained(path), AutoModelForSequenceClassification.from_pretrained(path)


def test_numpy_dropout_swaps_every_dropout_and_the_attention_then_puts_them_back(tmp_path):
    _, model = tiny_model(tmp_path)
    before = {name: module for name, module in model.named_modules()}
    attention = model.config._attn_implementation
    with numpy_dropout(model, NumpyMasks(np.random.default_rng(0))):
        inside = dict(model.named_modules())
        assert not any(type(m) is torch.nn.Dropout for m in inside.values())
        assert sum(isinstance(m, NumpyDropout) for m in inside.values()) == sum(
            type(m) is torch.nn.Dropout for m in before.values())
        assert model.config._attn_implementation == ATTENTION
    assert dict(model.named_modules()) == before  # the very modules, back in place
    assert model.config._attn_implementation == attention
    with pytest.raises(KeyError), numpy_dropout(model, NumpyMasks(np.random.default_rng(0))):
        raise KeyError("a failing step")
    assert dict(model.named_modules()) == before and model.config._attn_implementation == attention


def test_the_numpy_dropout_attention_scores_as_the_model_does_with_padding(tmp_path):
    tok, model = tiny_model(tmp_path)
    model.eval()
    enc = tok([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
    assert (enc["attention_mask"] == 0).any()  # padded pairs: the mask must reach the attention
    with torch.no_grad():
        plain = model(**enc).logits
        with numpy_dropout(model, NumpyMasks(np.random.default_rng(0))):
            ours = model(**enc).logits
    assert torch.allclose(plain, ours, atol=1e-5)


def test_a_training_forward_draws_every_mask_from_numpy_and_none_from_torch(tmp_path):
    tok, model = tiny_model(tmp_path)
    model.train()
    enc = tok([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
    batch, length = enc["input_ids"].shape
    cfg = model.config
    masks = NumpyMasks(np.random.default_rng(0))
    state = torch.get_rng_state()
    with numpy_dropout(model, masks):
        model(**enc).logits.sum().backward()
    assert torch.equal(torch.get_rng_state(), state)  # torch drew no mask
    hidden = batch * length * cfg.hidden_size
    per_layer = batch * cfg.num_attention_heads * length * length + 2 * hidden  # attention map, two block outputs
    assert masks.elements == hidden + cfg.num_hidden_layers * per_layer + batch * cfg.hidden_size  # + embeddings, head


def test_finetune_draws_dropout_masks_with_numpy_when_the_spec_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(16)
    drawn, real = [], NumpyMasks.apply
    monkeypatch.setattr(NumpyMasks, "apply", lambda self, x, p: drawn.append(x.numel()) or real(self, x, p))
    spec = ft.TrainSpec(base=str(base), epochs=1, batch_size=4, max_length=32, lr=1e-3)
    plain = ft.finetune(spec, df, eval_df=df, name="plain", progress=False)
    assert not drawn
    numpy_spec = dataclasses.replace(spec, dropout_rng="numpy")
    ours = ft.finetune(numpy_spec, df, eval_df=df, name="ours", progress=False)
    assert len(drawn) > 0
    assert ours.model_dir != ft.model_dir(spec, df, "ours", df)  # the field is in the cache key
    assert json.loads((ours.model_dir / "config.json").read_text()).get("_attn_implementation") != ATTENTION
    again = ft.finetune(numpy_spec, df, eval_df=df, name="again", progress=False)
    from safetensors.torch import load_file

    weights = lambda clf: load_file(clf.model_dir / "model.safetensors")  # noqa: E731  (as saved: not packed)
    same = all(torch.equal(a, b) for a, b in zip(weights(ours).values(), weights(again).values()))
    assert same  # seeded: the same masks, the same model
    assert not all(torch.equal(a, b) for a, b in zip(weights(ours).values(), weights(plain).values()))
    with pytest.raises(ValueError, match="dropout_rng"):  # refused by the spec, before anything loads
        dataclasses.replace(spec, dropout_rng="philox")


def test_models_trained_with_torchs_masks_keep_the_folders_they_had_before_the_field(tmp_path, monkeypatch):
    """A model whose spec leaves dropout_rng at "torch" and first_token_training off is found under the key it had
    before those fields existed (the spec's other fields, the base and the data), so no cached model is trained
    again."""
    from nli_lib.hashing import stable_json, text_hash
    from nli_lib.models.loading import weights_fingerprint

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(8)
    spec = ft.TrainSpec(base=str(base), epochs=1, batch_size=4, max_length=32)
    before = {k: v for k, v in dataclasses.asdict(spec).items() if k not in ("dropout_rng", "first_token_training")}
    old_key = stable_json({**before, "base": weights_fingerprint(str(base)), "data": ft.data_fingerprint(df, spec),
                           "eval_data": ""})
    assert ft.model_dir(spec, df, "m").name == f"m-{text_hash(old_key)}"
    assert ft.model_dir(dataclasses.replace(spec, dropout_rng="numpy"), df, "m") != ft.model_dir(spec, df, "m")
    assert ft.model_dir(dataclasses.replace(spec, first_token_training=True), df, "m") != ft.model_dir(spec, df, "m")


def test_auto_dropout_rng_is_numpy_on_a_cpu_only(monkeypatch):
    assert ft.auto_dropout_rng("cpu") == "numpy"
    monkeypatch.setattr(ft, "pick_device", lambda device=None: "cuda:0")
    assert ft.auto_dropout_rng() == "torch"
    monkeypatch.undo()
    from nli_lib.models import hf
    from nli_lib.models.named import offline_spec

    if hf.pick_device() == "cpu":
        assert offline_spec(quick=True).dropout_rng == "numpy"
    assert offline_spec(quick=True).first_token_training and offline_spec(quick=False).first_token_training


def _one_step_gradients(model, enc, labels, masks=None, first_token=False):
    """Loss and parameter gradients of one float32 training step (numpy's masks when `masks` is given)."""
    from nli_lib.models.first_token import first_token_only

    model.train()
    model.zero_grad()
    with numpy_dropout(model, masks) if masks else contextlib.nullcontext(), \
            first_token_only(model) if first_token else contextlib.nullcontext():
        loss = model(**enc, labels=labels).loss
    loss.backward()
    return float(loss.detach()), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def _same_step_both_ways(model, enc, labels, seed: int | None = None):
    """One float32 step of `model` with its full last layer and one of a copy with the first-token forward, both
    with numpy's masks from `seed` (or the model's own dropout when None): the same draws, the same loss and every
    gradient within 1e-6. Returns the copy and the full layer's gradients."""
    from nli_lib.models.first_token import install_first_token_forward, scores_first_token_only

    short = copy.deepcopy(model)
    assert install_first_token_forward(short.eval(), dict(enc)) and scores_first_token_only(short)
    full_masks, short_masks = ((NumpyMasks(np.random.default_rng(seed)), NumpyMasks(np.random.default_rng(seed)))
                               if seed is not None else (None, None))
    full_loss, full = _one_step_gradients(model, enc, labels, full_masks)
    short_loss, grads = _one_step_gradients(short, enc, labels, short_masks, first_token=True)
    if seed is not None:
        assert short_masks.elements == full_masks.elements  # the same draws, so the masks stay in step
        assert short_masks.rows is None  # the first-row drawing ends with the last layer
    assert short_loss == pytest.approx(full_loss, abs=1e-6)
    assert full.keys() == grads.keys()
    for name in full:
        assert torch.allclose(full[name], grads[name], atol=1e-6), name
    return short, full


def test_a_last_layer_trained_for_the_first_token_gets_the_full_layers_masks_and_gradients(tmp_path):
    tok, model = tiny_model(tmp_path)
    enc = tok([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
    assert (enc["attention_mask"] == 0).any()
    labels = torch.tensor([0, 1, 2])
    short, full = _same_step_both_ways(model, enc, labels, seed=5)
    _, other = _one_step_gradients(short, enc, labels, NumpyMasks(np.random.default_rng(6)), first_token=True)
    assert not all(torch.allclose(full[n], other[n], atol=1e-6) for n in full)  # other masks, other gradients


def test_first_token_training_with_torchs_masks_keeps_the_gradients_without_dropout(tmp_path):
    tok, model = tiny_model(tmp_path)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    enc = tok([p for p, _ in PAIRS], [h for _, h in PAIRS], padding=True, return_tensors="pt")
    _same_step_both_ways(model, enc, torch.tensor([2, 0, 1]))


def test_finetune_with_first_token_training_is_the_full_training_to_rounding(tmp_path, monkeypatch):
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(16)
    from nli_lib.models import first_token

    calls, real = [], first_token._first_token_training
    monkeypatch.setattr(first_token, "_first_token_training", lambda *a: calls.append(1) or real(*a))
    spec = ft.TrainSpec(base=str(base), epochs=2, batch_size=4, max_length=32, lr=1e-3, dropout_rng="numpy")
    full = ft.finetune(spec, df, eval_df=df, name="full", progress=False)
    assert not calls
    short = ft.finetune(dataclasses.replace(spec, first_token_training=True), df, eval_df=df, name="short",
                        progress=False)
    assert len(calls) == 2 * 4  # every step of both epochs ran the last layer for the first token
    assert short.model_dir.name != full.model_dir.name  # in the cache key
    logs = [json.loads((clf.model_dir / "train_log.json").read_text()) for clf in (full, short)]
    assert [log["first_token_training"] for log in logs] == [False, True]
    from safetensors.torch import load_file

    a, b = load_file(full.model_dir / "model.safetensors"), load_file(short.model_dir / "model.safetensors")
    assert a.keys() == b.keys()
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)
    assert not all(torch.equal(a[k], load_file(base / "model.safetensors")[k]) for k in a if "classifier" not in k)


@pytest.mark.parametrize("family", ["Roberta", "XLMRoberta", "Electra"])
def test_first_token_training_keeps_the_gradients_of_the_other_first_token_heads(family):
    import transformers

    config = getattr(transformers, f"{family}Config")(
        vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=20, num_labels=3, pad_token_id=1)
    torch.manual_seed(0)
    model = getattr(transformers, f"{family}ForSequenceClassification")(config)
    enc = {"input_ids": torch.tensor([[0, 5, 7, 9, 2, 2, 11, 2], [0, 8, 6, 2, 2, 12, 2, 1]]),
           "attention_mask": torch.tensor([[1] * 8, [1] * 7 + [0]])}
    _same_step_both_ways(model, enc, torch.tensor([0, 2]), seed=1)


def test_finetune_says_it_is_about_to_train_and_is_silent_when_the_model_is_cached(tmp_path, monkeypatch, capsys):
    """A notebook that is about to train for minutes says so first (steps and where the model will be kept); a
    cached model loads without that line."""
    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    base = tiny_bert(tmp_path / "base", {0: "LABEL_0", 1: "LABEL_1"})
    df = tiny_train_frame(16)
    spec = ft.TrainSpec(base=str(base), epochs=2, batch_size=4, max_length=32, lr=1e-3)
    clf = ft.finetune(spec, df, eval_df=df, name="announced", progress=False)
    out = capsys.readouterr().out
    assert "training announced: not in the model cache" in out and "2 epoch(s), 8 steps" in out
    assert str(clf.model_dir) in out
    ft.finetune(spec, df, eval_df=df, name="announced", progress=False)
    assert "training announced" not in capsys.readouterr().out
