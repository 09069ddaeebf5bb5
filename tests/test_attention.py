"""posenc.lib.attention and the model's position methods: one lens, every method.

For each method the added logit term depends only on j - i; causal models never look ahead; RoPE logits do
not move when every position shifts; parameter counts; each method learns ShiftedCopy.
"""

import copy
import math

import pytest
import torch

from posenc.lib.attention import (
    ABSOLUTE,
    METHODS,
    ALiBiPosition,
    AttentionContext,
    AttentionPosition,
    RotaryPosition,
    SelfAttention,
    ShawPosition,
    T5Position,
    causal_mask,
    make_position,
)
from posenc.lib.extension import yarn_frequencies
from posenc.lib.models import (
    TinyTransformer,
    TrainConfig,
    convert_rotary_layout,
    evaluate,
    extended_copy,
    parameter_count,
    train,
)
from posenc.lib.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from posenc.lib.relative import alibi_slopes, relative_positions, t5_bucket
from posenc.lib.rotary import apply_rotary
from posenc.lib.tasks import ShiftedCopy
from tests.test_models import one_thread  # noqa: F401  (autouse: tiny models run fastest on one thread)

VOCAB, D_MODEL, HEADS, LAYERS = 12, 16, 2, 2
RELATIVE = ("shaw", "t5", "alibi")


def build(method, causal=False, seed=0, **options):
    torch.manual_seed(seed)
    return TinyTransformer(VOCAB, D_MODEL, HEADS, LAYERS, position=method, causal=causal, max_len=128,
                           position_options=options or None).eval()


def added_term(model, tokens, layer=0):
    """The method's part of one layer's logits: the logits minus those of the same input without the method."""
    attention, x, context, layer = model.attention_input(tokens, layer)
    with torch.no_grad():
        plain = attention.logits(x, AttentionContext(causal=model.causal), layer)
        return (attention.logits(x, context, layer) - plain).nan_to_num(0.0)    # -inf - -inf above the diagonal


def assert_depends_on_offset_only(term, n):
    """term (..., n, n): every diagonal (fixed j - i) is constant."""
    for offset in range(-(n - 1), n):
        diagonal = torch.diagonal(term, offset, dim1=-2, dim2=-1)
        torch.testing.assert_close(diagonal, diagonal[..., :1].expand_as(diagonal), atol=1e-5, rtol=1e-5)


# --- the factory ---------------------------------------------------------------------------------------

def test_make_position_builds_every_method():
    kinds = {"none": AttentionPosition, "sinusoidal": SinusoidalPositionalEncoding,
             "learned": LearnedPositionalEmbedding, "shaw": ShawPosition, "t5": T5Position,
             "alibi": ALiBiPosition, "rope": RotaryPosition}
    assert set(kinds) == set(METHODS)
    for name, kind in kinds.items():
        assert type(make_position(name, d_model=16, n_heads=2, n_layers=2)) is kind
    assert make_position("t5", d_model=16, n_heads=2, causal=True).bidirectional is False
    assert make_position("t5", d_model=16, n_heads=2, causal=False).bidirectional is True


@pytest.mark.parametrize("name,options,match", [("rotary", {}, "unknown position method"),
                                                ("none", {"base": 2}, "no options"),
                                                ("rope", {"layout": "halves"}, "layout")])
def test_make_position_rejects_bad_input(name, options, match):
    with pytest.raises(ValueError, match=match):
        make_position(name, d_model=16, n_heads=2, **options)


def test_make_position_needs_whole_heads():
    with pytest.raises(ValueError, match="heads"):
        make_position("alibi", d_model=10, n_heads=3)


@pytest.mark.parametrize("method", METHODS)
def test_model_names_its_method(method):
    model = build(method)
    assert model.method == method
    assert (model.combine == "add") == (method in ABSOLUTE)


def test_legacy_construction_names_its_method():
    model = TinyTransformer(VOCAB, D_MODEL, positional=SinusoidalPositionalEncoding(D_MODEL))
    assert model.method == "sinusoidal" and model.position.name == "none"


def test_model_rejects_mismatched_or_doubled_positions():
    with pytest.raises(ValueError, match="built for"):
        TinyTransformer(VOCAB, 32, 4, 2, position=make_position("alibi", d_model=32, n_heads=2))
    with pytest.raises(ValueError, match="built for"):
        TinyTransformer(VOCAB, 32, 2, 3, position=make_position("shaw", d_model=32, n_heads=2, n_layers=2))
    with pytest.raises(ValueError, match="not both"):
        TinyTransformer(VOCAB, 16, position="learned", positional=SinusoidalPositionalEncoding(16))
    with pytest.raises(ValueError, match="unknown position method"):
        TinyTransformer(VOCAB, 16, position="xpos")
    with pytest.raises(ValueError, match="position_options"):
        TinyTransformer(VOCAB, 16, position=make_position("alibi", d_model=16, n_heads=2),
                        position_options={"n_heads": 2})
    with pytest.raises(TypeError, match="position"):
        TinyTransformer(VOCAB, 16, position=torch.nn.Linear(2, 2))


# --- parameters ----------------------------------------------------------------------------------------

def test_parameter_counts_per_method():
    nope = parameter_count(build("none"))
    extra = {m: parameter_count(build(m)) - nope for m in METHODS}
    d_head, k = D_MODEL // HEADS, 16
    assert extra["shaw"] == LAYERS * 2 * (2 * k + 1) * d_head           # a^K and a^V per layer, shared by heads
    assert extra["t5"] == 32 * HEADS                                     # once, for all layers
    assert extra["alibi"] == extra["rope"] == extra["sinusoidal"] == 0
    assert extra["learned"] == 128 * D_MODEL
    per_head = parameter_count(build("shaw", heads=HEADS, max_distance=4)) - nope
    assert per_head == LAYERS * 2 * HEADS * 9 * d_head
    assert parameter_count(build("shaw", values=False, max_distance=4)) - nope == LAYERS * 9 * d_head


@pytest.mark.parametrize("method", METHODS)
def test_every_method_starts_from_the_same_non_positional_weights(method):
    reference = dict(build("none").named_parameters())
    for name, parameter in build(method).named_parameters():
        if name in reference:
            assert torch.equal(parameter, reference[name]), name


# --- the one lens: the added term depends on j - i only ---------------------------------------------------

@pytest.mark.parametrize("method", ["t5", "alibi"])
@pytest.mark.parametrize("causal", [False, True])
def test_bias_methods_add_a_function_of_the_offset(method, causal):
    n = 150
    model = build(method, causal=causal)
    tokens = torch.randint(0, VOCAB, (2, n))
    term = added_term(model, tokens, layer=1)
    keep = torch.ones(n, n, dtype=torch.bool) if not causal else torch.ones(n, n, dtype=torch.bool).tril()
    assert_depends_on_offset_only(term, n)
    offsets = relative_positions(n, n)
    if method == "alibi":
        expected = -alibi_slopes(HEADS)[:, None, None].float() * offsets.abs()
    else:
        table = model.position.relative_attention_bias.weight.detach()          # (buckets, heads)
        expected = table[t5_bucket(offsets, bidirectional=not causal)].permute(2, 0, 1)
    torch.testing.assert_close(term, expected.masked_fill(~keep, 0.0).expand_as(term), atol=1e-5, rtol=1e-5)


def test_t5_bias_is_shared_by_all_layers():
    model = build("t5")
    tokens = torch.randint(0, VOCAB, (1, 40))
    terms = [added_term(model, tokens, layer) for layer in range(LAYERS)]
    torch.testing.assert_close(terms[0], terms[1], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_shaws_key_term_depends_on_the_offset_for_a_fixed_query(causal):
    """With the same token everywhere (and no absolute encoding) the first layer's queries are all equal,
    so the key term q_i . a^K_clip(j - i) / sqrt(d_head) must be a function of j - i, flat beyond k."""
    n, k = 60, 5
    model = build("shaw", causal=causal, max_distance=k)
    tokens = torch.full((1, n), 3)
    term = added_term(model, tokens)
    assert_depends_on_offset_only(term, n)
    row = term[0, :, n - 1]                                 # query n - 1, offsets -(n - 1) .. 0
    torch.testing.assert_close(row[:, :n - k], row[:, :1].expand(-1, n - k))
    assert (row[:, n - k:] - row[:, :1]).abs().max() > 1e-4


def test_shaw_attention_matches_the_naive_formula():
    """Eqs. (3)-(4) of Shaw et al. with the n x n x d_head tensors built explicitly."""
    torch.manual_seed(4)
    n, d_model, heads, k = 9, 12, 3, 2
    position = ShawPosition(d_model // heads, n_layers=1, max_distance=k, heads=heads, init_std=0.5)
    attention = SelfAttention(d_model, heads)
    x = torch.randn(2, n, d_model)
    context = AttentionContext.build(position, torch.arange(n), torch.arange(n), causal=False)
    out, weights = attention(x, context=context, need_weights=True, average_attn_weights=False)

    q, key, v = attention.project(x, AttentionContext())
    index = (torch.arange(n)[None, :] - torch.arange(n)[:, None]).clamp(-k, k) + k
    a_key, a_value = position.key_vectors[0][:, index], position.value_vectors[0][:, index]   # (heads, n, n, d)
    logits = (q[:, :, :, None, :] * (key[:, :, None, :, :] + a_key)).sum(-1) / math.sqrt(d_model // heads)
    alpha = logits.softmax(-1)
    z = (alpha[..., None] * (v[:, :, None, :, :] + a_value)).sum(-2)
    expected = attention.out_proj(z.transpose(1, 2).reshape(2, n, d_model))
    torch.testing.assert_close(weights, alpha, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("causal", [False, True])
def test_fused_and_plain_attention_agree(method, causal):
    model = build(method, causal=causal)
    attention = model.encoder.layers[0].self_attn
    x = torch.randn(3, 20, D_MODEL)
    context = model.context(20)
    with torch.no_grad():
        fused, _ = attention(x, context=context)
        plain, weights = attention(x, context=context, need_weights=True)
    torch.testing.assert_close(fused, plain, atol=1e-5, rtol=1e-5)
    assert weights.shape == (3, 20, 20)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 20))


def test_attention_refuses_cross_attention():
    attention = SelfAttention(8, 2)
    x = torch.randn(1, 3, 8)
    with pytest.raises(ValueError, match="self-attention"):
        attention(x, torch.randn(1, 3, 8), x)


def test_causal_mask():
    mask = causal_mask(3, 3)
    assert mask.tolist() == [[0, -math.inf, -math.inf], [0, 0, -math.inf], [0, 0, 0]]


# --- causal models never look ahead ------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_causal_outputs_do_not_depend_on_later_tokens(method):
    model = build(method, causal=True)
    tokens = torch.randint(0, VOCAB, (2, 30))
    changed = tokens.clone()
    changed[:, 12:] = torch.randint(0, VOCAB, (2, 18))
    with torch.no_grad():
        full, other, prefix = model(tokens), model(changed), model(tokens[:, :12])
    torch.testing.assert_close(full[:, :12], other[:, :12], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(full[:, :12], prefix, atol=1e-5, rtol=1e-5)
    assert (full[:, 12:] - other[:, 12:]).abs().max() > 1e-3
    weights = model.attention_weights(tokens, layer=1)
    assert torch.all(weights.triu(1) == 0)


# --- RoPE in the model ---------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_logits_do_not_move_when_every_position_shifts(layout):
    model = build("rope", layout=layout)
    tokens = torch.randint(0, VOCAB, (2, 25))
    logits = model.attention_logits(tokens)
    for shift in (1, 17, 1000):
        shifted = model.attention_logits(tokens, positions=torch.arange(25) + shift)
        torch.testing.assert_close(shifted, logits, atol=2e-4, rtol=1e-4)
    with torch.no_grad():
        torch.testing.assert_close(model(tokens, positions=torch.arange(25) + 40), model(tokens), atol=2e-4, rtol=1e-4)


def test_rope_with_an_absolute_encoding_too_does_move():
    torch.manual_seed(0)
    model = TinyTransformer(VOCAB, D_MODEL, HEADS, LAYERS, position="rope",
                            positional=SinusoidalPositionalEncoding(D_MODEL)).eval()
    tokens = torch.randint(0, VOCAB, (1, 25))
    assert model.method == "rope" and model.combine == "add"
    moved = model.attention_logits(tokens, positions=torch.arange(25) + 17) - model.attention_logits(tokens)
    assert moved.abs().max() > 1e-2


def test_rope_model_turns_queries_and_keys():
    model = build("rope", base=100.0, fraction=0.5)
    tokens = torch.randint(0, VOCAB, (1, 10))
    attention, x, context, _ = model.attention_input(tokens)
    q, k, _ = attention.project(x, AttentionContext())
    expected = apply_rotary(q, base=100.0, fraction=0.5) @ apply_rotary(k, base=100.0, fraction=0.5).transpose(-1, -2)
    torch.testing.assert_close(model.attention_logits(tokens), expected / math.sqrt(D_MODEL // HEADS))


def test_layout_conversion_of_a_whole_model():
    model = build("rope", causal=True, fraction=0.5)
    tokens = torch.randint(0, VOCAB, (2, 20))
    converted = convert_rotary_layout(model, "half")
    naive = convert_rotary_layout(model, "half", permute_weights=False)
    with torch.no_grad():
        torch.testing.assert_close(converted(tokens), model(tokens), atol=1e-5, rtol=1e-5)
        assert (naive(tokens) - model(tokens)).abs().max() > 1e-3
    assert model.position.layout == "interleaved" and converted.position.layout == "half"


def test_extensions_switch_on_at_test_time():
    model = build("rope", causal=True)
    tokens = torch.randint(0, VOCAB, (1, 32))
    positions = torch.arange(32)
    pi = extended_copy(model, "pi", 4.0)
    torch.testing.assert_close(pi.attention_logits(tokens), model.attention_logits(tokens, positions=positions / 4))
    yarn = extended_copy(model, "yarn", 4.0, train_length=8)
    plain_yarn = copy.deepcopy(yarn)
    plain_yarn.position.logit_scale = 1.0
    temperature = (0.1 * math.log(4.0) + 1) ** 2
    torch.testing.assert_close(yarn.attention_logits(tokens).tril(), temperature * plain_yarn.attention_logits(tokens).tril())
    code = extended_copy(model, "yarn", 4.0, train_length=8, ramp="code")
    torch.testing.assert_close(code.position.omega, yarn_frequencies(code.position.d_rot, 4.0, 8, ramp="code"))
    assert code.position.logit_scale == yarn.position.logit_scale
    ntk = extended_copy(model, "ntk", 4.0)
    assert ntk.position.omega[-1].item() == pytest.approx(model.position.omega[-1].item() / 4)
    assert model.position.extension == "none" and model.position.position_scale == 1.0     # left alone
    ntk.position.reset()
    torch.testing.assert_close(ntk.attention_logits(tokens), model.attention_logits(tokens))
    with pytest.raises(ValueError, match="rotary"):
        extended_copy(build("alibi"), "pi", 2.0)


def test_an_extended_model_can_be_fine_tuned():
    task = ShiftedCopy(VOCAB, 1)
    model = extended_copy(build("rope", causal=True), "pi", 2.0)
    losses = train(model, task, TrainConfig(steps=3, batch_size=4, train_lengths=(16,)))
    assert len(losses) == 3 and model.position.position_scale == 0.5


def test_positions_must_match_the_sequence():
    model = build("alibi")
    with pytest.raises(ValueError, match="shape"):
        model(torch.zeros(1, 5, dtype=torch.long), positions=torch.arange(6))
    with pytest.raises(ValueError, match="layer"):
        model.attention_weights(torch.zeros(1, 5, dtype=torch.long), layer=LAYERS)


def test_absolute_models_read_explicit_positions_from_their_table():
    model = build("learned")
    tokens = torch.randint(0, VOCAB, (1, 6))
    positions = torch.tensor([3, 9, 20, 21, 50, 51])
    expected = model.embed_scale * model.embedding(tokens) + model.positional.table[positions]
    torch.testing.assert_close(model.inputs(tokens, positions), expected)
    with pytest.raises(ValueError, match="integer"):
        model.inputs(tokens, positions / 2)


# --- every method learns -----------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_a_short_training_run_beats_chance(method):
    task = ShiftedCopy(VOCAB, 1)
    model = build(method, causal=True).train()
    train(model, task, TrainConfig(steps=100, batch_size=32, lr=1e-2, train_lengths=(12,), seed=0))
    assert evaluate(model, task, 12, n_sequences=256) > 4 * task.chance
