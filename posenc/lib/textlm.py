"""Chapter 8: position on real text. Byte-level language models on a fixed corpus, read longer than trained.

The corpus is real text that is the same on every machine and needs no download: seventeen modules of
Python 3.11.7's standard library, kept in the package as ``corpus/python-3.11.7-stdlib.tar.gz`` (about
150 KB; the Python Software Foundation's licence beside it, ``corpus/LICENSE-PSF.txt``). Every file is
checked against its size and SHA-256 when it is read. The split is by file: fifteen modules train, two
others (``configparser.py``, ``queue.py``) are the validation text, so no line the model reads for
validation was seen in training. Every file is plain ASCII, so a byte is a character and bits per byte are
bits per character.

The model is the course's ``TinyTransformer`` with a causal mask, one per position method, predicting the
next byte (:class:`TextTask`). Chapter 8's experiment (``posenc.experiments.ch08``) trains one per method at
one length L and reads the validation text at L, 2L, 4L and 8L, in two ways:

* **non-overlapping windows** (the ALiBi paper's main protocol): the text is cut into windows of the
  evaluation length and every byte of every window is scored, so early bytes of a window have little
  context (:func:`nonoverlapping_cross_entropy`);
* **sliding windows**: windows of the evaluation length that move by half of it; after the first window
  only the last half of each is scored, so every scored byte but those of the first window has at least
  half a window of context (:func:`sliding_cross_entropy`).

Both protocols score exactly the same bytes: the bytes ``1 .. n_bytes`` of the validation text (each byte
is predicted from the ones before it; by default every whole window the text holds, :func:`whole_windows`).
Chapter 8 scores one fixed span at every length and for every method: the first 32 KiB predicted of
``configparser.py``. Cross-entropy is in nats per byte; :func:`bits_per_character` and :func:`perplexity`
convert it.

Two settings decide how a relative method reads text longer than L, and the chapter varies both: ALiBi's
slopes, whose penalty on a key L positions back, m * L, depends on L and on the number of heads
(:func:`length_scaled_alibi_slopes` scales them to another L), and the buckets of T5's bias that training
reaches (:func:`t5_buckets_of`).
"""

from __future__ import annotations

import functools
import hashlib
import math
import tarfile
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F


CORPUS = Path(__file__).resolve().parent / "corpus" / "python-3.11.7-stdlib.tar.gz"
CORPUS_LICENCE = CORPUS.parent / "LICENSE-PSF.txt"

# name -> (bytes, SHA-256) of each file of the snapshot, in the order they are joined.
TRAINING_FILES = {
    "argparse.py": (99661, "dc1eba8adfdf615986421f981337458ba1072d3e718a0f76e3224940fd74118b"),
    "ast.py": (61444, "c513073798bdbf3cdef09327d0d2d381a53213a13a4ba3f02729695327539406"),
    "calendar.py": (24740, "b3b140864fd122a575ffcc9342b824fbe4f8a38fdf3f4fcd964f26e52725358f"),
    "csv.py": (16030, "6c68a5186e3b85e6e267a7ef96479327a45ae2b40bf5e9f2017e4b2282b3f5b1"),
    "dataclasses.py": (58299, "4b7e1c99ebea53b546317d218a0261895a1769f83a6b95dc0136f13578066a7f"),
    "difflib.py": (83308, "0c6afc23568d55b3e9ac914f9c5361e3033e778aa5b58d3cc82835fc5c638679"),
    "enum.py": (78966, "84fc683aa71da233cf0f6a1bd59ffedc2bc7adb3a40f9339052141176071b6d6"),
    "textwrap.py": (19718, "62867e40cdea6669b361f72af4d7daf0359f207c92cbeddfc7c7506397c1f31c"),
    "string.py": (11786, "24aeae1f0526250f442022022bf98df9a823b1cb330543ee79e70e44907462e9"),
    "random.py": (32162, "b931a2d452db89ab9e1f79d59b66ce194dbd6748049cfe44699726da52b9c956"),
    "bisect.py": (3135, "e5b2ff166f48a06e70ae831d8c9b47283fcd0c254306eee12d3dae9c55e11526"),
    "numbers.py": (10348, "6d70991643a109e9c99e94d6ea2734a995fa8e89114a70ea09737413fa9ae292"),
    "sched.py": (6351, "edfb309483d7cb05e06ad86d1fdeb819629f71402dc6710a1bec36c7afcaac50"),
    "pprint.py": (24489, "0b67dbc8af449d8ced3acd9df902e98c2dbc56c8f2a7a181c51cc72768db621f"),
    "graphlib.py": (9656, "7bd338c5a475d1101064603d3baa5507446d3c5e73f741f6d6e77c6204c1eb65"),
}
VALIDATION_FILES = {
    "configparser.py": (55254, "4a70cecccb55031a413b79e6ced2e63ca031f770cd25a4882980ecdeab67f6ff"),
    "queue.py": (11496, "f6c37fc37cd7440979f7d22d40ee818fa3b714c573610c08fa52911d541193f0"),
}
VOCAB_SIZE = 256          # bytes


class CorpusError(ValueError):
    """The corpus snapshot is missing, incomplete or not the one the course was written with."""


def read_corpus(path: Path = CORPUS) -> dict[str, bytes]:
    """Every file of the snapshot, checked against its size and SHA-256."""
    if not Path(path).is_file():
        raise CorpusError(f"the corpus snapshot {path} is missing (it ships with the posenc package)")
    expected = {**TRAINING_FILES, **VALIDATION_FILES}
    files = {}
    with tarfile.open(path, mode="r:gz") as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name in expected:
                files[member.name] = archive.extractfile(member).read()
    problems = [f"{name}: missing" for name in expected if name not in files]
    problems += [f"{name}: {len(data)} bytes, SHA-256 {hashlib.sha256(data).hexdigest()[:12]}..., expected "
                 f"{size} bytes, {digest[:12]}..." for name, data in files.items()
                 for size, digest in [expected[name]]
                 if len(data) != size or hashlib.sha256(data).hexdigest() != digest]
    if problems:
        raise CorpusError(f"the corpus snapshot {path} is not the course's: " + "; ".join(problems))
    return files


@functools.lru_cache(maxsize=1)
def corpus_split() -> tuple[np.ndarray, np.ndarray]:
    """(training bytes, validation bytes) as uint8 arrays: each part's files joined in their fixed order."""
    files = read_corpus()

    def join(names) -> np.ndarray:
        return np.frombuffer(b"".join(files[name] for name in names), dtype=np.uint8).copy()

    return join(TRAINING_FILES), join(VALIDATION_FILES)


def bits_per_character(nats: float) -> float:
    """Mean cross-entropy in nats per character -> bits per character (divide by ln 2)."""
    return nats / math.log(2)


def perplexity(nats: float) -> float:
    """Mean cross-entropy in nats -> perplexity, exp(cross-entropy)."""
    return math.exp(nats)


class TextTask:
    """Next-byte prediction on random windows of a byte array (the task interface of ``models.train``)."""

    vocab_size = VOCAB_SIZE

    def __init__(self, data: np.ndarray):
        self.data = torch.as_tensor(np.asarray(data, dtype=np.int64))

    def batch(self, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """``batch_size`` windows of ``seq_len`` bytes and, as targets, each byte's successor."""
        if seq_len + 1 > len(self.data):
            raise ValueError(f"seq_len {seq_len} needs more than the {len(self.data)} bytes of the text")
        starts = torch.randint(0, len(self.data) - seq_len, (batch_size,), generator=generator)
        windows = self.data[starts[:, None] + torch.arange(seq_len + 1)]
        return windows[:, :-1], windows[:, 1:]


def _as_tensor(data) -> torch.Tensor:
    return torch.as_tensor(np.asarray(data, dtype=np.int64)) if not isinstance(data, torch.Tensor) else data.long()


@torch.no_grad()
def window_losses(model, data, starts, length: int, batch_size: int = 64) -> torch.Tensor:
    """Cross-entropy in nats of every byte of each window data[s : s + length] (predicting data[s + 1 :
    s + length + 1]), shape (len(starts), length)."""
    data, starts = _as_tensor(data), torch.as_tensor(starts, dtype=torch.long)
    model.eval()
    rows = []
    for chunk in starts.split(batch_size):
        windows = data[chunk[:, None] + torch.arange(length + 1)]
        logits = model(windows[:, :-1])
        rows.append(F.cross_entropy(logits.transpose(1, 2), windows[:, 1:], reduction="none"))
    return torch.cat(rows) if rows else torch.empty(0, length)


def whole_windows(n_bytes: int, length: int) -> int:
    """The most bytes of a text of ``n_bytes`` that windows of ``length`` can score, each once: every byte
    but the first is predicted, so (n_bytes - 1) rounded down to a multiple of ``length``."""
    return (n_bytes - 1) // length * length


def nonoverlapping_cross_entropy(model, data, length: int, n_bytes: int | None = None) -> float:
    """Mean cross-entropy (nats per byte) over non-overlapping windows of ``length``: the first ``n_bytes``
    predicted bytes (a multiple of ``length``; default as many whole windows as the text holds) are scored,
    each exactly once, every window from its own first byte."""
    n_bytes = whole_windows(len(data), length) if n_bytes is None else n_bytes
    if n_bytes % length or n_bytes <= 0 or n_bytes + 1 > len(data):
        raise ValueError(f"n_bytes must be a positive multiple of length ({length}) within the text, got {n_bytes}")
    return float(window_losses(model, data, range(0, n_bytes, length), length).mean())


def sliding_cross_entropy(model, data, length: int, stride: int | None = None, n_bytes: int | None = None) -> float:
    """Mean cross-entropy (nats per byte) over windows of ``length`` that move by ``stride`` (default
    length // 2): the first window scores all its bytes, every later one only its last ``stride`` bytes, so
    each of the first ``n_bytes`` predicted bytes is scored exactly once, and all but the first window's
    with at least length - stride bytes of context."""
    stride = length // 2 if stride is None else stride
    n_bytes = whole_windows(len(data), length) if n_bytes is None else n_bytes
    if not 0 < stride <= length or (n_bytes - length) % stride or n_bytes < length or n_bytes + 1 > len(data):
        raise ValueError(f"need 0 < stride <= length and n_bytes = length + a multiple of stride within the "
                         f"text; got length {length}, stride {stride}, n_bytes {n_bytes}")
    losses = window_losses(model, data, range(0, n_bytes - length + 1, stride), length)
    scored = torch.cat([losses[0], losses[1:, length - stride:].reshape(-1)])
    return float(scored.mean())


@torch.no_grad()
def next_byte_accuracy(model, data, length: int, n_bytes: int) -> float:
    """Share of the first ``n_bytes`` predicted bytes that the model's most likely byte gets right, read in
    non-overlapping windows of ``length`` (``n_bytes`` a multiple of it)."""
    data = _as_tensor(data)
    windows = data[torch.as_tensor(range(0, n_bytes, length))[:, None] + torch.arange(length + 1)]
    guesses = model.eval()(windows[:, :-1]).argmax(-1)
    return float((guesses == windows[:, 1:]).float().mean())


def scored_context(n_bytes: int, length: int, stride: int | None = None) -> np.ndarray:
    """For each of the first ``n_bytes`` predicted bytes, how many bytes of its window precede it where it
    is scored: ``t % length`` in non-overlapping windows (``stride=None``); in sliding windows, ``t`` in the
    first window and ``length - stride + (t - length) % stride`` after it."""
    t = np.arange(n_bytes)
    if stride is None:
        return t % length
    return np.where(t < length, t, length - stride + (t - length) % stride)


def protocol_cross_entropy(losses, length: int, stride: int | None = None) -> float:
    """The mean a protocol reports when byte t, read with c bytes of its window before it, costs
    ``losses[t, c]`` nats: non-overlapping windows (``stride=None``) or sliding ones. The exercises ask for
    this; on a real model it equals :func:`nonoverlapping_cross_entropy` and :func:`sliding_cross_entropy`."""
    losses = np.asarray(losses, dtype=np.float64)
    context = scored_context(losses.shape[0], length, stride)
    return float(losses[np.arange(losses.shape[0]), context].mean())


def length_scaled_alibi_slopes(n_heads: int, train_length: int, reference_length: int) -> torch.Tensor:
    """ALiBi's slopes (``posenc.lib.relative.alibi_slopes``) multiplied by reference_length / train_length.

    A head with slope m puts the penalty m * L on a key L places back. With 4 heads at L = 32 the paper's
    rule leaves half of them barely telling near from far; its 8 heads at L = 512 all put 2 or more. Scaled so,
    each head's penalty at distance ``train_length`` is what the unscaled slope gives at
    ``reference_length``. This is a design choice, not the paper's rule: the paper uses the same slopes at
    every L."""
    from posenc.lib.relative import alibi_slopes

    if train_length <= 0 or reference_length <= 0:
        raise ValueError(f"lengths must be positive, got train_length={train_length}, "
                         f"reference_length={reference_length}")
    return alibi_slopes(n_heads) * (reference_length / train_length)


def t5_buckets_of(position, distances) -> list[int]:
    """The buckets of a causal T5 bias (``posenc.lib.attention.T5Position``) for keys ``distances`` places
    back: the ones a training length L reaches are those of distances 0 .. L - 1."""
    from posenc.lib.relative import t5_bucket

    offsets = -torch.as_tensor(list(distances), dtype=torch.long)       # j - i for a key before the query
    return t5_bucket(offsets, position.bidirectional, position.num_buckets, position.max_distance).tolist()
