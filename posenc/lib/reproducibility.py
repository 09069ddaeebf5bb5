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

:func:`agreement` compares a live run with the file in words, never by raising: digit for digit where this
machine matches the platform the file was made on (:func:`platform_signature`: the CPU's name and, where
recorded, its instruction set, and the library versions), as ranges elsewhere.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# What decides how a training run rounds: the processor and the numerical libraries (Python's version does
# not enter the kernels' arithmetic, but it comes with other wheels, so it is recorded as well).
DECIDING = ("cpu", "machine", "torch", "numpy")
# The instruction set torch's kernels use on this CPU (AVX2, AVX512, ...): two processors with one name can
# differ in it. Files made before it was recorded lack it, so it is compared only where both records have it.
CAPABILITY = "cpu_capability"

# Threshold claims drawn from a file clear their threshold by Z standard errors of a difference between the
# file's mean and that of a replication with REPLICATION_SIZE new seeds (about 1 in 160 for one claim when
# the seeds' spread is normal).
Z = 2.5
REPLICATION_SIZE = 5

# Runs on the same platform from the same code are equal to the last bit; this allows for printing.
SAME_RUN_TOLERANCE = 1e-9

# A count of live values outside the file's range that chance alone gives new seeds less often than this is
# called more than chance (:func:`agreement`). Were make robustness's 80 executions (shifted torch seeds; they
# share the file's batches) new seeds with the methods independent, a re-run would reach it about once in 440;
# tests/test_robustness.py holds the record to never reaching it.
ALARM = 1e-4

# Up to this many live values, all within the range, the sentence gives each beside the range of its kind.
FEW = 4

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
    except ImportError:            # the package itself does not need torch
        torch_version = capability = None
    else:
        torch_version = torch.__version__
        try:
            capability = torch.backends.cpu.get_cpu_capability()
        except AttributeError:     # an older torch does not say
            capability = None
    return {"cpu": cpu_model(), "machine": platform.machine(), "python": platform.python_version(),
            "numpy": np.__version__, "torch": torch_version, CAPABILITY: capability}


def _compared(recorded: dict, here: dict) -> tuple[str, ...]:
    """The keys two signatures are compared on: DECIDING, and CAPABILITY where both record it."""
    return DECIDING + ((CAPABILITY,) if recorded.get(CAPABILITY) and here.get(CAPABILITY) else ())


def same_platform(recorded: dict | None, here: dict | None = None) -> bool:
    """True when a file was made on a processor of this name (and instruction set, where both record it) with
    these versions of torch and numpy. Only what the signatures record is compared: two CPUs that share them
    can still round differently."""
    here = platform_signature() if here is None else here
    return bool(recorded) and all(recorded.get(key) == here.get(key) for key in _compared(recorded, here))


def describe(signature: dict | None) -> str:
    """'AMD EPYC (x86_64, AVX512), torch 2.13.0+cpu, numpy 2.4.6' (the instruction set where recorded), or
    'an unrecorded machine'."""
    if not signature:
        return "an unrecorded machine"
    capability = signature.get(CAPABILITY)
    details = ", ".join(filter(None, (signature.get("machine", "?"), None if capability == "DEFAULT" else capability)))
    return (f"{signature.get('cpu', 'an unknown CPU')} ({details}), "
            f"torch {signature.get('torch')}, numpy {signature.get('numpy')}")


def differences(recorded: dict | None, here: dict | None = None) -> list[str]:
    """What differs between the file's platform and this one, e.g. ['CPU', 'torch version']."""
    here = platform_signature() if here is None else here
    if not recorded:
        return ["the platform (the file does not record it)"]
    names = {"cpu": "CPU", "machine": "architecture", "torch": "torch version", "numpy": "numpy version",
             CAPABILITY: "instruction set"}
    return [names[key] for key in _compared(recorded, here) if recorded.get(key) != here.get(key)]


def listed(items: list[str]) -> str:
    """Items as a sentence lists them: '' (none), 'a', 'a and b', 'a, b and c'."""
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


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
    outside: dict[str, list[tuple[float, float, float]]]   # kind -> [(live value, file's min, file's max)]
    sentence: str

    @property
    def reproduced(self) -> bool:
        """Digit for digit: the same platform and the shared runs equal."""
        return self.same_platform and self.largest_gap <= SAME_RUN_TOLERANCE


def widened_range(values) -> tuple[float, float]:
    """The range of the file's seeds widened on both sides by :func:`margin`, how far a replication may move a
    mean: where a re-run of one of the file's seeds on another platform usually lands, and what the re-run
    tests assert (tests/conftest.py). It is no bound for a new seed, which lands beyond it now and then (more
    often for a file of few seeds), so :func:`agreement` does not judge a live run by it."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return -math.inf, math.inf
    slack = margin(values)
    return float(values.min() - slack), float(values.max() + slack)


def agreement(pairs, live, in_file, recorded_platform: dict | None, what: str = "accuracy",
              here: dict | None = None, digits: int = 3, labels: dict | None = None) -> Agreement:
    """Compare a live run with a file, in a sentence that is true whatever the run gave.

    ``pairs``: (live value, file value) for each run both made (the same kind and seed);
    ``live``: kind -> the live run's values, one per seed, as a sequence or as {seed: value}
    (``posenc.experiments.by_seed``); ``in_file``: kind -> the file's values, likewise; with {seed: value} on
    both sides the sentence can say whether the file's run of a value's seed holds the edge it lies past;
    ``what``: what the values are, read after "values of" ("accuracy", "bits per character at 8L");
    ``labels``: kind -> the name the chapter's tables give it.
    On the file's platform the shared runs should agree to the last digit; elsewhere a run that took another
    path is expected, and the live values are set against the range of the file's seeds.
    """
    here = platform_signature() if here is None else here
    shared = [(a, b) for a, b in pairs if not (math.isnan(a) and math.isnan(b))]      # NaN in both: the same
    one_sided = sum(math.isnan(a) != math.isnan(b) for a, b in shared)
    numeric = [0.0 if a == b else abs(a - b) for a, b in shared if not (math.isnan(a) or math.isnan(b))]
    gap = math.inf if one_sided else max(numeric) if numeric else math.nan
    found = _gap_text(numeric, one_sided)
    shift = seed_shift()
    same = same_platform(recorded_platform, here)
    # Runs of one seed number share their draws unless the seeds are shifted, or the code or the settings may
    # have changed (the file's platform, yet the shared runs differ): then no partner is claimed.
    partnered = bool(shared) and not shift and not (same and gap > SAME_RUN_TOLERANCE)
    ranges, outside = _ranges_text(live, in_file, what, digits, partnered, labels)
    if shift:
        sentence = (f"This run's torch seeds are shifted by {shift} (make robustness): it shares the file's seed "
                    f"numbers and batches, not its starting weights, so compare ranges, not digits. {ranges}")
        return Agreement(same, math.nan, outside, sentence.rstrip())     # other seeds: no gap means anything
    if same and shared and gap <= SAME_RUN_TOLERANCE:
        result = ("digit for digit" if gap == 0 else
                  f"to within {SAME_RUN_TOLERANCE:g}, up to rounding in the last digits")
        sentence = (f"This machine ({describe(here)}) matches the platform the file was made on, and your runs of "
                    f"the file's seeds reproduce its values of {what} {result}.")
    elif same and shared:
        shows = ("its name and instruction set do" if CAPABILITY in _compared(recorded_platform, here)
                 else "its name does")
        differ = found if found.startswith("by") else f"({found})"
        sentence = (f"This machine matches the platform the file was made on ({describe(here)}), yet the runs you "
                    f"share with it differ {differ}: either the code or the run's settings have changed since the "
                    "file was written (make experiments writes it again), or this CPU differs from the file's in "
                    f"a way {shows} not show. {ranges}")
    elif same:
        sentence = (f"This machine ({describe(here)}) matches the platform the file was made on, but your run "
                    f"shares no run with it (other seeds or settings): compare ranges, not digits. {ranges}")
    else:
        changed = differences(recorded_platform, here) if recorded_platform else None
        why = (f"The file was made on {describe(recorded_platform)}; this is {describe(here)}. Another "
               f"{listed(changed)} round{'s' if len(changed) == 1 else ''} the same sums differently" if changed else
               f"The file does not record the platform it was made on; this is {describe(here)}. Another platform "
               "may round the same sums differently")
        path = "takes" if found and changed else "may take"
        evidence = (f" (here {found})" if found else
                    " (here the runs you share with the file happen to agree exactly)" if shared else "")
        sentence = (f"{why}, so training {path} another path and a run can differ from the file's run of the same "
                    f"seed{evidence}: compare ranges, not digits. {ranges}")
    return Agreement(same, gap, outside, sentence.rstrip())


def _gap_text(numeric: list[float], one_sided: int) -> str:
    """'by up to 0.037', '2 of the values compared are NaN in one and a number in the other', both joined by
    ', and ', or '' where the shared runs agree exactly."""
    parts = [f"by up to {max(numeric):.2g}"] if numeric and max(numeric) > 0 else []
    if one_sided:
        parts.append(f"{one_sided} of the values compared {'is' if one_sided == 1 else 'are'} NaN in one and a "
                     "number in the other")
    return ", and ".join(parts)


def _ranges_text(live, in_file, what: str, digits: int, partnered: bool, labels) -> tuple[str, dict]:
    """The sentences that set each live value against the range of the file's seeds for its kind, and
    {kind: [(value, file's min, file's max)]} for the values outside it.

    A value outside is set against how often chance alone puts one there for a new seed: outside the range of n
    seeds 2 times in n + 1. Where so many lie outside that chance alone gives that count to new seeds less than
    :data:`ALARM` of the time (:func:`outside_count_probabilities`), the sentence says to look for a cause.

    A live run that shares runs with the file (``partnered``) is not quite a new seed: it starts from the same
    seeds, for its weights and its batches, as the file's run of its seed number (its partner), so it lands near
    that run more often than a new seed would, and past an edge of the range most easily where that run holds
    the edge (``make robustness``'s record shows it for runs that share only the batches). Where the values come
    as {seed: value} on both sides, the sentence says which values outside lie past an edge their partner holds
    (a value whose seed the file lacks is a new seed), and a single value how far from its partner it lies;
    given as sequences, it says so in general. A kind on which every seed of the file gives one value is left
    out of this: a pull towards the partner is a pull into the range there. So is a value farther past the range
    than the file's seeds span, which no pull towards a run inside it explains; a single such value is given with
    its distance. (Such values are no rarity for new seeds: ``make robustness``'s record held one in 19 of its
    80 executions, mostly where the seeds span little, so several values are judged by their count alone.) The
    rates are also averages over the files one might have drawn: a committed file whose range happens to be
    narrow puts values outside more often than they say."""
    outside: dict[str, list[tuple[float, float, float]]] = {}
    named, not_a_number, missing, per_kind = [], [], [], []   # named: (name, shown, file's low, high, seeds or None)
    partners_known, partners_unknown, edges = 0, 0, []      # edges: (name, seed, distance to the partner)
    far = None                 # (distance past the edge, the range's width) of the first value farther out than the
                               # seeds span
    within_items = []          # 'sinusoidal: 4.417 (file 4.404–4.889)': the values within, for a few values
    for kind, values in live.items():
        name = labels.get(kind, kind) if labels else kind
        spread, file_seeds = _seeded(in_file.get(kind, ()))
        values, seeds = _seeded(values)
        n_seeds = int((~np.isnan(spread)).sum())
        if n_seeds == 0:
            missing.append(name)
            continue
        low, high = float(np.nanmin(spread)), float(np.nanmax(spread))
        partners = dict(zip(file_seeds, spread.tolist())) if file_seeds is not None else {}
        numbers = [(v, seed) for v, seed in zip(values.tolist(), seeds or [None] * values.size) if not math.isnan(v)]
        if len(numbers) < values.size:
            n_nan = values.size - len(numbers)
            not_a_number.append(name if n_nan == 1 else f"{name} ({n_nan} seeds)")
        if not numbers:
            continue
        per_kind.append((n_seeds, len(numbers)))
        inside = [f"{v:.{digits}f}" for v, _ in numbers if low <= v <= high]
        if inside:
            within_items.append(_outside_item(name, inside, f"{low:.{digits}f}", f"{high:.{digits}f}"))
        out = [(v, seed) for v, seed in numbers if not low <= v <= high]
        if not out:
            continue
        outside[kind] = [(v, low, high) for v, _ in out]
        shown, file_low, file_high = _outside_digits([v for v, _ in out], low, high, digits)
        seeds_out = [seed for _, seed in out] if partnered and all(seed is not None for _, seed in out) else None
        named.append((name, shown, file_low, file_high, seeds_out))
        for v, seed in out:
            past = low - v if v < low else v - high
            if low != high and past > high - low:            # farther out than the seeds spread: no pull explains it
                far = far or (past, high - low)
                continue
            if not partnered or low == high:                 # no partner, or a pull into the range
                continue
            if seed is None or file_seeds is None:
                partners_unknown += 1
                continue
            partner = partners.get(seed)
            if partner is None:                              # a seed the file lacks: a new seed
                continue
            partners_known += 1
            if partner == (low if v < low else high):
                edges.append((name, seed, abs(v - partner)))
    n_values, n_out = sum(m for _, m in per_kind), sum(len(v) for v in outside.values())
    values_of = f"value{'' if n_values == 1 else 's'} of {what}"
    if n_values == 0:
        text = ""
    elif n_out == 0:
        text = (f"Your {values_of} lies" if n_values == 1 else f"Both your {values_of} lie" if n_values == 2
                else f"All {n_values} of your {values_of} lie") + " within the range of the file's seeds"
        text += f": {'; '.join(within_items)}." if n_values <= FEW else "."
    elif n_values == 1:
        name, shown, file_low, file_high, _ = named[0]
        text = (f"Your {values_of} for {name} lies outside the range of the file's seeds: {shown[0]} against "
                f"{file_low}–{file_high}." if file_low != file_high else
                f"Your {values_of} for {name} differs from the file's value on every seed: {shown[0]} against "
                f"{file_low}.")
    else:
        within = n_values - n_out
        text = (f"Of your {n_values} {values_of}, {'none lies' if within == 0 else f'{within} lie'}"
                f"{'s' if within == 1 else ''} within the range of the file's seeds. Outside it: "
                f"{'; '.join(_outside_item(*_with_seeds(item)) for item in named)}.")
    if n_out:
        seed_counts = {n for n, _ in per_kind}
        low_n, high_n = min(seed_counts), max(seed_counts)
        chance = ("a new seed differs from the file's one seed almost every time" if high_n == 1 else
                  f"a new seed lands outside the range of {low_n} seeds {_how_often(low_n)}" if low_n == high_n
                  else f"a new seed lands outside the range of n seeds 2 times in n + 1 (the file has {low_n} to "
                       f"{high_n} seeds per method)")
        if n_values == 1:
            value, low, _ = next(iter(outside.values()))[0]
            places = len(named[0][1][0].partition(".")[2])         # the digits the value is shown with
            side = "below" if value < low else "above"
            text += f" {_sentence_case(chance)}, so one value outside says little on its own"
            if far:
                text += (f"; it lies {far[0]:.{places}f} {side} the range, more than the {far[1]:.{places}f} "
                         "that the file's seeds span, as new seeds now and then do.")
            elif edges:
                text += (f", and less here: the file's {'lowest' if side == 'below' else 'highest'} value is its run "
                         f"of seed {edges[0][1]}, your run's seed, and yours lies only {edges[0][2]:.{places}f} {side} "
                         "it.")
            elif partners_unknown:
                text += (", and less where the file's run of the same seed number, which starts from the same seeds "
                         "for its weights and its batches, holds the file's lowest or highest value.")
            else:
                text += "."
        else:
            expected = sum(m * 2 / (n + 1) for n, m in per_kind)
            chances = outside_count_probabilities(per_kind)
            tails = chances[::-1].cumsum()[::-1]                    # tails[k]: P(k or more outside)
            usual = int(np.argmax(tails < 0.05)) - 1 if (tails < 0.05).any() else n_values
            mean = f"{round(expected)}" if abs(expected - round(expected)) < 0.05 else f"{expected:.1f}"
            bound = ("" if usual >= n_values else
                     f", and {'none' if usual == 0 else f'at most {usual}'} in 19 repeats out of 20 (taking the "
                     "methods as independent)")
            text += (f" {_sentence_case(chance)}, so new seeds would put {mean} of your {n_values} values outside on "
                     f"average{bound}.")
            if partners_unknown:
                text += (" Your runs are not quite new seeds: each starts from the same seeds, for its weights and its "
                         "batches, as the file's run of its seed number, so they can lie outside more often, most "
                         "easily past a value that run holds at an edge of the range.")
            elif edges:
                text += (" Your runs are not quite new seeds: each starts from the same seeds, for its weights and its "
                         "batches, as the file's run of that seed number and tends to land near it, so it lies outside "
                         "most easily past an edge that run holds, as "
                         f"{'does your value' if len(edges) == 1 else 'do your values'} for {_edge_items(edges)}.")
            elif partners_known:
                text += (" Your runs start from the same seeds as the file's runs of their seed numbers, but none of "
                         "the values outside lies past an edge that run holds, so sharing seeds does not explain "
                         f"{'it' if n_out == 1 else 'them'}.")
            many = ("both" if n_out == 2 else f"all {n_out}") if n_out == n_values else f"{n_out} or more"
            if tails[n_out] < ALARM:
                text += (f" New seeds put {many} outside less than 1 time in {round(1 / ALARM):,} (taking the methods "
                         "as independent): look at the library versions and the code.")
            elif n_out > usual:
                text += f" New seeds put {many} outside less than 1 time in 20."
    if not_a_number:
        text += f" Your run gave NaN (not a number) for {listed(not_a_number)}."
    if missing:
        text += f" The file has no values of {what} to compare with for {listed(missing)}."
    return text.strip(), outside


def _seeded(values) -> tuple[np.ndarray, list | None]:
    """Values given as a sequence (one per seed) or as {seed: value}: the values, and their seeds (None for a
    sequence)."""
    if isinstance(values, Mapping):
        return np.asarray(list(values.values()), dtype=np.float64), list(values)
    return np.atleast_1d(np.asarray(values, dtype=np.float64)), None


def _edge_items(edges: list[tuple]) -> str:
    """'T5 bias (seed 0) and ALiBi (seeds 0 and 1)': the values outside whose partner holds the edge (three or
    more are separated by semicolons where a label has a comma of its own)."""
    seeds: dict[str, list[str]] = {}
    for name, seed, _ in edges:
        seeds.setdefault(name, []).append(str(seed))
    items = [f"{name} (seed{'s' if len(s) > 1 else ''} {listed(sorted(s, key=int))})" for name, s in seeds.items()]
    if len(items) > 2 and any(", " in name for name in seeds):    # a label's own comma: 'a; b, 8 heads; and c'
        return "; ".join(items[:-1]) + "; and " + items[-1]
    return listed(items)


def _with_seeds(item: tuple) -> tuple:
    """A value outside as :func:`_outside_item` takes it, each value followed by its seed where it is known."""
    name, shown, low, high, seeds = item
    if seeds is not None:
        shown = [f"{text} (seed {seed})" for text, seed in zip(shown, seeds)]
    return name, shown, low, high


def outside_count_probabilities(kinds) -> np.ndarray:
    """P(k of the live values lie outside the range of the file's seeds by chance alone), k = 0, 1, ...

    ``kinds``: (the file's seeds n, the live values m) per kind. Within a kind the n + m values are taken as
    exchangeable (new seeds, nothing else changed), so every set of the m ranks among n + m is equally likely,
    and a below the file's lowest value with b above its highest comes about C(n + m - a - b - 2, m - a - b)
    ways in C(n + m, m); the kinds are convolved as independent. Ties, such as an accuracy of 1.0 on every
    seed, only make lying outside rarer than this. A file of one seed leaves every new value outside."""
    total = np.ones(1)
    for n, m in kinds:
        if n < 2:
            one = np.zeros(m + 1)
            one[m] = 1.0
        else:
            one = np.array([(k + 1) * math.comb(n + m - k - 2, m - k) for k in range(m + 1)], dtype=np.float64)
            one /= math.comb(n + m, m)
        total = np.convolve(total, one)
    return total


def _how_often(n_seeds: int) -> str:
    """How often a new seed lands outside the range of ``n_seeds`` others: 2 times in n + 1, reduced."""
    if n_seeds <= 1:
        return "almost every time"
    if (n_seeds + 1) % 2 == 0:
        return "half the time" if n_seeds == 3 else f"1 time in {(n_seeds + 1) // 2}"
    return f"2 times in {n_seeds + 1}"


def _outside_digits(values: list[float], low: float, high: float, digits: int) -> tuple[list[str], str, str]:
    """The values and the file's range printed with as many digits as it takes to show that each value is
    outside and, where the file's values differ, that the range is not one value."""
    def shown(x, d):
        return f"{x:.{d}f}"
    while digits < 9 and (any(shown(v, digits) == shown(low if v < low else high, digits) for v in values)
                          or (low != high and shown(low, digits) == shown(high, digits))):
        digits += 1
    return [shown(v, digits) for v in values], shown(low, digits), shown(high, digits)


def _outside_item(name: str, shown: list[str], low: str, high: str) -> str:
    """'T5 bias: 0.957, 0.960 (file 0.990–1.000)', or '(1.000 on every seed of the file)'; the values within the
    range are listed the same way."""
    spread = f"{low} on every seed of the file" if low == high else f"file {low}–{high}"
    return f"{name}: {', '.join(shown)} ({spread})"


def _sentence_case(text: str) -> str:
    """The text with its first letter upper-cased and nothing else changed (str.capitalize would lower-case
    'ALiBi' and 'L')."""
    return text[:1].upper() + text[1:]
