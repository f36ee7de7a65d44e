"""`python -m bench.memory` (`--quick` for a small run, `--report-only` to rebuild the markdown
from the JSON)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from .run import FULL, QUICK, RESULTS_JSON, RESULTS_MD, Sizes, rebuild_report, run


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK.customers} customers, {QUICK.per_type} "
                                                             "questions per type")
    parser.add_argument("--customers", type=int, help=f"default {FULL.customers}")
    parser.add_argument("--per-type", type=int, help=f"questions per type at most (default {FULL.per_type})")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=RESULTS_JSON, help="where the per-question results go")
    parser.add_argument("--md", type=Path, default=RESULTS_MD, help="where the report goes")
    parser.add_argument("--report-only", action="store_true", help="only rebuild the markdown from the JSON")
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    args.sizes = Sizes(customers=args.customers or base.customers, per_type=args.per_type or base.per_type)
    if not 2 <= args.sizes.customers <= 200 or args.sizes.per_type < 1:
        parser.error("--customers is 2..200 and --per-type at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.report_only:
        if not args.json.exists():
            raise SystemExit(f"{args.json} does not exist: run the benchmark first")
        rebuild_report(args.json, args.md)
        print(f"report rebuilt from {args.json} into {args.md}")
        return 0
    asyncio.run(run(args.sizes, quick=args.quick, seed=args.seed, out_json=args.json, out_md=args.md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
