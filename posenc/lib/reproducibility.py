"""What a reader's run of a chapter can be expected to share with the committed results, and what to say.

Training a model on a CPU is repeatable on one machine with one set of library versions, not across them:
another CPU (AMD or Intel, AVX2 or AVX-512, ARM), another torch or numpy rounds the same sums differently,
and after a few hundred steps of Adam the run has taken another path. So a chapter that trains models
keeps two kinds of statement apart (CONTRIBUTING.md, "Claims about trained models"):

* statements about the committed multi-seed files (``results/chNN.json``), asserted against the file. The
  file does not change with the machine that renders the book. A threshold drawn from a file holds with a
  margin against the spread of its seeds (:func:`clearly_above`, :func:`clearly_apart`), so that a
  replication with new seeds is expected to reproduce it;
* statements about the chapter's live run, a demonstration: either a property that holds for every seed
  (checked on ten seed sets by ``make robustness``, see ``posenc.book.robustness``), or a sentence written
  from the run itself, true whatever it gave.

:func:`agreement` compares a live run with the file in words, never by raising: digit for digit where the
platform is the one the file was made on (:func:`platform_signature`), as ranges elsewhere.
"""

from __future__ import annotations

import math
import os
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# What decides how a training run rounds: the processor and the numerical libraries (Python's version does
# not enter the kernels' arithmetic, but it comes with other wheels, so it is recorded as well).
DECIDING = ("cpu", "machine", "torch", "numpy")

# Threshold claims drawn from a file clear their threshold by Z standard errors of a difference between the
# file's mean and that of a replication with REPLICATION_SIZE new seeds (about 1 in 160 for one claim when
# the seeds' spread is normal).
Z = 2.5
REPLICATION_SIZE = 5

# Runs on the same platform from the same code are equal to the last bit; this allows for printing.
SAME_RUN_TOLERANCE = 1e-9

# Set while `make robustness` runs a chapter with every torch seed shifted (posenc.book.robustness): such a
# run shares the file's seed labels, not its seeds.
SEED_SHIFT_VARIABLE = "POSENC_TORCH_SEED_SHIFT"


def seed_shift() -> int:
    """What ``make robustness`` adds to every torch seed of this process and its workers (0 otherwise)."""
    return int(os.environ.get(SEED_SHIFT_VARIABLE, "0") or 0)


def seed_torch(seed: int) -> None:
    """Seed torch's global generator for a run: the only place the course does (a model's initial weights,
    the training loop). The seed is shifted by :func:`seed_shift`, so ``make robustness`` reaches every run,
    in this process and in the worker processes of a sweep; with no shift it is ``torch.manual_seed(seed)``.
    Data come from generators of their own (``torch.Generator().manual_seed``), which no shift moves."""
    import torch

    torch.manual_seed(int(seed) + seed_shift())


def cpu_model() -> str:
    """The processor's model name (Linux: /proc/cpuinfo), else what the platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                return " ".join(value.split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def platform_signature() -> dict:
    """The processor and library versions a run was made with (saved beside every result file)."""
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:            # the package itself does not need torch
        torch_version = None
    return {"cpu": cpu_model(), "machine": platform.machine(), "python": platform.python_version(),
            "numpy": np.__version__, "torch": torch_version}


def same_platform(recorded: dict | None, here: dict | None = None) -> bool:
    """True when a file was made on this processor with these versions of torch and numpy."""
    here = platform_signature() if here is None else here
    return bool(recorded) and all(recorded.get(key) == here.get(key) for key in DECIDING)


def describe(signature: dict | None) -> str:
    """'AMD EPYC (x86_64), torch 2.13.0+cpu, numpy 2.4.6', or 'an unrecorded machine'."""
    if not signature:
        return "an unrecorded machine"
    return (f"{signature.get('cpu', 'an unknown CPU')} ({signature.get('machine', '?')}), "
            f"torch {signature.get('torch')}, numpy {signature.get('numpy')}")


def differences(recorded: dict | None, here: dict | None = None) -> list[str]:
    """What differs between the file's platform and this one, e.g. ['CPU', 'torch']."""
    here = platform_signature() if here is None else here
    if not recorded:
        return ["the platform (the file does not record it)"]
    names = {"cpu": "CPU", "machine": "architecture", "torch": "torch", "numpy": "numpy"}
    return [names[key] for key in DECIDING if recorded.get(key) != here.get(key)]


# ---------------------------------------------------------------------------------------------------
# Margins against the seed spread


def margin(values, replication_seeds: int = REPLICATION_SIZE, z: float = Z) -> float:
    """How far a mean over ``values`` (one per seed) must clear a threshold for a replication with
    ``replication_seeds`` new seeds to be expected on the same side: z * std * sqrt(1/n + 1/r)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size < 2:
        return math.inf if values.size == 0 else 0.0
    return float(z * values.std(ddof=1) * math.sqrt(1 / values.size + 1 / replication_seeds))


def clearly_above(values, threshold: float, **kwargs) -> bool:
    """The mean of ``values`` exceeds ``threshold`` by more than its :func:`margin` (NaN never counts)."""
    values = np.asarray(values, dtype=np.float64)
    return bool(values.size and not np.isnan(values).all()
                and np.nanmean(values) - margin(values, **kwargs) > threshold)


def clearly_below(values, threshold: float, **kwargs) -> bool:
    """The mean of ``values`` is below ``threshold`` by more than its :func:`margin`."""
    return clearly_above(-np.asarray(values, dtype=np.float64), -threshold, **kwargs)


def clearly_apart(larger, smaller, paired: bool = True, **kwargs) -> bool:
    """``larger`` beats ``smaller`` with a margin: on the paired differences (the same seeds, one value each,
    in the same order) when ``paired``, else on the difference of the two means (margins added in quadrature)."""
    larger, smaller = np.asarray(larger, dtype=np.float64), np.asarray(smaller, dtype=np.float64)
    if paired:
        return clearly_above(larger - smaller, 0.0, **kwargs)
    gap = np.nanmean(larger) - np.nanmean(smaller)
    return bool(gap > math.hypot(margin(larger, **kwargs), margin(smaller, **kwargs)))


# ---------------------------------------------------------------------------------------------------
# A live run next to the file, in words


@dataclass
class Agreement:
    """How a live run compares with the committed file, and the sentence that says so."""

    same_platform: bool
    largest_gap: float                    # over the runs both made (same kind and seed); NaN if none or if the
                                          # seeds are shifted, inf if a value is NaN in one of them only
    outside: dict[str, tuple[float, float, float]]   # kind -> (live value, file's min, file's max)
    sentence: str

    @property
    def reproduced(self) -> bool:
        """Digit for digit: the same platform and the shared runs equal."""
        return self.same_platform and self.largest_gap <= SAME_RUN_TOLERANCE


def agreement(pairs, live, in_file, recorded_platform: dict | None, what: str = "accuracy",
              here: dict | None = None, digits: int = 3) -> Agreement:
    """Compare a live run with a file, in a sentence that is true whatever the run gave.

    ``pairs``: (live value, file value) for each run both made (the same kind and seed);
    ``live``: kind -> the live run's values (one per seed); ``in_file``: kind -> the file's values (one per
    seed). On the file's platform the shared runs should agree to the last digit; elsewhere a run that took
    another path is expected, and the live values are set against the range of the file's seeds.
    """
    here = platform_signature() if here is None else here
    shared = [(a, b) for a, b in pairs if not (math.isnan(a) and math.isnan(b))]      # NaN in both: the same
    one_sided = sum(math.isnan(a) != math.isnan(b) for a, b in shared)
    numeric = [abs(a - b) for a, b in shared if not (math.isnan(a) or math.isnan(b))]
    gap = math.inf if one_sided else max(numeric) if numeric else math.nan
    by = f"by up to {max(numeric):.2g}" if numeric and max(numeric) > 0 else ""
    nan_text = (f"{one_sided} of the values compared {'is' if one_sided == 1 else 'are'} NaN in one and a number "
                "in the other" if one_sided else "")
    differ = f" {by}, and {nan_text}" if by and nan_text else f" {by}" if by else f" ({nan_text})"
    here_by = (f" (here {by}, and {nan_text})" if by and nan_text else f" (here {by or nan_text})" if by or nan_text
               else " (here the runs you share happen to agree exactly)" if shared else "")
    outside, outside_values, not_a_number, n_values, n_file_seeds = {}, [], [], 0, []
    for kind, values in live.items():
        spread = np.asarray(in_file.get(kind, ()), dtype=np.float64)
        if spread.size == 0 or np.isnan(spread).all():
            continue
        low, high = float(np.nanmin(spread)), float(np.nanmax(spread))
        n_file_seeds.append(int((~np.isnan(spread)).sum()))
        values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        n_values += values.size
        if np.isnan(values).any():
            not_a_number.append(kind)
        for value in values:
            if not math.isnan(value) and not (low <= value <= high):
                outside[kind] = (float(value), low, high)
                outside_values.append(_outside_text(kind, float(value), low, high, digits))
    same = same_platform(recorded_platform, here)
    within = n_values - len(outside_values) - sum(int(np.isnan(np.atleast_1d(np.asarray(live[k], dtype=np.float64))).sum())
                                                   for k in not_a_number)
    seeds = min(n_file_seeds) if n_file_seeds else 0
    ranges = (f"of your {n_values} {what} value{'' if n_values == 1 else 's'}, {within} "
              f"{'lies' if within == 1 else 'lie'} within the range of the file's seeds"
              + ("" if not outside_values else "; outside it: " + ", ".join(outside_values)
                 + f" (a run with a new seed falls outside the range of {seeds} seeds with probability "
                   f"2/{seeds + 1}, about {2 / (seeds + 1):.0%}: one value outside says little)")
              + ("" if not not_a_number else "; not a number (NaN): " + ", ".join(not_a_number)))
    shift = seed_shift()
    if shift:
        sentence = (f"This run's torch seeds are shifted by {shift} (`make robustness`), so it shares the file's "
                    f"seed numbers, not its seeds: compare ranges, not digits. {_sentence_case(ranges)}.")
        return Agreement(same, math.nan, outside, sentence)        # other seeds: no gap means anything
    if same and shared and gap <= SAME_RUN_TOLERANCE:
        closeness = "exactly the file's" if gap == 0 else "the file's"
        tolerance = "" if gap == 0 else f" to within {SAME_RUN_TOLERANCE:g}"
        sentence = (f"This machine ({describe(here)}) matches the platform the file was made on, and the runs you "
                    f"share with it give {closeness} {what} values{tolerance}: they are reproduced digit for digit.")
    elif same and shared:
        sentence = (f"This machine matches the platform the file was made on ({describe(here)}), yet the runs you "
                    f"share with it differ{differ}: the code or the run's settings have changed since the file "
                    f"was written (`make experiments` writes it again). {_sentence_case(ranges)}.")
    elif same:
        sentence = (f"This machine ({describe(here)}) matches the platform the file was made on, but your run "
                    f"shares no run with it (other seeds or settings): compare ranges, not digits. "
                    f"{_sentence_case(ranges)}.")
    else:
        changed = " and ".join(differences(recorded_platform, here)) if recorded_platform else None
        why = (f"The file was made on {describe(recorded_platform)}; this is {describe(here)}. Another {changed} "
               "rounds the same sums differently" if changed else
               f"The file does not record the platform it was made on; this is {describe(here)}. Another platform "
               "may round the same sums differently")
        path = "takes" if by or nan_text or not shared else "may take"
        sentence = (f"{why}, so training {path} another path and a run can differ from the file's run of the same "
                    f"seed{here_by}: compare ranges, not digits. {_sentence_case(ranges)}.")
    return Agreement(same, gap, outside, sentence)


def _outside_text(kind: str, value: float, low: float, high: float, digits: int) -> str:
    """'t5 0.957 (file 0.990–1.000)', with as many digits as it takes to show that the value is outside."""
    edge = low if value < low else high
    while digits < 9 and f"{value:.{digits}f}" == f"{edge:.{digits}f}":
        digits += 1
    return f"{kind} {value:.{digits}f} (file {low:.{digits}f}–{high:.{digits}f})"


def _sentence_case(text: str) -> str:
    """The text with its first letter upper-cased and nothing else changed (str.capitalize would lower-case
    'ALiBi' and 'L')."""
    return text[:1].upper() + text[1:]
