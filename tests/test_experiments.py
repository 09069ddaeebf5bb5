"""The experiment harness (posenc.experiments): the runner, the summaries, result files and their command line,
the registry of sweeps, the published numbers, and the one place that seeds torch for a run."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from posenc import experiments as ex
from posenc.experiments import ch04, registry, results
from posenc.experiments.__main__ import main, parser
from posenc.lib import reproducibility as rep
from tests.conftest import ROOT
from tests.test_models import one_thread  # noqa: F401  (autouse: tiny models run fastest on one thread)

QUICK = ch04.LengthExperiment(d_model=16, n_layers=1, max_len=16, train_length=8, steps=3, batch_size=4,
                              eval_length=24, n_eval=8, window=8, seeds=(0, 1))


# ---------------------------------------------------------------------------------------------------
# Runs, files and summaries


def test_sweep_records_round_trip_through_a_file(tmp_path):
    runs = ex.sweep(QUICK, kinds=("sinusoidal", "learned"))
    path = tmp_path / "results.json"
    data = results.save_results(path, QUICK, runs, "ch04", seconds=1.25, processes=1)
    config, records, meta = results.load_results(path)
    assert meta == json.loads(json.dumps(data))
    assert config == QUICK and ex.same_setup(config, dataclasses.replace(QUICK, seeds=(5,)))
    assert not ex.same_setup(config, dataclasses.replace(QUICK, steps=4))
    assert meta["seeds"] == [0, 1] and meta["config"]["steps"] == 3 and meta["timing"]["seconds"] == 1.2
    assert meta["command"] == f"python -m posenc.experiments run ch04 --out {path}"
    assert meta["platform"] == rep.platform_signature() and rep.same_platform(meta["platform"])
    for kind in ("sinusoidal", "learned"):
        np.testing.assert_allclose(ex.position_curves(records, kind), ex.position_curves(runs, kind))
        np.testing.assert_array_equal(ex.in_distribution(records, kind), ex.in_distribution(runs, kind))


def test_the_command_names_the_seeds_only_when_they_are_not_the_default():
    assert results.seeds_options((0, 1, 2)) == "" and results.seeds_options(()) == ""
    assert results.seeds_options((100, 101)) == " --seeds 2 --first-seed 100"
    assert results.seeds_options((100, 101), first_seed=100) == ""


def test_small_summaries():
    assert ex.mean_spread([1.0, 3.0]) == (2.0, pytest.approx(math.sqrt(2)))
    assert ex.mean_spread([2.0]) == (2.0, 0.0) and math.isnan(ex.mean_spread([np.nan])[0])
    assert ex.fmt([0.5, 0.5]) == "0.50 ± 0.00" and ex.fmt([]) == "–"
    assert ex.steps_to_loss([1.0] * 20 + [0.01] * 20, threshold=0.1, smooth=10) == 29
    assert math.isnan(ex.steps_to_loss([1.0] * 30)) and math.isnan(ex.steps_to_loss([0.0] * 5, smooth=10))
    assert ex.fmt([1.0, 3.0, np.nan], 0) == "2 ± 1 (2 of 3 seeds)" and ex.fmt([np.nan]) == "–"
    assert ex.cell([0.5]) == "0.50" and ex.cell([0.5, 0.5]) == "0.50 ± 0.00"
    assert ex.markdown_table(["a", "b"], [[1, 2]]).splitlines() == ["| a | b |", "| --- | --- |", "| 1 | 2 |"]
    mean, low, high = ex.band(np.array([[np.nan, 1.0], [np.nan, 0.0]]))
    assert np.isnan(mean[0]) and (mean[1], low[1], high[1]) == (0.5, 0.0, 1.0)


def test_steps_from_a_saved_record_are_read_at_ten_step_resolution():
    record = {"loss_every_10_steps": [1.0, 0.5, 0.05, 0.01]}
    assert ex.block_steps(record) == 30.0 and ex.steps_of(record) == 29.0
    assert math.isnan(ex.block_steps({"loss_every_10_steps": [1.0]})) and math.isnan(ex.steps_of({"loss_every_10_steps": [1.0]}))


def test_a_records_steps_end_a_ten_step_block_and_never_precede_the_runs_own_count():
    """What chapters 5 and 6 say of the file's step counts: the last step of the first 10-step block whose
    mean loss is below 0.1, never earlier than the step-by-step count of a live run (steps_to_loss)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        losses = list(np.exp(-rng.uniform(0.0, 0.1) * np.arange(120)) + rng.uniform(0.0, 0.1, 120))
        run = ex.Run(kind="a", seed=0, losses=losses, seconds=0.0, accuracy=1.0)
        from_file, live = ex.steps_of(run.record()), ex.steps_of(run)
        if not math.isnan(from_file):                      # the file's block below 0.1 is a window below it
            assert from_file % 10 == 9 and from_file >= live


def test_paired_differences_match_seeds():
    records = [{"kind": k, "seed": s, "accuracy": a} for k, s, a in
               [("a", 0, 0.9), ("b", 0, 0.7), ("a", 1, 0.8), ("b", 2, 0.1), ("b", 1, 0.9)]]
    np.testing.assert_allclose(ex.paired_differences(records, "a", "b"), [0.2, -0.1])


def test_tables_render_as_escaped_html_and_as_markdown():
    table = ex.Table(["kind", "value"], [["a < b", 0.5]])
    assert '<thead><tr><th scope="col">kind</th><th scope="col">value</th></tr></thead>' in table._repr_html_()
    assert '<tr><th scope="row">a &lt; b</th><td>0.5</td></tr>' in table._repr_html_()    # the row's name: its header
    assert table._repr_markdown_().splitlines()[-1] == "| a < b | 0.5 |"
    counts = ex.Table(["NoPE", "RoPE"], [[3, 4]], row_headers=False)                     # a row without a name
    assert "<tr><td>3</td><td>4</td></tr>" in counts._repr_html_() and 'scope="row"' not in counts._repr_html_()


# ---------------------------------------------------------------------------------------------------
# Published numbers: one module


def test_published_numbers_are_the_ones_the_course_quotes():
    published = ex.PUBLISHED
    vaswani, press, speed = published["vaswani2017"], published["press2022"], published["press2022_speed"]
    assert vaswani["sinusoidal"] == {"ppl": 4.92, "bleu": 25.8} and vaswani["learned"] == {"ppl": 4.92, "bleu": 25.7}
    assert press["lengths"] == (512, 1012, 3512) and press["sinusoidal"] == (20.05, 43.54, 178.97)
    assert press["alibi"][-1] < press["alibi"][0] and press["sinusoidal"][-1] > 8 * press["sinusoidal"][0]
    assert press["rotary"][0] < press["rotary"][1] < press["rotary"][2] < press["sinusoidal"][2]
    assert press["longest"]["length"] > press["lengths"][-1]
    # the ALiBi paper's sentence and its table agree: T5's bias trains at least twice as slowly
    assert all(s / t >= 1.9 for s, t in zip(speed["train_wps"]["sinusoidal"], speed["train_wps"]["t5"]))
    assert all(set(entry) >= {"source"} for entry in published.values())


def test_published_numbers_live_in_one_module():
    """No other module of the package keeps a table of numbers from a paper."""
    offenders = [str(path.relative_to(ROOT)) for path in (ROOT / "posenc").rglob("*.py")
                 if path.name != "published.py" and ("PUBLISHED" in path.read_text() and "PUBLISHED =" in path.read_text()
                                                     or "PRESS2022" in path.read_text() or "SHAW2018" in path.read_text())]
    assert not offenders


# ---------------------------------------------------------------------------------------------------
# The registry and the command line


def test_every_sweep_is_registered_with_its_class():
    assert list(registry.SWEEPS) == ["ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09", "ch10"]
    for name in registry.SWEEPS:
        cls = registry.experiment_class(name)
        assert issubclass(cls, ex.Experiment) and cls.__module__ == f"posenc.experiments.{name}"
    with pytest.raises(ValueError, match="unknown sweep 'ch99'"):
        registry.experiment_class("ch99")
    assert registry.replication_seeds("ch07") == (100, 101, 102, 103, 104)
    assert registry.replication_seeds("ch08") == (100, 101, 102)
    assert registry.replication_seeds("ch09") == (100, 101, 102)
    assert registry.replication_seeds("ch10") == (100, 101, 102, 103, 104)     # its replication_size, not its 10


def test_make_experiments_loops_over_the_registry(capsys):
    assert main(["list"]) == 0
    assert capsys.readouterr().out.split() == list(registry.SWEEPS)
    assert main(["list", "--replicated"]) == 0
    assert capsys.readouterr().out.split() == ["ch07", "ch08", "ch09", "ch10"]
    makefile = (ROOT / "Makefile").read_text()
    target = makefile[makefile.index("\nexperiments:"):].split("\n\n")[0]
    assert "posenc.experiments list" in target and "ch0" not in target


REPLICATED = [name for name, sweep in registry.SWEEPS.items() if sweep.replicated]


@pytest.mark.parametrize("name", REPLICATED)
def test_a_replication_uses_seeds_its_file_never_used(name):
    seeds = [set(results.load_results(results.RESULTS_DIR / f"{name}{suffix}.json")[0].seeds)
             for suffix in ("", "_replication")]
    assert not seeds[0] & seeds[1] and tuple(sorted(seeds[1])) == registry.replication_seeds(name)


RESULT_FILES = sorted(p for p in results.RESULTS_DIR.glob("*.json") if p.name != "robustness.json")


@pytest.mark.parametrize("path", RESULT_FILES, ids=lambda p: p.name)
def test_every_result_file_loads_and_names_the_command_that_writes_it(path):
    """The command a file records is one the command line takes today, writes this file, and gives its seeds."""
    data = json.loads(path.read_text())
    prefix = "python -m posenc.experiments "
    assert data["command"].startswith(prefix), data["command"]
    args = parser().parse_args(data["command"][len(prefix):].split())
    assert args.out == f"results/{path.name}"
    if args.command == "lr-search":
        assert path.name == "ch07_lr_search.json" and data["best"] in data["rates"]
        return
    config, records, _ = results.load_results(path)
    assert type(config) is registry.experiment_class(args.sweep) and records
    cls = type(config)
    default = (cls.replication_size or cls.full_seeds) if args.command == "replicate" else cls.full_seeds
    n_seeds = default if args.seeds is None else args.seeds
    first = args.first_seed if args.first_seed is not None else (
        registry.REPLICATION_FIRST_SEED if args.command == "replicate" else 0)
    assert tuple(config.seeds) == tuple(range(first, first + n_seeds)) == tuple(data["seeds"])
    assert ("replication" in path.name) == (args.command == "replicate")


@dataclasses.dataclass(frozen=True)
class QuickLength(ch04.LengthExperiment):
    """QUICK's configuration as defaults, so that the command line can build it from a number of seeds."""

    d_model: int = 16
    n_layers: int = 1
    max_len: int = 16
    train_length: int = 8
    steps: int = 3
    batch_size: int = 4
    eval_length: int = 24
    n_eval: int = 8
    window: int = 8


@pytest.mark.filterwarnings("ignore:.*found in sys.modules:RuntimeWarning")
def test_the_command_line_runs_and_replicates_a_sweep(tmp_path, monkeypatch, capsys):
    """`python -m posenc.experiments` runs as __main__; its report must still read the runs it made, and a
    replication takes held-out seeds and says why it exists."""
    import runpy

    quick = registry.Sweep("tests.test_experiments", "QuickLength", "a quick sweep")
    monkeypatch.setitem(registry.SWEEPS, "ch04", quick)
    monkeypatch.setattr(sys, "argv", ["experiments", "run", "ch04", "--out", str(tmp_path / "r.json"), "--seeds", "1"])
    with pytest.raises(SystemExit) as exit_code:
        runpy.run_module("posenc.experiments", run_name="__main__")
    assert exit_code.value.code == 0
    out = capsys.readouterr().out
    assert "in-distribution accuracy: none" in out and "| encoding | read |" in out
    config, records, data = results.load_results(tmp_path / "r.json")
    assert config == QuickLength(seeds=(0,)) and len(records) == len(ch04.ENCODINGS)
    assert data["command"] == f"python -m posenc.experiments run ch04 --out {tmp_path / 'r.json'}"

    assert main(["replicate", "ch04", "--out", str(tmp_path / "rep.json"), "--seeds", "1"]) == 0
    config, _, data = results.load_results(tmp_path / "rep.json")
    assert config.seeds == (100,) and "held-out replication" in data["purpose"]
    assert data["command"] == f"python -m posenc.experiments replicate ch04 --out {tmp_path / 'rep.json'} --seeds 1 --first-seed 100"


# ---------------------------------------------------------------------------------------------------
# One place seeds torch for a run, and make robustness shifts it there


def test_seed_torch_is_manual_seed_plus_the_shift(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    rep.seed_torch(7)
    plain = torch.rand(3)
    torch.manual_seed(7)
    assert torch.equal(torch.rand(3), plain)
    monkeypatch.setenv(rep.SEED_SHIFT_VARIABLE, "1000")
    rep.seed_torch(7)
    shifted = torch.rand(3)
    torch.manual_seed(1007)
    assert torch.equal(torch.rand(3), shifted) and rep.seed_shift() == 1000


def test_a_seed_shift_reaches_the_sweep_s_worker_processes():
    """posenc.book.robustness shifts a chapter's seeds through the environment; the sweep's workers are fresh
    interpreters and read the same variable (chapter 7 trains in two of them)."""
    script = ("import torch\nfrom posenc.experiments import runner\nfrom posenc.lib.reproducibility import seed_torch\n"
              "runner._one_thread()\nseed_torch(5)\nshifted = torch.rand(3)\ntorch.manual_seed(1005)\n"
              "assert torch.equal(shifted, torch.rand(3)) and torch.get_num_threads() == 1\nprint('ok')")
    env = {**os.environ, rep.SEED_SHIFT_VARIABLE: "1000"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


def test_shifted_runs_differ_and_unshifted_runs_repeat(monkeypatch):
    config = dataclasses.replace(QUICK, seeds=(0,))
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    first, again = (ex.run_one(config, "learned", 0, keep_model=False).losses for _ in range(2))
    monkeypatch.setenv(rep.SEED_SHIFT_VARIABLE, "1000")
    shifted = ex.run_one(config, "learned", 0, keep_model=False).losses
    assert first == again and shifted != first
