"""Chapter 5's experiment (posenc.experiments.ch05): every position method at the training length, paired runs,
its report, and one run of the committed file reproduced from the code."""

import numpy as np
import pytest
import torch

from posenc import experiments as ex
from posenc.experiments import ch05, registry, results
from posenc.lib.relative import alibi_slopes
from tests.conftest import assert_rerun_matches_file
from tests.test_models import one_thread  # noqa: F401  (autouse: tiny models run fastest on one thread)


def test_published_numbers_are_consistent():
    speed = ex.PUBLISHED["press2022_speed"]
    assert speed["lengths"] == (512, 1024, 3072)
    ratios = np.array(speed["train_wps"]["sinusoidal"]) / np.array(speed["train_wps"]["t5"])
    assert ratios.min() > 1.9                           # "at least twice as slow" (1.98 at L = 512)
    assert all(len(v) == 3 for table in ("train_wps", "eval_wps", "memory_gb") for v in speed[table].values())


def test_the_inside_sweep_is_registered_and_pairs_its_runs():
    assert registry.experiment_class("ch05") is ch05.InsideLengthExperiment
    config = ch05.InsideLengthExperiment()
    assert config.eval_length == config.train_length and config.kinds == ch05.INSIDE_KINDS
    models = {kind: config.build(kind, seed=3) for kind in config.kinds}
    reference = models["none"]
    for net in models.values():
        assert torch.equal(net.embedding.weight, reference.embedding.weight)
        assert config.measure("t5", net) == {}
    torch.testing.assert_close(models[ch05.STEEP_ALIBI].position.slopes, alibi_slopes(8)[:2])
    torch.testing.assert_close(models["alibi"].position.slopes, alibi_slopes(2))
    with pytest.raises(ValueError, match="8 heads"):
        ch05.InsideLengthExperiment(n_heads=16, d_model=32).build(ch05.STEEP_ALIBI, 0)


def test_report_and_paired_differences():
    config = ch05.InsideLengthExperiment(kinds=("none", "t5"), seeds=(0, 1), steps=2)
    runs = ex.sweep(config, keep_models=False)
    text = config.report(runs)
    assert "T5 bias" in text and "no encoding" in text and "±" in text and "accuracy at L" in text
    differences = ex.paired_differences(runs, "t5", "none")
    by = {(r.kind, r.seed): r.accuracy for r in runs}
    np.testing.assert_allclose(differences, [by[("t5", s)] - by[("none", s)] for s in (0, 1)])
    assert ex.paired_differences([r.record() for r in runs], "t5", "none").shape == (2,)


def test_one_run_of_results_ch05_is_reproduced():
    assert_rerun_matches_file(results.RESULTS_DIR / "ch05.json", "alibi-steep")
