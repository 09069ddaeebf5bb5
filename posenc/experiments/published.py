"""Published numbers the chapters set their own results beside: one home for every figure the course quotes
from a paper, each with its source (facts from the papers; ``book/references.bib`` cites them).

The key names the paper (as in ``book/references.bib``) and, where the course quotes two of its tables, the
table. Position methods are keyed as the chapter that reads them compares them: Press et al.'s tables as the
paper names its models ("rotary"), Kazemnejad et al.'s ranks by the course's method names ("rope"), which the
chapter's own ranks use.
"""

from __future__ import annotations

PUBLISHED = {
    # Chapter 4: the original Transformer's learned and sinusoidal tables gave nearly the same model.
    "vaswani2017": {
        "source": "Vaswani et al. 2017, Table 3, newstest2013 (En-De dev set)",
        "sinusoidal": {"ppl": 4.92, "bleu": 25.8},      # the base model
        "learned": {"ppl": 4.92, "bleu": 25.7},         # row (E)
    },
    # Chapters 4, 7 and 8: perplexity of models trained at L = 512 tokens, read longer. Appendix Table 2 reads
    # them at lengths from 512 to 15,512 tokens; the course quotes three of its columns ("lengths", about L, 2L
    # and 7L) and, for the sinusoidal and rotary models, its last one ("longest").
    "press2022": {
        "source": "Press, Smith & Lewis 2022, WikiText-103 validation, trained at L = 512 (appendix Table 2)",
        "train_length": 512,            # L, in word-level tokens (WikiText-103's words, adaptive input)
        # Heads per layer of their WikiText-103 model: fairseq's transformer_lm_wiki103 architecture, which the
        # authors' training command uses (ofirpress/attention_with_linear_biases, README): 16 layers of 8 heads.
        "n_heads": 8,
        "lengths": (512, 1012, 3512),
        "sinusoidal": (20.05, 43.54, 178.97),
        "rotary": (20.07, 21.37, 35.54),
        "t5": (19.65, 18.79, 22.91),
        "alibi": (19.73, 18.73, 18.40),
        "longest": {"length": 15512, "sinusoidal": 406.01, "rotary": 79.25},
    },
    # Chapter 5: what each method costs in speed and memory.
    "press2022_speed": {
        "source": "Press, Smith & Lewis 2022, Appendix Table 1 (one V100 GPU, WikiText-103, 16 layers, "
                  "d = 1024); the sentence is in their section 2.2",
        "quote": "training is at least twice as slow as with the sinusoidal model",
        "lengths": (512, 1024, 3072),
        "train_wps": {"sinusoidal": (28.5e3, 26.0e3, 15.3e3), "rotary": (20.0e3, 17.7e3, 11.5e3),
                      "t5": (14.4e3, 13.0e3, 4.3e3), "alibi": (28.3e3, 25.8e3, 15.5e3)},
        "eval_wps": {"sinusoidal": (82.1e3, 77.8e3, 42.4e3), "rotary": (43.4e3, 39.4e3, 29.5e3),
                     "t5": (21.8e3, 20.2e3, 4.9e3), "alibi": (85.8e3, 76.4e3, 42.2e3)},
        "memory_gb": {"sinusoidal": (15.3, 19.2, 15.1), "rotary": (17.8, 22.8, 17.8),
                      "t5": (16.9, 20.9, 15.9), "alibi": (15.3, 19.3, 15.2)},
    },
    # Chapter 5: relative position representations in translation.
    "shaw2018": {
        "source": "Shaw, Uszkoreit & Vaswani 2018: abstract, Table 1 (WMT 2014 newstest2014 BLEU), section 3.3",
        "bleu_big": {"en-de": (27.9, 29.2), "en-fr": (41.2, 41.5)},       # (absolute, relative)
        "bleu_base": {"en-de": (26.5, 26.8), "en-fr": (38.2, 38.7)},
        "k_base": 16, "k_big": 8,                       # clipping distance of their base and big models
        "clip_bleu": {0: 12.5, 1: 25.5, 2: 25.8, 4: 25.9, 16: 25.8, 64: 25.9, 256: 25.8},   # Table 2, base, dev set
        "steps_per_second_decrease": 0.07,              # "a modest 7% decrease in steps per second"
    },
    # Chapter 7: the NoPE study's ranking of methods over ten tasks.
    "kazemnejad2023": {
        "source": "Kazemnejad et al. 2023, Figure 1: mean reciprocal rank over ten tasks (higher is better)",
        "mrr": {"none": 0.69, "t5": 0.55, "alibi": 0.50, "rope": 0.33, "sinusoidal": 0.22},   # APE = sinusoidal
        # Length splits, from the authors' code (McGill-NLP/length-generalization, its experiment launchers):
        # copy and reverse train on instances up to length 20 and test up to 40 (splits "..._tr20_ts40"); the
        # six mathematical and reasoning tasks train up to 8 and test up to 16 ("len_tr8_ts16" and alike),
        # although the paper's section 3 says L = 20 "unless otherwise stated"; SCAN and PCFG have their own
        "splits": {"primitive": {"tasks": ("copy", "reverse"), "train": 20, "test": 40},
                   "maths": {"tasks": ("addition", "polynomial evaluation", "sorting", "summation", "parity",
                                       "LEGO"), "train": 8, "test": 16}},
        "own_splits": ("SCAN", "PCFG"),
        "parameters": "about 107M", "seeds": 3,
    },
    # Chapter 7: context extension by position interpolation and by YaRN.
    "chen2023pi": {
        "source": "Chen et al. 2023, abstract and Table 4",
        "models": "LLaMA 7B to 65B", "from": 2048, "to": 32768, "finetune_steps": 1000,
        "direct_finetune": {"to": 2560, "after_batches": 10000},    # plain fine-tuning, more than 10000 batches
    },
    "peng2024yarn": {
        "source": "Peng et al. 2024, abstract, sections 3.4 and 4",
        "models": "Llama 2 7B and 13B", "from": 4096, "to": 131072, "scales": (16, 32), "steps": (400, 200),
        "fewer_tokens_than_code_llama": 10, "fewer_steps_than_pi": 2.5, "share_of_pretraining": 0.001,
        "alpha": 1, "beta": 32,
    },
    # Chapter 10: ViTs trained at one resolution and read at another, with a learned table (APE, resized
    # bicubic in their code) or 2-D rotary (axial, mixed).
    "heo2024": {
        "source": "Heo et al. 2024, the table of models in their code repository (naver-ai/rope-vit, README): "
                  "DeiT-III recipe, 400 epochs, ImageNet-1k top-1 in %, at 224 pixels (trained) and 384",
        "resolutions": (224, 384),
        "patch_grids": (14, 24),           # 16-pixel patches
        "top1": {"ViT-S": {"ape": (80.4, 79.4), "axial": (80.9, 80.0), "mixed": (80.9, 81.8)},
                 "ViT-B": {"ape": (83.4, 82.8), "axial": (83.6, 83.9), "mixed": (83.8, 84.4)},
                 "ViT-L": {"ape": (84.6, 84.2), "axial": (84.7, 85.1), "mixed": (84.8, 85.6)}},
        "axial_base": 100, "mixed_start_base": 10,     # rope_theta of their axial models; init of the mixed ones
    },
}
