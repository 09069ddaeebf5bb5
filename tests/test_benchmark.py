"""Chapter 7's tasks (posenc.lib.tasks) and its benchmark (posenc.lib.benchmark): the targets follow each
task's rule, the kinds are paired, the runs are the same in one process or two, and the summaries read
records back from a file."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from posenc.lib import benchmark as bm
from posenc.lib import experiments as ex
from posenc.lib.attention import METHODS
from posenc.lib.tasks import IGNORE, Copy, FirstToken, LocalMax, ShiftedCopy
from tests.conftest import assert_rerun_matches_file


def batch(task, n=64, length=20, seed=0):
    return task.batch(n, length, torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------------------------------------------
# Tasks


@pytest.mark.parametrize("window", [2, 3, 5])
def test_local_max_is_the_max_of_the_last_window_tokens(window):
    tokens, targets = batch(LocalMax(12, window))
    for t in range(tokens.shape[1]):
        if t < window - 1:
            assert torch.all(targets[:, t] == IGNORE)
        else:
            assert torch.equal(targets[:, t], tokens[:, t - window + 1:t + 1].max(dim=1).values)


def test_first_token_targets_are_the_first_token_everywhere_but_position_0():
    tokens, targets = batch(FirstToken(9))
    assert torch.all(targets[:, 0] == IGNORE)
    assert torch.equal(targets[:, 1:], tokens[:, :1].expand(-1, tokens.shape[1] - 1))


@pytest.mark.parametrize("length", [3, 4, 9, 10, 31])
def test_copy_repeats_the_string_after_the_separator_and_scores_only_the_copy(length):
    task = Copy(7)
    tokens, targets = batch(task, length=length)
    n = (length - 1) // 2
    string = tokens[:, :n]
    assert torch.all(string < task.separator) and torch.all(tokens[:, n] == task.separator)
    assert torch.equal(tokens[:, n + 1:2 * n + 1], string)
    assert torch.equal(targets[:, n:2 * n], string)                 # SEP predicts x_0, copy of x_k predicts x_k+1
    scored = targets != IGNORE
    assert scored.sum().item() == tokens.shape[0] * n and tokens.shape[1] == length
    if length % 2 == 0:
        assert torch.all(tokens[:, -1] == 0) and torch.all(targets[:, -1] == IGNORE)


def test_streaming_targets_depend_only_on_the_prefix():
    """For a streaming task the target at t is the rule applied to tokens 0..t, so the first positions of a
    long test sequence are a test at every shorter length."""
    for task in (LocalMax(10, 3), FirstToken(10)):
        assert task.streaming
        tokens, targets = batch(task, length=30)
        for t in (0, 1, 2, 7, 29):
            prefix = tokens[:, :t + 1]
            rule = {LocalMax: lambda p: p[:, -3:].max(dim=1).values if p.shape[1] >= 3 else None,
                    FirstToken: lambda p: p[:, 0] if p.shape[1] >= 2 else None}[type(task)](prefix)
            if rule is None:
                assert torch.all(targets[:, t] == IGNORE)
            else:
                assert torch.equal(targets[:, t], rule)
    assert not Copy().streaming


def test_tasks_are_seeded_and_have_a_chance_level():
    for task in (LocalMax(), FirstToken(), Copy()):
        first, again = batch(task, seed=3), batch(task, seed=3)
        assert all(torch.equal(a, b) for a, b in zip(first, again))
        assert not torch.equal(batch(task, seed=4)[0], first[0])
        assert 0 < task.chance < 1
    assert Copy(16).chance == 1 / 15 and LocalMax(16).chance == 1 / 16


@pytest.mark.parametrize("make, length", [(lambda: Copy(2), 5), (lambda: LocalMax(8, 1), 5),
                                          (lambda: Copy(8), 2), (lambda: FirstToken(8), 0)])
def test_bad_task_settings_are_refused(make, length):
    with pytest.raises(ValueError):
        make().batch(2, length, torch.Generator().manual_seed(0))


def test_shifted_copy_is_unchanged():
    tokens, targets = batch(ShiftedCopy(16, 1), length=8)
    assert torch.all(targets[:, 0] == IGNORE) and torch.equal(targets[:, 1:], tokens[:, :-1])


# ---------------------------------------------------------------------------------------------------
# The benchmark

TINY = bm.BenchmarkExperiment(methods=("none", "alibi", "rope"), steps=3, batch_size=4, n_eval=8,
                              copy_eval_sequences=4, finetune_steps=2, eval_length=32, train_length=8,
                              max_len=32, seeds=(0, 1))


def test_kinds_pair_every_task_with_every_method():
    config = bm.BenchmarkExperiment()
    assert config.kinds == tuple(f"{t}/{m}" for t in bm.TASKS for m in METHODS)
    assert bm.split_kind("copy/alibi") == ("copy", "alibi")
    for bad in ("copy", "copy/rotary", "sorting/rope"):
        with pytest.raises(ValueError, match="task/method"):
            bm.split_kind(bad)
    with pytest.raises(ValueError):
        bm.BenchmarkExperiment(eval_length=32)          # shorter than 4 L


def test_every_method_of_a_seed_starts_from_the_same_weights():
    config = bm.BenchmarkExperiment()
    models = {m: config.build(f"copy/{m}", seed=2) for m in METHODS}
    for model in models.values():
        assert torch.equal(model.embedding.weight, models["none"].embedding.weight)
        assert torch.equal(model.head.weight, models["none"].head.weight)
    assert models["shaw"].position.max_distance == config.shaw_max_distance
    assert (models["t5"].position.num_buckets, models["t5"].position.max_distance) == (8, 16)
    assert not models["t5"].position.bidirectional and models["alibi"].position.slopes.tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256]


def test_streaming_tasks_train_at_L_and_copy_at_every_length_up_to_L():
    config = bm.BenchmarkExperiment()
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
    expected = {"plain"} | {bm.extension_key(m, s) for m in bm.EXTENSIONS for s in TINY.scales} | \
        {bm.extension_key(m, s, True) for m in ("none", *bm.EXTENSIONS) for s in TINY.scales}
    assert set(rope.by_position) == expected
    assert rope.by_position["pi x2"].shape == (16,) and rope.by_position["ft yarn x4"].shape == (32,)
    assert set(next(r for r in runs if r.kind == "first/alibi").by_position) == {"plain"}
    path = tmp_path / "ch07.json"
    ex.save_results(path, TINY, runs, "ch07", seconds=1.5, processes=1)
    config, records, meta = ex.load_results(path)
    assert config == TINY and meta["timing"]["seconds"] == 1.5 and meta["seeds"] == [0, 1]
    assert bm.summary_rows(records, config) == bm.summary_rows(runs, config)
    assert bm.extension_table(records, config) == bm.extension_table(runs, config)
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
    config = bm.BenchmarkExperiment(tasks=("local", "copy"), methods=("none", "alibi", "rope"))
    far = {"none": 0.5, "alibi": 0.9, "rope": 0.2}
    records = [_record(f"{t}/{m}", s, far[m] - 0.1 * (t == "copy" and m == "alibi") * 5)
               for t in config.tasks for m in config.methods for s in (0, 1)]
    ranks = bm.ranks(records, config)
    assert ranks["alibi"].tolist() == [1, 1, 2, 2] and ranks["none"].tolist() == [2, 2, 1, 1]
    mrr = bm.mean_reciprocal_rank(records, config)
    assert mrr["alibi"] == pytest.approx(0.75) and mrr["rope"] == pytest.approx(1 / 3)


def test_lr_search_scores_inside_the_training_length_only():
    config = replace(TINY, tasks=("local",), methods=("none", "rope"))
    result = bm.lr_search(config, rates=(1e-3, 1e-2), processes=1)
    assert result["best"] in (1e-3, 1e-2) and set(result["accuracy_inside_L"]) == {"0.001", "0.01"}
    assert set(result["accuracy_inside_L"]["0.01"]) == {"local/none", "local/rope"}


def test_the_sweep_is_registered_for_make_experiments():
    assert ex.experiment_class("ch07") is bm.BenchmarkExperiment
    assert bm.BenchmarkExperiment.full_seeds >= 5 and bm.BenchmarkExperiment.processes == 2
    assert not set(bm.REPLICATION_SEEDS) & set(range(bm.BenchmarkExperiment.full_seeds))


# ---------------------------------------------------------------------------------------------------
# The committed results: every direction the chapter asserts, with its margin, and in the held-out seeds

FILE, REPLICATION = ex.RESULTS_DIR / "ch07.json", ex.RESULTS_DIR / "ch07_replication.json"


@pytest.fixture(scope="module")
def committed():
    return ex.load_results(FILE), ex.load_results(REPLICATION)


def test_the_replication_is_the_same_configuration_with_seeds_never_used(committed):
    (config, _, meta), (replication_config, _, replication_meta) = committed
    assert ex.same_setup(config, replication_config) and ex.same_setup(config, bm.BenchmarkExperiment())
    assert tuple(replication_config.seeds) == bm.REPLICATION_SEEDS
    assert not set(config.seeds) & set(replication_config.seeds)
    assert len(config.seeds) == bm.BenchmarkExperiment.full_seeds
    assert replication_meta["command"] == "python -m posenc.lib.benchmark replicate --out results/ch07_replication.json"
    assert meta["platform"] and replication_meta["platform"]


def test_every_direction_of_the_chapter_clears_its_margin_in_the_file(committed):
    (config, records, _), _ = committed
    unclear = [(d.claim, round(d.gap, 4), round(d.margin, 4)) for d in bm.directions(records, config) if not d.clear]
    assert not unclear


def test_every_direction_of_the_chapter_holds_in_the_held_out_replication(committed):
    (config, records, _), (replication_config, replication, _) = committed
    claims, replicated = bm.directions(records, config), bm.directions(replication, replication_config)
    assert [d.claim for d in claims] == [d.claim for d in replicated] and len(claims) >= 30
    assert not [(d.claim, round(d.gap, 4)) for d in replicated if not d.holds]


def test_a_direction_is_judged_on_the_paired_differences_of_its_seeds():
    spread = bm.Direction("a above b", np.array([0.9, 0.5, 0.9, 0.5]), np.array([0.8, 0.4, 0.8, 0.4]))
    assert spread.holds and spread.clear and spread.gap == pytest.approx(0.1) and spread.margin == 0.0
    noisy = bm.Direction("a above 0.5", np.array([0.9, 0.2, 0.9, 0.3]), 0.5)
    assert noisy.holds and not noisy.clear
    assert not bm.Direction("a below 0.5", 0.5, np.array([0.6, 0.7])).holds
    rows = bm.direction_rows([spread], [noisy])
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
    assert_rerun_matches_file(path, "local/none", ex.load_results(path)[0].seeds[0], measures=_accuracy_and_bins)


def test_a_seed_shift_of_make_robustness_reaches_the_sweep_s_worker_processes():
    """posenc.book.robustness shifts the kernel's torch seeds; the sweep's workers are fresh interpreters and
    take the shift from the environment (chapter 7 trains in two of them)."""
    import os
    import subprocess
    import sys

    script = ("import torch\nfrom posenc.lib import experiments as ex\noriginal = torch.manual_seed\n"
              "ex._one_thread()\ntorch.manual_seed(5)\nshifted = torch.rand(3)\noriginal(1005)\n"
              "assert torch.equal(shifted, torch.rand(3)) and torch.get_num_threads() == 1\nprint('ok')")
    env = {**os.environ, ex.SEED_SHIFT_VARIABLE: "1000"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
