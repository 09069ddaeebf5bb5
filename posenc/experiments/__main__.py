"""The harness's one command line: run a chapter's full sweep, replicate it with held-out seeds, or run
chapter 7's learning-rate search.

    python -m posenc.experiments run ch04 --out results/ch04.json [--seeds N] [--first-seed K] [--processes P]
    python -m posenc.experiments replicate ch07 --out results/ch07_replication.json [--processes P]
    python -m posenc.experiments lr-search --out results/ch07_lr_search.json
    python -m posenc.experiments list [--replicated]      # the sweeps make experiments runs, one a line
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from posenc.experiments import registry, results


def _progress(line: str) -> None:
    print(line, flush=True)


def _sweep_options(parser: argparse.ArgumentParser, seeds_help: str, first_seed_help: str) -> None:
    parser.add_argument("sweep", choices=list(registry.SWEEPS), help="which chapter's sweep")
    parser.add_argument("--out", required=True, help="JSON file to write, e.g. results/ch04.json")
    parser.add_argument("--seeds", type=int, default=None, help=seeds_help)
    parser.add_argument("--first-seed", type=int, default=None, help=first_seed_help)
    _machine_options(parser)


def _machine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--processes", type=int, default=None,
                        help="worker processes, one run each at a time (default: the sweep's own, 1 unless it "
                             "says otherwise)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: these models are too small to gain from more)")


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="python -m posenc.experiments",
                                   description="The course's experiments: full multi-seed sweeps and their files.")
    commands = main.add_subparsers(dest="command", required=True)
    _sweep_options(commands.add_parser("run", help="a chapter's full multi-seed sweep"),
                   "number of seeds, K..K+N-1 (default: the sweep's own, 10 unless it says otherwise)",
                   "seeds K..K+N-1 instead of 0..N-1 (a replication with seeds the file never used)")
    _sweep_options(commands.add_parser("replicate", help="the same sweep with held-out seeds"),
                   "number of seeds (default: as many as the full sweep)",
                   f"the first held-out seed (default {registry.REPLICATION_FIRST_SEED})")
    search = commands.add_parser("lr-search", help="chapter 7's learning-rate search (one seed, inside L)")
    search.add_argument("--out", required=True, help="JSON file to write, e.g. results/ch07_lr_search.json")
    _machine_options(search)
    listing = commands.add_parser("list", help="the registered sweeps, one name a line")
    listing.add_argument("--replicated", action="store_true", help="only those with a held-out replication")
    return main


def run(args) -> int:
    cls = registry.experiment_class(args.sweep)
    first = args.first_seed or 0
    experiment = cls(seeds=tuple(range(first, first + (cls.full_seeds if args.seeds is None else args.seeds))))
    return _sweep_and_save(args, experiment)


def replicate(args) -> int:
    cls = registry.experiment_class(args.sweep)
    first = registry.REPLICATION_FIRST_SEED if args.first_seed is None else args.first_seed
    default = cls.replication_size or cls.full_seeds
    seeds = tuple(range(first, first + (default if args.seeds is None else args.seeds)))
    options = "" if seeds == registry.replication_seeds(args.sweep) else f" --seeds {len(seeds)} --first-seed {first}"
    return _sweep_and_save(args, cls(seeds=seeds),
                           command=f"{results.COMMAND} replicate {args.sweep} --out {args.out}{options}",
                           purpose=f"held-out replication: seeds never used to write chapter {int(args.sweep[2:])}; "
                                   "every direction the chapter asserts from its file must hold here too")


def _sweep_and_save(args, experiment, command=None, purpose=None) -> int:
    from posenc.experiments.runner import sweep

    processes = type(experiment).processes if args.processes is None else args.processes
    start = time.perf_counter()
    runs = sweep(experiment, keep_models=False, progress=_progress, processes=processes)
    seconds = time.perf_counter() - start
    results.save_results(args.out, experiment, runs, args.sweep, seconds=seconds, processes=processes,
                         command=command, purpose=purpose)
    print(f"\n{len(runs)} runs with seeds {list(experiment.seeds)} in {seconds:.0f} s with {processes} "
          f"process(es); wrote {args.out}\n")
    print(experiment.report(runs))
    return 0


def lr_search(args) -> int:
    from posenc.experiments import ch07

    config = ch07.BenchmarkExperiment()
    start = time.perf_counter()
    result = ch07.lr_search(config, processes=2 if args.processes is None else args.processes, progress=_progress)
    results.save_lr_search(args.out, result, time.perf_counter() - start, config)
    print(f"mean accuracy inside L per rate: {result['mean']}; best {result['best']}; wrote {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "list":
        print("\n".join(name for name, entry in registry.SWEEPS.items() if entry.replicated or not args.replicated))
        return 0
    torch.set_num_threads(args.threads)
    return {"run": run, "replicate": replicate, "lr-search": lr_search}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
