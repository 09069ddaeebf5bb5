"""Chapter 7's experiment (posenc.experiments.ch07): the kinds are paired, the runs are the same in one process
or two, the summaries read records back from a file, and every direction the chapter asserts holds in the
committed file with its margin and in the held-out replication."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from posenc import experiments as ex
from posenc.experiments import ch07, registry, results
from posenc.lib.attention import METHODS
from tests.conftest import assert_rerun_matches_file

TINY = ch07.BenchmarkExperiment(methods=("none", "alibi", "rope"), steps=3, batch_size=4, n_eval=8,
                              copy_eval_sequences=4, finetune_steps=2, eval_length=32, train_length=8,
                              max_len=32, seeds=(0, 1))


def test_kinds_pair_every_task_with_every_method():
    config = ch07.BenchmarkExperiment()
    assert config.kinds == tuple(f"{t}/{m}" for t in ch07.TASKS for m in METHODS)
    assert ch07.split_kind("copy/alibi") == ("copy", "alibi")
    assert ch07.kind_label("first/none") == "no encoding on first token"
    assert len({ch07.kind_label(kind) for kind in config.kinds}) == len(config.kinds)     # one name per kind
    for bad in ("copy", "copy/rotary", "sorting/rope"):
        with pytest.raises(ValueError, match="task/method"):
            ch07.split_kind(bad)
    with pytest.raises(ValueError):
        ch07.BenchmarkExperiment(eval_length=32)          # shorter than 4 L


def test_every_method_of_a_seed_starts_from_the_same_weights():
    config = ch07.BenchmarkExperiment()
    models = {m: config.build(f"copy/{m}", seed=2) for m in METHODS}
    for model in models.values():
        assert torch.equal(model.embedding.weight, models["none"].embedding.weight)
        assert torch.equal(model.head.weight, models["none"].head.weight)
    assert models["shaw"].position.max_distance == config.shaw_max_distance
    assert (models["t5"].position.num_buckets, models["t5"].position.max_distance) == (8, 16)
    assert not models["t5"].position.bidirectional and models["alibi"].position.slopes.tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256]


def test_streaming_tasks_train_at_L_and_copy_at_every_length_up_to_L():
    config = ch07.BenchmarkExperiment()
    assert config.train_config(0, "local").train_lengths == (16,)
    assert config.train_config(0, "copy").train_lengths == tuple(range(3, 17))
    assert config.train_lengths("copy", 64)[-1] == 64


def test_copy_is_read_one_odd_length_at_a_time():
    config = replace(TINY, methods=("none",))
    model = config.build("copy/none", 0)
    curve = config.curve(model, "copy", 12)
    assert np.all(np.isnan(curve[[0, 1, 3, 5, 7, 9, 11]])) and not np.any(np.isnan(curve[[2, 4, 6, 8, 10]]))


def test_a_sweep_measures_every_kind_and_extends_the_rotary_runs(tmp_path):
    runs = ex.sweep(TINY)
    assert [(r.kind, r.seed) for r in runs[:3]] == [("local/none", 0), ("local/alibi", 0), ("local/rope", 0)]
    rope = next(r for r in runs if r.kind == "first/rope")
    expected = {"plain"} | {ch07.extension_key(m, s) for m in ch07.EXTENSIONS for s in TINY.scales} | \
        {ch07.extension_key(m, s, True) for m in ("none", *ch07.EXTENSIONS) for s in TINY.scales}
    assert set(rope.by_position) == expected
    assert rope.by_position["pi x2"].shape == (16,) and rope.by_position["ft yarn x4"].shape == (32,)
    assert set(next(r for r in runs if r.kind == "first/alibi").by_position) == {"plain"}
    path = tmp_path / "ch07.json"
    results.save_results(path, TINY, runs, "ch07", seconds=1.5, processes=1)
    config, records, meta = results.load_results(path)
    assert config == TINY and meta["timing"]["seconds"] == 1.5 and meta["seeds"] == [0, 1]
    assert ch07.summary_rows(records, config) == ch07.summary_rows(runs, config)
    assert ch07.extension_table(records, config) == ch07.extension_table(runs, config)
    assert json.loads(path.read_text())["config"]["finetune_steps"] == 2


def test_two_processes_give_the_same_runs_as_one():
    config = replace(TINY, tasks=("first",), seeds=(0,))
    torch.set_num_threads(1)
    alone = ex.sweep(config, keep_models=False)
    shared = ex.sweep(config, keep_models=False, processes=2)
    assert [r.kind for r in shared] == [r.kind for r in alone]
    for a, b in zip(alone, shared):
        assert a.losses == b.losses and a.accuracy == b.accuracy
        for key in a.by_position:
            np.testing.assert_array_equal(a.by_position[key], b.by_position[key])


def _record(kind, seed, far):
    curve = [1.0] * 16 + [far] * 48
    return {"kind": kind, "seed": seed, "accuracy": 1.0, "by_position": {"plain": curve}}


def test_ranks_and_mean_reciprocal_rank():
    config = ch07.BenchmarkExperiment(tasks=("local", "copy"), methods=("none", "alibi", "rope"))
    far = {"none": 0.5, "alibi": 0.9, "rope": 0.2}
    records = [_record(f"{t}/{m}", s, far[m] - 0.1 * (t == "copy" and m == "alibi") * 5)
               for t in config.tasks for m in config.methods for s in (0, 1)]
    ranks = ch07.ranks(records, config)
    assert ranks["alibi"].tolist() == [1, 1, 2, 2] and ranks["none"].tolist() == [2, 2, 1, 1]
    mrr = ch07.mean_reciprocal_rank(records, config)
    assert mrr["alibi"] == pytest.approx(0.75) and mrr["rope"] == pytest.approx(1 / 3)


def test_lr_search_scores_inside_the_training_length_only():
    config = replace(TINY, tasks=("local",), methods=("none", "rope"))
    result = ch07.lr_search(config, rates=(1e-3, 1e-2), processes=1)
    assert result["best"] in (1e-3, 1e-2) and set(result["accuracy_inside_L"]) == {"0.001", "0.01"}
    assert set(result["accuracy_inside_L"]["0.01"]) == {"local/none", "local/rope"}


def test_the_sweep_is_registered_for_make_experiments():
    assert registry.experiment_class("ch07") is ch07.BenchmarkExperiment and registry.SWEEPS["ch07"].replicated
    assert ch07.BenchmarkExperiment.full_seeds >= 5 and ch07.BenchmarkExperiment.processes == 2
    assert not set(registry.replication_seeds("ch07")) & set(range(ch07.BenchmarkExperiment.full_seeds))


# ---------------------------------------------------------------------------------------------------
# The committed results: every direction the chapter asserts, with its margin, and in the held-out seeds

FILE, REPLICATION = results.RESULTS_DIR / "ch07.json", results.RESULTS_DIR / "ch07_replication.json"


@pytest.fixture(scope="module")
def committed():
    return results.load_results(FILE), results.load_results(REPLICATION)


def test_the_replication_is_the_same_configuration_with_seeds_never_used(committed):
    (config, _, meta), (replication_config, _, replication_meta) = committed
    assert ex.same_setup(config, replication_config) and ex.same_setup(config, ch07.BenchmarkExperiment())
    assert tuple(replication_config.seeds) == registry.replication_seeds("ch07")
    assert not set(config.seeds) & set(replication_config.seeds)
    assert len(config.seeds) == ch07.BenchmarkExperiment.full_seeds
    assert replication_meta["command"] == "python -m posenc.experiments replicate ch07 --out results/ch07_replication.json"
    assert meta["platform"] and replication_meta["platform"]


def test_every_direction_of_the_chapter_clears_its_margin_in_the_file(committed):
    (config, records, _), _ = committed
    unclear = [(d.claim, round(d.gap, 4), round(d.margin, 4)) for d in ch07.extrapolation_directions(records, config) if not d.clear]
    assert not unclear


def test_every_direction_of_the_chapter_holds_in_the_held_out_replication(committed):
    (config, records, _), (replication_config, replication, _) = committed
    claims, replicated = ch07.extrapolation_directions(records, config), ch07.extrapolation_directions(replication, replication_config)
    assert [d.claim for d in claims] == [d.claim for d in replicated] and len(claims) >= 30
    assert not [(d.claim, round(d.gap, 4)) for d in replicated if not d.holds]


def test_a_direction_is_judged_on_the_paired_differences_of_its_seeds():
    spread = ch07.Direction("a above b", np.array([0.9, 0.5, 0.9, 0.5]), np.array([0.8, 0.4, 0.8, 0.4]))
    assert spread.holds and spread.clear and spread.gap == pytest.approx(0.1) and spread.margin == 0.0
    noisy = ch07.Direction("a above 0.5", np.array([0.9, 0.2, 0.9, 0.3]), 0.5)
    assert noisy.holds and not noisy.clear
    assert not ch07.Direction("a below 0.5", 0.5, np.array([0.6, 0.7])).holds
    rows = ch07.direction_rows([spread], [noisy])
    assert rows == [["a above b", "+0.100", "0.000", "yes", "+0.075", "yes"]]


def _accuracy_and_bins(run, records, config):
    """The run's in-distribution accuracy and its mean accuracy in each band of positions, beside the file's."""
    mine, theirs = ex.bin_means([run], run.kind, config), ex.bin_means(records, run.kind, config)
    values = {"accuracy": (run.accuracy, ex.in_distribution(records, run.kind))}
    values.update({name: (float(mine[name][0]), theirs[name]) for name in theirs})
    return values


@pytest.mark.parametrize("path", [FILE, REPLICATION], ids=["file", "replication"])
def test_one_run_of_each_file_is_reproduced(path):
    """One run of the file again, with the file's configuration: digit for digit on the platform the file was
    made on; elsewhere (another CPU or torch takes another path) within the file's range over its seeds,
    widened by the margin a replication may move a mean by. The cheapest kind: no extension runs."""
    assert_rerun_matches_file(path, "local/none", results.load_results(path)[0].seeds[0], measures=_accuracy_and_bins)
