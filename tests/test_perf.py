"""Performance plumbing (issue 18): the precision key in the cache key, oneDNN packing, int8 and first-token
scoring that keep or report the numbers, the roofline's FLOP count, the bench lines and the README table
generated from them. No timing is asserted here: speed is measured by benchmarks/, never by tests."""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from nli_lib import bench
from nli_lib.cache import CallCache
from nli_lib.config import LABELS
from nli_lib.profile import ProfileError, load_profile
from nli_lib.roofline import EncoderShape, mean_pair_flops, pair_flops, roofline_pairs_per_s

from kit import tiny_bert

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parent.parent
PREMISES, HYPOTHESES = ["a man is sleeping outside .", "the dog runs", "a woman eats"], \
    ["a person is sleeping .", "a cat sits on the man", "a woman is not eating"]


# ---- precision: an opt-in fast path, part of the cache key

@pytest.mark.mirror  # int8 calibrates on e-SNLI dev pairs
def test_every_precision_has_its_own_cache_key_and_entries(tmp_path):
    from nli_lib.models.hf import INT8_SCHEME, HFClassifier, int8_calibration_pairs
    from nli_lib.models.int8 import OUTLIER_CHANNELS, SMOOTHING_ALPHA, CalibratedInt8Linear

    path = tiny_bert(tmp_path / "m")
    cache = CallCache(tmp_path / "calls.sqlite")
    models = {p: HFClassifier(path, progress=False, cache=cache, device="cpu", precision=p)
              for p in ("float32", "bfloat16", "int8")}
    assert len({m.fingerprint for m in models.values()}) == 3
    fp32 = models["float32"].predict_proba(PREMISES, HYPOTHESES)
    int8 = models["int8"].predict_proba(PREMISES, HYPOTHESES)  # computed, not read from fp32's entries
    assert np.allclose(int8.sum(1), 1) and np.abs(int8 - fp32).max() < 0.05 and not np.array_equal(int8, fp32)
    kinds = {type(m) for m in models["int8"].model.modules()}
    assert CalibratedInt8Linear in kinds and torch.nn.Linear not in kinds
    # the scheme and the calibration pairs are in the key
    assert models["int8"]._precision_tag.endswith(f":{int8_calibration_pairs()[2]}")
    assert f"|int8:{INT8_SCHEME}:levels=" in models["int8"].fingerprint
    # the scheme names its settings: changing one without the key would reuse the other scheme's entries
    assert f"smooth{SMOOTHING_ALPHA}-" in INT8_SCHEME and f"fp32outliers{OUTLIER_CHANNELS}-" in INT8_SCHEME
    again = HFClassifier(path, progress=False, cache=cache, device="cpu", precision="int8")
    again._model = "must not be used"  # int8's own entries answer it
    np.testing.assert_array_equal(again.predict_proba(PREMISES, HYPOTHESES), int8)


@pytest.mark.mirror
def test_an_int8_pair_scores_the_same_whatever_it_is_batched_with(tmp_path, monkeypatch):
    """A cache entry is keyed by the pair alone, so its int8 outputs must not depend on its batch neighbours.
    torch's dynamic quantisation took each layer's input scale from the whole batch: on this tiny model its
    hidden states moved by ~4e-4 when the pairs below were batched with two long ones (the probabilities of a
    random 3-way head sit near 1/3 and hardly move, so the layers are compared)."""
    from nli_lib.models.hf import HFClassifier

    monkeypatch.setenv("NLI_CACHE_DIR", str(tmp_path / "cache"))
    clf = HFClassifier(tiny_bert(tmp_path / "m"), progress=False, device="cpu", precision="int8")
    loud = ["WOW " * 12 + "!!!", "zzz " * 10]  # long, unusual pairs widen a batch-wide range
    clf.batch_size = 8
    together = clf.hidden_states(PREMISES + loud, HYPOTHESES + loud)
    clf.batch_size = 1
    alone = clf.hidden_states(PREMISES, HYPOTHESES)
    for layer_together, layer_alone in zip(together, alone):
        np.testing.assert_allclose(layer_together[: len(PREMISES)], layer_alone, atol=1e-5)


@pytest.mark.mirror  # int8 calibrates on e-SNLI dev pairs
@pytest.mark.parametrize("native", [True, False])
def test_int8_scores_its_unsure_pairs_again_and_keeps_that_answer(tmp_path, monkeypatch, native):
    """A pair whose two most probable labels are within `recheck_margin` under int8 is scored again at the recheck
    precision (bfloat16 where the CPU computes it natively, else float32), and that answer replaces int8's; the
    other pairs keep int8's. The margin is set between two of the pairs' int8 margins, so both kinds occur."""
    from nli_lib.models import hf
    from nli_lib.models.int8 import CalibratedInt8Linear

    monkeypatch.setattr(hf, "native_bf16", lambda device: native)
    path = tiny_bert(tmp_path / "m")
    premises, hypotheses = PREMISES + ["two kids play chess", "it rains"], HYPOTHESES + ["children play", "sun"]
    alone = hf.HFClassifier(path, progress=False, device="cpu", precision="int8", recheck_margin=0)
    raw = alone._predict_proba_uncached(premises, hypotheses)
    assert alone.rechecked == 0 and alone._rechecker is None
    top_two = np.sort(raw, axis=1)[:, -2:]
    margins = np.sort(top_two[:, 1] - top_two[:, 0])
    cut = int(np.argmax(np.diff(margins)))  # the widest gap between two pairs' margins
    margin = float((margins[cut] + margins[cut + 1]) / 2)
    unsure = np.flatnonzero(top_two[:, 1] - top_two[:, 0] < margin)
    assert 0 < len(unsure) < len(premises)

    calls, sizes = [], []
    uncached = hf.HFClassifier._predict_proba_uncached

    def spy(self, p, h, batch_size=None):
        calls.append([self.precision, list(p), list(h)])
        sizes.append(batch_size)
        out = uncached(self, p, h, batch_size)
        next(c for c in calls if c[1] == list(p)).append(out.copy())  # int8's own call returns after the check's
        return out

    monkeypatch.setattr(hf.HFClassifier, "_predict_proba_uncached", spy)
    checked = hf.HFClassifier(path, progress=False, device="cpu", precision="int8", recheck_margin=margin)
    assert checked.recheck_precision == ("bfloat16" if native else "float32")
    probs = checked._predict_proba_uncached(premises, hypotheses)
    assert [c[0] for c in calls] == ["int8", checked.recheck_precision]
    assert sizes == [None, hf.INT8_RECHECK_BATCH]  # small batches: the unsure pairs spread over every length
    _, again_p, again_h, again = calls[1]  # the second pass saw the unsure pairs, and only those
    assert again_p == [premises[i] for i in unsure] and again_h == [hypotheses[i] for i in unsure]
    np.testing.assert_array_equal(probs[unsure], again)
    sure = np.setdiff1d(np.arange(len(premises)), unsure)
    np.testing.assert_array_equal(probs[sure], raw[sure])
    assert not np.array_equal(probs[unsure], raw[unsure]) and checked.rechecked == len(unsure)
    kinds = {type(m) for m in checked._rechecker.model.modules()}  # the model again, at the other precision
    assert CalibratedInt8Linear not in kinds and next(checked._rechecker.model.parameters()).dtype == (
        torch.bfloat16 if native else torch.float32)
    assert checked.model is not checked._rechecker.model and checked._rechecker.recheck_margin == 0


@pytest.mark.mirror  # the int8 cache key names the calibration pairs
def test_the_int8_recheck_is_in_the_cache_key(tmp_path, monkeypatch):
    """The margin and the second pass's precision change probabilities, so both are in the key; int8 alone
    (recheck_margin=0) keeps the key it had before the check existed. Only int8 takes a margin."""
    from nli_lib.models import hf

    path = tiny_bert(tmp_path / "m")
    keys = {}
    for native in (True, False):
        monkeypatch.setattr(hf, "native_bf16", lambda device, native=native: native)
        for margin in (None, 0.02, 0):
            keys[native, margin] = hf.HFClassifier(path, progress=False, device="cpu", precision="int8",
                                                   recheck_margin=margin).fingerprint
    assert len(set(keys.values())) == 5 and keys[True, 0] == keys[False, 0]
    assert keys[True, None].endswith(f"|recheck<{hf.INT8_RECHECK_MARGIN:g}:bfloat16")
    assert keys[False, 0.02].endswith("|recheck<0.02:float32") and "recheck" not in keys[True, 0]
    assert keys[True, 0].endswith(f"|int8:{hf.INT8_SCHEME}:levels=256:weights=127:"
                                  f"{hf.int8_calibration_pairs()[2]}") or ":weights=63:" in keys[True, 0]
    with pytest.raises(ValueError, match="precision int8"):
        hf.HFClassifier(path, precision="float32", recheck_margin=0.05)
    with pytest.raises(ValueError, match="within 0..1"):
        hf.HFClassifier(path, precision="int8", recheck_margin=-0.1)


@pytest.mark.mirror  # the int8 cache key names the calibration pairs
def test_int8_gives_the_weights_7_bits_where_the_kernel_would_saturate(tmp_path, monkeypatch):
    """Without AVX-512 VNNI, x86 int8 kernels add pairs of uint8 x int8 products in 16 bits with saturation: two
    255 x 127 products (64,770) overflow 32,767, two 255 x 63 (32,130) do not. There the weights get 7 bits, the
    inputs keep 256 levels, and the cache key says so. Hand-computed: weight row (1, 1), input range 0..2.55 (scale
    0.01, zero point 0), x = (2.55, 2.55), both inputs at code 255: 5.1 with 7-bit weights on any x86 CPU."""
    from nli_lib.models import int8
    from nli_lib.models.hf import HFClassifier

    monkeypatch.setattr(torch.cpu, "_is_vnni_supported", lambda: True)
    assert int8.int8_levels() == (256, 127)
    monkeypatch.setattr(torch.cpu, "_is_vnni_supported", lambda: False)
    assert int8.int8_levels() == (256, 63)
    linear = torch.nn.Linear(2, 1)
    with torch.no_grad():
        linear.weight.fill_(1.0)
        linear.bias.zero_()
    q = int8.CalibratedInt8Linear(linear, 0.0, 2.55)  # this (patched) CPU's defaults
    assert (q.levels, q.weight_max, round(q.scale, 8), q.zero_point) == (256, 63, 0.01, 0)
    assert float(q(torch.tensor([[2.55, 2.55]]))) == pytest.approx(5.1, abs=1e-5)
    calibration = [{"input": torch.tensor([[-1.0, 1.55]])}]
    seven_bit = int8.quantize_int8(torch.nn.Sequential(torch.nn.Linear(2, 1)), calibration)[0]
    assert seven_bit.weight_max == 63 and int(seven_bit.weight_scale.numel()) == 1
    path = tiny_bert(tmp_path / "m")
    without = HFClassifier(path, progress=False, device="cpu", precision="int8")._precision_tag
    monkeypatch.setattr(torch.cpu, "_is_vnni_supported", lambda: True)
    with_vnni = HFClassifier(path, progress=False, device="cpu", precision="int8")._precision_tag
    assert ":levels=256:weights=63:" in without and ":levels=256:weights=127:" in with_vnni


def test_int8_says_what_to_do_where_torch_has_no_x86_int8_kernels(monkeypatch):
    from nli_lib.models import int8

    monkeypatch.setattr(int8, "int8_kernels_available", lambda: False)
    with pytest.raises(ValueError, match="x86 int8 kernels.*use bfloat16"):
        int8.quantize_int8(torch.nn.Sequential(torch.nn.Linear(2, 1)), [])


@pytest.mark.mirror
def test_int8_fusions_leave_the_numbers_as_they_were(tmp_path):
    """Query, key and value quantise their shared input once, and each feed-forward block runs its GELU inside
    the first matmul and writes the second layer's uint8 input: the same numbers as the unfused layers."""
    from transformers import AutoModelForSequenceClassification

    from nli_lib.models import int8
    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.int8 import CalibratedInt8Linear, quantize_int8

    path = tiny_bert(tmp_path / "m", layers=2, hidden=32, intermediate=64)
    clf = HFClassifier(path, progress=False, device="cpu")
    batches = [batch for _, batch in clf._batches(PREMISES * 4, HYPOTHESES[::-1] * 4, batch_size=4)]
    fused = quantize_int8(AutoModelForSequenceClassification.from_pretrained(path).eval(), batches, levels=256)
    plain = quantize_int8(AutoModelForSequenceClassification.from_pretrained(path).eval(), batches, levels=256,
                          fuse=False)
    layer = fused.bert.encoder.layer[0]
    attention = layer.attention.self
    assert layer.intermediate.dense.gelu and layer.intermediate.dense.out_format is not None
    # the second feed-forward layer keeps its widest input channels in float32, handed over by the first
    assert len(layer.output.dense.outliers) == 64 // 8 and layer.output.dense.handoff is not None
    assert torch.equal(layer.intermediate.dense.consumer_outliers, layer.output.dense.outliers)
    assert layer.intermediate.dense.input_multiplier is not None  # smoothed
    assert attention.query.input_multiplier is attention.key.input_multiplier is attention.value.input_multiplier
    assert type(layer.intermediate.intermediate_act_fn) is torch.nn.Identity
    assert attention.query.shared is attention.key.shared is attention.value.shared is not None
    assert not plain.bert.encoder.layer[0].intermediate.dense.gelu
    # both block outputs add their skip connection inside the matmul (int8.fuse_residual_adds); unfused, they do not
    outputs = [layer.attention.output, layer.output]
    assert all(vars(m)["forward"].__func__ is int8._residual_forward for m in outputs)
    assert not any("forward" in vars(m) for m in (plain.bert.encoder.layer[0].attention.output,
                                                  plain.bert.encoder.layer[0].output))
    assert all(type(m) is not torch.nn.Linear for m in fused.modules())
    assert sum(isinstance(m, CalibratedInt8Linear) for m in fused.modules()) == 2 * 6 + 2  # + pooler, head
    with torch.inference_mode():
        for batch in batches:
            np.testing.assert_allclose(fused(**batch).logits.numpy(), plain(**batch).logits.numpy(), atol=1e-5)


def test_calibrated_int8_linear_uses_the_calibrated_range_and_clips_outside_it():
    """Hand-computed at 128 input levels (what a CPU without VNNI gets; hand computations here use 128, which no
    x86 int8 kernel saturates): range -1..1.54 gives scale 2.54/127 = 0.02 and zero point 50; the weight row
    (1, -1) is exact in int8 (scale 1/127). x = (0.5, 0.24) is exact on the grid: 0.5 - 0.24 = 0.26. x = (3, 0)
    is clipped to the range's top, 1.54 (code 127: quantize_per_tensor alone would give code 200, beyond the 128
    levels, and at 256 levels a VNNI-less kernel saturates: this test saw 3.0 come out before the clip)."""
    from nli_lib.models.int8 import CalibratedInt8Linear, calibrate

    linear = torch.nn.Linear(2, 1)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor([[1.0, -1.0]]))
        linear.bias.zero_()
    q = CalibratedInt8Linear(linear, -1.0, 1.54, levels=128, weight_max=127)
    assert (round(q.scale, 6), q.zero_point) == (0.02, 50)
    got = q(torch.tensor([[0.5, 0.24], [3.0, 0.0]]))
    np.testing.assert_allclose(got.numpy().ravel(), [0.26, 1.54], atol=1e-6)

    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)) - 10)

    model = Two()
    ranges, fused = calibrate(model, [{"x": torch.tensor([[1.0, -2.0]])}, {"x": torch.tensor([[4.0, 0.0]])}])
    assert set(ranges) == {"a", "b"} and fused == {}
    assert torch.equal(ranges["a"][0], torch.tensor([1.0, -2.0])) and torch.equal(ranges["a"][1],
                                                                                 torch.tensor([4.0, 0.0]))
    assert not any(h for m in model.modules() for h in m._forward_pre_hooks.values())  # hooks removed


def test_smoothing_evens_out_the_input_channels_and_keeps_the_product():
    """Hand-computed SmoothQuant (alpha 0.5) at 128 levels: input channels in -4..4 and -0.25..0.25, weight row
    (1, 1): s = (sqrt(4) / 1, sqrt(0.25) / 1) = (2, 0.5), so the layer sees -2..2 and -0.5..0.5 and one range -2..2
    (scale 4/127) covers both, half the unsmoothed scale (8/127); the weight row becomes (2, 0.5) (int8 scale 2/127:
    0.5 is 31.75 steps, stored as 32, 0.50394). x = (0, 0.03) gives 0.03: unsmoothed, 0.03 is 0.48 of a step and
    reads 0; smoothed, 0.06 is 1.9 steps, read as 2 (0.06299), times 0.50394 = 0.03174."""
    from nli_lib.models.int8 import CalibratedInt8Linear, int8_plan

    linear = torch.nn.Linear(2, 1)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor([[1.0, 1.0]]))
        linear.bias.zero_()
    lo, hi = torch.tensor([-4.0, -0.25]), torch.tensor([4.0, 0.25])
    low, high, outliers, multiplier = int8_plan(linear.weight, lo, hi, outliers=False, alpha=0.5)
    assert (low, high, outliers) == (-2.0, 2.0, None)
    torch.testing.assert_close(multiplier, torch.tensor([0.5, 2.0]))
    smoothed = CalibratedInt8Linear(linear, low, high, levels=128, weight_max=127, input_multiplier=multiplier)
    plain = CalibratedInt8Linear(linear, -4.0, 4.0, levels=128, weight_max=127)
    assert smoothed.scale == pytest.approx(4 / 127) and plain.scale == pytest.approx(8 / 127)
    x = torch.tensor([[0.0, 0.03]])
    assert float(smoothed(x)) == pytest.approx(2 * 4 / 127 * 32 * 2 / 127, abs=1e-6)  # 0.03174
    assert float(plain(x)) == pytest.approx(0.0, abs=1e-6)


def test_outlier_channels_are_computed_in_float32_and_the_range_covers_the_others():
    """Hand-computed at 128 levels: 8 input channels, channel 2 reaching 30, the others within -1..1: one float32
    channel (an eighth of 8), the int8 range -1..1 (scale 2/127, zero point 64) over the rest; weight row
    (1, ..., 1). x = (0.5, 0, 30, 0, ...) gives 30.5: the 30 exactly in float32, the 0.5 (31.75 steps, read as 32:
    0.50394) within half a step. x = (0.05, 0, ...) gives 0.05 (3.175 steps, read as 3: 0.04724); with one range
    over all channels (-1..30, scale 31/127 = 0.244) it reads 0."""
    from nli_lib.models.int8 import CalibratedInt8Linear, int8_plan

    linear = torch.nn.Linear(8, 1)
    with torch.no_grad():
        linear.weight.fill_(1.0)
        linear.bias.zero_()
    lo, hi = -torch.ones(8), torch.ones(8)
    hi[2] = 30.0
    low, high, outliers, multiplier = int8_plan(linear.weight, lo, hi, outliers=True)
    assert (low, high, outliers.tolist(), multiplier) == (-1.0, 1.0, [2], None)
    q = CalibratedInt8Linear(linear, low, high, levels=128, weight_max=127, outliers=outliers)
    assert (q.scale, q.zero_point) == (pytest.approx(2 / 127), 64) and float(q.outlier_weight.sum()) == 1.0
    x = torch.zeros(2, 8)
    x[0, 0], x[0, 2], x[1, 0] = 0.5, 30.0, 0.05
    got = q(x).detach().ravel()
    np.testing.assert_allclose(got.numpy(), [30 + 32 * 2 / 127, 3 * 2 / 127], atol=1e-5)
    one_range = CalibratedInt8Linear(linear, -1.0, 30.0, levels=128, weight_max=127)
    assert float(one_range(x).detach().ravel()[1]) == pytest.approx(0.0, abs=1e-6)


def test_a_residual_is_added_inside_the_int8_matmul():
    """Hand-computed at 128 levels, as above: the outlier layer's rows give 30 + 32 * 2/127 and 3 * 2/127 (bias 0.25
    on top); with residual (1, -2) each comes out plus its residual: the skip connection of a block output, added by
    the kernel. The grid layer (range -1..1.54, weight row (1, -1)) gives 0.26 + 0.25 (bias) + 10. A fused GELU or
    a uint8 result has no place for a float32 residual and is refused."""
    from nli_lib.models.int8 import CalibratedInt8Linear

    linear = torch.nn.Linear(8, 1)
    with torch.no_grad():
        linear.weight.fill_(1.0)
        linear.bias.fill_(0.25)
    q = CalibratedInt8Linear(linear, -1.0, 1.0, levels=128, weight_max=127, outliers=torch.tensor([2]))
    x = torch.zeros(2, 8)
    x[0, 0], x[0, 2], x[1, 0] = 0.5, 30.0, 0.05
    want = np.array([30 + 32 * 2 / 127, 3 * 2 / 127]) + 0.25
    np.testing.assert_allclose(q(x).ravel().numpy(), want, atol=1e-5)
    residual = torch.tensor([[1.0], [-2.0]])
    np.testing.assert_allclose(q(x, residual=residual).ravel().numpy(), want + [1.0, -2.0], atol=1e-5)
    two = torch.nn.Linear(2, 1)
    with torch.no_grad():
        two.weight.copy_(torch.tensor([[1.0, -1.0]]))
        two.bias.fill_(0.25)
    grid = CalibratedInt8Linear(two, -1.0, 1.54, levels=128, weight_max=127)
    got = grid(torch.tensor([[[0.5, 0.24]]]), residual=torch.tensor([[[10.0]]]))
    assert got.shape == (1, 1, 1) and float(got) == pytest.approx(10.51, abs=1e-5)
    gelu = CalibratedInt8Linear(two, -1.0, 1.54, levels=128, weight_max=127, gelu=True)
    with pytest.raises(ValueError, match="residual"):
        gelu(torch.tensor([[0.5, 0.24]]), residual=torch.tensor([[1.0]]))


def test_a_block_output_that_does_not_add_its_input_keeps_its_own_forward():
    """`fuse_residual_adds` installs the fused forward only where a probe gives the module's own output: a block
    output with the same layout and signature that subtracts its input instead keeps its forward (and its
    numbers), while the one that adds it gets the fused forward."""
    from nli_lib.models import int8

    class Out(torch.nn.Module):
        def __init__(self, sign):
            super().__init__()
            self.sign, self.dense, self.LayerNorm = sign, torch.nn.Linear(8, 8), torch.nn.LayerNorm(8)

        def forward(self, hidden_states, input_tensor):
            return self.LayerNorm(self.dense(hidden_states) + self.sign * input_tensor)

    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.adds, self.subtracts = Out(1.0), Out(-1.0)

        def forward(self, hidden_states, input_tensor):
            return self.adds(hidden_states, input_tensor) + self.subtracts(hidden_states, input_tensor)

    _ = torch.manual_seed(0)
    batch = {"hidden_states": torch.randn(2, 3, 8), "input_tensor": torch.randn(2, 3, 8)}
    model = int8.quantize_int8(Two().eval(), [batch], fuse=False)
    with torch.inference_mode():
        want = model(**batch)
    assert int8.fuse_residual_adds(model) == 1
    assert "forward" in vars(model.adds) and "forward" not in vars(model.subtracts)
    with torch.inference_mode():
        torch.testing.assert_close(model(**batch), want, atol=1e-4, rtol=0)


def test_int8_layers_take_this_cpus_levels_by_default(monkeypatch):
    """A layer built without `levels` and `weight_max` takes the CPU's (`int8_levels`): fixed 8-bit weights with 256
    input levels saturated the kernel's 16-bit pair sums on a CPU without VNNI (the default until 2026-11-28).
    Weight row (1, -0.25): 127 and -32 with 8 bits (-31.75 rounded), 63 and -16 with 7 (-15.75)."""
    from nli_lib.models import int8

    linear = torch.nn.Linear(2, 1)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor([[1.0, -0.25]]))
    for vnni, weight_max, rounded in ((True, 127, -32), (False, 63, -16)):
        monkeypatch.setattr(torch.cpu, "_is_vnni_supported", lambda vnni=vnni: vnni)
        q = int8.CalibratedInt8Linear(linear, -1.0, 1.0)
        assert (q.levels, q.weight_max) == (256, weight_max) and q.scale == pytest.approx(2 / 255)
        assert q.weight_scale.tolist() == pytest.approx([1 / weight_max])
        assert int8._int8_rows(linear.weight.detach(), weight_max)[0].tolist() == [[weight_max, rounded]]


def test_fused_uint8_output_is_clipped_at_the_consumers_levels():
    """A feed-forward block's first layer writes its GELU output as the second layer's uint8 codes; with 128 levels
    the codes stop at 127 (oneDNN's uint8 output would go to 255). Range 0..1.27 (scale 0.01, zero point 0): an
    output of 3 is code 127, 1.27; an output of 0.5 is code 50."""
    from nli_lib.models.int8 import CalibratedInt8Linear

    linear = torch.nn.Linear(1, 2)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor([[1.0], [0.25]]))
        linear.bias.zero_()
    q = CalibratedInt8Linear(linear, 0.0, 2.0, levels=128, weight_max=127, out_format=(0.01, 0))
    codes = q(torch.tensor([[2.0]]))  # outputs 2.0 and 0.5, no GELU
    assert codes.dtype == torch.uint8 and codes.ravel().tolist() == [127, 50]


def test_a_fused_layer_refuses_uint8_its_producer_did_not_write():
    from nli_lib.models import int8

    handoff = int8._Handoff()
    handoff.put(torch.zeros(2, 3, dtype=torch.uint8), torch.zeros(6, 1))
    with pytest.raises(RuntimeError, match="producer did not write"):
        handoff.take(torch.zeros(2, 3, dtype=torch.uint8))


@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_batch_gives_what_the_tokenizer_pads(tmp_path, side):
    """Our numpy padding returns exactly tokenizer.pad's tensors (ids, token types, mask; either side), for rows
    in any order; keys it does not know go to tokenizer.pad."""
    from transformers import AutoTokenizer

    from nli_lib.models.hf import pad_batch

    tok = AutoTokenizer.from_pretrained(tiny_bert(tmp_path / "m"))
    tok.padding_side = side
    enc = tok(PREMISES * 3, HYPOTHESES[::-1] * 3, truncation=True, max_length=64)
    assert {"input_ids", "token_type_ids", "attention_mask"} <= set(enc)
    rows = [4, 0, 8, 2]
    want = tok.pad({k: [enc[k][i] for i in rows] for k in enc}, return_tensors="pt")
    got = pad_batch(tok, enc, rows)
    assert set(got) == set(want) and got["input_ids"].shape[1] == max(len(enc["input_ids"][i]) for i in rows)
    for key in want:
        assert got[key].dtype == want[key].dtype and torch.equal(got[key], want[key]), key
    extra = tok(PREMISES, HYPOTHESES, return_special_tokens_mask=True)
    assert "special_tokens_mask" in pad_batch(tok, extra, [0, 1])


def test_int8_refuses_a_gpu_and_unknown_precisions_are_refused(tmp_path):
    from nli_lib.models.hf import HFClassifier

    path = tiny_bert(tmp_path / "m")
    with pytest.raises(ValueError, match="CPU only"):
        _ = HFClassifier(path, progress=False, device="cuda", precision="int8").model
    with pytest.raises(ValueError, match="precision"):
        HFClassifier(path, precision="float16")


def test_profile_takes_int8_and_names_the_choices(tmp_path):
    assert load_profile(text="tier: offline\nprecision: int8\n").precision == "int8"
    assert load_profile(text="tier: offline\n").precision == "float32"
    with pytest.raises(ProfileError, match="'float32', 'bfloat16' or 'int8'"):
        load_profile(text="tier: offline\nprecision: fp16\n")


# ---- oneDNN packing keeps the numbers, or is not used

def _tiny_model_and_probe(tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = tiny_bert(tmp_path / "m")
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    probe = dict(AutoTokenizer.from_pretrained(path)(PREMISES, HYPOTHESES, padding=True, return_tensors="pt"))
    return model, probe


@pytest.fixture
def packing(monkeypatch):
    """oneDNN packing switched on wherever its kernels run (`can_pack` says where we pack: float32 from AVX2 up,
    bfloat16 on AVX-512 only)."""
    from nli_lib.models import packing

    if not packing.onednn_linear_available():
        pytest.skip("this torch has no oneDNN packed linear kernels")
    monkeypatch.setattr(packing, "can_pack", lambda dtype="float32": True)
    return packing


@pytest.mark.parametrize("capability, packs_float32, packs_bfloat16", [
    ("AVX512", True, True), ("AMX", True, True), ("AVX2", True, False), ("DEFAULT", False, False)])
def test_packing_covers_float32_from_avx2_up_and_bfloat16_on_avx512(monkeypatch, capability, packs_float32,
                                                                     packs_bfloat16):
    """float32 is packed from AVX2 up (faster with scoring streams there too); oneDNN has no bf16 path on AVX2."""
    from nli_lib.models import packing

    monkeypatch.setattr(packing, "onednn_linear_available", lambda: True)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    assert (packing.can_pack("float32"), packing.can_pack("bfloat16")) == (packs_float32, packs_bfloat16)
    assert packing.can_pack() == packs_float32


def test_packed_copy_matches_the_plain_model(tmp_path, packing):
    from nli_lib.models.packing import PackedLinear, packed_copy

    model, probe = _tiny_model_and_probe(tmp_path)
    packed = packed_copy(model, probe)
    assert packed is not model
    kinds = [type(m) for m in packed.modules()]
    assert PackedLinear in kinds and torch.nn.Linear not in kinds
    assert sum(getattr(m, "gelu", False) for m in packed.modules()) == 2  # one fused GELU per layer
    with torch.inference_mode():
        gap = (packed(**probe).logits - model(**probe).logits).abs().max()
    assert float(gap) < 1e-4


def test_cpu_attention_is_eager_for_short_batches_and_sdpa_for_long_ones(tmp_path):
    from transformers import AutoModelForSequenceClassification

    from nli_lib.cache import CallCache
    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.packing import eager_attention_for_short_inputs

    path = tiny_bert(tmp_path / "m")
    clf = HFClassifier(path, progress=False, device="cpu", cache=CallCache(":memory:"))  # the model must run
    model = clf.model
    assert model.config._attn_implementation == "eager"  # the load's probe batch (a few tokens) switched it
    model.set_attn_implementation("sdpa")
    fp32 = clf.predict_proba(PREMISES, HYPOTHESES)  # a few tokens: eager
    assert model.config._attn_implementation == "eager"
    plain = AutoModelForSequenceClassification.from_pretrained(path, attn_implementation="sdpa").eval()
    switching = eager_attention_for_short_inputs(
        AutoModelForSequenceClassification.from_pretrained(path, attn_implementation="sdpa").eval(), max_tokens=8)
    enc = clf.tokenizer(PREMISES, HYPOTHESES, padding=True, return_tensors="pt")
    assert enc["input_ids"].shape[1] > 8
    with torch.inference_mode():
        long_logits = switching(**enc).logits
        assert switching.config._attn_implementation == "sdpa"  # longer than max_tokens: back to SDPA
        short = {k: v[:, :6] for k, v in enc.items()}
        short_logits = switching(**short).logits
        assert switching.config._attn_implementation == "eager"
        assert torch.allclose(long_logits, plain(**enc).logits, atol=1e-5)
        assert torch.allclose(short_logits, plain(**short).logits, atol=1e-5)
    assert np.allclose(fp32.sum(1), 1)
    other = HFClassifier(path, progress=False, device="cpu", precision="bfloat16",  # measured for float32 only
                         cache=CallCache(":memory:"))
    other.predict_proba(PREMISES, HYPOTHESES)
    assert other.model.config._attn_implementation == "sdpa"


def test_a_t5_classifier_is_packed_too(packing):
    """T5's feed-forward reads `wo.weight.dtype`: the packed copy answers it and matches the plain model."""
    import warnings

    from transformers import T5Config, T5ForSequenceClassification

    from nli_lib.models.packing import PackedLinear, packed_copy

    torch.manual_seed(0)
    config = T5Config(vocab_size=64, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2, num_labels=3,
                      decoder_start_token_id=0, pad_token_id=0)
    model = T5ForSequenceClassification(config).eval()
    probe = {"input_ids": torch.tensor([[5, 6, 7, 1], [8, 9, 1, 0]]), "attention_mask": torch.tensor([[1] * 4, [1, 1, 1, 0]])}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a packing failure warns and returns the plain model
        packed = packed_copy(model, probe)
    assert packed is not model and any(isinstance(m, PackedLinear) for m in packed.modules())
    with torch.inference_mode():
        assert float((packed(**probe).logits - model(**probe).logits).abs().max()) < 1e-4


def test_packed_copy_falls_back_to_the_plain_model_when_the_probe_differs(tmp_path, packing):
    from nli_lib.models.packing import packed_copy

    model, probe = _tiny_model_and_probe(tmp_path)
    with pytest.warns(RuntimeWarning, match="differs from the plain one"):
        assert packed_copy(model, probe, atol=-1.0) is model  # no gap is <= -1: the copy is refused


# ---- roofline arithmetic, by hand

def test_pair_flops_by_hand():
    shape = EncoderShape(layers=6, hidden=384, intermediate=1536, labels=3)
    L, d, f = 28, 384, 1536
    per_layer = 4 * 2 * L * d * d + 2 * 2 * L * L * d + 2 * 2 * L * d * f
    assert pair_flops(shape, L) == 6 * per_layer + 2 * d * d + 2 * d * 3
    assert round(pair_flops(shape, L) / 1e9, 3) == 0.602  # the "~0.6 GFLOP a pair (~28 tokens)"
    no_pooler = EncoderShape(layers=6, hidden=384, intermediate=1536, labels=3, pooler=False)
    assert pair_flops(shape, L) - pair_flops(no_pooler, L) == 2 * d * d
    assert mean_pair_flops(shape, [10, 30]) == (pair_flops(shape, 10) + pair_flops(shape, 30)) / 2
    assert roofline_pairs_per_s(310.0, 0.6e9) == pytest.approx(516.67, abs=0.01)


def test_int8_matmul_rate_runs_int_mm_or_onednn_on_int8_only():
    from nli_lib.roofline import matmul_gflops

    tiny = EncoderShape(layers=1, hidden=32, intermediate=64, labels=3)
    assert matmul_gflops(tiny, 32, "int8", "int_mm", min_seconds=0.03) > 0
    assert matmul_gflops(tiny, 32, "int8", "onednn", min_seconds=0.03) > 0  # the int8 path's kernel
    for dtype, kernel in (("int8", "matmul"), ("float32", "int_mm")):
        with pytest.raises(ValueError, match="int_mm"):
            matmul_gflops(tiny, 32, dtype, kernel)


# ---- bench lines and the README table

SAMPLE = """\
model: minilm-esnli (.cache/models/minilm-esnli-abc)
  ours fp32 (default)             301.0 pairs/s
  CrossEncoder.predict            skipped: not installed (pip install sentence-transformers)
bench: nli-fp32-vs-roofline ratio=0.590 target=0.800 short | 307 of 520 pairs/s; cpu, 2 threads
bench: nli-fast-path-speedup ratio=2.200 target=2.500 short | ours int8 (opt-in): 675 vs 307 pairs/s
bench: nli-fast-path-accuracy-delta ratio=-0.100 target=-0.300 ok | ours int8: accuracy 86.9% vs fp32 87.0%
"""
TIMING = """\
bench: warm-run ratio=1.900 target=1.744 ok | 83 s (157 s before)
bench: nli-fp32-vs-roofline ratio=0.610 target=0.800 short | a later run
"""


def test_parse_a_hand_written_benchmark_output():
    lines = bench.parse_lines(SAMPLE.splitlines())
    assert [(x.name, x.ratio, x.target, x.ok) for x in lines] == [
        ("nli-fp32-vs-roofline", 0.59, 0.8, False), ("nli-fast-path-speedup", 2.2, 2.5, False),
        ("nli-fast-path-accuracy-delta", -0.1, -0.3, True)]
    assert lines[0].detail == "307 of 520 pairs/s; cpu, 2 threads"
    assert [str(x) for x in lines] == [x for x in SAMPLE.splitlines() if x.startswith("bench:")]  # round trip
    with pytest.raises(ValueError, match="says short"):
        bench.parse_lines(["bench: x ratio=1.000 target=0.800 short"])


def test_report_writes_the_readme_table_between_the_markers(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "benchmarks" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    results = tmp_path / "results"
    results.mkdir()
    (results / "nli_throughput.txt").write_text(SAMPLE)
    (results / "run_all_timing.txt").write_text(TIMING)  # later file: its roofline line wins
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{bench.README_START}\nstale\n{bench.README_END}\n\nafter\n")
    argv = ["--results", str(results), "--readme", str(readme)]
    assert report.main(argv + ["--check"]) == 1  # stale
    assert report.main(argv) == 0
    text = readme.read_text()
    table = text.split(bench.README_START)[1].split(bench.README_END)[0]
    assert table.strip().splitlines() == [
        "| benchmark | ratio | target | status | measured |", "|---|---:|---:|---|---|",
        "| `nli-fp32-vs-roofline` | 0.610 | ≥ 0.800 | short | a later run |",
        "| `nli-fast-path-speedup` | 2.200 | ≥ 2.500 | short | ours int8 (opt-in): 675 vs 307 pairs/s |",
        "| `nli-fast-path-accuracy-delta` | -0.100 | ≥ -0.300 | ok | ours int8: accuracy 86.9% vs fp32 87.0% |",
        "| `warm-run` | 1.900 | ≥ 1.744 | ok | 83 s (157 s before) |"]
    assert text.startswith("# x\n\n") and text.endswith("\n\nafter\n") and "stale" not in text
    assert report.main(argv + ["--check"]) == 0


def test_the_readme_table_is_generated_from_the_saved_results():
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "benchmarks" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    if not list(report.RESULTS.glob("*.txt")):
        pytest.skip("no saved benchmark results")
    assert report.README == ROOT / "benchmarks" / "README.md"  # the table's one home
    assert bench.README_START in report.README.read_text()
    assert bench.README_START not in (ROOT / "README.md").read_text()
    assert report.main(["--check"]) == 0, "benchmarks/README.md's performance table is stale: run benchmarks/report.py"


# ---- the NLI benchmark's verdicts: the faster fast path, and its label agreement, are reported

def test_label_agreement_by_hand():
    ref = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]]
    probs = [[0.4, 0.5, 0.1], [0.1, 0.8, 0.1]]  # only the first two rows (the one-pair loop); row 1 flips
    assert bench.label_agreement(ref, probs, list(LABELS), LABELS) == (0.5, 0.5)


def test_nli_lines_report_speed_and_label_agreement_of_the_faster_fast_path():
    rows = [bench.PathResult("ours fp32 (default)", 300.0, 1.0, 0.8700, True, True),
            bench.PathResult("ours bfloat16 (opt-in)", 450.0, 0.9990, 0.8690, False, True),
            bench.PathResult("ours int8 (opt-in)", 800.0, 0.9960, 0.8680, False, True),
            bench.PathResult("ours int8 alone (no recheck)", 850.0, 0.99, 0.86, False, True, variant=True),
            bench.PathResult("pipeline, batched", 250.0, 1.0, 0.87, True, False),
            bench.PathResult("onnxruntime fp32", 330.0, 1.0, 0.87, True, False),
            bench.PathResult("onnxruntime int8", 900.0, 0.90, 0.85, False, False)]  # not a fp32 peer
    got = {x.name: x for x in bench.nli_throughput_lines(rows, roofline_fp32=400.0, conditions="c")}
    assert (got["nli-fp32-vs-roofline"].ratio, got["nli-fp32-vs-roofline"].ok) == (0.75, False)
    assert got["nli-fp32-vs-best-fp32-peer"].ratio == round(300 / 330, 3)
    assert "onnxruntime fp32" in got["nli-fp32-vs-best-fp32-peer"].detail
    assert (got["nli-fast-path-speedup"].ratio, got["nli-fast-path-speedup"].ok) == (round(800 / 300, 3), True)
    assert got["nli-fast-path-same-labels"].ratio == 0.996 and got["nli-fast-path-same-labels"].ok
    assert got["nli-fast-path-same-labels"].detail.startswith("ours int8 (opt-in):")  # a variant is never it
    assert got["nli-fast-path-accuracy-delta"].ratio == pytest.approx(-0.2) and got["nli-fast-path-accuracy-delta"].ok
    only_ours = bench.nli_throughput_lines(rows[:1], roofline_fp32=400.0, conditions="c")
    assert [x.name for x in only_ours] == ["nli-fp32-vs-roofline"]  # nothing to compare: no line, no verdict


def test_interleaved_passes_time_each_path_in_turn_every_round():
    calls, now = [], [0.0]

    def clock():
        return now[0]

    def run(name, seconds):
        def go():
            calls.append(name)
            now[0] += seconds
            return f"{name}{len(calls)}"
        return go

    got = bench.interleaved_passes({"ours": run("ours", 2.0), "peer": run("peer", 3.0)}, rounds=3, clock=clock)
    assert calls == ["ours", "peer"] * 3  # A B, A B, A B: never A A A, B B B
    assert got == {"ours": [(2.0, "ours1"), (2.0, "ours3"), (2.0, "ours5")],
                   "peer": [(3.0, "peer2"), (3.0, "peer4"), (3.0, "peer6")]}


# ---- first-token scoring: the last layer for the one token the head reads

def _last_layer_rows(model):
    """Hooks counting the token rows that reach the last layer's feed-forward block (appended per call)."""
    from nli_lib.models.first_token import last_block

    seen = []
    last_block(model).intermediate.register_forward_pre_hook(lambda m, args: seen.append(args[0].shape[:-1]))
    return seen


def test_the_classifier_runs_the_last_layer_for_the_first_token_only_and_keeps_its_numbers(tmp_path):
    from transformers import AutoModelForSequenceClassification

    from nli_lib.models.first_token import scores_first_token_only
    from nli_lib.models.hf import HFClassifier

    path = tiny_bert(tmp_path / "m", layers=3)
    clf = HFClassifier(path, progress=False, device="cpu", cache=CallCache(":memory:"))
    assert scores_first_token_only(clf.model)
    rows = _last_layer_rows(clf.model)
    probs = clf.predict_proba(PREMISES, HYPOTHESES)
    assert rows and all(tuple(r) == (len(PREMISES), 1) for r in rows)  # one token a pair, never the full length
    plain = AutoModelForSequenceClassification.from_pretrained(path).eval()
    enc = clf.tokenizer(PREMISES, HYPOTHESES, padding=True, return_tensors="pt")
    with torch.inference_mode():
        want = torch.softmax(plain(**enc).logits, -1).numpy()[:, clf.unit_for_label]
    assert np.abs(probs - want).max() < 1e-5
    # outside scoring the model is whole: every layer's hidden states keep every token
    rows.clear()
    layers = clf.hidden_states(PREMISES, HYPOTHESES, pooling="cls+max")
    assert rows and all(r[1] == enc["input_ids"].shape[1] for r in rows)
    with torch.inference_mode():
        out = clf.model(**enc, output_hidden_states=True)
    assert out.hidden_states[-1].shape[1] == enc["input_ids"].shape[1] and len(layers) == 4


def test_first_token_only_refuses_a_head_it_misjudged_and_leaves_the_model_whole(tmp_path):
    from transformers import BertForSequenceClassification

    from nli_lib.models.first_token import first_token_only, install_first_token_forward, scores_first_token_only

    model, probe = _tiny_model_and_probe(tmp_path)
    with pytest.warns(RuntimeWarning, match="first-token forward not used"):
        assert not install_first_token_forward(model, probe, atol=-1.0)  # no gap is <= -1
    assert not scores_first_token_only(model) and "forward" not in vars(model.bert.encoder.layer[-1])

    class MeanPooled(BertForSequenceClassification):
        """A head named like BERT's that reads every token of the last layer (mean), not the first."""

        def forward(self, input_ids=None, attention_mask=None, **kwargs):
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            return type("Out", (), {"logits": self.classifier(hidden.mean(1))})()

    MeanPooled.__name__ = "BertForSequenceClassification"
    mean = MeanPooled.from_pretrained(tmp_path / "m").eval()
    with pytest.warns(RuntimeWarning, match="logits differ"):
        assert not install_first_token_forward(mean, probe)
    with torch.inference_mode(), first_token_only(mean):  # a no-op on a model without the forward
        assert mean(**probe).logits.shape == (len(PREMISES), 3)


def test_first_token_only_in_int8_keeps_the_numbers():
    from transformers import BertConfig, BertForSequenceClassification

    from nli_lib.models.first_token import first_token_only, install_first_token_forward
    from nli_lib.models.int8 import int8_kernels_available, quantize_int8

    if not int8_kernels_available():
        pytest.skip("no x86 int8 kernels")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=60, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, num_labels=3)
    ids = torch.randint(5, 60, (16, 9))
    mask = torch.ones_like(ids)
    mask[8:, 6:] = 0
    batches = [{"input_ids": ids, "attention_mask": mask}]
    model = quantize_int8(BertForSequenceClassification(config).eval(), batches)
    seen = _last_layer_rows(model) if install_first_token_forward(model, batches[0], precision="int8") else None
    assert seen is not None
    with torch.inference_mode():
        full = model(**batches[0]).logits
        with first_token_only(model):
            short = model(**batches[0]).logits
    assert [tuple(r) for r in seen] == [(16, 9), (16, 1)]
    assert float((full - short).abs().max()) < 5e-2


def test_first_token_only_on_the_papers_families(tmp_path):
    """RoBERTa-MNLI's head reads <s> alone: first-token scoring, same probabilities. DeBERTa's and the DeBERTa-v3
    cross-encoder's pooler layouts are not BERT's: left whole."""
    from nli_lib import replicas as R
    from nli_lib.models.first_token import scores_first_token_only
    from nli_lib.models.hf import HFClassifier

    built = R.build_replicas(tmp_path, families=["roberta-mnli", "deberta-mnli", "cross-encoder"])
    for family, expected in (("roberta-mnli", True), ("deberta-mnli", False), ("cross-encoder", False)):
        clf = HFClassifier(built[family], progress=False, device="cpu", cache=CallCache(":memory:"))
        assert scores_first_token_only(clf.model) is expected, family
        if expected:
            probs = clf.predict_proba(PREMISES, HYPOTHESES)
            enc = clf.tokenizer(PREMISES, HYPOTHESES, padding=True, return_tensors="pt")
            with torch.inference_mode():
                want = torch.softmax(clf.model(**enc).logits, -1).numpy()[:, clf.unit_for_label]
            assert np.abs(probs - want).max() < 1e-5, family


def test_pair_flops_with_a_first_token_head_by_hand():
    L, d, f = 28, 384, 1536
    full = EncoderShape(layers=6, hidden=d, intermediate=f, labels=3)
    first = EncoderShape(layers=6, hidden=d, intermediate=f, labels=3, first_token_head=True)
    per_layer = 4 * 2 * L * d * d + 2 * 2 * L * L * d + 2 * 2 * L * d * f
    last = 2 * 2 * L * d * d + 2 * 2 * d * d + 2 * 2 * L * d + 2 * 2 * d * f  # K, V for all; the rest for one
    assert pair_flops(first, L) == 5 * per_layer + last + 2 * d * d + 2 * d * 3
    assert pair_flops(full, L) - pair_flops(first, L) == per_layer - last
    assert round(1 - pair_flops(first, L) / pair_flops(full, L), 3) == 0.134


def test_a_deep_copy_of_a_first_token_model_scores_with_its_own_weights():
    from transformers import BertConfig, BertForSequenceClassification

    from nli_lib.models.first_token import first_token_only, install_first_token_forward

    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, num_labels=3)
    model = BertForSequenceClassification(config).eval()
    probe = {"input_ids": torch.tensor([[2, 5, 7, 3], [2, 9, 3, 0]]), "attention_mask": torch.tensor([[1] * 4, [1, 1, 1, 0]])}
    assert install_first_token_forward(model, probe)
    twin = copy.deepcopy(model)
    with torch.no_grad():
        for p in twin.bert.encoder.layer[-1].parameters():
            p.add_(0.5)  # the copy's last layer differs: its scores must follow its own weights
    with torch.inference_mode():
        whole = twin(**probe).logits
        with first_token_only(twin):
            short = twin(**probe).logits
    assert torch.allclose(whole, short, atol=1e-5)
    with torch.inference_mode(), first_token_only(model):
        assert not torch.allclose(model(**probe).logits, short, atol=1e-3)


# ---- scoring streams (models.streams): batches side by side on a share of the cores, the same numbers

def test_streams_score_every_batch_once_on_their_share_of_the_threads(monkeypatch):
    import threading
    import time

    from nli_lib.models.streams import score_in_streams

    seen = {}

    def forward(batch):
        seen[batch] = (threading.current_thread().name, torch.get_num_threads())
        time.sleep(0.02)  # long enough that both streams take batches
        return batch * 10

    before = torch.get_num_threads()
    try:
        got = dict(score_in_streams(forward, [(i, i) for i in range(8)], streams=2, threads=6))
        assert got == {i: i * 10 for i in range(8)}
        assert {threads for _, threads in seen.values()} == {3}  # 6 threads shared by 2 streams
        assert len({n for n, _ in seen.values()}) == 2 and all(n.startswith("nli-stream-") for n, _ in seen.values())
        assert torch.get_num_threads() == 6  # the caller's count afterwards (the `threads` it was given)
    finally:
        torch.set_num_threads(before)


def test_a_failing_batch_is_raised_by_the_streams_and_the_thread_count_restored():
    from nli_lib.models.streams import score_in_streams

    def forward(batch):
        if batch == 3:
            raise ValueError("batch 3 is broken")
        return batch

    before = torch.get_num_threads()
    with pytest.raises(ValueError, match="batch 3 is broken"):
        list(score_in_streams(forward, [(i, i) for i in range(6)], streams=2))
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("precision", ["float32", pytest.param("int8", marks=pytest.mark.mirror)])
def test_streams_keep_the_numbers_of_one_stream(tmp_path, precision):
    """Two streams share one model: int8's per-call state (the shared quantised input of query, key and value; the
    fused feed-forward's float32 channels) is kept per thread, so each stream reads its own (shared between the
    threads, a stream read the other's tensors and the numbers moved, or the handoff refused them)."""
    from nli_lib.cache import CallCache
    from nli_lib.models.hf import HFClassifier

    path = tiny_bert(tmp_path / "m", layers=2, hidden=32, intermediate=64)
    words = ["man", "woman", "dog", "sleeping", "outside", "runs", "eats", "sits", "cat", "person"]
    rng = np.random.default_rng(0)
    premises = [" ".join(rng.choice(words, size=rng.integers(2, 12))) for _ in range(96)]
    hypotheses = [" ".join(rng.choice(words, size=rng.integers(2, 12))) for _ in range(96)]
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        one = HFClassifier(path, progress=False, device="cpu", precision=precision, batch_size=4, streams=1,
                           cache=CallCache(":memory:"))
        two = HFClassifier(path, progress=False, device="cpu", precision=precision, batch_size=4, streams=2,
                           cache=CallCache(":memory:"))
        two._model = one.model  # one model, scored by two streams at once
        want = one._predict_proba_uncached(premises, hypotheses)
        for _ in range(3):
            np.testing.assert_allclose(two._predict_proba_uncached(premises, hypotheses), want, atol=1e-6)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_streams_switch_attention_between_phases_never_inside_a_stream(tmp_path, monkeypatch):
    """Eager attention for short batches, SDPA for long ones: the switch changes the model's config, so it is made
    before each phase starts (`packing.attention_phases`), never by a stream while another one is mid-forward."""
    import threading

    from nli_lib.cache import CallCache
    from nli_lib.models.hf import HFClassifier
    from nli_lib.models.packing import SWITCH

    path = tiny_bert(tmp_path / "m")
    words = ["man", "woman", "dog", "sleeping", "outside", "runs", "eats"]
    premises = [" ".join(words[: 1 + i % 7]) for i in range(40)]
    clf = HFClassifier(path, progress=False, device="cpu", batch_size=4, streams=2, cache=CallCache(":memory:"))
    model = clf.model
    assert getattr(model, SWITCH, None) is not None  # the classifier's float32 CPU model switches
    setattr(model, SWITCH, 10)  # eager up to 10 tokens: the pairs below cross it
    switched_in = []
    original = model.set_attn_implementation

    def recording(name):
        switched_in.append((threading.current_thread().name, name))
        return original(name)

    monkeypatch.setattr(model, "set_attn_implementation", recording)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        for _ in range(2):  # the second call starts from SDPA, the last phase's: both switches happen
            got = clf._predict_proba_uncached(premises, premises)
    finally:
        torch.set_num_threads(before)
    assert {name for _, name in switched_in} == {"eager", "sdpa"}
    assert all(not thread.startswith("nli-stream-") for thread, _ in switched_in), switched_in
    np.testing.assert_allclose(got, HFClassifier(path, progress=False, device="cpu", batch_size=4, streams=1,
                                                 cache=CallCache(":memory:"))._predict_proba_uncached(
        premises, premises), atol=1e-5)


def test_notebook_estimates_write_the_cold_run_seconds_and_keep_the_notebook_layout(tmp_path):
    spec = importlib.util.spec_from_file_location("notebook_estimates", ROOT / "benchmarks" / "notebook_estimates.py")
    estimates = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(estimates)
    log = ("== cold run (empty cache: /c)\n\nnotebook   status   seconds  loading\n"
           "01_models  ran  591.5  0.9\n20_phrasis  ran  249.3  1.3\n21_other  FAILED  3.0  0.1\ntotal  840.8  2.2\n"
           "peak memory of a notebook kernel: 2.95 GiB\n== warm run (same cache)\n\n01_models  ran  6.0  0.1\n")
    assert estimates.cold_seconds(log) == {"01_models": 592, "20_phrasis": 249}  # cold, ran: not warm, failed
    waited = ("== cold run (empty cache: /c)\n\nnotebook   status   seconds  loading  waiting  other\n"
              "01_models  ran  591.5  0.9  0.0  5.5\n51_taxinli  ran  298.7  0.9  23.3  6.9\ntotal  890.2\n")
    assert estimates.cold_seconds(waited) == {"01_models": 592, "51_taxinli": 275}  # a wait is the schedule's
    text = ('{\n "cells": [],\n "metadata": {\n  "kernelspec": {\n   "name": "python3"\n  },\n  "nli_companion": {\n'
            '   "start_beside_models": true\n  }\n },\n "nbformat": 4,\n "nbformat_minor": 5\n}\n')
    (tmp_path / "20_phrasis.ipynb").write_text(text)
    (tmp_path / "30_other.ipynb").write_text(text)
    assert estimates.write_estimates(estimates.cold_seconds(log), tmp_path) == ["20_phrasis"]
    assert (tmp_path / "20_phrasis.ipynb").read_text() == text.replace(
        '"start_beside_models": true\n', '"start_beside_models": true,\n   "cold_seconds": 249\n')
    assert (tmp_path / "30_other.ipynb").read_text() == text  # not in the log: unchanged
    assert estimates.write_estimates({"20_phrasis": 249}, tmp_path) == []  # nothing new to write


@pytest.mark.mirror
def test_the_throughput_benchmark_runs_every_path_it_lists_and_ends_with_its_bench_lines(tmp_path):
    """benchmarks/nli_throughput.py end to end on a tiny BERT and 40 SNLI-test pairs (~15 s; the optional peers
    are skipped): every path the issue asks for that needs no optional package (ours at each precision, the
    pipeline one pair a call and batched, torch's dynamic int8) prints a table row, and the run ends with the five
    bench lines. No speed is asserted."""
    import os
    import subprocess
    import sys

    from nli_lib.models.hf import pick_device
    from nli_lib.models.int8 import int8_kernels_available

    model = tiny_bert(tmp_path / "m")
    env = {**os.environ, "NLI_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "nli_throughput.py"), "--model", str(model),
                           "--pairs", "40", "--repeat", "1", "--naive-n", "4", "--batch-size", "16",
                           "--skip", "onnx", "crossencoder"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    table = out[out.index("\npath "):]
    cpu = pick_device() == "cpu"  # the benchmark takes a GPU when there is one; int8 paths then say 'skipped'
    paths = ["ours fp32 (default)", "ours bfloat16 (opt-in)", "pipeline, 1 pair a call", "pipeline, batched"] + (
        ["torch dynamic int8"] if cpu else []) + (
        ["ours int8 (opt-in)", "ours int8 alone (no recheck)"] if cpu and int8_kernels_available() else [])
    for name in paths:
        assert f"\n{name} " in table, (name, table)
    assert "CrossEncoder.predict" in out and "skipped: --skip" in out
    lines = bench.parse_lines(out.splitlines())
    assert [x.name for x in lines] == ["nli-fp32-vs-roofline", "nli-fp32-vs-best-fp32-peer", "nli-fast-path-speedup",
                                       "nli-fast-path-same-labels", "nli-fast-path-accuracy-delta"]
    assert out.rstrip().splitlines()[-1].startswith("bench: ")
