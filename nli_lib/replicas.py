"""Tiny random-weight replicas of the papers' model families, built here from configs (never downloaded).

A replica is a model folder laid out like its hub counterpart: the same model class (config `model_type`
and `architectures`), the same tokenizer class, tokenizer files and special tokens, and the same label
configuration, but 2 layers of width 32 with random weights and a tokenizer trained here on a few hundred
sentences. Loading, padding, label routing and fine-tuning go through exactly the code paths the real
checkpoints take, in seconds and without network, so CI proves the paper profile on every family.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> folders = build_replicas(root, ["roberta-mnli", "gpt2"])                    # doctest: +SKIP
    >>> sorted(p.name for p in folders.values())                                    # doctest: +SKIP
    ['gpt2', 'roberta-mnli']

    python -m nli_lib.replicas .cache/replicas          # every family, into .cache/replicas/<family>

What each family copies (`FAMILIES`; hub counterpart in brackets):

    bert           BERT, WordPiece, lower-case labels in another order    [aloxatel/bert-base-mnli style]
    roberta        RoBERTa base/large, byte-level BPE, no task head         [FacebookAI/roberta-large]
    roberta-mnli   RoBERTa with labels CONTRADICTION/NEUTRAL/ENTAILMENT     [roberta-large-mnli]
    deberta-v3     DeBERTa-v3, SentencePiece `spm.model` only               [microsoft/deberta-v3-large]
    deberta-mnli   DeBERTa (v1), GPT-2 BPE, upper-case MNLI labels          [microsoft/deberta-large-mnli]
    albert         ALBERT v2, SentencePiece `spiece.model`                  [albert/albert-base-v2]
    modernbert     ModernBERT, tokenizer.json only                          [answerdotai/ModernBERT-base]
    gpt2           GPT-2, byte-level BPE, no pad token                      [openai-community/gpt2]
    opt            OPT, GPT-2 tokenizer with <pad> and </s> as BOS          [facebook/opt-125m]
    pythia         GPT-NeoX, tokenizer.json, <|padding|> but no config pad  [EleutherAI/pythia-160m]
    bart           BART, byte-level BPE                                     [facebook/bart-base]
    flan-t5        T5, SentencePiece `spiece.model` + 100 extra ids         [google/flan-t5-small]
    label-ids      a 3-way head whose config says LABEL_0..2 (needs label_order)
    cross-encoder  DeBERTa-v3 cross-encoder, labels contradiction/entailment/neutral, sentence-transformers
                   config                                                   [cross-encoder/nli-deberta-v3-base]
    embedder       sentence-transformers: BERT + mean pooling + normalise  [all-MiniLM-L6-v2 layout]

Every 3-way NLI replica's head is biased towards one output unit (`HEAD_UNIT`, by default the first), so
its prediction is known in advance: the label `id2label` names for that unit. A test (or a run under
nli_lib/resources/profiles/replica.yaml) that sees any other label has found a label-routing bug.

Builds are deterministic (seeded weights, single-threaded tokenizer training): the same call writes the
same files, so a warm re-run finds every cached result of the first.
"""
from __future__ import annotations

import argparse
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

HIDDEN = 32  # width of every replica (hidden size)
LAYERS = 2  # transformer layers (encoder and decoder each, for BART / T5)
HEADS = 2  # attention heads
FFN = 64  # feed-forward width
HEAD_UNIT = 0  # the output unit every NLI replica's head is biased towards
HEAD_BIAS = 8.0  # logit added to that unit (softmax ~0.999 for it whatever the input)
VOCAB = 400  # target size of the tokenizers trained here

_WORDS = ("a man woman child dog cat person people group two three several old young tall small red blue green "
          "black white girl boy player worker musician crowd street park beach field room kitchen table car bike "
          "horse ball guitar book phone camera picture water food lunch dinner game race sleeps sits stands walks "
          "runs plays eats drinks reads writes sings jumps rides holds wears looks smiles talks waits works climbs "
          "swims throws catches is are was were not no nobody never some every all each any the an of in on at to "
          "with without near under over behind outside inside while because and or but then there here today "
          "outdoors indoors happy sad tired busy quiet loud wearing holding playing sitting standing running").split()
_SENTENCES = (
    "A man is playing a guitar on the street.", "Two dogs run through a field.", "A woman reads a book.",
    "Nobody is sleeping in the park.", "The children are not eating lunch.", "Several people wait for a bus.",
    "A young girl rides a red bike outdoors.", "An old man sits at a table in the kitchen.",
    "The crowd watches the race near the beach.", "Three musicians sing loudly while a boy dances.",
    "Everyone is hungry.", "Someone is hungry.", "2 car bombs", "Car bombing", "22 dead", "89 dead",
    "The others are friends of the person.", "The person is a man.", "It is raining, so the game stops.",
    "Premise: a cat sleeps. Hypothesis: an animal rests. Label: entailment",
    "contradiction neutral entailment CONTRADICTION NEUTRAL ENTAILMENT EQUI FORW BACK SIMI REL OPPO UNR",
    "0123456789 ,.;:!?'\"()[]{}-_/&%$#@*+=<>|~",
)


def corpus(n: int = 600) -> list[str]:
    """The fixed training text of the replica tokenizers: the sentences above and `n` word sequences drawn
    with a seeded generator (the same list on every call).

    >>> corpus(3)[-1] == corpus(3)[-1], len(corpus(3)) == len(_SENTENCES) + 3
    (True, True)
    """
    import random

    rng = random.Random(0)
    made = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12))).capitalize() + "." for _ in range(n)]
    return list(_SENTENCES) + made


# --------------------------------------------------------------------------------------------------------------
# Tokenizers
# --------------------------------------------------------------------------------------------------------------

def _byte_bpe(folder: Path, specials: list[str], vocab_size: int = VOCAB):
    """A byte-level BPE (GPT-2 / RoBERTa / BART / OPT / Pythia / DeBERTa v1 style) trained on `corpus()`,
    specials first (ids 0..); writes vocab.json and merges.txt, returns the `tokenizers` object."""
    from tokenizers import ByteLevelBPETokenizer

    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(corpus(), vocab_size=vocab_size, min_frequency=1, special_tokens=specials,
                            show_progress=False)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save_model(str(folder))
    return tok


def _wordpiece(folder: Path, lowercase: bool = True) -> None:
    """A BERT WordPiece vocab.txt ([PAD], [UNK], [CLS], [SEP], [MASK] first)."""
    from tokenizers import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(lowercase=lowercase)
    tok.train_from_iterator(corpus(), vocab_size=VOCAB, min_frequency=1, show_progress=False,
                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    folder.mkdir(parents=True, exist_ok=True)
    tok.save_model(str(folder))


def _sentencepiece(path: Path, **ids) -> None:
    """A unigram SentencePiece model written to `path` (`ids`: pad_id, unk_id, bos_id, eos_id, *_piece,
    user_defined_symbols as the hub model has them)."""
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus()), model_writer=model, vocab_size=VOCAB,
                                   model_type="unigram", character_coverage=1.0, byte_fallback=True,
                                   num_threads=1, minloglevel=2, seed_sentencepiece_size=5000,
                                   shuffle_input_sentence=False, **ids)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.getvalue())


def _write_json(path: Path, data: Mapping) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


# --------------------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------------------

def _labels(names: Iterable[str] | None) -> dict:
    """Config keys of a 3-way head named `names` in unit order (none: the config's LABEL_0..2)."""
    if names is None:
        return {"num_labels": 3}
    names = list(names)
    return {"id2label": dict(enumerate(names)), "label2id": {n: i for i, n in enumerate(names)}}


def bias_head(model, unit: int = HEAD_UNIT, bias: float = HEAD_BIAS) -> None:
    """Make `unit` the predicted output of a classification head whatever the input: its bias gets `bias`
    and the head's weights are scaled down (a bias-free head, as in GPT-2/OPT/GPT-NeoX, is refused)."""
    import torch

    from .models.training import classification_head

    layer = classification_head(model)
    if layer.bias is None:
        raise ValueError(f"{type(model).__name__}: the head has no bias to set")
    with torch.no_grad():
        layer.weight.mul_(0.01)
        layer.bias.zero_()
        layer.bias[unit] = bias


def _save_model(folder: Path, config, auto: str, seed: int, unit: int | None = None) -> None:
    """Random weights for `config` through transformers' `auto` class (e.g. 'AutoModelForMaskedLM'),
    seeded, head biased towards `unit` (sequence classifiers), saved as safetensors."""
    import torch
    import transformers

    from .models.hf import quiet_transformers

    quiet_transformers()
    torch.manual_seed(seed)
    model = getattr(transformers, auto).from_config(config)
    if unit is not None:
        bias_head(model, unit)
    model.eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)


def _small(**extra) -> dict:
    return {"hidden_size": HIDDEN, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
            "intermediate_size": FFN, **extra}


def build_bert(folder: Path, seed: int = 0, labels=("neutral", "entailment", "contradiction"),
               unit: int | None = HEAD_UNIT) -> None:
    """BERT-base-uncased layout: vocab.txt + tokenizer_config.json, lower-case NLI labels (`labels`, in an
    order unlike ours); `labels=None` gives LABEL_0..2."""
    from transformers import BertConfig

    _wordpiece(folder)
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "BertTokenizer", "do_lower_case": True,
                                                   "model_max_length": 512})
    size = len((folder / "vocab.txt").read_text().splitlines())
    config = BertConfig(vocab_size=size, max_position_embeddings=512, **_small(), **_labels(labels))
    _save_model(folder, config, "AutoModelForSequenceClassification", seed, unit)


def _roberta_tokenizer(folder: Path) -> int:
    _byte_bpe(folder, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "RobertaTokenizer", "model_max_length": 512,
                                                   "bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>",
                                                   "cls_token": "<s>", "unk_token": "<unk>", "pad_token": "<pad>",
                                                   "mask_token": "<mask>"})
    return len(json.loads((folder / "vocab.json").read_text()))


def build_roberta(folder: Path, seed: int = 0) -> None:
    """RoBERTa pre-trained layout (RobertaForMaskedLM, no task head): vocab.json + merges.txt."""
    from transformers import RobertaConfig

    size = _roberta_tokenizer(folder)
    config = RobertaConfig(vocab_size=size, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                           bos_token_id=0, eos_token_id=2, **_small())
    _save_model(folder, config, "AutoModelForMaskedLM", seed)


def build_roberta_mnli(folder: Path, seed: int = 0, unit: int | None = HEAD_UNIT) -> None:
    """roberta-large-mnli layout: upper-case labels CONTRADICTION / NEUTRAL / ENTAILMENT (ours reversed)."""
    from transformers import RobertaConfig

    size = _roberta_tokenizer(folder)
    config = RobertaConfig(vocab_size=size, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                           bos_token_id=0, eos_token_id=2, **_small(),
                           **_labels(["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]))
    _save_model(folder, config, "AutoModelForSequenceClassification", seed, unit)


def _deberta_v3_tokenizer(folder: Path) -> int:
    """microsoft/deberta-v3-*: spm.model ([PAD] 0, [CLS] 1, [SEP] 2, [UNK] 3) and a tokenizer_config.json,
    no tokenizer.json (loading converts spm.model, which needs sentencepiece and protobuf)."""
    _sentencepiece(folder / "spm.model", pad_id=0, pad_piece="[PAD]", bos_id=1, bos_piece="[CLS]", eos_id=2,
                   eos_piece="[SEP]", unk_id=3, unk_piece="[UNK]", user_defined_symbols=["[MASK]"])
    _write_json(folder / "tokenizer_config.json", {"do_lower_case": False, "vocab_type": "spm",
                                                   "tokenizer_class": "DebertaV2Tokenizer", "model_max_length": 512})
    return VOCAB


def _deberta_v3_config(size: int, **labels):
    from transformers import DebertaV2Config

    return DebertaV2Config(vocab_size=size, max_position_embeddings=512, relative_attention=True,
                           position_buckets=32, pos_att_type=["p2c", "c2p"], position_biased_input=False,
                           max_relative_positions=-1, norm_rel_ebd="layer_norm", share_att_key=True,
                           type_vocab_size=0, pad_token_id=0, **_small(), **labels)


def build_deberta_v3(folder: Path, seed: int = 0) -> None:
    """DeBERTa-v3 pre-trained layout (DebertaV2ForMaskedLM): spm.model only."""
    size = _deberta_v3_tokenizer(folder)
    _save_model(folder, _deberta_v3_config(size), "AutoModelForMaskedLM", seed)


def build_deberta_mnli(folder: Path, seed: int = 0, unit: int | None = HEAD_UNIT) -> None:
    """microsoft/deberta-large-mnli layout: DeBERTa v1 with a GPT-2 BPE ([PAD] 0, [CLS] 1, [SEP] 2, [UNK] 3)
    and labels CONTRADICTION / NEUTRAL / ENTAILMENT."""
    from transformers import DebertaConfig

    _byte_bpe(folder, ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"])
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "DebertaTokenizer", "model_max_length": 512,
                                                   "do_lower_case": False})
    size = len(json.loads((folder / "vocab.json").read_text()))
    config = DebertaConfig(vocab_size=size, max_position_embeddings=512, relative_attention=True,
                           pos_att_type=["c2p", "p2c"], max_relative_positions=-1, position_biased_input=False,
                           type_vocab_size=0, pad_token_id=0, **_small(),
                           **_labels(["CONTRADICTION", "NEUTRAL", "ENTAILMENT"]))
    _save_model(folder, config, "AutoModelForSequenceClassification", seed, unit)


def build_albert(folder: Path, seed: int = 0) -> None:
    """albert/albert-base-v2 layout: spiece.model (<pad> 0, <unk> 1, [CLS] 2, [SEP] 3, [MASK] 4)."""
    from transformers import AlbertConfig

    _sentencepiece(folder / "spiece.model", pad_id=0, unk_id=1, bos_id=-1, eos_id=-1,
                   user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"])
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "AlbertTokenizer", "do_lower_case": True,
                                                   "keep_accents": False, "model_max_length": 512})
    config = AlbertConfig(vocab_size=VOCAB, embedding_size=16, max_position_embeddings=512, pad_token_id=0,
                          bos_token_id=2, eos_token_id=3, **_small())
    _save_model(folder, config, "AutoModelForMaskedLM", seed)


def build_modernbert(folder: Path, seed: int = 0) -> None:
    """answerdotai/ModernBERT-base layout: a tokenizer.json (byte-level BPE with [CLS] $A [SEP] $B [SEP]
    templates) and PreTrainedTokenizerFast."""
    from tokenizers.processors import TemplateProcessing
    from transformers import ModernBertConfig

    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    tok = _byte_bpe(folder, specials)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                            special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.save(str(folder / "tokenizer.json"))
    for f in ("vocab.json", "merges.txt"):
        (folder / f).unlink()
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length":
                                                   8192, "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token":
                                                   "[PAD]", "mask_token": "[MASK]", "unk_token": "[UNK]",
                                                   "model_input_names": ["input_ids", "attention_mask"]})
    ids = {name: tok.token_to_id(name) for name in specials}
    config = ModernBertConfig(vocab_size=tok.get_vocab_size(), max_position_embeddings=512, global_rope_theta=160000.0,
                              local_attention=64, pad_token_id=ids["[PAD]"], eos_token_id=ids["[SEP]"],
                              bos_token_id=ids["[CLS]"], cls_token_id=ids["[CLS]"], sep_token_id=ids["[SEP]"],
                              **_small())
    _save_model(folder, config, "AutoModelForMaskedLM", seed)


def build_gpt2(folder: Path, seed: int = 0) -> None:
    """openai-community/gpt2 layout: vocab.json + merges.txt, <|endoftext|> as BOS/EOS/UNK, no pad token."""
    from transformers import GPT2Config

    _byte_bpe(folder, ["<|endoftext|>"])
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "GPT2Tokenizer", "model_max_length": 1024})
    size = len(json.loads((folder / "vocab.json").read_text()))
    config = GPT2Config(vocab_size=size, n_positions=1024, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                        n_inner=FFN, bos_token_id=0, eos_token_id=0)
    _save_model(folder, config, "AutoModelForCausalLM", seed)


def build_opt(folder: Path, seed: int = 0) -> None:
    """facebook/opt-125m layout: GPT-2 BPE with <s> 0, <pad> 1, </s> 2, <unk> 3; </s> is BOS, EOS and UNK,
    prepended to every input; config pad_token_id 1."""
    from transformers import OPTConfig

    _byte_bpe(folder, ["<s>", "<pad>", "</s>", "<unk>"])
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "GPT2Tokenizer", "model_max_length": 2048,
                                                   "bos_token": "</s>", "eos_token": "</s>", "unk_token": "</s>",
                                                   "pad_token": "<pad>", "add_bos_token": True})
    size = len(json.loads((folder / "vocab.json").read_text()))
    config = OPTConfig(vocab_size=size, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                       ffn_dim=FFN, word_embed_proj_dim=HIDDEN, max_position_embeddings=2048, pad_token_id=1,
                       bos_token_id=2, eos_token_id=2)
    _save_model(folder, config, "AutoModelForCausalLM", seed)


def build_pythia(folder: Path, seed: int = 0) -> None:
    """EleutherAI/pythia-160m layout: tokenizer.json only (<|endoftext|> 0, <|padding|> 1), GPTNeoXTokenizer
    (which pads with <|padding|>), and a config without pad_token_id - the combination that breaks batches
    unless the loader copies the tokenizer's pad id into the config."""
    from transformers import GPTNeoXConfig

    tok = _byte_bpe(folder, ["<|endoftext|>", "<|padding|>"])
    tok.save(str(folder / "tokenizer.json"))
    for f in ("vocab.json", "merges.txt"):
        (folder / f).unlink()
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "GPTNeoXTokenizer", "model_max_length": 2048,
                                                   "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>",
                                                   "unk_token": "<|endoftext|>"})
    config = GPTNeoXConfig(vocab_size=tok.get_vocab_size(), max_position_embeddings=2048, rotary_pct=0.25,
                           bos_token_id=0, eos_token_id=0, **_small())
    _save_model(folder, config, "AutoModelForCausalLM", seed)


def build_bart(folder: Path, seed: int = 0) -> None:
    """facebook/bart-base layout: RoBERTa's byte-level BPE and specials, BartForConditionalGeneration."""
    from transformers import BartConfig

    size = _roberta_tokenizer(folder)
    config = BartConfig(vocab_size=size, d_model=HIDDEN, encoder_layers=LAYERS, decoder_layers=LAYERS,
                        encoder_attention_heads=HEADS, decoder_attention_heads=HEADS, encoder_ffn_dim=FFN,
                        decoder_ffn_dim=FFN, max_position_embeddings=512, pad_token_id=1, bos_token_id=0,
                        eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2)
    _save_model(folder, config, "AutoModelForSeq2SeqLM", seed)


def build_flan_t5(folder: Path, seed: int = 0) -> None:
    """google/flan-t5-small layout: spiece.model (<pad> 0, </s> 1, <unk> 2) plus 100 <extra_id_*> tokens."""
    from transformers import T5Config

    _sentencepiece(folder / "spiece.model", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    _write_json(folder / "tokenizer_config.json", {"tokenizer_class": "T5Tokenizer", "model_max_length": 512,
                                                   "extra_ids": 100})
    config = T5Config(vocab_size=VOCAB + 100, d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=FFN, num_layers=LAYERS,
                      num_decoder_layers=LAYERS, num_heads=HEADS, feed_forward_proj="gated-gelu",
                      tie_word_embeddings=False, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    _save_model(folder, config, "AutoModelForSeq2SeqLM", seed)


def build_label_ids(folder: Path, seed: int = 0, unit: int | None = HEAD_UNIT) -> None:
    """A 3-way NLI head whose config names its units LABEL_0..2: usable only with a `label_order`."""
    build_bert(folder, seed, labels=None, unit=unit)


def build_cross_encoder(folder: Path, seed: int = 0, unit: int | None = HEAD_UNIT) -> None:
    """cross-encoder/nli-deberta-v3-base layout: DeBERTa-v3 (spm.model only), labels contradiction /
    entailment / neutral, saved through sentence-transformers' CrossEncoder (its config block included)."""
    from sentence_transformers import CrossEncoder

    size = _deberta_v3_tokenizer(folder)
    config = _deberta_v3_config(size, **_labels(["contradiction", "entailment", "neutral"]))
    _save_model(folder, config, "AutoModelForSequenceClassification", seed, unit)
    CrossEncoder(str(folder), device="cpu").save_pretrained(str(folder))


def build_embedder(folder: Path, seed: int = 0) -> None:
    """sentence-transformers layout (modules.json, 1_Pooling/, 2_Normalize/) over a tiny BERT."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    bert = folder.with_name(folder.name + ".bert")
    shutil.rmtree(bert, ignore_errors=True)
    build_bert(bert, seed, labels=None, unit=None)
    modules = [Transformer(str(bert), max_seq_length=128), Pooling(HIDDEN, "mean"), Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(folder))
    shutil.rmtree(bert)


@dataclass(frozen=True)
class Family:
    """One replica family."""

    name: str  # folder name under the replicas root
    counterpart: str  # the hub checkpoint whose layout it copies
    build: Callable[..., None]  # build(folder, seed) writes the replica
    nli: bool = False  # a 3-way NLI head, biased towards HEAD_UNIT


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("bert", "aloxatel/bert-base-mnli", build_bert, nli=True),
    Family("roberta", "FacebookAI/roberta-large", build_roberta),
    Family("roberta-mnli", "FacebookAI/roberta-large-mnli", build_roberta_mnli, nli=True),
    Family("deberta-v3", "microsoft/deberta-v3-large", build_deberta_v3),
    Family("deberta-mnli", "microsoft/deberta-large-mnli", build_deberta_mnli, nli=True),
    Family("albert", "albert/albert-base-v2", build_albert),
    Family("modernbert", "answerdotai/ModernBERT-base", build_modernbert),
    Family("gpt2", "openai-community/gpt2", build_gpt2),
    Family("opt", "facebook/opt-125m", build_opt),
    Family("pythia", "EleutherAI/pythia-160m", build_pythia),
    Family("bart", "facebook/bart-base", build_bart),
    Family("flan-t5", "google/flan-t5-small", build_flan_t5),
    Family("label-ids", "(a checkpoint whose config says LABEL_0..2)", build_label_ids, nli=True),
    Family("cross-encoder", "cross-encoder/nli-deberta-v3-base", build_cross_encoder, nli=True),
    Family("embedder", "sentence-transformers/all-MiniLM-L6-v2", build_embedder),
)}
DONE = ".replica.json"  # marker file of a finished replica: family, seed, version


VERSION = 1  # bump when a builder changes what it writes (stale replicas are rebuilt)


def build_replica(family: str, folder: str | Path, seed: int = 0) -> Path:
    """Build one replica into `folder` (kept as is when a finished build of the same family, seed and
    VERSION is there). Returns the folder."""
    if family not in FAMILIES:
        raise KeyError(f"unknown replica family {family!r}; known: {', '.join(FAMILIES)}")
    folder = Path(folder)
    stamp = {"family": family, "counterpart": FAMILIES[family].counterpart, "seed": seed, "version": VERSION}
    marker = folder / DONE
    if marker.is_file() and json.loads(marker.read_text()) == stamp:
        return folder
    tmp = folder.with_name(folder.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    FAMILIES[family].build(tmp, seed)
    (tmp / DONE).write_text(json.dumps(stamp, sort_keys=True))  # hidden: not part of the model's fingerprint
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def build_replicas(root: str | Path, families: Iterable[str] | None = None, seed: int = 0) -> dict[str, Path]:
    """Build every family (or `families`) under `root`/<family>; returns family -> folder."""
    root = Path(root)
    return {name: build_replica(name, root / name, seed) for name in (families or FAMILIES)}


def main(argv: list[str] | None = None) -> None:
    from .config import user_path

    ap = argparse.ArgumentParser(prog="python -m nli_lib.replicas", description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=".cache/replicas",
                    help="folder to build into (relative: to where you run the command); default .cache/replicas")
    ap.add_argument("--only", nargs="*", choices=list(FAMILIES), help="families to build (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    for name, folder in build_replicas(user_path(args.root), args.only, args.seed).items():
        print(f"{name:14s} {folder}")


if __name__ == "__main__":
    main()
