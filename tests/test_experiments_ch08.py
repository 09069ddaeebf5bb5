"""Chapter 8's experiment (posenc.experiments.ch08): every length and protocol measured, paired models, and
every direction the chapter asserts holding in the committed file and in its held-out replication."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import experiments as ex
from posenc.experiments import ch08, registry, results
from posenc.lib import textlm as t
from tests.conftest import assert_rerun_matches_file


def test_the_experiment_measures_every_length_and_protocol():
    config = ch08.TextExperiment(kinds=("none", "alibi"), steps=3, eval_bytes=512)
    runs = ex.sweep(config, keep_models=False)
    assert {r.kind for r in runs} == {"none", "alibi"}
    for run in runs:
        assert set(run.by_position) == set(ch08.PROTOCOLS)
        assert all(len(v) == len(config.eval_lengths) and np.isfinite(v).all() for v in run.by_position.values())
        assert 0 <= run.accuracy <= 1
    assert config.eval_lengths == (32, 64, 128, 256)
    assert len(ch08.bits_table(runs, config)) == 2 * len(config.kinds)
    assert registry.experiment_class("ch08") is ch08.TextExperiment


def test_paired_models_share_every_weight_but_the_position_method():
    config = ch08.TextExperiment()
    models = {kind: config.build(kind, seed=3) for kind in ("none", "alibi", "rope", "t5")}
    for model in models.values():
        assert torch.equal(model.embedding.weight, models["none"].embedding.weight)
        assert torch.equal(model.head.weight, models["none"].head.weight)


def test_t5s_buckets_past_l_are_out_of_training_reach_and_shaws_clipping_is_not():
    config = ch08.TextExperiment()
    t5, shaw = (config.build(kind, seed=0).position for kind in ("t5", "shaw"))
    reached = set(t.t5_buckets_of(t5, range(config.train_length)))
    needed = set(t.t5_buckets_of(t5, range(config.eval_lengths[-1])))
    assert needed - reached and max(reached) < min(needed - reached)
    assert shaw.max_distance < config.train_length     # every offset past k shares a vector training reached


@pytest.mark.parametrize("name", ["ch08.json", "ch08_replication.json"])
def test_every_direction_the_chapter_asserts_holds_in_the_file_and_in_the_replication(name):
    config, records, data = results.load_results(results.RESULTS_DIR / name)
    assert ex.same_setup(config, ch08.TextExperiment()) and len(config.seeds) >= 3
    failed = [claim for claim, ok in ch08.text_directions(records, config).items() if not ok]
    assert not failed, f"{name}: {failed}"
    assert data["platform"] and data["timing"]["seconds"] > 0


def _bits_at_every_length(run, records, config):
    """The run's bits per character at each length and protocol, beside the file's (one per seed)."""
    return {f"{protocol} at {length}": (run.by_position[protocol][j], ch08.bits_curves(records, run.kind, protocol)[:, j])
            for protocol in ch08.PROTOCOLS for j, length in enumerate(config.eval_lengths)}


def test_one_run_of_the_file_is_reproduced_exactly_here_or_within_its_range_elsewhere():
    assert_rerun_matches_file(results.RESULTS_DIR / "ch08.json", "alibi", 0, measures=_bits_at_every_length)
