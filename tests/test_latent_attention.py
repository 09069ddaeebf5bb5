"""Multi-head latent attention (chapter 9): absorbing the key up-projection, and DeepSeek's decoupled rotary,
checked on random weights and against transformers' DeepseekV3Attention (a tiny configuration, random
weights, no download)."""

from __future__ import annotations

import pytest
import torch
from transformers import DeepseekV3Config
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention, DeepseekV3RotaryEmbedding

from posenc.lib import latent_attention as la
from posenc.lib import rotary_variants as rv
from posenc.lib.rotary import rotary_frequencies


def random_layer(seed: int, d_rope: int = 8) -> la.LatentAttention:
    return la.LatentAttention.random(32, 4, 24, 8, d_rope, 6, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("seed", range(5))
def test_absorbing_the_key_up_projection_is_exact_with_the_decoupled_rotary_part(seed):
    layer = random_layer(seed)
    x = torch.randn(2, 11, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(100 + seed))
    positions = torch.arange(11) + 7 * seed
    parts = la.project(layer, x, positions, rotary_frequencies(8))
    assert torch.allclose(la.logits_absorbed(layer, parts), la.logits_expanded(layer, parts), atol=1e-12)
    expanded = la.attention(layer, x, positions, rotary_frequencies(8))
    assert torch.allclose(la.attention(layer, x, positions, rotary_frequencies(8), absorbed=True), expanded,
                          atol=1e-12)


def test_without_any_rotary_the_logits_do_not_depend_on_position():
    layer = random_layer(0)
    x = torch.randn(1, 9, 32, dtype=torch.float64)
    frozen = torch.zeros(4)
    near, far = (la.logits_absorbed(layer, la.project(layer, x, torch.arange(9) + shift, frozen)) for shift in (0, 500))
    assert torch.allclose(near, far, atol=1e-12)


def test_rotary_after_the_up_projection_cannot_be_absorbed_into_a_query():
    """For one query, the logits against one latent at several key positions would all have to come from a
    single absorbed vector; with rotary turned after the up-projection they differ, so none exists."""
    layer = random_layer(1)
    x = torch.randn(1, 1, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(5)).expand(1, 6, 32)
    logits = la.rotary_after_up_projection(layer, x.contiguous(), torch.arange(6) * 13, rotary_frequencies(8))
    last_query = logits[0, :, -1]                       # the same latent everywhere: only the offset changes
    assert (last_query.max(-1).values - last_query.min(-1).values).min() > 1e-3


def test_the_cache_is_the_latent_and_the_shared_rotary_key():
    v3 = rv.model_entry("DeepSeek-V3")["config"]
    layer = la.LatentAttention.random(16, v3["num_attention_heads"], v3["kv_lora_rank"], v3["qk_nope_head_dim"],
                                      v3["qk_rope_head_dim"], v3["v_head_dim"])
    assert layer.cache_width() == 576 and layer.expanded_cache_width() == 128 * (128 + 64 + 128)


@pytest.mark.parametrize("absorbed", [False, True])
def test_the_course_layer_is_transformers_deepseek_v3_attention(absorbed):
    fields = dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=None, kv_lora_rank=16,
                  qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=6, max_position_embeddings=64,
                  rope_theta=10_000.0, rope_interleave=True, attention_bias=False,
                  rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16,
                                "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0})
    config = DeepseekV3Config(**fields)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    attention = DeepseekV3Attention(config, layer_idx=0).eval()
    with torch.no_grad():
        for parameter in attention.parameters():
            parameter.normal_(0, 0.3)
    n = 12
    x = torch.randn(2, n, 32)
    positions = torch.arange(n) + 5
    cos, sin = DeepseekV3RotaryEmbedding(config)(x, positions[None])
    with torch.no_grad():
        out, _ = attention(x, (cos, sin), torch.full((n, n), float("-inf")).triu(1)[None, None])
    weight = {name: getattr(attention, name).weight.detach().double()
              for name in ("q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj", "kv_a_layernorm")}
    layer = la.LatentAttention(weight["q_proj"], weight["kv_a_proj_with_mqa"], weight["kv_b_proj"], weight["o_proj"],
                               4, 8, 4, 6, latent_norm=weight["kv_a_layernorm"], eps=config.rms_norm_eps)
    omega, factor = rv.rope_parameters(dict(fields, head_dim=4))
    scale = rv.deepseek_softmax_scale(12, 4.0, 1.0)
    assert factor == 1.0 and abs(scale - attention.scaling) < 1e-12
    ours = la.attention(layer, x.double(), positions, omega, scale=scale, absorbed=absorbed)
    assert torch.allclose(ours, out.double(), atol=2e-6)
