"""Chapter 4's experiment (posenc.experiments.ch04): paired runs, the control table, the ways of reading past
the training length, and the committed file reproduced from the code."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posenc import experiments as ex
from posenc.experiments import ch04, results
from tests.conftest import assert_rerun_matches_file
from tests.test_models import one_thread  # noqa: F401  (autouse: tiny models run fastest on one thread)

QUICK = ch04.LengthExperiment(d_model=16, n_layers=1, max_len=16, train_length=8, steps=3, batch_size=4,
                              eval_length=24, n_eval=8, window=8, seeds=(0, 1))


def test_runs_are_paired_across_encodings():
    models = [QUICK.build(kind, seed=3) for kind in ch04.ENCODINGS]
    for name in ("embedding.weight", "head.weight", "encoder.layers.0.linear1.weight"):
        first = dict(models[0].named_parameters())[name]
        assert all(torch.equal(dict(m.named_parameters())[name], first) for m in models)


def test_the_control_table_is_the_learned_table_at_the_scale_of_pe():
    learned, control = (QUICK.build(kind, seed=4) for kind in ch04.LEARNED)
    rms = ch04.pe_entry_rms(QUICK.d_model)
    assert rms == pytest.approx(2 ** -0.5)
    scale = rms / QUICK.learned_init_std
    torch.testing.assert_close(control.positional.table, learned.positional.table * scale)
    table_rms = control.positional.table.pow(2).mean().sqrt().item()
    assert abs(table_rms / rms - 1) < 0.15
    assert ex.LABELS["learned_pe_scale"] and "learned_pe_scale" in QUICK.kinds


def test_build_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        QUICK.build("rotary", seed=0)


def test_clamped_copy_keeps_the_first_rows_and_leaves_the_original_alone():
    model = QUICK.build("learned", seed=0)
    clone = ch04.clamped_copy(model, 5)
    assert clone.positional.max_len == 5 and clone.positional.overflow == "clamp"
    torch.testing.assert_close(clone.positional.table, model.positional.table[:5])
    assert model.positional.max_len == QUICK.max_len and model.positional.overflow == "error"


def test_a_sweep_reads_past_the_table_and_its_summaries_read_the_file_too(tmp_path):
    runs = ex.sweep(QUICK, kinds=("sinusoidal", "learned"))
    assert [(r.kind, r.seed) for r in runs] == [("sinusoidal", 0), ("learned", 0), ("sinusoidal", 1), ("learned", 1)]
    learned = runs[1]
    assert set(learned.by_position) == {"plain", "window", "clamp"}
    assert np.all(np.isnan(learned.by_position["plain"][QUICK.max_len:]))          # past the table
    assert torch.equal(learned.model.positional.table[QUICK.train_length:], learned.initial_table[QUICK.train_length:])
    path = tmp_path / "results.json"
    results.save_results(path, QUICK, runs, "ch04")
    config, records, _ = results.load_results(path)
    assert ch04.summary_rows(records, config) == ch04.summary_rows(runs, config)


def test_bin_means_skip_unmeasured_positions():
    config = ch04.LengthExperiment(offset=1, train_length=2, max_len=4, eval_length=6)
    record = {"kind": "learned", "accuracy": 1.0,
              "by_position": {"plain": [None, 1.0, 0.5, 0.0, None, None]}}
    bins = ex.bin_means([record], "learned", config)
    assert list(bins) == ["trained", "L..2L", "2L..4", "past the table"]
    assert bins["trained"][0] == 1.0 and bins["L..2L"][0] == 0.25 and np.isnan(bins["past the table"][0])


def test_every_position_method_runs_through_the_length_experiment():
    """Part II's methods share the runner with chapter 4, and for one seed the same non-positional weights."""
    methods = ("alibi", "rope", "t5", "shaw")
    runs = ex.sweep(QUICK, kinds=methods)
    assert [r.kind for r in runs if r.seed == QUICK.seeds[0]] == list(methods)
    assert all(r.by_position["plain"].shape == (QUICK.eval_length,) for r in runs)
    embeddings = [QUICK.build(kind, seed=3).embedding.weight for kind in ("none", "alibi", "rope")]
    assert all(torch.equal(embeddings[0], e) for e in embeddings[1:])


def test_the_chapter_4_file_reproduces_from_the_code():
    """One run of results/ch04.json (no encoding, the cheapest kind, seed 0), with the file's configuration."""
    assert_rerun_matches_file(results.RESULTS_DIR / "ch04.json", "none", 0)
