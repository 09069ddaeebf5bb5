"""The shared experiment code: positional modules, the toy task, the tiny Transformer and chapter 4's sweep."""

import dataclasses
import json
import math

import numpy as np
import pytest
import torch
from torch import nn

from posenc.lib import experiments as ex
from posenc import sinusoidal_encoding_torch
from posenc.lib.models import (
    TinyTransformer,
    TrainConfig,
    accuracy_by_position,
    evaluate,
    parameter_count,
    predict_windowed,
    sqrt_scale,
    train,
)
from posenc.lib.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from posenc.lib.tasks import IGNORE, ShiftedCopy
from tests.conftest import assert_rerun_matches_file


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models run fastest on one thread, and the tests share the CPU with other work."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ---------------------------------------------------------------------------------------------------
# Positional modules


def test_sinusoidal_module_is_a_buffer_with_no_parameters():
    module = SinusoidalPositionalEncoding(8, max_len=16)
    assert parameter_count(module, trainable_only=False) == 0 and list(module.parameters()) == []
    assert [name for name, _ in module.named_buffers()] == ["table"]
    torch.testing.assert_close(module(16), sinusoidal_encoding_torch(16, 8))


def test_sinusoidal_module_extends_past_max_len():
    module = SinusoidalPositionalEncoding(6, max_len=4)
    torch.testing.assert_close(module(25), sinusoidal_encoding_torch(25, 6))
    assert list(module.parameters()) == []


def test_learned_module_costs_max_len_times_d_model():
    module = LearnedPositionalEmbedding(12, 5)
    assert parameter_count(module) == 60
    assert module(7).shape == (7, 5) and module(12).shape == (12, 5)
    assert module.table is module.embedding.weight


def test_learned_module_past_max_len_raises_a_clear_value_error():
    module = LearnedPositionalEmbedding(12, 5)
    with pytest.raises(ValueError, match=r"max_len=12.*up to 12"):
        module(13)


def test_clamp_reuses_the_last_row_past_max_len():
    module = LearnedPositionalEmbedding(4, 3, overflow="clamp")
    rows = module(9)
    assert rows.shape == (9, 3)
    torch.testing.assert_close(rows[:4], module.table)
    assert all(torch.equal(row, module.table[3]) for row in rows[4:])


def test_unknown_overflow_mode_is_rejected():
    with pytest.raises(ValueError, match="overflow"):
        LearnedPositionalEmbedding(4, 3, overflow="wrap")


def test_from_table_copies_the_rows():
    table = torch.arange(12.0).reshape(4, 3)
    module = LearnedPositionalEmbedding.from_table(table, overflow="clamp")
    torch.testing.assert_close(module(4), table)
    table += 1                                  # a copy, not a view
    assert module.table[0, 0].item() == 0.0


def test_learned_rows_past_the_sequence_get_no_gradient():
    module = LearnedPositionalEmbedding(10, 4)
    module(6).sum().backward()
    grad = module.table.grad
    assert torch.all(grad[:6] == 1) and torch.all(grad[6:] == 0)


# ---------------------------------------------------------------------------------------------------
# Task


def test_shifted_copy_targets():
    task = ShiftedCopy(vocab_size=5, offset=2)
    tokens, targets = task.batch(3, 7, torch.Generator().manual_seed(0))
    assert tokens.shape == targets.shape == (3, 7)
    assert torch.all(targets[:, :2] == IGNORE)
    assert torch.equal(targets[:, 2:], tokens[:, :5])
    assert task.chance == pytest.approx(0.2)


def test_task_batches_are_repeatable_from_a_seed():
    task = ShiftedCopy()
    first = task.batch(4, 9, torch.Generator().manual_seed(3))
    second = task.batch(4, 9, torch.Generator().manual_seed(3))
    assert all(torch.equal(a, b) for a, b in zip(first, second))


# ---------------------------------------------------------------------------------------------------
# Model and training


def tiny(positional="sinusoidal", combine="add", causal=True, max_len=32, seed=0):
    torch.manual_seed(seed)
    module = {"sinusoidal": SinusoidalPositionalEncoding(16, max_len),
              "learned": LearnedPositionalEmbedding(max_len, 16), None: None}[positional]
    return TinyTransformer(8, 16, 2, 1, positional=module, combine=combine, causal=causal)


@pytest.mark.parametrize("combine", ["none", "add", "concat"])
def test_model_shapes_for_each_way_of_combining(combine):
    width = 6 if combine == "concat" else 16          # concat: the table fills position_width columns
    positional = None if combine == "none" else SinusoidalPositionalEncoding(width)
    model = TinyTransformer(8, 16, 2, 1, positional=positional, combine=combine, position_width=6)
    tokens = torch.randint(0, 8, (3, 10))
    assert model(tokens).shape == (3, 10, 8)
    assert model.inputs(tokens).shape == (3, 10, 16)
    if combine == "concat":
        torch.testing.assert_close(model.inputs(tokens)[0, :, 10:], sinusoidal_encoding_torch(10, 6))


@pytest.mark.parametrize("combine", ["add", "concat"])
def test_a_table_of_the_wrong_width_is_a_clear_error(combine):
    model = TinyTransformer(8, 16, 2, 1, positional=SinusoidalPositionalEncoding(12), combine=combine)
    with pytest.raises(ValueError, match="positional table of width"):
        model(torch.zeros(1, 5, dtype=torch.long))


def test_model_rejects_bad_combinations():
    with pytest.raises(ValueError, match="combine"):
        TinyTransformer(8, 16, combine="multiply", positional=SinusoidalPositionalEncoding(16))
    with pytest.raises(ValueError, match="positional module"):
        TinyTransformer(8, 16, combine="add")


def test_model_with_a_learned_table_fails_clearly_past_it():
    model = tiny("learned", max_len=12)
    with pytest.raises(ValueError, match="max_len=12"):
        model(torch.zeros(1, 13, dtype=torch.long))


def test_sqrt_scale():
    assert sqrt_scale(512) == pytest.approx(math.sqrt(512))


def test_causal_outputs_do_not_depend_on_later_tokens():
    model = tiny().eval()
    tokens = torch.randint(0, 8, (2, 20))
    with torch.no_grad():
        torch.testing.assert_close(model(tokens)[:, :9], model(tokens[:, :9]), atol=1e-5, rtol=1e-5)


def test_training_is_repeatable_from_a_seed():
    config = TrainConfig(steps=5, batch_size=8, train_lengths=(6,), seed=4)
    first = train(tiny(seed=1), ShiftedCopy(8), config)
    second = train(tiny(seed=1), ShiftedCopy(8), config)
    assert first == second and len(first) == 5


def test_a_short_training_run_beats_chance_by_far():
    task = ShiftedCopy(8, 1)
    model = tiny()
    losses = train(model, task, TrainConfig(steps=80, batch_size=32, lr=1e-2, train_lengths=(12,), seed=0))
    assert losses[-1] < losses[0]
    assert evaluate(model, task, 12, n_sequences=256) > 5 * task.chance


# ---------------------------------------------------------------------------------------------------
# The course's own block against torch's nn.TransformerEncoderLayer


class TorchLayersModel(nn.Module):
    """The model as it was built before the course had its own block: the same embedding, positional
    input and head, with ``nn.TransformerEncoder`` layers (pre-LN, ReLU, no dropout, batch first)."""

    def __init__(self, vocab_size, d_model, n_heads, n_layers, positional, combine, position_width, causal,
                 embed_init_std=None, dim_feedforward=None):
        super().__init__()
        self.combine, self.causal, self.embed_scale = combine, causal, 1.0
        self.positional = positional if combine != "none" else None
        position_width = position_width or d_model // 2
        token_width = d_model - position_width if combine == "concat" else d_model
        self.position_width = position_width if combine == "concat" else d_model
        self.embedding = nn.Embedding(vocab_size, token_width)
        if embed_init_std is not None:
            nn.init.normal_(self.embedding.weight, std=embed_init_std)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward or 2 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab_size)

    inputs = TinyTransformer.inputs
    positions = TinyTransformer.positions

    def forward(self, tokens):
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1]) if self.causal else None
        return self.head(self.encoder(self.inputs(tokens), mask=mask, is_causal=self.causal))


SETUPS = [dict(combine=c, causal=causal) for c in ("none", "add", "concat") for causal in (False, True)]


def both_models(combine, causal, seed=0, n_layers=2, **kwargs):
    width = 6 if combine == "concat" else 16
    made = []
    for kind in (TorchLayersModel, TinyTransformer):
        torch.manual_seed(seed)
        positional = None if combine == "none" else SinusoidalPositionalEncoding(width)
        if kind is TorchLayersModel:
            made.append(kind(8, 16, 2, n_layers, positional, combine, 6, causal, **kwargs))
        else:
            made.append(kind(8, 16, 2, n_layers, positional=positional, combine=combine, position_width=6,
                             causal=causal, **kwargs))
    return made


@pytest.mark.parametrize("setup", SETUPS)
def test_a_fresh_model_has_the_initial_weights_of_the_torch_layers_model(setup):
    for kwargs in ({}, {"n_layers": 3, "embed_init_std": 0.1, "dim_feedforward": 24}):
        old, new = both_models(**setup, seed=7, **kwargs)
        old_state, new_state = old.state_dict(), new.state_dict()
        assert list(old_state) == list(new_state)
        assert all(torch.equal(old_state[name], new_state[name]) for name in old_state)


@pytest.mark.parametrize("setup", SETUPS)
def test_a_torch_layers_state_dict_loads_and_gives_the_same_outputs(setup):
    old, _ = both_models(**setup, seed=1)
    _, new = both_models(**setup, seed=2)
    new.load_state_dict(old.state_dict())
    tokens = torch.randint(0, 8, (4, 20))
    torch.testing.assert_close(new(tokens), old(tokens), atol=1e-6, rtol=1e-6)          # training mode
    old.eval(), new.eval()
    with torch.no_grad():                                       # torch's fused inference path for the old one
        torch.testing.assert_close(new(tokens), old(tokens), atol=1e-6, rtol=1e-6)


def test_learned_tables_load_from_a_torch_layers_model():
    torch.manual_seed(0)
    old = TorchLayersModel(8, 16, 2, 2, LearnedPositionalEmbedding(20, 16), "add", None, True)
    new = TinyTransformer(8, 16, 2, 2, positional=LearnedPositionalEmbedding(20, 16), causal=True)
    new.load_state_dict(old.state_dict())
    tokens = torch.randint(0, 8, (2, 20))
    torch.testing.assert_close(new(tokens), old(tokens), atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_training_follows_the_torch_layers_model(causal):
    old, new = both_models("add", causal, seed=3)
    config = TrainConfig(steps=20, batch_size=16, train_lengths=(10,), seed=3)
    old_losses, new_losses = train(old, ShiftedCopy(8), config), train(new, ShiftedCopy(8), config)
    np.testing.assert_allclose(new_losses, old_losses, rtol=1e-5, atol=1e-6)


def test_attention_weights_match_torch_multihead_attention():
    old, new = both_models("add", False, seed=4)
    tokens = torch.randint(0, 8, (1, 12))
    with torch.no_grad():
        u = old.encoder.layers[0].norm1(old.inputs(tokens))
        _, expected = old.encoder.layers[0].self_attn(u, u, u, need_weights=True, average_attn_weights=False)
        _, called_alike = new.encoder.layers[0].self_attn(u, u, u, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(new.attention_weights(tokens), expected, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(called_alike, expected, atol=1e-6, rtol=1e-6)


# ---------------------------------------------------------------------------------------------------
# Reading long sequences


def test_windowed_prediction_equals_the_plain_one_when_the_sequence_fits():
    model = tiny().eval()
    tokens = torch.randint(0, 8, (2, 10))
    torch.testing.assert_close(predict_windowed(model, tokens, window=16), model(tokens))


def test_windowed_prediction_uses_the_earliest_window_with_the_position():
    model = tiny("learned", max_len=8).eval()
    tokens = torch.randint(0, 8, (2, 21))
    logits = predict_windowed(model, tokens, window=8, stride=4)       # windows start at 0, 4, 8, 12
    assert logits.shape == (2, 21, 8)
    with torch.no_grad():
        torch.testing.assert_close(logits[:, :8], model(tokens[:, :8]))
        torch.testing.assert_close(logits[:, 8:12], model(tokens[:, 4:12])[:, 4:])
        torch.testing.assert_close(logits[:, 16:20], model(tokens[:, 12:20])[:, 4:])
        torch.testing.assert_close(logits[:, 20:], model(tokens[:, 16:21])[:, 4:])


def test_windowed_prediction_rejects_a_bad_stride():
    with pytest.raises(ValueError, match="stride"):
        predict_windowed(tiny(), torch.zeros(1, 40, dtype=torch.long), window=8, stride=9)


def test_accuracy_by_position_is_nan_where_there_is_no_target():
    model = tiny()
    accuracy = accuracy_by_position(model, ShiftedCopy(8, 2), 10, n_sequences=16)
    assert accuracy.shape == (10,) and np.all(np.isnan(accuracy[:2]))
    assert np.all((accuracy[2:] >= 0) & (accuracy[2:] <= 1))
    overall = evaluate(model, ShiftedCopy(8, 2), 10, n_sequences=16)
    assert np.nanmean(accuracy) == pytest.approx(overall)       # every position has as many targets


# ---------------------------------------------------------------------------------------------------
# Chapter 4's experiment helpers

QUICK = ex.LengthExperiment(d_model=16, n_layers=1, max_len=16, train_length=8, steps=3, batch_size=4,
                            eval_length=24, n_eval=8, window=8, seeds=(0, 1))


def test_runs_are_paired_across_encodings():
    models = [ex.build_model(kind, QUICK, seed=3) for kind in ex.ENCODINGS]
    for name in ("embedding.weight", "head.weight", "encoder.layers.0.linear1.weight"):
        first = dict(models[0].named_parameters())[name]
        assert all(torch.equal(dict(m.named_parameters())[name], first) for m in models)


def test_the_control_table_is_the_learned_table_at_the_scale_of_pe():
    learned, control = (ex.build_model(kind, QUICK, seed=4) for kind in ex.LEARNED)
    rms = ex.pe_entry_rms(QUICK.d_model)
    assert rms == pytest.approx(2 ** -0.5)
    scale = rms / QUICK.learned_init_std
    torch.testing.assert_close(control.positional.table, learned.positional.table * scale)
    table_rms = control.positional.table.pow(2).mean().sqrt().item()
    assert abs(table_rms / rms - 1) < 0.15
    assert ex.LABELS["learned_pe_scale"] and "learned_pe_scale" in QUICK.kinds


def test_build_model_rejects_an_unknown_kind():
    with pytest.raises(ValueError, match="kind"):
        ex.build_model("rotary", QUICK, seed=0)


def test_clamped_copy_keeps_the_first_rows_and_leaves_the_original_alone():
    model = ex.build_model("learned", QUICK, seed=0)
    clone = ex.clamped_copy(model, 5)
    assert clone.positional.max_len == 5 and clone.positional.overflow == "clamp"
    torch.testing.assert_close(clone.positional.table, model.positional.table[:5])
    assert model.positional.max_len == QUICK.max_len and model.positional.overflow == "error"


def test_sweep_records_round_trip_through_a_file(tmp_path):
    runs = ex.sweep(QUICK, kinds=("sinusoidal", "learned"))
    assert [(r.kind, r.seed) for r in runs] == [("sinusoidal", 0), ("learned", 0), ("sinusoidal", 1), ("learned", 1)]
    learned = runs[1]
    assert set(learned.by_position) == {"plain", "window", "clamp"}
    assert np.all(np.isnan(learned.by_position["plain"][QUICK.max_len:]))          # past the table
    assert torch.equal(learned.model.positional.table[QUICK.train_length:], learned.initial_table[QUICK.train_length:])
    path = tmp_path / "results.json"
    ex.save_results(path, QUICK, runs)
    config, records, meta = ex.load_results(path)
    assert config == QUICK and ex.same_setup(config, ex.LengthExperiment(**{**QUICK.__dict__, "seeds": (5,)}))
    assert meta["seeds"] == [0, 1] and json.loads(path.read_text())["config"]["steps"] == 3
    for kind in ("sinusoidal", "learned"):
        np.testing.assert_allclose(ex.position_curves(records, kind), ex.position_curves(runs, kind))
    assert len(ex.summary_rows(records, config)) == len(ex.summary_rows(runs, config))


def test_bin_means_skip_unmeasured_positions():
    config = ex.LengthExperiment(offset=1, train_length=2, max_len=4, eval_length=6)
    record = {"kind": "learned", "accuracy": 1.0,
              "by_position": {"plain": [None, 1.0, 0.5, 0.0, None, None]}}
    bins = ex.bin_means([record], "learned", config)
    assert list(bins) == ["trained", "L..2L", "2L..4", "past the table"]
    assert bins["trained"][0] == 1.0 and bins["L..2L"][0] == 0.25 and np.isnan(bins["past the table"][0])


def test_small_summaries():
    assert ex.mean_spread([1.0, 3.0]) == (2.0, pytest.approx(math.sqrt(2)))
    assert ex.mean_spread([2.0]) == (2.0, 0.0) and math.isnan(ex.mean_spread([np.nan])[0])
    assert ex.fmt([0.5, 0.5]) == "0.50 ± 0.00" and ex.fmt([]) == "–"
    assert ex.steps_to_loss([1.0] * 20 + [0.01] * 20, threshold=0.1, smooth=10) == 29
    assert math.isnan(ex.steps_to_loss([1.0] * 30)) and math.isnan(ex.steps_to_loss([0.0] * 5, smooth=10))
    assert ex.fmt([1.0, 3.0, np.nan], 0) == "2 ± 1 (2 of 3 seeds)" and ex.fmt([np.nan]) == "–"
    assert ex.markdown_table(["a", "b"], [[1, 2]]).splitlines() == ["| a | b |", "| --- | --- |", "| 1 | 2 |"]
    mean, low, high = ex.band(np.array([[np.nan, 1.0], [np.nan, 0.0]]))
    assert np.isnan(mean[0]) and (mean[1], low[1], high[1]) == (0.5, 0.0, 1.0)


def test_tables_render_as_escaped_html_and_as_markdown():
    table = ex.Table(["kind", "value"], [["a < b", 0.5]])
    assert "<td>a &lt; b</td><td>0.5</td>" in table._repr_html_()
    assert table._repr_markdown_().splitlines()[-1] == "| a < b | 0.5 |"


def test_published_numbers_are_the_ones_the_course_quotes():
    vaswani, press = ex.PUBLISHED["vaswani2017"], ex.PUBLISHED["press2022"]
    assert vaswani["sinusoidal"] == {"ppl": 4.92, "bleu": 25.8} and vaswani["learned"] == {"ppl": 4.92, "bleu": 25.7}
    assert press["lengths"] == (512, 1012, 3512) and press["sinusoidal"] == (20.05, 43.54, 178.97)


def test_every_position_method_runs_through_the_length_experiment():
    """Part II's methods share the runner with chapter 4, and for one seed the same non-positional weights."""
    methods = ("alibi", "rope", "t5", "shaw")
    runs = ex.sweep(QUICK, kinds=methods)
    assert [r.kind for r in runs if r.seed == QUICK.seeds[0]] == list(methods)
    assert all(r.by_position["plain"].shape == (QUICK.eval_length,) for r in runs)
    embeddings = [ex.build_model(kind, QUICK, seed=3).embedding.weight for kind in ("none", "alibi", "rope")]
    assert all(torch.equal(embeddings[0], e) for e in embeddings[1:])


@dataclasses.dataclass(frozen=True)
class QuickLength(ex.LengthExperiment):
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
def test_the_command_line_sweep_reports_its_table(tmp_path, monkeypatch, capsys):
    """`python -m posenc.lib.experiments` runs as __main__; its report must still read the runs it made."""
    import runpy
    import sys

    monkeypatch.setitem(ex.SWEEPS, "ch04", ("tests.test_models", "QuickLength", "a quick sweep"))
    monkeypatch.setattr(sys, "argv", ["experiments", "ch04", "--out", str(tmp_path / "r.json"), "--seeds", "1"])
    with pytest.raises(SystemExit) as exit_code:
        runpy.run_module("posenc.lib.experiments", run_name="__main__")
    assert exit_code.value.code == 0
    out = capsys.readouterr().out
    assert "in-distribution accuracy: none" in out and "| encoding | read |" in out
    config, records, _ = ex.load_results(tmp_path / "r.json")
    assert config == QuickLength(seeds=(0,)) and len(records) == len(ex.ENCODINGS)


# ---------------------------------------------------------------------------------------------------
# The committed files reproduce from the code


def test_the_chapter_4_file_reproduces_from_the_code():
    """One run of results/ch04.json (no encoding, the cheapest kind, seed 0), with the file's configuration."""
    assert_rerun_matches_file(ex.RESULTS_DIR / "ch04.json", "none", 0)
