"""The course's own library: what the chapters teach and build step by step, and what students import.

* ``encoding``: the sinusoidal table (chapter 1); ``rotation``: the shift operator T(k) (chapter 2);
  ``combining``: adding vs concatenating (chapter 3); ``positional``: absolute encodings as torch
  modules (chapters 3-4); ``attention``, ``relative``, ``comparison``: position inside the attention
  (chapter 5); ``rotary``, ``rotary_analysis``: rotary embeddings (chapter 6); ``extension``: context
  extension (chapter 7); ``textlm``: real text and its evaluation protocols (chapter 8);
* ``tasks``: order-sensitive toy tasks; ``models``: the tiny Transformer and its training loop;
  ``reproducibility``: what a run on another machine shares with the committed results, and
  ``seed_torch``, the one place a run seeds torch.

The experiments that train these models over many seeds are the harness, ``posenc.experiments``. Nothing
here imports the harness, the book's tooling, the exercises, the grader, or the checkout's folders.
"""
