"""Tests of posenc.lib.combining: accounting, algebra, geometry, scale, and the four terms inside a model."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from posenc import sinusoidal_encoding
from posenc.experiments.ch03 import CONDITIONS, condition_model
from posenc.lib import combining
from posenc.lib.models import parameter_count
from posenc.lib.tasks import ShiftedCopy


# --- accounting --------------------------------------------------------------------------------------

def test_input_width_and_projection_params():
    assert combining.input_width("add", 64, 64) == 64
    assert combining.input_width("concat", 64, 16) == 80
    assert combining.projection_params("add", 64, 64, 10) == 64 * 10 + 10
    assert combining.projection_params("concat", 64, 16, 10, bias=False) == 800
    assert combining.projection_params("concat", 3, 5, 7) == parameter_count(nn.Linear(8, 7))


@pytest.mark.parametrize("args", [("add", 64, 32), ("sum", 8, 8)])
def test_input_width_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        combining.input_width(*args)


@pytest.mark.parametrize("width,d_ff", [(8, 16), (32, 64), (96, 40)])
def test_encoder_layer_params_match_torch(width, d_ff):
    layer = nn.TransformerEncoderLayer(width, 4, d_ff, batch_first=True, norm_first=True)
    assert parameter_count(layer) == combining.encoder_layer_params(width, d_ff)


def test_encoder_layer_flops_match_torch_counter():
    from torch.utils.flop_counter import FlopCounterMode

    layer = nn.TransformerEncoderLayer(24, 2, 40, dropout=0.0, batch_first=True)
    with FlopCounterMode(display=False) as counter:
        layer(torch.randn(1, 10, 24))
    flops = combining.encoder_layer_flops(24, 40, 10)
    assert counter.get_total_flops() == 10 * flops["projections"]
    assert flops["total"] == flops["projections"] + 2 * 2 * 10 * 24


def test_first_layers_cost_layouts():
    add = combining.first_layers_cost("add", 64, 64, 100, 128, 16)
    same = combining.first_layers_cost("concat, same width", 64, 16, 100, 128, 16)
    wide = combining.first_layers_cost("concat, wider", 64, 64, 100, 128, 16)
    assert (add["width"], same["width"], wide["width"]) == (64, 64, 128)
    assert same["embedding_params"] == 100 * 48 and same["layer_params"] == add["layer_params"]
    assert wide["layer_params"] == combining.encoder_layer_params(128, 128) > add["layer_params"]
    with pytest.raises(ValueError):
        combining.first_layers_cost("concat, same width", 64, 64, 100, 128, 16)
    with pytest.raises(ValueError):
        combining.first_layers_cost("interleave", 64, 64, 100, 128, 16)


# --- algebra -----------------------------------------------------------------------------------------

def test_concat_then_linear_is_a_sum_of_projections():
    rng = np.random.default_rng(0)
    x, p, w = rng.normal(size=(5, 6)), rng.normal(size=(5, 3)), rng.normal(size=(9, 4))
    joined = combining.concat_inputs(x, p)
    assert joined.shape == (5, 9) and np.array_equal(joined[:, :6], x) and np.array_equal(joined[:, 6:], p)
    assert np.allclose(joined @ w, combining.sum_of_projections(x, p, w))
    w_x, w_p = combining.split_projection(w, 6)
    assert w_x.shape == (6, 4) and w_p.shape == (3, 4)


def test_concat_inputs_broadcasts_positions_over_the_batch():
    rng = np.random.default_rng(1)
    x, p = rng.normal(size=(3, 5, 4)), rng.normal(size=(5, 2))
    joined = combining.concat_inputs(x, p)
    assert joined.shape == (3, 5, 6)
    assert all(np.array_equal(joined[b, :, 4:], p) for b in range(3))


def test_logit_terms_add_up_for_numpy_and_torch():
    rng = np.random.default_rng(2)
    x, p = rng.normal(size=(7, 8)), sinusoidal_encoding(7, 8)
    w_q, w_k = rng.normal(size=(2, 8, 3))
    terms = combining.logit_terms(x, p, w_q, w_k)
    assert len(terms) == 4 == len(combining.TERM_NAMES)
    assert np.allclose(sum(terms), ((x + p) @ w_q) @ ((x + p) @ w_k).T)
    same = combining.logit_terms(x, p, w_q, w_q)        # with W_Q = W_K the mixed terms are transposes
    assert np.allclose(same[1], same[2].T) and not np.allclose(terms[1], terms[2].T)
    torch_terms = combining.logit_terms(*(torch.from_numpy(a) for a in (x, p, w_q, w_k)))
    assert all(np.allclose(a, b.numpy()) for a, b in zip(terms, torch_terms))


def test_rms():
    assert combining.rms([3.0, -3.0]) == 3.0
    assert combining.rms(np.zeros((2, 2))) == 0.0


# --- geometry ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("d_model", [32, 256])
def test_cosines_spread_like_one_over_sqrt_d(d_model):
    cosines = combining.token_position_cosines(d_model, 1000, 32, np.random.default_rng(3))
    assert cosines.shape == (1000 * 32,) and np.all(np.abs(cosines) <= 1)
    assert abs(cosines.std() * math.sqrt(d_model) - 1) < 0.06
    assert abs(cosines.mean()) < 0.02


def test_short_sequences_leave_dimensions_still():
    assert combining.position_spread(1, 16).max() == 0.0
    fractions = [combining.nearly_constant_fraction(n, 128) for n in (8, 64, 1024)]
    assert fractions[0] > fractions[1] > fractions[2] >= 0
    assert combining.effective_dimension(16, 512) < 16
    assert combining.effective_dimension(64, 512) < combining.effective_dimension(512, 512)


# --- scale -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("d_model", [2, 16, 512])
def test_pe_norm_is_the_same_at_every_position(d_model):
    norms = np.linalg.norm(sinusoidal_encoding(200, d_model), axis=1)
    assert np.allclose(norms, combining.pe_norm(d_model))


def test_pe_norm_needs_an_even_width():
    with pytest.raises(ValueError):
        combining.pe_norm(7)


def test_position_share_of_the_two_recipes():
    for d in (64, 512):
        assert math.isclose(combining.position_share(d, d ** -0.5, math.sqrt(d)), 1 / 3)
        assert math.isclose(combining.position_share(d, 1.0, math.sqrt(d)), 1 / (2 * d + 1))
    assert math.isclose(combining.token_norm(512, 1.0, math.sqrt(512)), 512)


def test_matching_init_std_matches_the_norms():
    for d in (8, 64, 512):
        std = combining.matching_init_std(d)
        assert math.isclose(std, 1 / math.sqrt(2 * d))
        assert math.isclose(combining.token_norm(d, std, math.sqrt(d)), combining.pe_norm(d))
        assert math.isclose(combining.position_share(d, std, math.sqrt(d)), 0.5)
    assert math.isclose(combining.matching_init_std(64, scale=1.0), 2 ** -0.5)


def test_scaled_inputs_for_a_sequence_and_a_batch():
    rng = np.random.default_rng(4)
    table, pe = rng.normal(size=(10, 16)), sinusoidal_encoding(20, 16)
    tokens = rng.integers(0, 10, size=(3, 6))
    out = combining.scaled_inputs(tokens, table, pe)
    assert out.shape == (3, 6, 16)
    assert np.allclose(out[1], 4.0 * table[tokens[1]] + pe[:6])
    assert np.allclose(combining.scaled_inputs(tokens[0], table, pe, scale=1.0), table[tokens[0]] + pe[:6])


# --- inside a trained model -------------------------------------------------------------------------

def test_bag_of_tokens_beats_chance_and_no_more():
    task = ShiftedCopy()
    bag = combining.bag_of_tokens_accuracy(task, 16, n_sequences=256)
    assert task.chance < bag < 0.3
    assert combining.bag_of_tokens_accuracy(ShiftedCopy(vocab_size=2), 4, n_sequences=64) <= 1.0


def test_first_layer_parts_reproduce_torch_attention():
    model = condition_model(CONDITIONS["add"], 16, 32, seed=3, n_layers=1)
    tokens, _ = ShiftedCopy().batch(1, 12, torch.Generator().manual_seed(0))
    parts = combining.first_layer_logit_parts(model, tokens)
    assert parts["terms"].shape == (4, 2, 12, 12) and parts["total"].shape == (2, 12, 12)
    assert np.allclose(parts["terms"].sum(0) + parts["rest"], parts["total"], atol=1e-5)
    weights = torch.softmax(torch.from_numpy(parts["total"]), dim=-1).numpy()
    assert np.allclose(weights, combining.first_layer_attention(model, tokens), atol=1e-6)


def test_first_layer_parts_need_addition():
    model = condition_model(CONDITIONS["concat"], 16, 32, seed=0, n_layers=1)
    with pytest.raises(ValueError):
        combining.first_layer_logit_parts(model, torch.zeros(1, 4, dtype=torch.long))
