"""The shared experiment code: positional modules, the toy task, the tiny Transformer and chapter 4's sweep."""

import math

import numpy as np
import pytest
import torch
from torch import nn

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
