"""Chapter 8's experiment (posenc.experiments.ch08): every length and protocol measured, paired models, and
every direction the chapter asserts holding in the committed file and in its held-out replication."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import experiments as ex
from posenc.experiments import ch08, registry, results
from posenc.lib import textlm as t
from tests.conftest import assert_rerun_matches_file, skip_where_the_book_reproduces


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
    models = {kind: config.build(kind, seed=3) for kind in ("none", "alibi", "rope", "t5", *ch08.ARMS)}
    for model in models.values():
        assert torch.equal(model.embedding.weight, models["none"].embedding.weight)
        assert torch.equal(model.head.weight, models["none"].head.weight)


def test_the_arms_change_one_setting_of_their_method_and_nothing_else():
    config = ch08.TextExperiment()
    assert config.kinds == ch08.METHODS + ch08.ARMS and all(kind in ex.LABELS for kind in config.kinds)
    paper, scaled = (config.build(kind, seed=0).position for kind in ("alibi", ch08.SCALED_ALIBI))
    assert config.alibi_slope_factor == 512 / 32 == ex.PUBLISHED["press2022"]["train_length"] / config.train_length
    assert torch.allclose(scaled.slopes, paper.slopes * config.alibi_slope_factor)
    # each scaled head's penalty at distance L is what the paper's slope gives at the paper's L; the gentlest
    # is the gentlest of the paper's own 8-head model at its L = 512
    published = ex.PUBLISHED["press2022"]
    paper_model = t.length_scaled_alibi_slopes(published["n_heads"], 1, 1) * published["train_length"]
    assert float(scaled.slopes.min()) * config.train_length == float(paper_model.min()) == 2.0
    assert float(paper.slopes.min()) * config.train_length < 1 <= float(scaled.slopes.min()) * config.train_length
    for kind, options in ch08.T5_ARMS.items():
        arm = config.build(kind, seed=0).position
        assert (arm.num_buckets, arm.max_distance) == (options["num_buckets"], options["max_distance"])
        reached = set(t.t5_buckets_of(arm, range(config.train_length)))
        assert set(t.t5_buckets_of(arm, range(config.eval_lengths[-1]))) == reached     # nothing new past L


def test_every_reading_scores_one_fixed_span_of_the_first_validation_file():
    config = ch08.TextExperiment()
    # bytes 1 .. eval_bytes: whole windows at every length and for both protocols, all inside configparser.py
    assert config.eval_bytes == 32768 and all(config.eval_bytes % n == 0 for n in config.eval_lengths)
    assert config.eval_bytes // config.eval_lengths[-1] >= 100              # at least 100 windows of 8L
    assert config.eval_bytes + 1 <= t.VALIDATION_FILES["configparser.py"][0]


def test_holds_is_two_sided():
    assert ch08.holds(np.array([0.01, -0.01, 0.0]))
    assert not ch08.holds(np.array([0.06, 0.07, 0.065]))        # worse by more than HOLDS_WITHIN
    assert not ch08.holds(np.array([-0.06, -0.07, -0.065]))     # better by more than HOLDS_WITHIN
    assert not ch08.holds(np.array([0.04, 0.045, 0.03]))        # within it, but not by the margin


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


def test_one_run_of_the_file_is_reproduced_exactly_here_or_within_its_range_elsewhere(request):
    skip_where_the_book_reproduces(request, results.RESULTS_DIR / "ch08.json", "alibi", 0)
    assert_rerun_matches_file(results.RESULTS_DIR / "ch08.json", "alibi", 0, measures=_bits_at_every_length)
