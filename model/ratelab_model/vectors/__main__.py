"""python -m ratelab_model.vectors --check | --write [--dir DIR]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ratelab_model.vectors.tool import DEFAULT_DIR, check, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ratelab_model.vectors")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="verify the files match the model")
    action.add_argument("--write", action="store_true", help="regenerate the files")
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="vector directory")
    args = parser.parse_args(argv)
    if args.write:
        for path in write(args.dir):
            print(f"wrote {path}")
        return 0
    problems = check(args.dir)
    for line in problems:
        print(line, file=sys.stderr)
    if not problems:
        print(f"all vector files in {args.dir} match the model")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
