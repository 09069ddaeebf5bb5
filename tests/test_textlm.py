"""posenc.lib.textlm: chapter 8's corpus, language-model task, evaluation protocols and sweep."""

from __future__ import annotations

import gzip
import io
import math
import tarfile

import numpy as np
import pytest
import torch

from posenc.lib import experiments as ex
from posenc.lib import textlm as t
from tests.conftest import assert_rerun_matches_file


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
    return t.TinyTransformer(t.VOCAB_SIZE, 16, 2, 1, position="alibi", max_len=64, causal=True).eval()


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


def test_the_experiment_measures_every_length_and_protocol():
    config = t.TextExperiment(kinds=("none", "alibi"), steps=3, eval_bytes=512)
    runs = ex.sweep(config, keep_models=False)
    assert {r.kind for r in runs} == {"none", "alibi"}
    for run in runs:
        assert set(run.by_position) == set(t.PROTOCOLS)
        assert all(len(v) == len(config.eval_lengths) and np.isfinite(v).all() for v in run.by_position.values())
        assert 0 <= run.accuracy <= 1
    assert config.eval_lengths == (32, 64, 128, 256)
    assert len(t.bits_table(runs, config)) == 2 * len(config.kinds)
    assert ex.experiment_class("ch08") is t.TextExperiment


def test_paired_models_share_every_weight_but_the_position_method():
    config = t.TextExperiment()
    models = {kind: config.build(kind, seed=3) for kind in ("none", "alibi", "rope", "t5")}
    for model in models.values():
        assert torch.equal(model.embedding.weight, models["none"].embedding.weight)
        assert torch.equal(model.head.weight, models["none"].head.weight)


def test_the_published_columns_are_the_papers_at_about_l_2l_and_7l():
    table = t.PUBLISHED_TABLE_2
    assert table["lengths"] == (512, 1012, 3512)
    assert table["alibi"][-1] < table["alibi"][0] and table["sinusoidal"][-1] > 8 * table["sinusoidal"][0]
    assert table["rope"][0] < table["rope"][1] < table["rope"][2] < table["sinusoidal"][2]


def test_t5s_buckets_past_l_are_out_of_training_reach_and_shaws_clipping_is_not():
    config = t.TextExperiment()
    t5, shaw = (config.build(kind, seed=0).position for kind in ("t5", "shaw"))
    reached = set(t.t5_buckets_of(t5, range(config.train_length)))
    needed = set(t.t5_buckets_of(t5, range(config.eval_lengths[-1])))
    assert needed - reached and max(reached) < min(needed - reached)
    assert shaw.max_distance < config.train_length     # every offset past k shares a vector training reached


@pytest.mark.parametrize("name", ["ch08.json", "ch08_replication.json"])
def test_every_direction_the_chapter_asserts_holds_in_the_file_and_in_the_replication(name):
    config, records, data = ex.load_results(ex.RESULTS_DIR / name)
    assert ex.same_setup(config, t.TextExperiment()) and len(config.seeds) >= 3
    failed = [claim for claim, ok in t.directions(records, config).items() if not ok]
    assert not failed, f"{name}: {failed}"
    assert data["platform"] and data["timing"]["seconds"] > 0


def test_the_replication_uses_seeds_the_file_never_used():
    seeds = [set(ex.load_results(ex.RESULTS_DIR / name)[0].seeds) for name in ("ch08.json", "ch08_replication.json")]
    assert not seeds[0] & seeds[1]


def _bits_at_every_length(run, records, config):
    """The run's bits per character at each length and protocol, beside the file's (one per seed)."""
    return {f"{protocol} at {length}": (run.by_position[protocol][j], t.bits_curves(records, run.kind, protocol)[:, j])
            for protocol in t.PROTOCOLS for j, length in enumerate(config.eval_lengths)}


def test_one_run_of_the_file_is_reproduced_exactly_here_or_within_its_range_elsewhere():
    assert_rerun_matches_file(ex.RESULTS_DIR / "ch08.json", "alibi", 0, measures=_bits_at_every_length)
