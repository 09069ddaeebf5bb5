"""posenc.lib.textlm: chapter 8's corpus, language-model task and evaluation protocols."""

from __future__ import annotations

import gzip
import io
import math
import tarfile

import numpy as np
import pytest
import torch

from posenc.lib import textlm as t
from posenc.lib.models import TinyTransformer


def test_the_corpus_is_the_checked_snapshot_split_by_file():
    files = t.read_corpus()
    assert set(files) == set(t.TRAINING_FILES) | set(t.VALIDATION_FILES)
    assert not set(t.TRAINING_FILES) & set(t.VALIDATION_FILES)
    train, valid = t.corpus_split()
    assert len(train) == sum(size for size, _ in t.TRAINING_FILES.values())
    assert len(valid) == sum(size for size, _ in t.VALIDATION_FILES.values())
    assert train.max() < 128 and valid.max() < 128          # ASCII: one byte is one character
    assert t.CORPUS_LICENCE.is_file() and "PYTHON SOFTWARE FOUNDATION" in t.CORPUS_LICENCE.read_text()


def test_a_changed_or_incomplete_snapshot_is_refused_with_the_file_named(tmp_path):
    original = t.read_corpus()
    changed = dict(original, **{"queue.py": original["queue.py"].replace(b"Queue", b"Qeueu", 1)})
    del changed["bisect.py"]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in changed.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path = tmp_path / "corpus.tar.gz"
    path.write_bytes(gzip.compress(buffer.getvalue()))
    with pytest.raises(t.CorpusError, match=r"queue\.py: 11496 bytes.*|bisect\.py: missing") as error:
        t.read_corpus(path)
    assert "bisect.py: missing" in str(error.value) and "queue.py" in str(error.value)
    with pytest.raises(t.CorpusError, match="missing"):
        t.read_corpus(tmp_path / "nothing.tar.gz")


def test_a_batch_is_random_windows_and_their_successors():
    data = np.arange(100, dtype=np.uint8)
    tokens, targets = t.TextTask(data).batch(5, 7, torch.Generator().manual_seed(0))
    assert tokens.shape == targets.shape == (5, 7)
    assert torch.equal(targets, tokens + 1) and torch.equal(tokens[:, 1:], tokens[:, :-1] + 1)
    with pytest.raises(ValueError, match="needs more"):
        t.TextTask(data[:5]).batch(1, 7, torch.Generator())


def test_bits_and_perplexity():
    assert t.bits_per_character(math.log(2)) == pytest.approx(1.0)
    assert t.perplexity(math.log(20.05)) == pytest.approx(20.05)
    assert t.bits_per_character(math.log(256)) == pytest.approx(8.0)


@pytest.fixture(scope="module")
def tiny_model():
    torch.manual_seed(0)
    return TinyTransformer(t.VOCAB_SIZE, 16, 2, 1, position="alibi", max_len=64, causal=True).eval()


def per_byte_losses(model, data, length):
    """losses[t, c]: cross-entropy of byte t + 1 read with the c bytes before it (a window starting at t - c)."""
    data = torch.as_tensor(np.asarray(data, dtype=np.int64))
    n = len(data) - 1
    table = np.full((n, length), np.nan)
    for c in range(length):
        starts = [s for s in range(-c, n - c) if s >= 0 and s + length + 1 <= len(data)]
        losses = t.window_losses(model, data, starts, length)
        for s, row in zip(starts, losses):
            table[s + c, c] = float(row[c])
    return table


def test_both_protocols_score_each_byte_once_with_the_context_scored_context_names(tiny_model):
    data = t.corpus_split()[1][:129]
    length, n_bytes = 16, 96
    table = per_byte_losses(tiny_model, data, length)[:n_bytes]
    assert t.nonoverlapping_cross_entropy(tiny_model, data, length, n_bytes) == pytest.approx(
        t.protocol_cross_entropy(table, length), rel=1e-5)
    for stride in (8, 4, 16):
        assert t.sliding_cross_entropy(tiny_model, data, length, stride, n_bytes) == pytest.approx(
            t.protocol_cross_entropy(table, length, stride), rel=1e-5)
    context = t.scored_context(40, 16, 4)
    assert context[:16].tolist() == list(range(16)) and context[16:20].tolist() == [12, 13, 14, 15]
    assert t.scored_context(40, 16).tolist() == [i % 16 for i in range(40)]


def test_with_a_stride_equal_to_the_length_sliding_is_non_overlapping(tiny_model):
    data = t.corpus_split()[1][:200]
    assert t.sliding_cross_entropy(tiny_model, data, 32, 32, 160) == pytest.approx(
        t.nonoverlapping_cross_entropy(tiny_model, data, 32, 160), rel=1e-6)


def test_protocols_refuse_byte_counts_they_cannot_score_evenly(tiny_model):
    data = t.corpus_split()[1][:200]
    with pytest.raises(ValueError, match="multiple of length"):
        t.nonoverlapping_cross_entropy(tiny_model, data, 32, 100)
    with pytest.raises(ValueError, match="stride"):
        t.sliding_cross_entropy(tiny_model, data, 32, 40, 160)
    with pytest.raises(ValueError, match="stride"):
        t.sliding_cross_entropy(tiny_model, data, 32, 12, 160)


def test_next_byte_accuracy_scores_the_most_likely_byte_of_every_window(tiny_model):
    data = t.corpus_split()[1][:200]
    accuracy = t.next_byte_accuracy(tiny_model, data, 32, 160)
    windows = torch.as_tensor(np.asarray(data[:161], dtype=np.int64))
    with torch.no_grad():
        guesses = tiny_model(windows[:160].reshape(5, 32)).argmax(-1).reshape(-1)
    assert accuracy == pytest.approx(float((guesses == windows[1:161]).float().mean()))


def test_whole_windows_are_every_byte_but_the_first_rounded_down_to_the_length():
    assert t.whole_windows(66750, 256) == 66560 and t.whole_windows(257, 256) == 256
    assert t.whole_windows(256, 256) == 0 and t.whole_windows(129, 32) == 128


def test_length_scaled_alibi_slopes_put_the_reference_penalty_at_the_training_length():
    from posenc.lib.relative import alibi_slopes

    slopes = t.length_scaled_alibi_slopes(4, 32, 512)
    assert torch.allclose(slopes, alibi_slopes(4) * 16)
    assert torch.allclose(slopes * 32, alibi_slopes(4) * 512)          # the penalty at L = 32 as at 512
    assert torch.equal(t.length_scaled_alibi_slopes(8, 512, 512), alibi_slopes(8))
    with pytest.raises(ValueError, match="positive"):
        t.length_scaled_alibi_slopes(4, 0, 512)
