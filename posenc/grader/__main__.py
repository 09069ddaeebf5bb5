"""``python -m posenc.grader``: see ``posenc.grader.cli``."""

import sys

from posenc.grader.cli import main

sys.exit(main())
