"""``python -m precall``: the command line (see :mod:`precall.cli`)."""

import sys

from precall.cli import main

if __name__ == "__main__":
    sys.exit(main())
