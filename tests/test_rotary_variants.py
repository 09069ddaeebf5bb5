"""Chapter 9's rotary variants, checked against the implementations models load.

Hugging Face transformers (pinned in requirements.txt for the tests only) is imported here and nowhere in
the course: its ``ROPE_INIT_FUNCTIONS`` and model files are compared with ``posenc.lib.rotary_variants`` on
random settings and on the configurations of the chapter's table, to float32 rounding (transformers computes
its frequencies in float32, the course in float64).
"""

from __future__ import annotations

import ast
import copy
import json
import math

import numpy as np
import pytest
import torch
import transformers
from transformers import (
    DeepseekV3Config,
    Gemma3TextConfig,
    Gemma4TextConfig,
    GPTJConfig,
    GPTNeoXConfig,
    LlamaConfig,
    Llama4TextConfig,
    Phi3Config,
    PhiConfig,
    Qwen2Config,
)
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding
from transformers.models.gemma4.modeling_gemma4 import Gemma4TextRotaryEmbedding
from transformers.models.gpt_neox import modeling_gpt_neox
from transformers.models.gptj import modeling_gptj
from transformers.models.llama import modeling_llama
from transformers.models.llama4.modeling_llama4 import Llama4TextAttention, Llama4TextRotaryEmbedding

from posenc.lib import extension
from posenc.lib import rotary_variants as rv
from posenc.lib.models import TinyTransformer
from posenc.lib.rotary import apply_rotary, rotary_frequencies
from tests.conftest import ROOT

# float32 frequencies against float64 ones: base ** (-2i/d) in float32 is off by about eps * |ln omega|
# relatively (the exponent's rounding, magnified), so the tolerance is 2 eps (1 + |ln omega|) per pair.
EPS32 = torch.finfo(torch.float32).eps
SEEDS = range(6)
CONFIG_CLASSES = {
    "Llama 3.1 8B": LlamaConfig, "Llama 4 Scout 17B-16E": Llama4TextConfig, "Gemma 3 4B": Gemma3TextConfig,
    "Gemma 4 (configuration defaults)": Gemma4TextConfig, "Qwen2.5 7B Instruct": Qwen2Config,
    "DeepSeek-V3": DeepseekV3Config, "Phi-3 vision 128k (Phi-3-mini language model)": Phi3Config,
    "GPT-NeoX-20B": GPTNeoXConfig, "GPT-J-6B": GPTJConfig, "Phi-2": PhiConfig,
}


def assert_close(theirs: torch.Tensor, ours: torch.Tensor):
    """Equal to float32 rounding, pair by pair (see EPS32)."""
    theirs, ours = theirs.double(), torch.as_tensor(ours, dtype=torch.float64)
    assert theirs.shape == ours.shape, (theirs.shape, ours.shape)
    gap = (theirs - ours).abs() / ours.abs().clamp_min(1e-300)
    allowed = 2 * EPS32 * (1 + ours.abs().clamp_min(1e-300).log().abs())
    assert torch.all(gap <= allowed), f"largest gap {float((gap / allowed).max()):.2f} times float32 rounding"


def hf_config(fields: dict, cls=LlamaConfig):
    """A transformers configuration built from a configuration's fields (no download)."""
    fields = copy.deepcopy(fields)
    scaling = fields.get("rope_scaling")
    if scaling and scaling.get("type") == "su":       # Phi-3's first name, which transformers 5 cannot standardise
        scaling["type"] = "longrope"
    return cls(**fields)


def theirs(fields: dict, cls=LlamaConfig, seq_len=None, layer_type=None):
    """transformers' (frequencies, attention factor): its rope initialisation function, or for a layer type
    of Gemma 3 and 4 the buffers of the model's own rotary embedding."""
    config = hf_config(fields, cls)
    if layer_type:
        embedding = (Gemma4TextRotaryEmbedding if cls is Gemma4TextConfig else Gemma3RotaryEmbedding)(config)
        return getattr(embedding, f"{layer_type}_inv_freq"), getattr(embedding, f"{layer_type}_attention_scaling")
    kind = config.rope_parameters["rope_type"]
    if kind == "default":            # GPT-NeoX's default reads partial_rotary_factor; Llama's ignores it
        return modeling_gpt_neox.GPTNeoXRotaryEmbedding.compute_default_rope_parameters(config)
    return ROPE_INIT_FUNCTIONS[kind](config, None, seq_len=seq_len)


def random_fields(rng, rope_scaling: dict | None = None, partial: bool = False) -> dict:
    heads = int(rng.choice([2, 4, 8]))
    head_dim = int(rng.choice([16, 32, 64, 128]))
    fields = {"hidden_size": heads * head_dim, "num_attention_heads": heads, "num_hidden_layers": 2,
              "max_position_embeddings": int(rng.choice([512, 2048, 8192])),
              "rope_theta": float(rng.choice([10_000.0, 500_000.0, 1_000_000.0, float(rng.uniform(100, 1e6))]))}
    if rope_scaling is not None:
        fields["rope_scaling"] = rope_scaling
    if partial:
        fields["partial_rotary_factor"] = float(rng.choice([0.25, 0.5, 0.75]))
    return fields


# ---------------------------------------------------------------------------------------------------
# The rope initialisation functions, on random settings


@pytest.mark.parametrize("seed", SEEDS)
def test_default_linear_and_dynamic_match(seed):
    rng = np.random.default_rng([seed, 9])
    fields = random_fields(rng, partial=bool(seed % 2))
    ours, factor = rv.rope_parameters(fields)
    assert factor == 1.0
    assert_close(theirs(fields)[0], ours)
    scale = float(rng.uniform(1.5, 16))
    linear = dict(fields, rope_scaling={"rope_type": "linear", "factor": scale})
    assert_close(theirs(linear)[0], rv.rope_parameters(linear)[0])
    dynamic = dict(fields, rope_scaling={"rope_type": "dynamic", "factor": scale})
    for seq_len in (None, fields["max_position_embeddings"], 3 * fields["max_position_embeddings"] + 7):
        assert_close(theirs(dynamic, seq_len=seq_len)[0], rv.rope_parameters(dynamic, seq_len=seq_len)[0])


@pytest.mark.parametrize("seed", SEEDS)
def test_yarn_matches_the_reference_code(seed):
    rng = np.random.default_rng([seed, 10])
    scaling = {"rope_type": "yarn", "factor": float(rng.uniform(2, 40)),
               "original_max_position_embeddings": int(rng.choice([256, 4096, 32768])),
               "beta_fast": float(rng.choice([16, 32, 64])), "beta_slow": float(rng.choice([1, 2])),
               "truncate": bool(seed % 3)}
    if seed % 4 == 0:
        scaling.update(mscale=float(rng.uniform(0.5, 1.5)), mscale_all_dim=float(rng.uniform(0.5, 1.5)))
    fields = random_fields(rng, scaling, partial=seed % 2 == 1)
    frequencies, factor = theirs(fields)
    ours, our_factor = rv.rope_parameters(fields)
    assert_close(frequencies, ours)
    assert math.isclose(factor, our_factor, rel_tol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_longrope_matches_with_both_lists_and_its_attention_factor(seed):
    rng = np.random.default_rng([seed, 11])
    fields = random_fields(rng, partial=seed % 2 == 1)
    pairs = int(rv.head_dim_of(fields) * fields.get("partial_rotary_factor", 1.0)) // 2
    original = fields["max_position_embeddings"] // int(rng.choice([4, 8, 32]))
    fields["rope_scaling"] = {"rope_type": "longrope", "original_max_position_embeddings": original,
                              "short_factor": rng.uniform(1, 3, pairs).tolist(),
                              "long_factor": np.sort(rng.uniform(1, 60, pairs)).tolist()}
    for seq_len in (None, original, original + 1, fields["max_position_embeddings"]):
        frequencies, factor = theirs(fields, seq_len=seq_len)
        ours, our_factor = rv.rope_parameters(fields, seq_len=seq_len)
        assert_close(frequencies, ours)
        assert math.isclose(factor, our_factor, rel_tol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_llama3_matches_and_is_yarn_by_parts_with_moved_ends(seed):
    rng = np.random.default_rng([seed, 12])
    low = float(rng.choice([0.5, 1.0, 2.0]))
    scaling = {"rope_type": "llama3", "factor": float(rng.uniform(2, 32)), "low_freq_factor": low,
               "high_freq_factor": low + float(rng.choice([0.5, 3.0, 10.0])),
               "original_max_position_embeddings": int(rng.choice([512, 2048, 8192]))}
    fields = random_fields(rng, scaling, partial=seed % 2 == 1)
    ours, factor = rv.rope_parameters(fields)
    assert_close(theirs(fields)[0], ours)
    d = len(ours) * 2
    paper = extension.yarn_frequencies(d, scaling["factor"], scaling["original_max_position_embeddings"],
                                       fields["rope_theta"], alpha=low, beta=scaling["high_freq_factor"])
    assert torch.allclose(ours, paper, rtol=1e-12) and factor == 1.0


def test_a_step_without_a_ramp_as_llama_4_scout_has_it():
    fields = rv.model_entry("Llama 4 Scout 17B-16E")["config"]
    ours, _ = rv.rope_parameters(fields)
    assert_close(theirs(fields, Llama4TextConfig)[0], ours)
    omega = rotary_frequencies(128, 500_000.0)
    kept = rv.turns(omega, 8192) >= 1
    assert torch.equal(ours[kept], omega[kept]) and torch.allclose(ours[~kept], omega[~kept] / 16)


@pytest.mark.parametrize("seed", SEEDS)
def test_p_rope_is_transformers_proportional_type(seed):
    rng = np.random.default_rng([seed, 13])
    fields = random_fields(rng)
    p = float(rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, 0.3]))
    fields["rope_scaling"] = {"rope_type": "proportional", "partial_rotary_factor": p}
    frequencies, _ = theirs(fields)
    ours, _ = rv.rope_parameters(fields)
    assert frequencies.shape == ours.shape
    turning = ours > 0
    assert torch.equal(frequencies > 0, turning) and int(turning.sum()) == rv.kept_pairs(rv.head_dim_of(fields), p)
    if turning.any():
        assert_close(frequencies[turning], ours[turning])


# ---------------------------------------------------------------------------------------------------
# The table's configurations


TABLE = rv.model_table()


@pytest.mark.parametrize("entry", TABLE, ids=lambda e: e["model"])
def test_every_entry_has_a_source_and_frequencies_that_match_transformers(entry):
    assert entry["source"] and entry["read_in"] and all(isinstance(s, str) and s for s in entry["read_in"])
    fields, cls = entry["config"], CONFIG_CLASSES[entry["model"]]
    kinds = set(rv.layer_types(fields)) - {"nope"}
    layer_types = [{"sliding": "sliding_attention", "global": "full_attention"}[k] for k in kinds] \
        if kinds & {"sliding", "global"} else [None]
    for layer_type in layer_types:
        for seq_len in (None, fields["max_position_embeddings"]):
            ours, factor = rv.rope_parameters(fields, seq_len=seq_len, layer_type=layer_type)
            if cls is GPTJConfig:
                continue                            # GPT-J has no rope initialisation function: below
            frequencies, their_factor = theirs(fields, cls, seq_len, layer_type)
            if (ours == 0).any():
                assert torch.equal(frequencies == 0, ours == 0)
                frequencies, ours = frequencies[ours > 0], ours[ours > 0]
            assert_close(frequencies, ours)
            assert math.isclose(their_factor, factor, rel_tol=1e-12)


def test_gpt_j_turns_its_first_64_coordinates_in_pairs_2i_2i_plus_1():
    fields = rv.model_entry("GPT-J-6B")["config"]
    config = hf_config(fields, GPTJConfig)
    positions = torch.tensor([[0, 1, 7, 150, 300]])
    sin, cos = modeling_gptj.GPTJRotaryEmbedding(config)(torch.zeros(1), positions)
    x = torch.randn(1, 5, 2, 256, dtype=torch.float64)
    rotated = modeling_gptj.apply_rotary_pos_emb(x[..., :64].float(), sin, cos)
    omega, _ = rv.rope_parameters(fields)
    ours = apply_rotary(x.transpose(1, 2), positions[0], omega=torch.cat([omega, torch.zeros(96)]))
    assert torch.allclose(rotated.double().transpose(1, 2), ours[..., :64], atol=5e-5)
    assert torch.equal(ours[..., 64:], x.transpose(1, 2)[..., 64:])


def test_layer_plans_are_transformers_own():
    scout = hf_config(rv.model_entry("Llama 4 Scout 17B-16E")["config"], Llama4TextConfig)
    assert [bool(u) for u in scout.no_rope_layers] == rv.llama4_rope_layers(48, 4)
    for name in ("Gemma 3 4B", "Gemma 4 (configuration defaults)"):
        fields = rv.model_entry(name)["config"]
        assert hf_config(fields, CONFIG_CLASSES[name]).layer_types == rv.gemma3_layer_types(fields["num_hidden_layers"])


# ---------------------------------------------------------------------------------------------------
# Applying the frequencies: partial rotary and p-RoPE (positions up to a few hundred: transformers computes
# the angles pos * omega_i in float32, which at pos ~ 4000 are off by ~1e-4 radians, chapter 6's point)


@pytest.mark.parametrize("fraction", [0.25, 0.4, 0.5, 1.0])
def test_partial_rotary_matches_gpt_neox_and_phi(fraction):
    head_dim = 80 if fraction == 0.4 else 96
    fields = {"hidden_size": 4 * head_dim, "num_attention_heads": 4, "num_hidden_layers": 1,
              "max_position_embeddings": 4096, "rope_theta": 10_000.0}
    if fraction == 0.4:                                   # Phi-2's
        config = hf_config(dict(fields, partial_rotary_factor=fraction), PhiConfig)
    else:                                                 # GPT-NeoX's file calls it rotary_pct
        config = hf_config(dict(fields, rotary_pct=fraction), GPTNeoXConfig)
    assert config.rope_parameters["partial_rotary_factor"] == fraction
    positions = torch.tensor([[3, 0, 17, 400, 99, 12]])
    x = torch.randn(1, 4, 6, head_dim)
    cos, sin = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)(x, positions)
    q, k = modeling_gpt_neox.apply_rotary_pos_emb(x, x.flip(1), cos, sin)
    for hf, source in ((q, x), (k, x.flip(1))):
        ours = apply_rotary(source.double(), positions[0], fraction=fraction, layout="half")
        assert torch.allclose(hf.double(), ours, atol=5e-5)       # float32 angles at pos 400: ~3e-5 rad
        assert torch.equal(ours[..., int(fraction * head_dim):], source.double()[..., int(fraction * head_dim):])


def test_p_rope_as_gemma_4_applies_it():
    fields = rv.model_entry("Gemma 4 (configuration defaults)")["config"]
    frequencies, _ = theirs(fields, Gemma4TextConfig, layer_type="full_attention")
    frequencies = frequencies.float()
    positions = torch.tensor([[0, 5, 100, 300]])
    x = torch.randn(1, 2, 4, 512)
    angles = positions[0, :, None].float() * frequencies
    emb = torch.cat([angles, angles], dim=-1)
    q, _ = modeling_llama.apply_rotary_pos_emb(x, x, emb.cos()[None], emb.sin()[None])
    ours = apply_rotary(x.double(), positions[0], omega=rv.p_rope_frequencies(512, 0.25, 1e6), layout="half")
    assert torch.allclose(q.double(), ours, atol=5e-5)
    still = torch.cat([torch.arange(64, 256), torch.arange(320, 512)])
    assert torch.equal(ours[..., still], x.double()[..., still])


def test_partial_rotary_is_p_rope_at_another_base_up_to_a_fixed_permutation():
    d, fraction, base = 96, 0.25, 10_000.0
    partial = rv.partial_frequencies(d, fraction, base)
    p_rope = rv.p_rope_frequencies(d, fraction, rv.partial_as_p_rope_base(base, fraction))
    assert torch.allclose(partial, p_rope, rtol=1e-12)
    x, y = torch.randn(2, 30, d, dtype=torch.float64)
    m, n = torch.randint(0, 5000, (2, 30))
    dot_partial = (apply_rotary(x, m, fraction=fraction, layout="half") *
                   apply_rotary(y, n, fraction=fraction, layout="half")).sum(-1)
    order = torch.cat([torch.arange(12), torch.arange(24, 60), torch.arange(12, 24), torch.arange(60, 96)])
    dot_p = (apply_rotary(x[:, order], m, omega=p_rope, layout="half") *
             apply_rotary(y[:, order], n, omega=p_rope, layout="half")).sum(-1)
    assert torch.allclose(dot_partial, dot_p, atol=1e-9)


# ---------------------------------------------------------------------------------------------------
# Llama 4: the per-layer choice and the temperature


def test_llama_4_layers_with_and_without_rotary_match_transformers():
    fields = dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=8, num_hidden_layers=4,
                  max_position_embeddings=64, rope_theta=10_000.0, use_qk_norm=True, attn_temperature_tuning=True,
                  floor_scale=4, attn_scale=0.1, attention_chunk_size=8, intermediate_size=16,
                  intermediate_size_mlp=16,
                  rope_scaling={"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 2.0,
                                "original_max_position_embeddings": 16})
    config = hf_config(fields, Llama4TextConfig)
    config._attn_implementation = "eager"
    n = 13
    torch.manual_seed(0)
    x = torch.randn(2, n, 32)
    positions = torch.arange(n)
    freqs = Llama4TextRotaryEmbedding(config)(x, positions[None])
    omega, _ = rv.rope_parameters(fields)
    mask = torch.full((n, n), float("-inf")).triu(1)[None, None]
    uses_rope = rv.llama4_rope_layers(4)
    assert uses_rope == [True, True, True, False]
    for layer in (0, 3):
        attention = Llama4TextAttention(config, layer).eval()
        assert bool(attention.use_rope) == uses_rope[layer]
        with torch.no_grad():
            for parameter in attention.parameters():
                parameter.normal_(0, 0.3)
            out, _ = attention(x, freqs, mask)
        weights = {name: getattr(attention, f"{name}_proj").weight.detach().double() for name in "qkvo"}
        ours = rv.llama4_layer(x.double(), weights, 4, 2, positions, rope=uses_rope[layer], omega=omega,
                               qk_norm_eps=config.rms_norm_eps, temperature=(config.floor_scale, config.attn_scale))
        assert torch.allclose(out.double(), ours, atol=2e-5, rtol=1e-5)


def test_the_temperature_is_one_on_short_contexts_and_grows_like_a_logarithm():
    scale = rv.llama4_query_scale(torch.arange(10 * 8192), 8192, 0.1)
    assert torch.all(scale[:8191] == 1) and scale[8191] > 1
    assert math.isclose(float(scale[-1]), 1 + 0.1 * math.log(11), rel_tol=1e-12)


def test_chunked_and_sliding_masks_are_transformers_own():
    from transformers.masking_utils import chunked_causal_mask_function, sliding_window_causal_mask_function

    n, size = 13, 5
    index = torch.arange(n)
    for ours, allowed in ((rv.chunked_causal_mask(n, size), chunked_causal_mask_function(size, torch.tensor([0]))),
                          (rv.sliding_window_causal_mask(n, size), sliding_window_causal_mask_function(size))):
        theirs_ = allowed(torch.tensor(0), torch.tensor(0), index[:, None], index[None, :])
        assert torch.equal(ours == 0, theirs_)


# ---------------------------------------------------------------------------------------------------
# The course's position methods built from them


def _model(position, seed=0):
    torch.manual_seed(seed)
    return TinyTransformer(50, 32, 2, 2, position=position, causal=True)


def test_layerwise_rotary_in_every_layer_is_rotary_and_in_none_is_no_position():
    tokens = torch.randint(0, 50, (3, 20))
    plain = _model("rope")
    every = _model(rv.LayerwiseRotary(16, 2, rope_layers=(0, 1)))
    none = _model(rv.LayerwiseRotary(16, 2, rope_layers=()))
    every.load_state_dict(plain.state_dict())
    nope = _model("none")
    none.load_state_dict(nope.state_dict())
    with torch.no_grad():
        assert torch.allclose(every(tokens), plain(tokens), atol=1e-6)
        assert torch.allclose(none(tokens), nope(tokens), atol=1e-6)


def test_reading_options_change_nothing_inside_the_chunk_and_below_the_floor_scale():
    model = _model(rv.LayerwiseRotary(16, 2, rope_layers=(0,)))
    tokens = torch.randint(0, 50, (3, 16))
    with torch.no_grad():
        before = model(tokens)
        model.position.reading(chunk=16, temperature=(17, 0.1))
        assert torch.allclose(model(tokens), before, atol=1e-6)
        model.position.reading(chunk=8, temperature=(4, 0.1))
        assert not torch.allclose(model(tokens), before, atol=1e-3)


def test_frequency_rotary_with_every_pair_is_rotary_and_refuses_an_extension():
    plain = _model("rope")
    fixed = _model(rv.FrequencyRotary(16, rotary_frequencies(16)))
    fixed.load_state_dict(plain.state_dict())
    tokens = torch.randint(0, 50, (2, 12))
    with torch.no_grad():
        assert torch.allclose(fixed(tokens), plain(tokens), atol=1e-6)
    with pytest.raises(ValueError, match="no extension"):
        fixed.position.extend("pi", 2.0)


# ---------------------------------------------------------------------------------------------------
# The course never needs transformers


def _imports(tree) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_notebook_and_no_module_of_the_package_imports_transformers():
    sources = {}
    for folder in ("notebooks", "exercises", "solutions"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            cells = json.loads(path.read_text())["cells"]
            code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
            sources[path] = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
    for path in list((ROOT / "posenc").rglob("*.py")) + list((ROOT / "solutions" / "source").glob("*.py")):
        sources[path] = path.read_text()
    assert len(sources) > 50
    offenders = [str(path.relative_to(ROOT)) for path, code in sources.items() if "transformers" in _imports(ast.parse(code))]
    assert not offenders, f"these import transformers, which students do not have: {offenders}"
    assert transformers.__version__ == "5.24.0"
