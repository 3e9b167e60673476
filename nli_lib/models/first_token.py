"""Scoring and training with the last layer run for the first token only: what a first-token head reads.

BERT's pooler, and RoBERTa's, XLM-R's, CamemBERT's and ELECTRA's classification heads, read one vector of the
last layer: the first token's ([CLS] / <s>). In the last transformer block every token's key and value are still
needed (the first token attends to all of them), but the query, the attention output, both layer norms and the
feed-forward block only for that token. Of a MiniLM-L6 forward pass at 27.5 tokens (SNLI) that skips 13 % of the
matmul FLOPs (`nli_lib.roofline`, `first_token_head`), and scoring is faster by about that much. The first
token's arithmetic is the same (probabilities within ~1e-6 in float32; in int8 a rounding step can move, ~2e-4).

`install_first_token_forward(model, probe)` gives an eligible model's last block a second forward, and
`first_token_only(model)` turns it on for the `with` block only, so every other use of the model (hidden
states of every layer, attention maps) sees the full layer. It is installed only when the probe batch
gives the same logits both ways (within `atol`), so a head we misjudged costs speed, never numbers.

Training (`TrainSpec.first_token_training`) uses the same forward: the loss reads only the first token of the last
layer, so the other tokens' rows there get zero gradient and skipping them leaves the gradients as they were (up to
float rounding). In training the forward keeps the model's attention implementation with its dropout, and when
numpy draws the masks (`models.dropout`) each of the block's three masks is drawn for every token and its first
row used, so the masks are the full layer's too; a training step is correspondingly shorter.

    >>> from transformers import BertConfig, BertForSequenceClassification
    >>> _ = torch.manual_seed(0)
    >>> config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
    ...                     intermediate_size=32, num_labels=3)
    >>> model = BertForSequenceClassification(config).eval()
    >>> probe = {"input_ids": torch.tensor([[2, 5, 7, 3], [2, 9, 3, 0]]),
    ...          "attention_mask": torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])}
    >>> install_first_token_forward(model, probe)
    True
    >>> with torch.inference_mode():
    ...     full = model(**probe).logits
    ...     with first_token_only(model):
    ...         short = model(**probe).logits
    >>> bool(torch.allclose(full, short, atol=1e-5))
    True
"""
from __future__ import annotations

import contextlib
import types
import warnings

import torch  # imported only where a model runs (hf.py imports this module lazily)

FIRST_TOKEN_HEADS = frozenset({  # sequence classifiers whose head reads the last layer's first token alone
    "BertForSequenceClassification", "RobertaForSequenceClassification", "XLMRobertaForSequenceClassification",
    "CamembertForSequenceClassification", "ElectraForSequenceClassification",
})
PROBE_ATOL = {"float32": 1e-4, "bfloat16": 5e-2, "int8": 5e-2}  # largest |logit gap| allowed between the two
# forwards on the probe batch, by precision (the offline model's gaps are far below: ~1e-6 in float32, up to
# ~1.5e-3 in int8, where one uint8 rounding step of a layer's input can move; 0 in bfloat16)
FLAG = "_nli_first_token_only"  # the last block's switch, set only inside `first_token_only`


def last_block(model):
    """The last transformer block of `model` when its head reads the first token alone and the block has the
    BERT layout (`attention.self.query/key/value`, `attention.output`, `feed_forward_chunk`) without
    cross-attention or chunked feed-forward; else None."""
    config = getattr(model, "config", None)
    if type(model).__name__ not in FIRST_TOKEN_HEADS or config is None:
        return None
    if getattr(config, "is_decoder", False) or getattr(config, "add_cross_attention", False):
        return None
    layers = getattr(getattr(getattr(model, "base_model", None), "encoder", None), "layer", None)
    if not isinstance(layers, torch.nn.ModuleList) or not len(layers):
        return None
    block = layers[-1]
    attention = getattr(getattr(block, "attention", None), "self", None)
    needed = ("query", "key", "value", "attention_head_size", "scaling")
    if (attention is None or not all(hasattr(attention, name) for name in needed)
            or not hasattr(block.attention, "output") or not callable(getattr(block, "feed_forward_chunk", None))
            or getattr(block, "chunk_size_feed_forward", 0) or hasattr(block, "crossattention")):
        return None
    return block


def first_token_forward(self, hidden_states, attention_mask=None, *args, **kwargs):
    """The forward `install_first_token_forward` binds to a last block (see `last_block`): its output for the
    first token only while the block's FLAG is set; the block class's own forward otherwise, or when a cache or
    encoder states are passed. Bound as a method, so a deep copy of the model rebinds it to the copy's block."""
    plain = (args and args[0] is not None) or kwargs.get("encoder_hidden_states") is not None or any(
        kwargs.get(name) is not None for name in ("cache", "past_key_values"))
    if not getattr(self, FLAG, False) or plain or (attention_mask is not None and attention_mask.dim() != 4):
        return type(self).forward(self, hidden_states, attention_mask, *args, **kwargs)
    attention = self.attention.self
    batch, tokens, _ = hidden_states.shape
    first = hidden_states[:, :1]
    heads = (-1, attention.attention_head_size)  # (heads, head size): the layout BERT's attention uses
    key = attention.key(hidden_states).view(batch, tokens, *heads).transpose(1, 2)
    value = attention.value(hidden_states).view(batch, tokens, *heads).transpose(1, 2)
    query = attention.query(first).view(batch, 1, *heads).transpose(1, 2)
    mask = None if attention_mask is None else attention_mask[:, :, :1]  # the first query row's mask
    if self.training:  # the model's own attention (its dropout on the map), with the full layer's masks
        return _first_token_training(self, first, query, key, value, mask, tokens)
    context = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                                               scale=attention.scaling)
    context = context.transpose(1, 2).reshape(batch, 1, -1)
    return self.feed_forward_chunk(self.attention.output(context, first))


def _first_token_training(block, first, query, key, value, mask, tokens: int):
    """The training half of `first_token_forward`: the attention through the model's attention implementation
    with its dropout, as `BertSelfAttention` calls it, and every dropout mask of the block drawn as for the whole
    layer (`dropout.first_row_masks`, when numpy draws them), so the gradients are the full layer's."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    from transformers.models.bert.modeling_bert import eager_attention_forward

    from .dropout import first_row_masks

    attention = block.attention.self
    interface = ALL_ATTENTION_FUNCTIONS.get_interface(attention.config._attn_implementation, eager_attention_forward)
    with first_row_masks(tokens):
        dropout = attention.dropout.p if attention.training else 0.0
        context, _ = interface(attention, query, key, value, mask, dropout=dropout, scaling=attention.scaling)
        context = context.reshape(first.shape[0], 1, -1)
        return block.feed_forward_chunk(block.attention.output(context, first))


def install_first_token_forward(model, probe: dict, atol: float | None = None, precision: str = "float32") -> bool:
    """Give `model`'s last block (when `last_block` finds one) the first-token forward, if on the `probe` batch
    (tokenizer output, on the model's device) the logits agree within `atol` (default: PROBE_ATOL[precision])
    with the full forward's; returns whether it was installed. A mismatch warns and leaves the model as it was."""
    block = last_block(model)
    if block is None or hasattr(block, FLAG):
        return block is not None
    if "forward" in vars(block):  # something else replaced this block's forward already: left to it
        return False
    atol = PROBE_ATOL.get(precision, 5e-2) if atol is None else atol
    block.forward = types.MethodType(first_token_forward, block)
    try:
        with torch.inference_mode():
            want = model(**probe).logits.float()
            setattr(block, FLAG, True)
            got = model(**probe).logits.float()
        gap = float((want - got).abs().max())
    except Exception as exc:  # noqa: BLE001 - a layout we did not foresee: the full forward still works
        gap, reason = float("nan"), f"{type(exc).__name__}: {exc}"
    else:
        reason = f"logits differ by {gap:.2g} on a probe batch (> {atol})"
    finally:
        setattr(block, FLAG, False)
    if gap <= atol:
        return True
    del block.forward
    delattr(block, FLAG)
    warnings.warn(f"first-token forward not used ({reason}); the last layer runs for every token (slower)",
                  RuntimeWarning, stacklevel=2)
    return False


@contextlib.contextmanager
def first_token_only(model):
    """Inside the block, `model`'s last layer (when `install_first_token_forward` installed the forward) runs
    for the first token only; its last hidden state then holds that token alone. One model must not score from
    two threads at once while another uses it fully (nothing in the library does)."""
    block = last_block(model)
    if block is None or not hasattr(block, FLAG):  # not installed: the whole layer, as always
        yield
        return
    setattr(block, FLAG, True)
    try:
        yield
    finally:
        setattr(block, FLAG, False)


def scores_first_token_only(model) -> bool:
    """Whether `first_token_only(model)` runs `model`'s last layer for the first token only (the forward is
    installed); the roofline then counts that layer's FLOPs the same way (`EncoderShape.first_token_head`)."""
    block = last_block(model)
    return block is not None and hasattr(block, FLAG)
